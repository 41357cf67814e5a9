/**
 * Reconstruction QA probes that share no projection code with the renderer.
 *
 * `qa.ts` recomputes the renderer's own projections and checks their samples;
 * a bug in a projection would then agree with itself. These probes re-derive
 * what the spec promises straight from normalized events, with their own
 * rules, and read the rendered text line by line:
 *
 * - `bounds:blocks`: every block stays within its UTF-8 ceiling from the spec
 *   table (`SPEC_BLOCK_CEILINGS`, kept here on purpose instead of importing
 *   the renderer's), headers included.
 * - `footer:last`: the source footer is the last block and the text ends with
 *   exactly one newline.
 * - `files:paths`: every successfully read, edited or written path in the
 *   source is rendered under its kind at its latest address (or named on its
 *   directory's line, `- @id in dir/: a.ts, b.ts ×2`), or lies inside an
 *   omission marker's entry range of that kind; rendered paths plus marker
 *   counts equal the source's distinct paths per kind.
 * - `failures:addresses`: every failed tool result, failed user bash run and
 *   failed nested operation (a search that found nothing is no failure) is rendered at its address in
 *   `[Outstanding Context]` or lies inside an omission marker's range; items
 *   plus marker counts equal the number of failures.
 *
 * Only mechanical text helpers (address rendering, one-line collapsing, UTF-8
 * length) are shared, since the rendered form must be matched exactly.
 */

import type { NormalizedEvent } from "../../session/events.ts";
import { FILE_ACTIONS, OUTER_FABRIC_TOOL, PATCH_TOOLS, SHELL_ACTIONS } from "../../session/facts.ts";
import { isPlainRecord } from "../../session/records/record-guards.ts";
import { appendedExitCode, patchFiles, searchFoundNothing } from "../../text/tool-text.ts";
import { utf8ByteLength } from "../../text/utf8.ts";
import { DIALOGUE_HEADER } from "../summary/dialogue.ts";
import { ANNOTATIONS_HEADER } from "../summary/enrichers.ts";
import {
	ACTIVITY_HEADER,
	HISTORICAL_HEADER,
	STATUS_HEADER,
	TRANSCRIPT_HEADER,
	TURNS_HEADER,
} from "../summary/projections-activity.ts";
import { FILES_HEADER, OUTSTANDING_HEADER } from "../summary/projections-files.ts";
import { PLAN_HEADER } from "../summary/projections-plan.ts";
import { DECISIONS_HEADER, WORK_HEADER } from "../summary/projections-work.ts";
import { CARRY_FORWARD_HEADER, FOOTER_HEADER } from "../summary/render.ts";
import { ELLIPSIS, oneLine, renderAddress } from "../summary/render-text.ts";
import { REQUEST_BLOCK_HEADER } from "../summary/request-render.ts";

/**
 * Block ceilings (UTF-8 bytes, headers included): the spec's "Bounded
 * sections" table with issue 31's departures (NOTES.md): changed files are
 * listed whole, so `[Files And Changes]` may take 8 KiB; the transcript and
 * earlier turns, which `[Current Work]` and the requests now cover, 3 and
 * 2 KiB. Carry Forward is bounded to 3 KiB in the spec's section list;
 * annotations, the current turn plan, current work and decisions are not in
 * the spec and take the renderer's bounds.
 */
export const SPEC_BLOCK_CEILINGS: Readonly<Record<string, number>> = {
	[DIALOGUE_HEADER]: 12288,
	[PLAN_HEADER]: 3072,
	[WORK_HEADER]: 4096,
	[HISTORICAL_HEADER]: 4096,
	[REQUEST_BLOCK_HEADER]: 3072,
	[CARRY_FORWARD_HEADER]: 3072,
	[FILES_HEADER]: 8192,
	[DECISIONS_HEADER]: 3072,
	[ACTIVITY_HEADER]: 2048,
	[OUTSTANDING_HEADER]: 4608,
	[TURNS_HEADER]: 2048,
	[STATUS_HEADER]: 2048,
	[ANNOTATIONS_HEADER]: 1024,
	[TRANSCRIPT_HEADER]: 3072,
	[FOOTER_HEADER]: 1536,
};

/** Kinds of `[Files And Changes]`, as the spec names them, with their group label lines. */
const FILE_KIND_LABELS = { Created: "Created:", Written: "Written:", Modified: "Modified:", Read: "Read:" } as const;
type FileKind = keyof typeof FILE_KIND_LABELS;

/**
 * Plain Pi tools and Fabric refs whose typed `path` argument is a file
 * address, and the outer Fabric tool that carries no facts itself: the fact
 * extractor's own tables, so QA and summaries agree on what a file tool is.
 * The probes' logic (kinds, latest touch, omission ranges) stays their own.
 */
const FILE_TOOLS = FILE_ACTIONS;

export interface SourceProbe {
	id: string;
	failure?: string;
}

interface Addressed {
	address: string;
	entryIndex: number;
}

/** Lines after each header, keyed by header, as `splitSections` produced them. */
type Sections = ReadonlyMap<string, readonly string[]>;

/** The block's text as rendered: header plus its lines, without the separator's blank lines. */
function blockText(header: string, lines: readonly string[]): string {
	let end = lines.length;
	while (end > 0 && lines[end - 1] === "") end--;
	return [header, ...lines.slice(0, end)].join("\n");
}

function boundsProbe(sections: Sections): SourceProbe {
	const over: string[] = [];
	for (const [header, lines] of sections) {
		const ceiling = SPEC_BLOCK_CEILINGS[header];
		const bytes = utf8ByteLength(blockText(header, lines));
		if (ceiling !== undefined && bytes > ceiling) over.push(`${header} ${bytes} > ${ceiling}`);
	}
	return { id: "bounds:blocks", ...(over.length > 0 ? { failure: over.join("; ") } : {}) };
}

function footerLastProbe(text: string, sections: Sections): SourceProbe {
	const headers = [...sections.keys()];
	const failure =
		headers.at(-1) !== FOOTER_HEADER
			? "the footer is not the last block"
			: !text.endsWith("\n") || text.endsWith("\n\n")
				? "the text does not end with exactly one newline"
				: undefined;
	return { id: "footer:last", ...(failure ? { failure } : {}) };
}

/** Successful file touches by kind and path, each at its latest touch, read straight from the events. */
function sourceFiles(events: readonly NormalizedEvent[]): Map<FileKind, Map<string, Addressed>> {
	const files = new Map<FileKind, Map<string, Addressed>>();
	const touch = (tool: string, args: unknown, created: boolean, event: NormalizedEvent): void => {
		const action = FILE_TOOLS[tool];
		if (!action || !isPlainRecord(args) || typeof args.path !== "string") return;
		const kind: FileKind =
			action === "read" ? "Read" : action === "edit" ? "Modified" : created ? "Created" : "Written";
		const byPath = files.get(kind) ?? new Map<string, Addressed>();
		byPath.delete(args.path);
		byPath.set(args.path, { address: event.address, entryIndex: event.entryIndex });
		files.set(kind, byPath);
	};
	for (const event of events) {
		const input = event.kind === "toolResult" ? event.call?.args?.input : undefined;
		if (
			event.kind === "toolResult" &&
			!resultFailed(event) &&
			PATCH_TOOLS.has(event.toolName) &&
			typeof input === "string"
		) {
			// A patch envelope (Codex): each file it adds or updates, read by the shared envelope reader.
			for (const file of patchFiles(input)) {
				if (file.action === "add") touch("write", { path: file.path }, true, event);
				else if (file.action === "update") touch("edit", { path: file.path }, false, event);
			}
		} else if (
			event.kind === "toolResult" &&
			!resultFailed(event) &&
			event.toolName !== OUTER_FABRIC_TOOL &&
			event.call
		) {
			touch(event.toolName, event.call.args, event.created, event);
		} else if (event.kind === "fabricOperation" && event.outcome === "succeeded") {
			touch(event.ref, event.args, event.created, event);
		}
	}
	return files;
}

/** A tool result failed: its typed error flag, or a non-zero exit code its text states (a host frame). */
function resultFailed(event: NormalizedEvent & { kind: "toolResult" }): boolean {
	return event.isError || (event.exitCode !== undefined && event.exitCode !== 0);
}

/** The typed shell command of a tool result's call, if it has one. */
function shellCommand(event: NormalizedEvent & { kind: "toolResult" }): string | undefined {
	const command = SHELL_ACTIONS[event.toolName] ? event.call?.args?.command : undefined;
	return typeof command === "string" ? command : undefined;
}

/**
 * Failed tool results, user bash runs and nested operations, read straight
 * from the events; a shell search that found nothing (grep exiting 1) is an
 * answer, not a failure.
 */
function sourceFailures(events: readonly NormalizedEvent[]): Addressed[] {
	const failures: Addressed[] = [];
	const searchedNothing = (command: string | undefined, exitCode: number | undefined): boolean =>
		command !== undefined && searchFoundNothing(command, exitCode);
	for (const event of events) {
		const failed =
			(event.kind === "toolResult" &&
				resultFailed(event) &&
				event.toolName !== OUTER_FABRIC_TOOL &&
				!searchedNothing(shellCommand(event), event.exitCode ?? appendedExitCode(event.errorText ?? ""))) ||
			(event.kind === "bash" &&
				(event.cancelled ||
					(event.exitCode !== undefined && event.exitCode !== 0 && !searchedNothing(event.command, event.exitCode)))) ||
			(event.kind === "fabricOperation" && event.outcome !== "succeeded");
		if (failed) failures.push({ address: event.address, entryIndex: event.entryIndex });
	}
	return failures;
}

const MARKER = /^- \[(\d+) omitted: (@.*) … (@.*)\]$/;

interface Region {
	items: string[];
	markers: { count: number; first: number; last: number }[];
}

/**
 * Item lines and omission markers of a region. Marker ends are rendered entry
 * ids; they map back to the widest range of summarized entries rendering that
 * way (ids cut to the address bound may collide).
 */
function readRegion(lines: readonly string[], rendered: ReadonlyMap<string, { first: number; last: number }>): Region {
	const region: Region = { items: [], markers: [] };
	for (const line of lines) {
		if (!line.startsWith("- ")) continue;
		const marker = MARKER.exec(line);
		if (!marker) {
			region.items.push(line);
			continue;
		}
		const first = rendered.get(marker[2] ?? "")?.first ?? Number.POSITIVE_INFINITY;
		const last = rendered.get(marker[3] ?? "")?.last ?? Number.NEGATIVE_INFINITY;
		region.markers.push({ count: Number(marker[1]), first, last });
	}
	return region;
}

function omittedIn(region: Region, entryIndex: number): boolean {
	return region.markers.some((marker) => marker.first <= entryIndex && entryIndex <= marker.last);
}

function counted(region: Region): number {
	return region.items.length + region.markers.reduce((sum, marker) => sum + marker.count, 0);
}

/** A directory line of changed files: `- @id in <dir>/: <name>, <name> ×N, …`. */
const DIRECTORY_LINE = /^- @\S+ in (.*)\/: (.+)$/;

/** The paths (directory + name, relative to the display root) a directory line lists, or undefined for other lines. */
function directoryPaths(line: string): string[] | undefined {
	const match = DIRECTORY_LINE.exec(line);
	if (!match) return undefined;
	const dir = match[1] ?? "";
	return (match[2] ?? "").split(", ").map((name) => {
		const bare = name.replace(/ ×\d+$/, "");
		return dir === "." ? bare : `${dir}/${bare}`;
	});
}

/** Files a region lists: a directory line counts every name it holds. */
function countedFiles(region: Region): number {
	const listed = region.items.reduce((sum, line) => sum + (directoryPaths(line)?.length ?? 1), 0);
	return listed + region.markers.reduce((sum, marker) => sum + marker.count, 0);
}

/** A directory line shows `path` when one of its relative paths is a whole-segment suffix of it. */
function directoryShows(line: string, path: string): boolean {
	const full = oneLine(path).replaceAll("\\", "/");
	return (directoryPaths(line) ?? []).some(
		(relative) => full === relative || full.endsWith(`/${relative.replaceAll("\\", "/")}`),
	);
}

/**
 * A rendered path body: the path's one-line tail (relative to the display
 * root), possibly cut at its start with an ellipsis. It is empty only for a
 * path that is itself the display root (ends with a separator) or blank.
 */
function showsPath(body: string, path: string): boolean {
	const shown = body.startsWith(ELLIPSIS) ? body.slice(ELLIPSIS.length) : body;
	const full = oneLine(path);
	if (shown === "") return full === "" || full.endsWith("/") || full.endsWith("\\");
	return full.endsWith(shown);
}

function filesProbe(
	files: ReadonlyMap<FileKind, ReadonlyMap<string, Addressed>>,
	sections: Sections,
	rendered: ReadonlyMap<string, { first: number; last: number }>,
): SourceProbe {
	const probe = (failure?: string): SourceProbe => ({ id: "files:paths", ...(failure ? { failure } : {}) });
	if (files.size === 0) return probe();
	const section = sections.get(FILES_HEADER);
	if (!section) return probe(`${FILES_HEADER} missing`);
	const labels = new Set<string>(Object.values(FILE_KIND_LABELS));
	for (const [kind, byPath] of files) {
		const start = section.indexOf(FILE_KIND_LABELS[kind]);
		if (start < 0) return probe(`group ${kind} missing`);
		let end = start + 1;
		while (end < section.length && !labels.has(section[end] ?? "")) end++;
		const region = readRegion(section.slice(start + 1, end), rendered);
		if (countedFiles(region) !== byPath.size) {
			return probe(`${kind}: ${countedFiles(region)} items and omissions for ${byPath.size} source paths`);
		}
		for (const [path, touch] of byPath) {
			const lead = `- ${renderAddress(touch.address)} `;
			const shown = region.items.some((line) => {
				if (directoryPaths(line) !== undefined) return directoryShows(line, path);
				if (!line.startsWith(lead)) return false;
				return showsPath(line.slice(lead.length).replace(/^×\d+ /, ""), path);
			});
			if (!shown && !omittedIn(region, touch.entryIndex)) {
				return probe(`${kind} path of entry #${touch.entryIndex} neither rendered nor in an omission range`);
			}
		}
	}
	return probe();
}

function failuresProbe(
	failures: readonly Addressed[],
	sections: Sections,
	rendered: ReadonlyMap<string, { first: number; last: number }>,
): SourceProbe {
	const probe = (failure?: string): SourceProbe => ({ id: "failures:addresses", ...(failure ? { failure } : {}) });
	if (failures.length === 0) return probe();
	const section = sections.get(OUTSTANDING_HEADER);
	if (!section) return probe(`${OUTSTANDING_HEADER} missing`);
	const region = readRegion(section, rendered);
	if (counted(region) !== failures.length) {
		return probe(`${counted(region)} items and omissions for ${failures.length} source failures`);
	}
	for (const failure of failures) {
		const lead = `- ${renderAddress(failure.address)} `;
		if (!region.items.some((line) => line.startsWith(lead)) && !omittedIn(region, failure.entryIndex)) {
			return probe(`failure of entry #${failure.entryIndex} neither rendered nor in an omission range`);
		}
	}
	return probe();
}

/**
 * Run the source-derived probes. `sourceEvents` are the summarized prefix's
 * events; `sourceEntryIds` the summarized entries in order (omission ranges
 * must name them).
 */
export function sourceProbes(
	text: string,
	sections: Sections,
	sourceEvents: readonly NormalizedEvent[],
	sourceEntryIds: readonly string[],
): SourceProbe[] {
	const rendered = new Map<string, { first: number; last: number }>();
	sourceEntryIds.forEach((id, index) => {
		const key = renderAddress(id);
		const range = rendered.get(key);
		rendered.set(key, { first: range?.first ?? index, last: index });
	});
	return [
		boundsProbe(sections),
		footerLastProbe(text, sections),
		filesProbe(sourceFiles(sourceEvents), sections, rendered),
		failuresProbe(sourceFailures(sourceEvents), sections, rendered),
	];
}

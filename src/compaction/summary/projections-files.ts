/**
 * Operation projections: file addresses (`[Files And Changes]`) and failures
 * with their resolutions (`[Outstanding Context]`), rendered from the facts
 * `src/session/facts.ts` extracts (the same facts fold briefs show).
 *
 * A failure is resolved by a later success of the same tool on the same
 * target: the same file for file tools, the same script for shell commands,
 * the same arguments otherwise (`resolutionKey`). Error text is quoted with
 * bounds, never parsed. Outer `fabric_exec` results never create file or
 * failure facts; their nested operations do.
 */

import type { NormalizedEvent } from "../../session/events.ts";
import {
	type FailureRecord,
	FILE_KINDS,
	type FileKind,
	type FileTouch,
	failureRecords,
	fileTouchesByKind,
} from "../../session/facts.ts";
import { utf8ByteLength } from "../../text/utf8.ts";
import {
	FILE_LIMIT_PER_KIND,
	type OmissionKey,
	OPERATION_STATE_LIMIT,
	type ViewBlock,
	type ViewGroup,
	type ViewItem,
} from "./projections-model.ts";
import { identifierLabel, oneLine, renderAddress } from "./render-text.ts";

export {
	ARGS_LABEL_MAX_BYTES,
	argsLabel,
	type FailureRecord,
	FILE_ACTIONS,
	FILE_KINDS,
	FILE_SYSTEM_REFS,
	type FileKind,
	failureRecords,
	fileKindOf,
	fileTouchesByKind,
	type Operation,
	operationsOf,
	SHELL_ACTIONS,
} from "../../session/facts.ts";

export const FILES_HEADER = "[Files And Changes]";
export const OUTSTANDING_HEADER = "[Outstanding Context]";

const FILE_KIND_KEYS: Record<FileKind, OmissionKey> = {
	Created: "filesCreated",
	Written: "filesWritten",
	Modified: "filesModified",
	Read: "filesRead",
};

/** A longer common path prefix is not used as display root: the prelude line stays bounded. */
export const DISPLAY_ROOT_MAX_BYTES = 256;

/**
 * Common directory prefix of all paths, segmented on `/` or `\`, used to
 * shorten displayed paths. Undefined when there is no prefix beyond a root separator.
 */
export function displayRootOf(paths: readonly string[]): string | undefined {
	const first = paths[0];
	if (first === undefined) return undefined;
	let length = first.length;
	for (const path of paths) {
		let index = 0;
		while (index < length && index < path.length && path[index] === first[index]) index++;
		length = index;
	}
	const common = first.slice(0, length);
	const cut = Math.max(common.lastIndexOf("/"), common.lastIndexOf("\\"));
	if (cut < 1) return undefined;
	return first.slice(0, cut + 1);
}

export function displayPath(path: string, root: string | undefined): string {
	return oneLine(root && path.startsWith(root) ? path.slice(root.length) : path);
}

/** A changed-file kind with more paths than this lists them by directory, one line per directory. */
export const FILE_GROUP_MIN_PATHS = 12;
/**
 * Bytes the directory lines of the changed kinds may take together. Changed
 * files are listed whole, never as a count; past this (hundreds of files)
 * each kind falls back to one sampled line per path, as read files are.
 */
export const CHANGED_FILES_MAX_BYTES = 6144;
/** How a directory line starts after its address: `- @id in src/app/: a.ts, b.ts ×2`. */
export const FILE_GROUP_PREFIX = "in ";

const CHANGED_KINDS: ReadonlySet<FileKind> = new Set(["Created", "Written", "Modified"]);

function directoryOf(path: string): { dir: string; name: string } {
	const cut = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"));
	return cut < 0 ? { dir: ".", name: path } : { dir: path.slice(0, cut), name: path.slice(cut + 1) };
}

/**
 * One item per directory of `touches` (paths relative to `root`), in order of
 * each directory's latest touch: the names, `×N` for repeated touches, at the
 * directory's latest address. The whole line is fixed: no name is cut.
 */
function directoryItems(touches: readonly FileTouch[], root: string | undefined): ViewItem[] {
	const byDir = new Map<string, { names: string[]; latest: FileTouch }>();
	for (const touch of touches) {
		const { dir, name } = directoryOf(displayPath(touch.path, root));
		const group = byDir.get(dir) ?? { names: [], latest: touch };
		group.names.push(`${oneLine(name)}${touch.count > 1 ? ` ×${touch.count}` : ""}`);
		if (touch.ordinal >= group.latest.ordinal) group.latest = touch;
		byDir.set(dir, group);
	}
	return [...byDir.entries()]
		.sort((a, b) => a[1].latest.ordinal - b[1].latest.ordinal)
		.map(([dir, group]) => ({
			entryId: group.latest.entryId,
			lead: `${renderAddress(group.latest.address)} ${FILE_GROUP_PREFIX}${oneLine(dir)}/: ${group.names.join(", ")}`,
			text: "",
			trail: "",
			keep: "end",
			textRequired: false,
		}));
}

function pathItems(touches: readonly FileTouch[], root: string | undefined): ViewItem[] {
	return touches.map(
		(touch): ViewItem => ({
			entryId: touch.entryId,
			lead: `${renderAddress(touch.address)} ${touch.count > 1 ? `×${touch.count} ` : ""}`,
			text: displayPath(touch.path, root),
			trail: "",
			keep: "end",
			textRequired: true,
		}),
	);
}

/**
 * `[Files And Changes]`: changed files (Created, Written, Modified) first and
 * whole (by directory when a kind has many), read files after them, sampled.
 */
export function projectFiles(events: readonly NormalizedEvent[]): ViewBlock {
	const touches = fileTouchesByKind(events);
	const common = displayRootOf(FILE_KINDS.flatMap((kind) => touches[kind].map((touch) => touch.path)));
	const root = common !== undefined && utf8ByteLength(common) <= DISPLAY_ROOT_MAX_BYTES ? common : undefined;
	const grouped = new Map<FileKind, ViewItem[]>();
	let changedBytes = 0;
	for (const kind of FILE_KINDS) {
		if (!CHANGED_KINDS.has(kind) || touches[kind].length <= FILE_GROUP_MIN_PATHS) continue;
		const items = directoryItems(touches[kind], root);
		grouped.set(kind, items);
		changedBytes += items.reduce((sum, line) => sum + utf8ByteLength(line.lead) + 3, 0);
	}
	const whole = changedBytes <= CHANGED_FILES_MAX_BYTES;
	const groups: ViewGroup[] = FILE_KINDS.map((kind) => {
		const byDirectory = whole ? grouped.get(kind) : undefined;
		const changed = CHANGED_KINDS.has(kind) && whole;
		return {
			key: FILE_KIND_KEYS[kind],
			label: `${kind}:`,
			items: byDirectory ?? pathItems(touches[kind], root),
			limit: FILE_LIMIT_PER_KIND,
			mode: changed ? "all" : "earliest-latest",
			maxTextBytes: 512,
		};
	});
	const hasFiles = groups.some((group) => group.items.length > 0);
	return {
		key: "files",
		header: FILES_HEADER,
		prelude: hasFiles && root ? [`Paths relative to ${oneLine(root)}`] : [],
		groups,
	};
}

export const OPEN_FAILURES_LABEL = "Open:";
export const RESOLVED_FAILURES_LABEL = "Resolved:";

function failureItem({ failure, resolvedBy }: FailureRecord): ViewItem {
	// The error's own line first (not a host's output frame or Pi's framing: text/tool-text.ts), then the
	// rest of the text as room allows.
	const line = failure.errorLine;
	const preview =
		line && failure.errorText && !failure.errorText.startsWith(line)
			? `${line} — ${failure.errorText}`
			: (failure.errorText ?? line);
	const state = resolvedBy ? `resolved by ${renderAddress(resolvedBy.address)}` : "open";
	return {
		entryId: failure.entryId,
		lead: `${renderAddress(failure.address)} ${state} ${identifierLabel(failure.tool)}: `,
		text: preview ? `${failure.label} → "${preview}"` : failure.label,
		trail: "",
		keep: "start",
		textRequired: true,
	};
}

/**
 * Failures still open first, then resolved ones. The two share the spec's 32
 * operation-state records; resolved ones are listed only when every open one
 * is, else counted by their omission marker, so an open failure is never
 * sampled out while a resolved one is listed.
 */
export function projectOutstanding(events: readonly NormalizedEvent[]): ViewBlock {
	const records = failureRecords(events);
	const open = records.filter((record) => record.resolvedBy === undefined).map(failureItem);
	const resolved = records.filter((record) => record.resolvedBy !== undefined).map(failureItem);
	const group = (label: string, items: ViewItem[], limit: number): ViewGroup => ({
		key: "operations",
		label,
		items,
		limit,
		mode: "earliest-latest",
		maxTextBytes: 512,
	});
	return {
		key: "outstanding",
		header: OUTSTANDING_HEADER,
		prelude: [],
		groups: [
			group(OPEN_FAILURES_LABEL, open, OPERATION_STATE_LIMIT),
			{
				...group(RESOLVED_FAILURES_LABEL, resolved, Math.max(0, OPERATION_STATE_LIMIT - open.length)),
				afterCompleteGroups: true,
			},
		],
	};
}

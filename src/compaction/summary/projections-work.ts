/**
 * What the continuation starts from (departures from the spec, which has
 * neither block; NOTES.md "Where we differ from the compaction spec"):
 *
 * - `[Current Work]`: the last steps before this compaction, the kept raw
 *   tail included: the user requests the tail holds, the paths and commands
 *   of the last tool calls, and the names they and the agent's last replies
 *   use. The tail is raw after this summary, but the next compaction
 *   summarizes it from far back, where sampled blocks thin it out; stating
 *   it here keeps it in every summary that follows (each one rebuilds from
 *   raw history, and this block is rebuilt with it). Protected like the plan.
 * - `[Decisions]`: the choices the agent stated in its own words
 *   (`src/session/decisions.ts`), kept tail included, newest kept.
 *
 * Both read typed events only: typed call arguments (`path`, `command`),
 * user and assistant text. Names are picked by their shape (paths, dotted,
 * camel or snake case, code spans, `#123`), never by meaning.
 */

import { DECISION_MAX_BYTES, decisionsOf } from "../../session/decisions.ts";
import type { NormalizedEvent } from "../../session/events.ts";
import { FILE_ACTIONS, failureRecords, PATCH_TOOLS, SHELL_ACTIONS } from "../../session/facts.ts";
import { isPlainRecord } from "../../session/records/record-guards.ts";
import { patchFiles } from "../../text/tool-text.ts";
import { utf8ByteLength } from "../../text/utf8.ts";
import type { ViewBlock, ViewItem } from "./projections-model.ts";
import { boundedOneLine, identifierLabel, oneLine, renderAddress, shrinkText } from "./render-text.ts";

export const WORK_HEADER = "[Current Work]";
export const DECISIONS_HEADER = "[Decisions]";
export const WORK_INTRO = "The last steps before this compaction, the kept raw tail included; newest last.";
export const DECISIONS_INTRO = "Choices the agent stated, in its words (not verified outcomes); newest last.";
export const WORK_REQUESTS_LABEL = "Requests in the kept tail:";
export const WORK_FILES_LABEL = "Files:";
export const WORK_COMMANDS_LABEL = "Commands:";
export const WORK_NAMES_LEAD = "Names in use: ";

/** Tool calls read as "the last steps". */
export const WORK_CALLS = 40;
/** Requests of the kept tail quoted (the newest), and the bytes of each. */
export const WORK_REQUEST_LIMIT = 2;
export const WORK_REQUEST_MAX_BYTES = 1024;
/** Paths and commands listed (the newest). */
export const WORK_FILE_LIMIT = 12;
export const WORK_COMMAND_LIMIT = 8;
export const WORK_COMMAND_MAX_BYTES = 240;
/** Names listed, and the bytes of their line. */
export const WORK_NAME_LIMIT = 48;
export const WORK_NAMES_MAX_BYTES = 1024;
/** Decisions listed (the newest). */
export const DECISION_LIMIT = 16;
/** Characters of one text or argument read for names. */
const NAME_SCAN_MAX_CHARS = 8 * 1024;
/** Shortest name kept (shorter camel or snake case words are mostly prose). */
const NAME_MIN_CHARS = 5;
const NAME_MAX_CHARS = 80;
/** Paths, `#123`, dotted names (file names with hyphens whole), camelCase, PascalCase with two humps, snake_case, `code spans`. */
const NAME_SHAPES =
	/`([^`\s]{3,80})`|#\d{2,}\b|(?:\.{0,2}\/)?[\w@.-]+(?:\/[\w@.-]+)+|(?<![\w$-])[A-Za-z_$][\w$-]*(?:\.[A-Za-z_$][\w$-]*)+\b|\b[a-z]+[A-Z][\w$]*\b|\b[A-Z][a-z\d]+[A-Z][\w$]*\b|\b[a-z\d]+(?:_[a-z\d]+)+\b/g;

function item(entryId: string, lead: string, text: string, keep: "start" | "end" = "start"): ViewItem {
	return { entryId, lead, text, trail: "", keep, textRequired: true };
}

/** Every string inside a JSON value (depth first), each cut to the scan bound. */
function stringsOf(value: unknown, out: string[] = []): string[] {
	if (typeof value === "string") out.push(value.slice(0, NAME_SCAN_MAX_CHARS));
	else if (Array.isArray(value)) for (const element of value) stringsOf(element, out);
	else if (isPlainRecord(value)) for (const element of Object.values(value)) stringsOf(element, out);
	return out;
}

/** Names in a text, by shape. */
export function namesIn(text: string): string[] {
	const names: string[] = [];
	for (const match of text.slice(0, NAME_SCAN_MAX_CHARS).matchAll(NAME_SHAPES)) {
		const name = (match[1] ?? match[0]).replace(/[.,:;)]+$/, "");
		if (name.length >= NAME_MIN_CHARS && name.length <= NAME_MAX_CHARS) names.push(name);
		else if (name.startsWith("#")) names.push(name);
	}
	return names;
}

/** Events of the last `WORK_CALLS` tool calls up to the end of the kept tail. */
function lastSteps(events: readonly NormalizedEvent[]): readonly NormalizedEvent[] {
	let calls = 0;
	for (let index = events.length - 1; index >= 0; index--) {
		if (events[index]?.kind === "toolCall" && ++calls > WORK_CALLS) return events.slice(index + 1);
	}
	return events;
}

function workNames(steps: readonly NormalizedEvent[]): string[] {
	const seen = new Map<string, { count: number; last: number }>();
	steps.forEach((event, position) => {
		const texts = event.kind === "toolCall" ? stringsOf(event.args) : event.kind === "assistant" ? [event.text] : [];
		for (const text of texts) {
			for (const name of namesIn(text)) {
				const entry = seen.get(name);
				seen.set(name, { count: (entry?.count ?? 0) + 1, last: position });
			}
		}
	});
	return [...seen.entries()]
		.sort((a, b) => b[1].count - a[1].count || b[1].last - a[1].last || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
		.slice(0, WORK_NAME_LIMIT)
		.map(([name]) => name);
}

/** One bounded line of names, whole names only. */
function namesLine(names: readonly string[]): string | undefined {
	let line = WORK_NAMES_LEAD;
	let listed = 0;
	for (const name of names) {
		const next = `${listed > 0 ? ", " : ""}${oneLine(name)}`;
		if (utf8ByteLength(line + next) > WORK_NAMES_MAX_BYTES) break;
		line += next;
		listed++;
	}
	return listed > 0 ? line : undefined;
}

/** `[Current Work]` for a summary cut at `cutEventIndex` of `events` (summarized prefix, then kept tail). */
export function projectCurrentWork(events: readonly NormalizedEvent[], cutEventIndex: number): ViewBlock {
	const steps = lastSteps(events);
	const requests = events
		.slice(cutEventIndex)
		.filter((event) => event.kind === "user" && event.origin === "raw" && event.text.trim() !== "")
		.map((event) =>
			item(
				event.entryId,
				`${renderAddress(event.address)} `,
				`"${boundedOneLine(event.kind === "user" ? event.text : "", WORK_REQUEST_MAX_BYTES)}"`,
			),
		);
	const files = new Map<string, ViewItem & { ordinal: number }>();
	const commands: ViewItem[] = [];
	// A command's state: ok, failed, or failed and settled by a later run of the same script (facts.ts).
	const states = new Map<string, string>();
	// The steps run to the end of the kept tail, so every later run that settles one of their failures is in them.
	for (const { failure, resolvedBy } of failureRecords(steps)) {
		if (failure.toolCallId === undefined) continue;
		states.set(
			failure.toolCallId,
			resolvedBy ? `failed, resolved by ${renderAddress(resolvedBy.address)}: ` : "failed: ",
		);
	}
	for (const event of steps) {
		if (event.kind === "toolResult" && !states.has(event.toolCallId)) states.set(event.toolCallId, "ok: ");
	}
	for (const event of steps) {
		if (event.kind !== "toolCall") continue;
		const args = event.args;
		const path =
			typeof args?.path === "string" ? args.path : typeof args?.file_path === "string" ? args.file_path : undefined;
		const command = typeof args?.command === "string" ? args.command : undefined;
		const action = FILE_ACTIONS[event.toolName] ?? identifierLabel(event.toolName);
		const patch = PATCH_TOOLS.has(event.toolName) && typeof args?.input === "string" ? patchFiles(args.input) : [];
		for (const file of patch) {
			files.delete(file.path);
			const lead = `${renderAddress(event.address)} ${action} ${file.action} `;
			files.set(file.path, { ...item(event.entryId, lead, oneLine(file.path), "end"), ordinal: event.ordinal });
		}
		if (path !== undefined && path.trim() !== "") {
			files.delete(path);
			files.set(path, {
				...item(event.entryId, `${renderAddress(event.address)} ${action} `, oneLine(path), "end"),
				ordinal: event.ordinal,
			});
		} else if (command !== undefined && SHELL_ACTIONS[event.toolName]) {
			const state = states.get(event.toolCallId) ?? "";
			commands.push(
				item(
					event.entryId,
					`${renderAddress(event.address)} ${state}`,
					shrinkText(oneLine(command), WORK_COMMAND_MAX_BYTES),
				),
			);
		}
	}
	const listedFiles = [...files.values()].sort((a, b) => a.ordinal - b.ordinal);
	// Paths have their own lines; the names line carries what else the steps used.
	const names = namesLine(workNames(steps).filter((name) => !files.has(name)));
	const hasContent = requests.length + listedFiles.length + commands.length > 0 || names !== undefined;
	return {
		key: "work",
		header: WORK_HEADER,
		prelude: hasContent ? [WORK_INTRO, ...(names ? [names] : [])] : [],
		groups: [
			{
				key: "work",
				label: WORK_REQUESTS_LABEL,
				items: requests.slice(-WORK_REQUEST_LIMIT),
				limit: WORK_REQUEST_LIMIT,
				mode: "latest",
				maxTextBytes: WORK_REQUEST_MAX_BYTES + 2,
			},
			{
				key: "work",
				label: WORK_FILES_LABEL,
				items: listedFiles.slice(-WORK_FILE_LIMIT),
				limit: WORK_FILE_LIMIT,
				mode: "latest",
				maxTextBytes: 512,
			},
			{
				key: "work",
				label: WORK_COMMANDS_LABEL,
				items: commands.slice(-WORK_COMMAND_LIMIT),
				limit: WORK_COMMAND_LIMIT,
				mode: "latest",
				maxTextBytes: WORK_COMMAND_MAX_BYTES,
			},
		],
	};
}

/** `[Decisions]`: the agent's stated choices in `events` (summarized prefix and kept tail), newest kept. */
export function projectDecisions(events: readonly NormalizedEvent[]): ViewBlock {
	const items = decisionsOf(events).map((decision) =>
		item(decision.entryId, `${renderAddress(decision.address)} `, `"${decision.text}"`),
	);
	return {
		key: "decisions",
		header: DECISIONS_HEADER,
		prelude: items.length > 0 ? [DECISIONS_INTRO] : [],
		groups: [{ key: "decisions", items, limit: DECISION_LIMIT, mode: "latest", maxTextBytes: DECISION_MAX_BYTES + 2 }],
	};
}

/**
 * Deterministic fold briefs and the bound every brief obeys.
 *
 * A brief is what the model sees in place of a collapsed fold: an index entry
 * (kind, id, what it holds, the exact recall calls) and a summary an agent can
 * continue from. A tool batch leads with each call: the tool, its arguments
 * (bounded), the result's size and first meaningful line, error or not, so
 * two batches of the same tool never read alike. A chapter or consolidation
 * leads with its counts and label ranges, then the folds it holds (each id
 * with a few words), the ask, how its last reply ended (only when a reply
 * ends it), its calls by label range, and the span's typed facts
 * (`src/session/facts.ts`, the extractor compaction summaries read too):
 * changes, commands, errors, reads, searches. Same entries, same bytes.
 *
 * Every brief, deterministic or supplied by a model, is finished by
 * `finishBrief`: the body is cut to fit `BRIEF_MAX_CHARS` (UTF-16 code units,
 * i.e. JavaScript string length, never splitting a surrogate pair) and the
 * exact recall calls are appended intact, with the call that lists the folds
 * inside when there are any.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { endsWithReply, type SpanCall, spanCalls } from "../../session/calls.ts";
import { type SpanCommand, type SpanError, type SpanFacts, spanFacts } from "../../session/facts.ts";
import { boundedList, TRUNCATION_MARK, truncateText } from "../../text/bounded.ts";
import { declaredNames } from "../../text/declared-names.ts";
import { contentText } from "../../text/lines.ts";
import { isCodeIdentifier } from "../../text/references.ts";
import { type ChildSpan, callLine, callsIndex, innerFoldsText, labelRanges } from "./brief-index.ts";

export { boundedList, TRUNCATION_MARK, truncateText } from "../../text/bounded.ts";
export { type ChildSpan, labelRanges } from "./brief-index.ts";

/** Upper bound on a whole brief, recall calls included, in UTF-16 code units. */
export const BRIEF_MAX_CHARS = 1200;
/** Default name of the context tool the recall calls address. */
export const DEFAULT_CONTEXT_TOOL_NAME = "active_context";

/** Per-line bounds, so one long list cannot crowd out the rest of the brief. */
export const BRIEF_LINE_LIMITS = {
	header: 240,
	call: 230,
	calls: 640,
	ask: 180,
	ended: 200,
	said: 140,
	steps: 120,
	innerFolds: 420,
	callIndex: 220,
	changed: 200,
	commands: 200,
	errors: 260,
	read: 140,
	searches: 100,
	names: 480,
} as const;
/** Bound on one command inside the Commands and Errors lines: the error text matters more than its command. */
export const BRIEF_COMMAND_CHARS = 48;
/** Bound on one error's first line inside the Errors line. */
export const BRIEF_ERROR_TEXT_CHARS = 110;
/** Bound on the label ranges or calls a chapter's first line names. */
export const BRIEF_WHAT_CHARS = 90;

/**
 * The kinds of span a fold covers, which a brief names. Defined here, below the
 * lattice, because the lattice writes a record's brief (lattice.ts) and its
 * records carry the kind (records.ts re-exports it).
 */
export type FoldKind = "tool-batch" | "chapter" | "consolidation";

export const KIND_LABELS: Record<FoldKind, string> = {
	"tool-batch": "Tool batch",
	chapter: "Chapter",
	consolidation: "Consolidation",
};

/** The calls that bring a fold's exact source back, and the one that lists the folds inside it. */
export function recallCalls(
	id: string,
	toolName = DEFAULT_CONTEXT_TOOL_NAME,
): { peek: string; expand: string; children: string } {
	return {
		peek: `${toolName} ${JSON.stringify({ action: "peek", id })}`,
		expand: `${toolName} ${JSON.stringify({ action: "expand", id })}`,
		children: `${toolName} ${JSON.stringify({ action: "peek", id, children: true })}`,
	};
}

/**
 * Bound a brief body and append the recall calls (and, for a fold with
 * folds inside, the call that lists them). The result is at most
 * `BRIEF_MAX_CHARS` long unless the calls alone exceed it (a tool name of
 * hundreds of characters), in which case the body is dropped and the calls
 * are kept whole: a brief without its way back is worse than a long one.
 */
export function finishBrief(
	body: string,
	id: string,
	toolName = DEFAULT_CONTEXT_TOOL_NAME,
	options: { hasChildren?: boolean } = {},
): string {
	const calls = recallCalls(id, toolName);
	const list = options.hasChildren ? `List the folds inside: ${calls.children}\n` : "";
	const suffix = `${list}Read exact source: ${calls.peek}\nRestore in place: ${calls.expand}`;
	const budget = BRIEF_MAX_CHARS - suffix.length - 1;
	const trimmed = body.trim();
	if (budget <= TRUNCATION_MARK.length || trimmed.length === 0) return suffix;
	return `${truncateText(trimmed, budget)}\n${suffix}`;
}

/**
 * A brief's first line without its "Tool batch f-…: " lead (a listing shows
 * kind and id on its own): what tells this fold from its neighbours.
 */
export function briefWhat(brief: string, id: string): string {
	const line = brief.trim().split("\n", 1)[0] ?? "";
	const at = line.indexOf(`${id}: `);
	return at >= 0 && at < 20 ? line.slice(at + id.length + 2) : line;
}

/** What a span holds, read from typed fields only (kept under its old name for callers). */
export type BriefFacts = SpanFacts;

/** The typed facts of a span, as briefs read them. */
export function briefFacts(entries: readonly SessionEntry[], cwd?: string): SpanFacts {
	return spanFacts(entries, cwd);
}

export interface BriefInput {
	id: string;
	kind: FoldKind;
	/** The fold's leaf entries in transcript order. */
	entries: readonly SessionEntry[];
	/** Folds directly inside this one, in order, with their leaf entries: each can be peeked on its own. */
	children?: readonly ChildSpan[];
	toolName?: string;
	/** Session working directory; paths under it are shown relative. */
	cwd?: string;
	/** Entries just before the fold, where a call it continues may have started (src/session/split-calls.ts). */
	before?: readonly SessionEntry[];
}

/** A deterministic, bounded brief for a fold, ending with its recall calls. */
export function deterministicBrief(input: BriefInput): string {
	const facts = spanFacts(input.entries, input.cwd);
	const calls = spanCalls(input.entries, input.cwd, input.before);
	const body = input.kind === "tool-batch" ? batchBody(input, facts, calls) : spanBody(input, facts, calls);
	return finishBrief(body, input.id, input.toolName, { hasChildren: (input.children ?? []).length > 0 });
}

const plural = (count: number, one: string, many = `${one}s`): string => `${count} ${count === 1 ? one : many}`;

/** Adds `Label: text` lines, each bounded. */
function lineWriter(lines: string[]) {
	return (label: string, text: string | undefined, max: number): void => {
		if (text) lines.push(truncateText(`${label}: ${text}`, max));
	};
}
const room = (label: string, max: number) => max - label.length - 2;

/**
 * A tool batch leads with its calls. One call: the header is the call line.
 * Several: the header names them, then one line each, as many as fit.
 */
function batchBody(input: BriefInput, facts: SpanFacts, calls: readonly SpanCall[]): string {
	const limits = BRIEF_LINE_LIMITS;
	const head = `${KIND_LABELS[input.kind]} ${input.id}: `;
	const lines: string[] = [];
	const only = calls.length === 1 ? calls[0] : undefined;
	if (only) lines.push(truncateText(`${head}${callLine(only)}`, limits.header));
	else {
		const failed = calls.filter((call) => call.result?.isError).length;
		const names = boundedList(
			calls.map((call) => `${call.tool}${call.args ? ` ${call.args}` : ""}`),
			", ",
			limits.header - head.length - 30,
		);
		lines.push(
			truncateText(
				`${head}${plural(calls.length, "call")}${failed > 0 ? `, ${failed} failed` : ""}: ${names ?? ""}.`,
				limits.header,
			),
		);
		const items = calls.map((call) => truncateText(`- ${callLine(call)}`, limits.call));
		const listed = boundedList(items, "\n", limits.calls);
		if (listed) lines.push(listed.replace(/ \(\+(\d+) more\)$/, "\n- (+$1 more calls)"));
	}
	const add = lineWriter(lines);
	add("Said", facts.ended, limits.said);
	add("Changed", changedLine(facts, room("Changed", limits.changed)), limits.changed);
	add("Names", namesLine(input.entries, room("Names", limits.names)), limits.names);
	return lines.join("\n");
}

/** "Chapter f-…: 12 entries, 1 user, 4 assistant, 7 tool calls, 1 failed; stage 3–9." */
function headerLine(input: BriefInput, facts: SpanFacts, calls: readonly SpanCall[]): string {
	const counts = [plural(facts.entryCount, "entry", "entries")];
	const children = input.children?.length ?? 0;
	if (children > 0) counts.push(plural(children, "fold"));
	if (facts.userMessages > 0) counts.push(`${facts.userMessages} user`);
	if (facts.assistantMessages > 0) counts.push(`${facts.assistantMessages} assistant`);
	if (facts.toolCalls > 0) counts.push(plural(facts.toolCalls, "tool call"));
	if (facts.failedCalls > 0) counts.push(`${facts.failedCalls} failed`);
	const what = spanWhat(facts, calls, input.toolName ?? DEFAULT_CONTEXT_TOOL_NAME);
	return truncateText(
		`${KIND_LABELS[input.kind]} ${input.id}: ${counts.join(", ")}${what ? `; ${what}` : ""}.`,
		BRIEF_LINE_LIMITS.header,
	);
}

/** What tells this span from the next: its label ranges, else its calls, else its ask. */
function spanWhat(facts: SpanFacts, calls: readonly SpanCall[], contextTool: string): string | undefined {
	const labels = boundedList(labelRanges(facts.labels), ", ", BRIEF_WHAT_CHARS);
	if (labels) return labels;
	const index = callsIndex(calls, contextTool, BRIEF_WHAT_CHARS);
	if (index) return index;
	return facts.ask ? truncateText(`"${facts.ask}"`, BRIEF_WHAT_CHARS) : undefined;
}

/** Landed edits and writes with the files they changed: "3 edits, 1 write in 2 files: a.ts, b.md". */
function changedLine(facts: SpanFacts, max: number): string | undefined {
	const files = [...new Set([...facts.files.Created, ...facts.files.Written, ...facts.files.Modified])];
	if (files.length === 0) return undefined;
	const counts = [
		facts.edits > 0 ? plural(facts.edits, "edit") : "",
		facts.writes > 0 ? plural(facts.writes, "write") : "",
	]
		.filter(Boolean)
		.join(", ");
	const lead = `${counts} in ${plural(files.length, "file")}: `;
	return `${lead}${boundedList(files, ", ", max - lead.length - 9) ?? ""}`;
}

/**
 * Names the span's tool results declare or import (`declaredNames`), newest
 * results first: what a later reply may name. Code-shaped names
 * (`showThemeSelector`, `EVENT_FIELDS`) lead and plain words (`message`,
 * `cursor`) follow: a reply that points back names the distinctive ones, and
 * a large file declares more than the line holds.
 */
function namesLine(entries: readonly SessionEntry[], max: number): string | undefined {
	const names = new Set<string>();
	for (let i = entries.length - 1; i >= 0; i--) {
		const entry = entries[i];
		if (entry?.type !== "message" || entry.message.role !== "toolResult") continue;
		for (const name of declaredNames(contentText(entry.message.content))) names.add(name);
	}
	const all = [...names];
	return boundedList([...all.filter(isCodeIdentifier), ...all.filter((name) => !isCodeIdentifier(name))], ", ", max);
}

function commandOutcome(command: SpanCommand): string {
	if (command.ok) return "ok";
	return command.exitCode !== undefined ? `exit ${command.exitCode}` : "failed";
}

/** "5 run, 1 failed; last: npm test → ok; before: git status; npm ci (+2 more)". */
function commandsLine(facts: SpanFacts, max: number): string | undefined {
	const commands = facts.commands;
	const last = commands.at(-1);
	if (!last) return undefined;
	const failed = commands.filter((command) => !command.ok).length;
	const name = (command: SpanCommand) => truncateText(`${command.user ? "!" : ""}${command.text}`, BRIEF_COMMAND_CHARS);
	const ended = `${name(last)} → ${commandOutcome(last)}`;
	if (commands.length === 1) return ended;
	const head = `${commands.length} run${failed > 0 ? `, ${failed} failed` : ""}; last: ${ended}`;
	const before = [...new Set(commands.slice(0, -1).map(name))].filter((text) => text !== name(last));
	const list = boundedList(before, "; ", max - head.length - 10);
	return list ? `${head}; before: ${list}` : head;
}

function errorItem(error: SpanError): string {
	const what = truncateText(error.what, BRIEF_COMMAND_CHARS);
	const exit = error.exitCode !== undefined ? ` exit ${error.exitCode}` : "";
	const line = error.line ? `: ${truncateText(error.line, BRIEF_ERROR_TEXT_CHARS)}` : "";
	return `${what}${exit}${line}${error.resolved ? " (resolved later)" : ""}`;
}

/** Open errors first (they are what the next step must deal with), then the ones a later success settled. */
function errorsLine(facts: SpanFacts, max: number): string | undefined {
	const ordered = [
		...facts.errors.filter((error) => !error.resolved),
		...facts.errors.filter((error) => error.resolved),
	];
	return boundedList(ordered.map(errorItem), "; ", max);
}

function spanBody(input: BriefInput, facts: SpanFacts, calls: readonly SpanCall[]): string {
	const limits = BRIEF_LINE_LIMITS;
	const lines = [headerLine(input, facts, calls)];
	const add = lineWriter(lines);
	const [steps, inner, callIndex] = indexLines(input, facts, calls);
	lines.push(...[steps, inner].filter(Boolean));
	add("Ask", facts.ask, limits.ask);
	if (endsWithReply(input.entries)) add("Ended", facts.ended, limits.ended);
	// The first line already names the calls when the span has no labels; once is enough.
	if (callIndex && !lines[0]?.includes(callIndex.slice("Calls: ".length))) lines.push(callIndex);
	add("Changed", changedLine(facts, room("Changed", limits.changed)), limits.changed);
	add("Commands", commandsLine(facts, room("Commands", limits.commands)), limits.commands);
	add("Errors", errorsLine(facts, room("Errors", limits.errors)), limits.errors);
	add("Read", boundedList(facts.files.Read, ", ", room("Read", limits.read)), limits.read);
	add("Searches", boundedList(facts.searches, "; ", room("Searches", limits.searches)), limits.searches);
	add("Names", namesLine(input.entries, room("Names", limits.names)), limits.names);
	return lines.join("\n");
}

/** `Steps:`, `Inner folds:` and `Calls:`, each present or an empty string, in that order. */
function indexLines(input: BriefInput, facts: SpanFacts, calls: readonly SpanCall[]): [string, string, string] {
	const limits = BRIEF_LINE_LIMITS;
	const contextTool = input.toolName ?? DEFAULT_CONTEXT_TOOL_NAME;
	const line = (label: string, text: string | undefined, max: number) =>
		text ? truncateText(`${label}: ${text}`, max) : "";
	return [
		line("Steps", boundedList(labelRanges(facts.labels), ", ", room("Steps", limits.steps)), limits.steps),
		line(
			"Inner folds",
			innerFoldsText(input.children ?? [], contextTool, room("Inner folds", limits.innerFolds)),
			limits.innerFolds,
		),
		line("Calls", callsIndex(calls, contextTool, room("Calls", limits.callIndex)), limits.callIndex),
	];
}

/**
 * The index of a chapter or consolidation, the part a reader finds it by:
 * its first line (counts and label ranges), the steps, the folds inside
 * with a few words each, and its calls by range. A model-written brief
 * keeps these above its summary, so prose never hides what a fold holds.
 */
export function briefIndex(input: BriefInput): { header: string; lines: string[] } {
	const facts = spanFacts(input.entries, input.cwd);
	const calls = spanCalls(input.entries, input.cwd, input.before);
	return { header: headerLine(input, facts, calls), lines: indexLines(input, facts, calls).filter(Boolean) };
}

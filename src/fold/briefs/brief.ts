/**
 * Deterministic fold briefs and the bound every brief obeys.
 *
 * A brief is what the model sees in place of a collapsed fold: an index entry
 * (kind, id, stage labels, the exact recall calls) and a summary an agent can
 * continue from. The deterministic generator renders the span's typed facts
 * (`src/session/facts.ts`, the extractor compaction summaries read too):
 * the ask, how the span ended (the last reply's first substantive sentence),
 * what changed (edits and writes with their files), the commands with their
 * outcomes, the errors with their first meaningful line and whether a later
 * success settled them, what was read and searched, and the tools used. Same
 * entries, same bytes.
 *
 * Every brief, deterministic or supplied by a model, is finished by
 * `finishBrief`: the body is cut to fit `BRIEF_MAX_CHARS` (UTF-16 code units,
 * i.e. JavaScript string length, never splitting a surrogate pair) and the
 * exact recall calls are appended intact.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { type SpanCommand, type SpanError, type SpanFacts, spanFacts } from "../../session/facts.ts";
import { boundedList, TRUNCATION_MARK, truncateText } from "../../text/bounded.ts";
import type { FoldKind } from "../lattice/records.ts";

export { boundedList, TRUNCATION_MARK, truncateText } from "../../text/bounded.ts";

/** Upper bound on a whole brief, recall calls included, in UTF-16 code units. */
export const BRIEF_MAX_CHARS = 1200;
/** Default name of the context tool the recall calls address. */
export const DEFAULT_CONTEXT_TOOL_NAME = "active_context";

/** Per-line bounds, so one long list cannot crowd out the rest of the brief. */
export const BRIEF_LINE_LIMITS = {
	ask: 180,
	ended: 200,
	steps: 120,
	changed: 200,
	commands: 200,
	errors: 260,
	read: 140,
	innerFolds: 110,
	searches: 100,
	tools: 110,
} as const;
/** Bound on one command inside the Commands and Errors lines: the error text matters more than its command. */
export const BRIEF_COMMAND_CHARS = 48;
/** Bound on one error's first line inside the Errors line. */
export const BRIEF_ERROR_TEXT_CHARS = 110;

const KIND_LABELS: Record<FoldKind, string> = {
	"tool-batch": "Tool batch",
	chapter: "Chapter",
	consolidation: "Consolidation",
};

/** The two calls that bring a fold's exact source back. */
export function recallCalls(id: string, toolName = DEFAULT_CONTEXT_TOOL_NAME): { peek: string; expand: string } {
	return {
		peek: `${toolName} ${JSON.stringify({ action: "peek", id })}`,
		expand: `${toolName} ${JSON.stringify({ action: "expand", id })}`,
	};
}

/**
 * Bound a brief body and append the recall calls. The result is at most
 * `BRIEF_MAX_CHARS` long unless the recall calls alone exceed it (a tool name
 * of hundreds of characters), in which case the body is dropped and the calls
 * are kept whole: a brief without its way back is worse than a long one.
 */
export function finishBrief(body: string, id: string, toolName = DEFAULT_CONTEXT_TOOL_NAME): string {
	const calls = recallCalls(id, toolName);
	const suffix = `Read exact source: ${calls.peek}\nRestore in place: ${calls.expand}`;
	const budget = BRIEF_MAX_CHARS - suffix.length - 1;
	const trimmed = body.trim();
	if (budget <= TRUNCATION_MARK.length || trimmed.length === 0) return suffix;
	return `${truncateText(trimmed, budget)}\n${suffix}`;
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
	/** Folds directly inside this one, in order: each can be peeked on its own. */
	childFoldIds?: readonly string[];
	toolName?: string;
	/** Session working directory; paths under it are shown relative. */
	cwd?: string;
}

/** A deterministic, bounded brief for a fold, ending with its recall calls. */
export function deterministicBrief(input: BriefInput): string {
	const facts = spanFacts(input.entries, input.cwd);
	return finishBrief(briefBody(input, facts), input.id, input.toolName);
}

const plural = (count: number, one: string, many = `${one}s`): string => `${count} ${count === 1 ? one : many}`;

/** "Chapter f-…: 12 entries, 1 user, 4 assistant, 7 tool calls, 1 failed." */
function headerLine(kind: FoldKind, id: string, facts: SpanFacts): string {
	const counts = [plural(facts.entryCount, "entry", "entries")];
	if (facts.userMessages > 0) counts.push(`${facts.userMessages} user`);
	if (facts.assistantMessages > 0) counts.push(`${facts.assistantMessages} assistant`);
	if (facts.toolCalls > 0) counts.push(plural(facts.toolCalls, "tool call"));
	if (facts.failedCalls > 0) counts.push(`${facts.failedCalls} failed`);
	return `${KIND_LABELS[kind]} ${id}: ${counts.join(", ")}.`;
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

function briefBody(input: BriefInput, facts: SpanFacts): string {
	const limits = BRIEF_LINE_LIMITS;
	const lines = [headerLine(input.kind, input.id, facts)];
	const add = (label: string, text: string | undefined, max: number): void => {
		if (text) lines.push(truncateText(`${label}: ${text}`, max));
	};
	const room = (label: string, max: number) => max - label.length - 2;
	add("Ask", facts.ask, limits.ask);
	add("Ended", facts.ended, limits.ended);
	add("Steps", boundedList(labelRanges(facts.labels), ", ", room("Steps", limits.steps)), limits.steps);
	add("Changed", changedLine(facts, room("Changed", limits.changed)), limits.changed);
	add("Commands", commandsLine(facts, room("Commands", limits.commands)), limits.commands);
	add("Errors", errorsLine(facts, room("Errors", limits.errors)), limits.errors);
	add("Read", boundedList(facts.files.Read, ", ", room("Read", limits.read)), limits.read);
	const inner = input.childFoldIds ?? [];
	add("Inner folds", boundedList(inner, ", ", room("Inner folds", limits.innerFolds)), limits.innerFolds);
	add("Searches", boundedList(facts.searches, "; ", room("Searches", limits.searches)), limits.searches);
	const tools = [...facts.tools].map(([name, count]) => `${name} ×${count}`);
	add("Tools", boundedList(tools, ", ", room("Tools", limits.tools)), limits.tools);
	return lines.join("\n");
}

/**
 * The index lines of a brief, the part a reader finds a fold by: its stage
 * labels and the folds inside it. A model-written brief keeps them, so a
 * summary in prose never hides which stages a fold covers.
 */
export function briefIndexLines(facts: SpanFacts, childFoldIds: readonly string[] = []): string[] {
	const limits = BRIEF_LINE_LIMITS;
	const lines: string[] = [];
	const steps = boundedList(labelRanges(facts.labels), ", ", limits.steps - 7);
	if (steps) lines.push(truncateText(`Steps: ${steps}`, limits.steps));
	const inner = boundedList(childFoldIds, ", ", limits.innerFolds - 13);
	if (inner) lines.push(truncateText(`Inner folds: ${inner}`, limits.innerFolds));
	return lines;
}

/** A label the range compressor can join: a word and a whole number ("stage 12"). */
const NUMBERED_LABEL = /^(.*\S) (\d{1,9})$/;

/**
 * Collapse runs of numbered labels with the same word into ranges, so a fold
 * over sixty stages still names every one of them: "stage 1–60", not
 * "stage 1, stage 2, … (+50 more)". Order of first appearance is kept.
 */
export function labelRanges(labels: readonly string[]): string[] {
	const out: string[] = [];
	let run: { word: string; first: number; last: number } | undefined;
	const flush = () => {
		if (!run) return;
		out.push(run.first === run.last ? `${run.word} ${run.first}` : `${run.word} ${run.first}–${run.last}`);
		run = undefined;
	};
	for (const label of labels) {
		const match = NUMBERED_LABEL.exec(label);
		const word = match?.[1];
		const number = match ? Number(match[2]) : Number.NaN;
		if (word !== undefined && run && run.word === word && number === run.last + 1) {
			run.last = number;
			continue;
		}
		flush();
		if (word !== undefined) run = { word, first: number, last: number };
		else out.push(label);
	}
	flush();
	return out;
}

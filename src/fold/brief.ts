/**
 * Deterministic fold briefs and the bound every brief obeys.
 *
 * A brief is what the model sees in place of a collapsed fold. The
 * deterministic generator reads only typed fields, never interprets prose:
 * message roles, the first line of the first user message, tool names and
 * typed tool arguments (paths, commands, patterns, stage/step labels),
 * `isError` flags, assistant stop reasons, bash exit codes, and the first line
 * of the last assistant reply. Same entries, same bytes.
 *
 * Every brief, deterministic or supplied by a model, is finished by
 * `finishBrief`: the body is cut to fit `BRIEF_MAX_CHARS` (UTF-16 code units,
 * i.e. JavaScript string length, never splitting a surrogate pair) and the
 * exact recall calls are appended intact.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { FoldKind } from "./records.ts";

/** Upper bound on a whole brief, recall calls included, in UTF-16 code units. */
export const BRIEF_MAX_CHARS = 1200;
/** Default name of the context tool the recall calls address. */
export const DEFAULT_CONTEXT_TOOL_NAME = "active_context";
/** Marks text cut to fit a bound. */
export const TRUNCATION_MARK = "…";

/** Per-line bounds, so one long list cannot crowd out the rest of the brief. */
export const BRIEF_LINE_LIMITS = {
	ask: 160,
	reply: 160,
	errors: 180,
	files: 180,
	commands: 160,
	steps: 120,
	innerFolds: 110,
	searches: 100,
	tools: 110,
} as const;
/** Bound on one error's first line inside the Errors line. */
export const BRIEF_ERROR_TEXT_CHARS = 80;

/** Typed tool-argument keys, by what they name. */
export const PATH_ARG_KEYS = ["path", "file_path", "filePath", "file"] as const;
export const COMMAND_ARG_KEYS = ["command", "cmd"] as const;
export const SEARCH_ARG_KEYS = ["pattern", "query", "glob", "url"] as const;
export const LABEL_ARG_KEYS = ["stage", "step", "phase", "label", "title"] as const;

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

/** Cut `text` to at most `max` code units, ending with the truncation mark, never inside a surrogate pair. */
export function truncateText(text: string, max: number): string {
	if (text.length <= max) return text;
	if (max <= TRUNCATION_MARK.length) return "";
	let cut = max - TRUNCATION_MARK.length;
	const last = text.charCodeAt(cut - 1);
	if (last >= 0xd800 && last <= 0xdbff) cut--;
	return `${text.slice(0, cut).trimEnd()}${TRUNCATION_MARK}`;
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

/** What a span holds, read from typed fields only. */
export interface BriefFacts {
	entryCount: number;
	userMessages: number;
	assistantMessages: number;
	toolCalls: number;
	failedCalls: number;
	/** First line of the first user message. */
	ask?: string;
	/** First line of the last assistant text. */
	lastReply?: string;
	/** Tool name → number of calls, in order of first call. */
	tools: Map<string, number>;
	files: string[];
	commands: string[];
	searches: string[];
	labels: string[];
	errors: string[];
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
	const facts = briefFacts(input.entries, input.cwd);
	return finishBrief(briefBody(input, facts), input.id, input.toolName);
}

function briefBody(input: BriefInput, facts: BriefFacts): string {
	const limits = BRIEF_LINE_LIMITS;
	const counts = [`${facts.entryCount} ${facts.entryCount === 1 ? "entry" : "entries"}`];
	if (facts.userMessages > 0) counts.push(`${facts.userMessages} user`);
	if (facts.assistantMessages > 0) counts.push(`${facts.assistantMessages} assistant`);
	if (facts.toolCalls > 0) counts.push(`${facts.toolCalls} tool ${facts.toolCalls === 1 ? "call" : "calls"}`);
	if (facts.failedCalls > 0) counts.push(`${facts.failedCalls} failed`);
	const lines = [`${KIND_LABELS[input.kind]} ${input.id}: ${counts.join(", ")}.`];
	const add = (label: string, text: string | undefined, max: number): void => {
		if (text) lines.push(truncateText(`${label}: ${text}`, max));
	};
	add("Ask", facts.ask, limits.ask);
	add("Last reply", facts.lastReply, limits.reply);
	add("Errors", boundedList(facts.errors, "; ", limits.errors - 8), limits.errors);
	add("Files", boundedList(facts.files, ", ", limits.files - 7), limits.files);
	add("Commands", boundedList(facts.commands, "; ", limits.commands - 10), limits.commands);
	add("Steps", boundedList(labelRanges(facts.labels), ", ", limits.steps - 7), limits.steps);
	add("Inner folds", boundedList(input.childFoldIds ?? [], ", ", limits.innerFolds - 13), limits.innerFolds);
	add("Searches", boundedList(facts.searches, "; ", limits.searches - 10), limits.searches);
	const tools = [...facts.tools].map(([name, count]) => `${name} ×${count}`);
	add("Tools", boundedList(tools, ", ", limits.tools - 7), limits.tools);
	return lines.join("\n");
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

/** Join items until `max` would be exceeded, then say how many were left out. Undefined when empty. */
export function boundedList(items: readonly string[], separator: string, max: number): string | undefined {
	if (items.length === 0) return undefined;
	const all = items.join(separator);
	if (all.length <= max) return all;
	let text = "";
	for (let i = 0; i < items.length; i++) {
		const item = items[i] ?? "";
		const next = text ? `${text}${separator}${item}` : item;
		const rest = items.length - i - 1;
		const tail = rest > 0 ? ` (+${rest} more)` : "";
		if (next.length + tail.length > max) {
			// The previous round checked that `text` fits with this very "(+n more)" tail.
			if (text) return `${text} (+${items.length - i} more)`;
			return `${truncateText(item, max - tail.length)}${tail}`;
		}
		text = next;
	}
	return text;
}

/** Collect the typed facts of a span. Exported so other renderers can reuse the same extraction. */
export function briefFacts(entries: readonly SessionEntry[], cwd?: string): BriefFacts {
	const facts: BriefFacts = {
		entryCount: entries.length,
		userMessages: 0,
		assistantMessages: 0,
		toolCalls: 0,
		failedCalls: 0,
		tools: new Map(),
		files: [],
		commands: [],
		searches: [],
		labels: [],
		errors: [],
	};
	const files = new Set<string>();
	const commands = new Set<string>();
	const searches = new Set<string>();
	const labels = new Set<string>();
	const targets = new Map<string, string>();
	const show = (path: string): string => (cwd && path.startsWith(`${cwd}/`) ? path.slice(cwd.length + 1) : path);

	// Calls first: a result may precede its call, and its error line names the call's target.
	for (const entry of entries) {
		if (entry.type !== "message" || entry.message.role !== "assistant") continue;
		for (const part of entry.message.content) {
			if (part.type !== "toolCall") continue;
			facts.toolCalls++;
			facts.tools.set(part.name, (facts.tools.get(part.name) ?? 0) + 1);
			const args = part.arguments ?? {};
			const path = firstString(args, PATH_ARG_KEYS);
			const command = firstString(args, COMMAND_ARG_KEYS);
			const search = firstString(args, SEARCH_ARG_KEYS);
			if (path) files.add(show(path));
			if (command) commands.add(command);
			if (search) searches.add(path ? `${search} in ${show(path)}` : search);
			for (const key of LABEL_ARG_KEYS) {
				const value = args[key];
				if (typeof value === "string" || typeof value === "number") labels.add(oneLine(`${key} ${value}`));
			}
			const target = command ?? (path ? show(path) : search);
			if (target) targets.set(part.id, `${part.name} ${target}`);
			else targets.set(part.id, part.name);
		}
	}

	for (const entry of entries) {
		if (entry.type === "custom_message" || entry.type === "branch_summary") {
			facts.userMessages++;
			continue;
		}
		if (entry.type !== "message") continue;
		const message = entry.message;
		switch (message.role) {
			case "user":
				facts.userMessages++;
				facts.ask ??= firstLine(textOf(message.content));
				break;
			case "assistant": {
				facts.assistantMessages++;
				const text = firstLine(message.content.map((part) => (part.type === "text" ? part.text : "")).join("\n"));
				if (text) facts.lastReply = text;
				if (message.stopReason === "error") {
					facts.errors.push(oneLine(`response failed: ${firstLine(message.errorMessage ?? "") ?? "no message"}`));
				} else if (message.stopReason === "aborted") facts.errors.push("response aborted");
				break;
			}
			case "toolResult":
				if (message.isError) {
					facts.failedCalls++;
					const what = targets.get(message.toolCallId) ?? message.toolName;
					const why = firstLine(textOf(message.content));
					facts.errors.push(truncateText(why ? `${what}: ${why}` : what, BRIEF_ERROR_TEXT_CHARS));
				}
				break;
			case "bashExecution":
				facts.userMessages++;
				commands.add(`!${message.command}`);
				if (message.cancelled)
					facts.errors.push(truncateText(`!${message.command}: cancelled`, BRIEF_ERROR_TEXT_CHARS));
				else if (message.exitCode !== undefined && message.exitCode !== 0) {
					facts.errors.push(truncateText(`!${message.command}: exit ${message.exitCode}`, BRIEF_ERROR_TEXT_CHARS));
				}
				break;
			default:
				facts.userMessages++;
		}
	}
	facts.files = [...files];
	facts.commands = [...commands].map(oneLine);
	facts.searches = [...searches].map(oneLine);
	facts.labels = [...labels];
	return facts;
}

function firstString(args: Record<string, unknown>, keys: readonly string[]): string | undefined {
	for (const key of keys) {
		const value = args[key];
		if (typeof value === "string" && value.trim()) return value.trim();
	}
	return undefined;
}

function textOf(content: string | readonly { type: string; text?: string }[]): string {
	if (typeof content === "string") return content;
	return content.map((part) => (part.type === "text" && typeof part.text === "string" ? part.text : "")).join("\n");
}

/** First non-blank line, whitespace collapsed; undefined when there is none. */
function firstLine(text: string): string | undefined {
	for (const line of text.split("\n")) {
		const clean = oneLine(line);
		if (clean) return clean;
	}
	return undefined;
}

function oneLine(text: string): string {
	return text.replace(/\s+/g, " ").trim();
}

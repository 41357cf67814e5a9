/**
 * Probes of what a continuation needs, computed from the recorded session
 * alone, before any summary exists. This module reads raw entries with its
 * own rules and imports nothing from the compactor or `src/session/facts.ts`:
 * a probe must not agree with the summary because both came from one reading.
 *
 * At a cut (Pi compacts after entry `cut`):
 * - first goal: the session's first user request;
 * - current goal: the last user request before the cut;
 * - files: every path written or edited before the cut (typed `path` /
 *   `file_path` arguments of write/edit tools, and the file headers of an
 *   `apply_patch` envelope);
 * - last failure: the last failed tool call before the cut (an error result,
 *   or a host frame stating a non-zero exit code), its command, its error
 *   line and whether a later call of the same command passed before the cut;
 * - open plan items: the latest typed plan list (`plan` / `todos` arguments)
 *   in the last user request's turn, items not completed;
 * - decisions: the last sentences of the agent's text before the cut that
 *   state a choice (`DECISION_MARKERS`);
 * - identifiers: names the next 20 tool calls after the cut pass in their
 *   arguments that the session showed before the cut;
 * - hand-picked facts: `facts.json`.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";

export type ProbeCategory =
	| "firstGoal"
	| "currentGoal"
	| "files"
	| "failureCommand"
	| "failureLine"
	| "failureFixed"
	| "openPlan"
	| "decisions"
	| "identifiers"
	| "handPicked";

/** How a probe is looked for in a text; see score.ts. */
export type Needle =
	| { kind: "words"; text: string }
	| { kind: "path"; path: string }
	| { kind: "exact"; text: string }
	| { kind: "state"; command: string; fixed: boolean };

export interface Probe {
	category: ProbeCategory;
	/** Entry the probe was read from. */
	entryId: string;
	needle: Needle;
}

/** Tool calls after the cut whose arguments the identifier probe reads. */
export const NEXT_STEPS = 20;
/** Decision sentences probed per cut (the latest). */
export const DECISION_PROBES = 5;
/** Identifiers probed per cut (the most used by the next steps). */
export const IDENTIFIER_PROBES = 12;
/** Shortest identifier probed. */
const IDENTIFIER_MIN_CHARS = 5;

/** Phrases with which coding agents (Claude Code, Codex, Pi) state a choice; matched case-insensitively. */
export const DECISION_MARKERS: readonly string[] = [
	"i'll use",
	"i will use",
	"i'll switch",
	"switching to",
	"switch to",
	"instead of",
	"instead,",
	"rather than",
	"decided",
	"i'm going to",
	"going with",
	"let's go with",
	"the fix is",
	"the approach",
	"better approach",
	"simplest",
	"i chose",
	"we'll",
];

interface ToolCallPart {
	id: string;
	name: string;
	arguments: Record<string, unknown>;
}

function textOf(content: unknown): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.map((part) =>
			part && typeof part === "object" && (part as { type?: string }).type === "text"
				? String((part as { text?: unknown }).text ?? "")
				: "",
		)
		.join("\n");
}

function userText(entry: SessionEntry): string | undefined {
	if (entry.type !== "message" || entry.message.role !== "user") return undefined;
	const text = textOf(entry.message.content).trim();
	return text || undefined;
}

function assistantText(entry: SessionEntry): string {
	return entry.type === "message" && entry.message.role === "assistant" ? textOf(entry.message.content) : "";
}

function toolCalls(entry: SessionEntry): ToolCallPart[] {
	if (entry.type !== "message" || entry.message.role !== "assistant") return [];
	const calls: ToolCallPart[] = [];
	for (const part of entry.message.content) {
		if (part.type !== "toolCall") continue;
		const args =
			part.arguments && typeof part.arguments === "object" ? (part.arguments as Record<string, unknown>) : {};
		calls.push({ id: part.id, name: part.name, arguments: args });
	}
	return calls;
}

/** Paths a call writes or edits, by its typed arguments or its patch envelope. */
export function writtenPaths(call: ToolCallPart): string[] {
	const name = call.name.toLowerCase();
	if (["write", "edit", "multiedit", "str_replace", "create"].includes(name)) {
		const path = call.arguments.path ?? call.arguments.file_path;
		return typeof path === "string" ? [path] : [];
	}
	if (name === "apply_patch") {
		const patch = typeof call.arguments.input === "string" ? call.arguments.input : "";
		const paths: string[] = [];
		for (const match of patch.matchAll(/^\*\*\* (?:Add|Update) File: (.+)$/gm)) paths.push((match[1] ?? "").trim());
		return paths;
	}
	return [];
}

function commandOf(call: ToolCallPart): string {
	const command = call.arguments.command ?? call.arguments.cmd;
	if (typeof command === "string") return command;
	if (Array.isArray(command)) return command.join(" ");
	const path = call.arguments.path ?? call.arguments.file_path;
	return typeof path === "string" ? `${call.name} ${path}` : call.name;
}

/** The exit code a host states at the start of a result (Codex: `Exit code: 1`, `Process exited with code 1`). */
function statedExitCode(text: string): number | undefined {
	const match = /^(?:Exit code:? |Process exited with code )(-?\d+)/m.exec(text.slice(0, 400));
	return match ? Number(match[1]) : undefined;
}

/** Lines of a host's frame, not the command's output. */
const FRAME_LINE =
	/^(?:Chunk ID:|Wall time:|Exit code:?|Process exited with code|Original token count:|Total output lines:|Output:|Command exited with code|>\s)/;
const ERRORISH = /error|failed|fatal|cannot|can't|not found|no such|exception|denied|invalid|unexpected|missing/i;

/** The line of an error text that says what went wrong. */
export function errorLineOf(text: string): string | undefined {
	const lines = text
		.split(/\r?\n/)
		.map((line) => line.trim())
		.filter((line) => line !== "" && !FRAME_LINE.test(line) && /[\p{L}\p{N}]/u.test(line));
	return lines.find((line) => ERRORISH.test(line)) ?? lines[0];
}

/** Program and first argument: what a later run must repeat to count as the same command. */
function commandHead(command: string): string {
	const simple = command
		.split(/&&|;|\|/)
		.map((part) => part.trim())
		.filter((part) => !/^cd\s/.test(part));
	return (simple[0] ?? command).split(/\s+/).slice(0, 2).join(" ");
}

interface ResultInfo {
	failed: boolean;
	text: string;
}

function resultsById(entries: readonly SessionEntry[]): Map<string, ResultInfo> {
	const results = new Map<string, ResultInfo>();
	for (const entry of entries) {
		if (entry.type !== "message" || entry.message.role !== "toolResult") continue;
		const text = textOf(entry.message.content);
		const code = statedExitCode(text);
		results.set(entry.message.toolCallId, {
			failed: entry.message.isError || (code !== undefined && code !== 0),
			text,
		});
	}
	return results;
}

function sentences(text: string): string[] {
	return text
		.split(/(?<=[.!?])\s+|\n+/)
		.map((sentence) => sentence.trim())
		.filter((sentence) => sentence.length >= 20);
}

function openPlanItems(turn: readonly SessionEntry[]): { entryId: string; items: string[] } | undefined {
	for (let index = turn.length - 1; index >= 0; index--) {
		const entry = turn[index];
		if (!entry) continue;
		for (const call of toolCalls(entry).reverse()) {
			const list = call.arguments.plan ?? call.arguments.todos;
			if (!Array.isArray(list)) continue;
			const items = list.flatMap((item) => {
				if (!item || typeof item !== "object") return [];
				const record = item as Record<string, unknown>;
				const text = record.step ?? record.content ?? record.title;
				const done = record.status === "completed" || record.status === "done";
				return typeof text === "string" && !done ? [text] : [];
			});
			return { entryId: entry.id, items };
		}
	}
	return undefined;
}

/** Every string value inside a JSON value, depth first. */
function stringsOf(value: unknown): string[] {
	if (typeof value === "string") return [value];
	if (Array.isArray(value)) return value.flatMap(stringsOf);
	if (value && typeof value === "object") return Object.values(value).flatMap(stringsOf);
	return [];
}

/** Identifier-like tokens of a text: paths, dotted, camel or snake case names, numbers with a `#`. */
export function identifiersIn(text: string): string[] {
	const found: string[] = [];
	for (const match of text.matchAll(
		/#\d{2,}|[A-Za-z_][\w.-]*(?:[/\\][\w.-]+)+|[A-Za-z_]\w*(?:\.\w+)+|[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*|[a-z]+_[a-z_\d]+/g,
	)) {
		const token = match[0].replace(/[.,:;-]+$/, "");
		if (token.length >= IDENTIFIER_MIN_CHARS || token.startsWith("#")) found.push(token);
	}
	return found;
}

function entryText(entry: SessionEntry): string {
	if (entry.type !== "message") return "";
	const message = entry.message;
	if (message.role === "assistant") {
		return message.content
			.map((part) =>
				part.type === "text" ? part.text : part.type === "toolCall" ? stringsOf(part.arguments).join("\n") : "",
			)
			.join("\n");
	}
	if (message.role === "user" || message.role === "toolResult") return textOf(message.content);
	return "";
}

/** Every probe at a cut after entry index `cut` of `branch`. */
export function probesAt(branch: readonly SessionEntry[], cut: number): Probe[] {
	const before = branch.slice(0, cut + 1);
	const probes: Probe[] = [];
	const users = before.filter((entry) => userText(entry) !== undefined);
	const first = users[0];
	const last = users.at(-1);
	if (first)
		probes.push({ category: "firstGoal", entryId: first.id, needle: { kind: "words", text: userText(first) ?? "" } });
	if (last)
		probes.push({ category: "currentGoal", entryId: last.id, needle: { kind: "words", text: userText(last) ?? "" } });

	const seenPaths = new Set<string>();
	for (const entry of before) {
		for (const call of toolCalls(entry)) {
			for (const path of writtenPaths(call)) {
				if (seenPaths.has(path)) continue;
				seenPaths.add(path);
				probes.push({ category: "files", entryId: entry.id, needle: { kind: "path", path } });
			}
		}
	}

	const results = resultsById(before);
	const calls = before.flatMap((entry) => toolCalls(entry).map((call) => ({ entry, call })));
	const failedAt = calls.findLastIndex(({ call }) => results.get(call.id)?.failed === true);
	const failed = calls[failedAt];
	if (failed) {
		const command = commandOf(failed.call);
		const head = commandHead(command);
		const fixed = calls
			.slice(failedAt + 1)
			.some(({ call }) => commandHead(commandOf(call)) === head && results.get(call.id)?.failed === false);
		const line = errorLineOf(results.get(failed.call.id)?.text ?? "");
		probes.push({ category: "failureCommand", entryId: failed.entry.id, needle: { kind: "words", text: command } });
		if (line) probes.push({ category: "failureLine", entryId: failed.entry.id, needle: { kind: "words", text: line } });
		probes.push({ category: "failureFixed", entryId: failed.entry.id, needle: { kind: "state", command, fixed } });
	}

	const turnStart = last ? before.indexOf(last) : 0;
	const plan = openPlanItems(before.slice(turnStart));
	for (const item of plan?.items ?? []) {
		probes.push({ category: "openPlan", entryId: plan?.entryId ?? "", needle: { kind: "words", text: item } });
	}

	const decisions: { entryId: string; text: string }[] = [];
	for (const entry of before) {
		for (const sentence of sentences(assistantText(entry))) {
			const lower = sentence.toLowerCase();
			if (DECISION_MARKERS.some((marker) => lower.includes(marker)))
				decisions.push({ entryId: entry.id, text: sentence });
		}
	}
	for (const decision of decisions.slice(-DECISION_PROBES)) {
		probes.push({ category: "decisions", entryId: decision.entryId, needle: { kind: "words", text: decision.text } });
	}

	const shown = before.map(entryText).join("\n");
	const counts = new Map<string, { count: number; entryId: string }>();
	let steps = 0;
	for (const entry of branch.slice(cut + 1)) {
		for (const call of toolCalls(entry)) {
			if (steps++ >= NEXT_STEPS) break;
			for (const token of identifiersIn(stringsOf(call.arguments).join("\n"))) {
				if (!shown.includes(token)) continue;
				const seen = counts.get(token);
				counts.set(token, { count: (seen?.count ?? 0) + 1, entryId: seen?.entryId ?? entry.id });
			}
		}
		if (steps >= NEXT_STEPS) break;
	}
	const ranked = [...counts.entries()].sort((a, b) => b[1].count - a[1].count || (a[0] < b[0] ? -1 : 1));
	for (const [token, { entryId }] of ranked.slice(0, IDENTIFIER_PROBES)) {
		probes.push({ category: "identifiers", entryId, needle: { kind: "exact", text: token } });
	}
	return probes;
}

/** The text of entries as a model reads them (user, assistant text and call arguments, results). */
export function entriesText(entries: readonly SessionEntry[]): string {
	return entries.map(entryText).join("\n");
}

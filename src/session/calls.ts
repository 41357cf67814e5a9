/**
 * The tool calls of a span, one by one: what was called with which
 * arguments, and what came back (size, first meaningful line, error or not).
 *
 * `facts.ts` answers what a span did as a whole (files, commands, failures
 * and what settled them); this module keeps each call as it was made, so a
 * brief can lead with the call itself and two batches of the same tool with
 * different arguments never read alike. Read from typed fields only: the
 * call's name and arguments, the result's `toolCallId`, `isError` and text.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { truncateText } from "../text/bounded.ts";
import { contentText, oneLine } from "../text/lines.ts";
import { errorFirstLine, resultFirstLine } from "../text/tool-text.ts";
import { utf8ByteLength } from "../text/utf8.ts";
import { canonicalJson, sha256Hex } from "./canonical.ts";
import { LABEL_ARG_KEYS, relativeTo } from "./facts.ts";
import { isPlainRecord } from "./records/record-guards.ts";
import { continuedSession, hostSessionCommands } from "./split-calls.ts";

/**
 * Argument keys shown bare, in this order of preference: what a reader knows
 * a call by. `cmd` is Codex CLI's `exec_command`, `file_path` Claude Code's
 * file tools.
 */
export const PRIMARY_ARG_KEYS = ["command", "cmd", "pattern", "query", "path", "file_path"] as const;
/** Bound on a call's argument text; a longer one is cut and marked with a digest of the whole. */
export const CALL_ARGS_MAX_CHARS = 100;
/** Hex digits of the argument digest a cut argument text ends with. */
export const CALL_ARGS_DIGEST_CHARS = 6;
/** Bound on the first line of a call's result. */
export const CALL_LINE_MAX_CHARS = 110;

/** What came back for one call. */
export interface CallResult {
	/** UTF-8 bytes of the result's text parts. */
	bytes: number;
	/** First meaningful line (for an error, the line that says what failed). */
	line?: string;
	isError: boolean;
	exitCode?: number;
}

/** One call of a span, in call order. */
export interface SpanCall {
	toolCallId: string;
	tool: string;
	/** One line naming the arguments: the primary value bare, the rest as JSON, bounded (see `callArgsText`). */
	args: string;
	/** A short grouping label: `tool stage 3` when a label argument is typed, else `tool <args>`. */
	label: string;
	/** Absent when the span holds no result for the call. */
	result?: CallResult;
}

/**
 * The arguments of a call as one bounded line: the first of `command`,
 * `pattern`, `query`, `path` that is a string, shown bare (paths relative to
 * `cwd`), then every other argument as canonical JSON. A text longer than
 * the bound is cut and ends with `#<digest>` of the whole arguments, so two
 * calls whose arguments differ only past the cut still read differently.
 */
export function callArgsText(args: unknown, show: (text: string) => string = (text) => text): string {
	const record = isPlainRecord(args) ? args : undefined;
	const key = PRIMARY_ARG_KEYS.find((name) => typeof record?.[name] === "string");
	let text: string;
	if (record && key) {
		const rest = Object.fromEntries(Object.entries(record).filter(([name]) => name !== key));
		const primary = oneLine(show(String(record[key])));
		text = Object.keys(rest).length > 0 ? `${primary} ${oneLine(show(canonicalJson(rest)))}` : primary;
	} else {
		text = oneLine(canonicalJson(args ?? {}));
	}
	if (text.length <= CALL_ARGS_MAX_CHARS) return text;
	const digest = sha256Hex(new TextEncoder().encode(canonicalJson(args ?? null))).slice(0, CALL_ARGS_DIGEST_CHARS);
	return `${truncateText(text, CALL_ARGS_MAX_CHARS - CALL_ARGS_DIGEST_CHARS - 1)}#${digest}`;
}

function callLabel(tool: string, args: unknown, argsText: string): string {
	const record = isPlainRecord(args) ? args : undefined;
	for (const key of LABEL_ARG_KEYS) {
		const value = record?.[key];
		if (typeof value === "string" || typeof value === "number") return oneLine(`${tool} ${key} ${value}`);
	}
	return argsText ? `${tool} ${argsText}` : tool;
}

function resultOf(message: { content: unknown; isError?: boolean }): CallResult {
	const text = contentText(message.content);
	const isError = message.isError === true;
	const read = isError ? errorFirstLine(text) : { line: resultFirstLine(text) };
	const line = read.line ? truncateText(read.line, CALL_LINE_MAX_CHARS) : undefined;
	return {
		bytes: utf8ByteLength(text),
		...(line ? { line } : {}),
		isError,
		...("exitCode" in read && read.exitCode !== undefined ? { exitCode: read.exitCode } : {}),
	};
}

/**
 * The arguments a call is shown by: its own, or, for a call that continues
 * a host session (`write_stdin {"session_id": 3}`), the command that session
 * runs in front of them, so the call names what it reads.
 */
function shownArgs(args: unknown, sessions: ReadonlyMap<string, string> | undefined): unknown {
	const session = continuedSession(args);
	const command = session === undefined ? undefined : sessions?.get(session);
	if (command === undefined || !isPlainRecord(args) || PRIMARY_ARG_KEYS.some((key) => key in args)) return args;
	return { command, ...args };
}

/**
 * Every tool call of a span in call order, each with its result when the span
 * holds it. `context`: entries before the span, where the calls that started
 * its host sessions may sit (see src/session/split-calls.ts).
 */
export function spanCalls(
	entries: readonly SessionEntry[],
	cwd?: string,
	context: readonly SessionEntry[] = [],
): SpanCall[] {
	const show = relativeTo(cwd);
	const calls: SpanCall[] = [];
	const byId = new Map<string, SpanCall>();
	const continues = entries.some(
		(entry) =>
			entry.type === "message" &&
			entry.message.role === "assistant" &&
			entry.message.content.some((part) => part.type === "toolCall" && continuedSession(part.arguments) !== undefined),
	);
	const sessions = continues ? hostSessionCommands([...context, ...entries]) : undefined;
	const shared = sharedArgKeys(entries);
	for (const entry of entries) {
		if (entry.type !== "message") continue;
		const message = entry.message;
		if (message.role === "assistant") {
			for (const part of message.content) {
				if (part.type !== "toolCall") continue;
				const own = withoutKeys(part.arguments, shared.get(part.name));
				const args = callArgsText(shownArgs(own, sessions), show);
				const call: SpanCall = {
					toolCallId: part.id,
					tool: part.name,
					args,
					label: callLabel(part.name, part.arguments, args),
				};
				calls.push(call);
				byId.set(part.id, call);
			}
		} else if (message.role === "toolResult") {
			const call = byId.get(message.toolCallId);
			if (call && !call.result) call.result = resultOf(message);
		}
	}
	return calls;
}

/**
 * Per tool called at least twice in a span: the argument keys every one of
 * its calls passes with the same value (a timeout, a working directory).
 * They tell the calls apart from nothing, so call lines leave them out and
 * the room goes to what differs. Primary keys always stay.
 */
function sharedArgKeys(entries: readonly SessionEntry[]): Map<string, ReadonlySet<string>> {
	const byTool = new Map<string, Record<string, unknown>[]>();
	for (const entry of entries) {
		if (entry.type !== "message" || entry.message.role !== "assistant") continue;
		for (const part of entry.message.content) {
			if (part.type !== "toolCall" || !isPlainRecord(part.arguments)) continue;
			const list = byTool.get(part.name) ?? [];
			list.push(part.arguments);
			byTool.set(part.name, list);
		}
	}
	const shared = new Map<string, ReadonlySet<string>>();
	for (const [tool, calls] of byTool) {
		const [first, ...rest] = calls;
		if (!first || rest.length === 0) continue;
		const keys = Object.keys(first).filter(
			(key) =>
				!(PRIMARY_ARG_KEYS as readonly string[]).includes(key) &&
				rest.every((args) => key in args && canonicalJson(args[key]) === canonicalJson(first[key])),
		);
		if (keys.length > 0) shared.set(tool, new Set(keys));
	}
	return shared;
}

function withoutKeys(args: unknown, keys: ReadonlySet<string> | undefined): unknown {
	if (!keys || !isPlainRecord(args)) return args;
	return Object.fromEntries(Object.entries(args).filter(([key]) => !keys.has(key)));
}

/** True when the span's last message is a reply: an assistant message that calls no tool. */
export function endsWithReply(entries: readonly SessionEntry[]): boolean {
	for (let index = entries.length - 1; index >= 0; index--) {
		const entry = entries[index];
		if (entry?.type === "custom_message") return false;
		if (entry?.type !== "message") continue;
		const message = entry.message;
		if (message.role !== "assistant") return false;
		return !message.content.some((part) => part.type === "toolCall");
	}
	return false;
}

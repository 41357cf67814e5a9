/**
 * Tool call/result closure over an ordered branch of session entries.
 *
 * A boundary at index `b` splits entries into `[0, b)` and `[b, n)`. It is
 * closure-safe when no tool call id has a part on each side: a provider
 * rejects a call whose result is missing and a result whose call is missing.
 * Calls pair with results only by `toolCallId`; position, order and tool name
 * never pair them. Parallel calls, delayed results, results before their call
 * and orphans on either side are all handled by the same span rule.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";

/**
 * Stop reasons of assistant messages Pi drops before a provider request; their
 * tool calls are abandoned, never answered.
 */
export const DROPPED_STOP_REASONS: ReadonlySet<string> = new Set(["aborted", "error"]);

/** Where one tool call id appears in a branch. */
export interface ToolCallSpan {
	id: string;
	/** First index holding the call or a result for this id. */
	first: number;
	/** Last index holding the call or a result for this id. */
	last: number;
	/** Index of the assistant entry that issued the call, or -1 for an orphan result. */
	callIndex: number;
	/** Indices of tool result entries answering the id, in order (normally one). */
	resultIndices: number[];
	/** Tool name from the call, or from the result when the call is missing. */
	toolName: string;
}

/** A tool call id that lacks its call, its result, or has several results. */
export interface ClosureDefect {
	id: string;
	kind: "missing-result" | "missing-call" | "duplicate-result";
}

/** Tool call ids issued by an entry (assistant message tool calls), in content order. */
export function toolCallIdsOf(entry: SessionEntry): { id: string; name: string }[] {
	if (entry.type !== "message") return [];
	const message = entry.message;
	if (message.role !== "assistant" || !Array.isArray(message.content)) return [];
	const calls: { id: string; name: string }[] = [];
	for (const part of message.content) {
		if (part && part.type === "toolCall" && typeof part.id === "string") calls.push({ id: part.id, name: part.name });
	}
	return calls;
}

/** The tool call id a tool result entry answers, if the entry is one. */
export function toolResultIdOf(entry: SessionEntry): { id: string; name: string } | undefined {
	if (entry.type !== "message") return undefined;
	const message = entry.message;
	if (message.role !== "toolResult" || typeof message.toolCallId !== "string") return undefined;
	return { id: message.toolCallId, name: message.toolName };
}

/**
 * Record one entry's tool calls and its tool result in their spans; `touch` finds or opens a span (the
 * incremental branch view and the one-pass scan below each keep their own map).
 */
export function noteToolSpans(
	entry: SessionEntry,
	index: number,
	touch: (id: string, index: number, name: string) => ToolCallSpan,
): void {
	for (const call of toolCallIdsOf(entry)) {
		const span = touch(call.id, index, call.name);
		if (span.callIndex === -1) {
			span.callIndex = index;
			span.toolName = call.name;
		}
	}
	const result = toolResultIdOf(entry);
	if (result) touch(result.id, index, result.name).resultIndices.push(index);
}

/** Every tool call id's span across the branch, keyed by id, in order of first appearance. */
export function toolCallSpans(entries: readonly SessionEntry[]): Map<string, ToolCallSpan> {
	const spans = new Map<string, ToolCallSpan>();
	const touch = (id: string, index: number, name: string): ToolCallSpan => {
		let span = spans.get(id);
		if (!span) {
			span = { id, first: index, last: index, callIndex: -1, resultIndices: [], toolName: name };
			spans.set(id, span);
		}
		span.first = Math.min(span.first, index);
		span.last = Math.max(span.last, index);
		return span;
	};
	entries.forEach((entry, index) => {
		noteToolSpans(entry, index, touch);
	});
	return spans;
}

/** Defects a provider would reject if the whole branch were sent as is. */
export function closureDefects(spans: ReadonlyMap<string, ToolCallSpan>): ClosureDefect[] {
	const defects: ClosureDefect[] = [];
	for (const span of spans.values()) {
		if (span.callIndex === -1) defects.push({ id: span.id, kind: "missing-call" });
		else if (span.resultIndices.length === 0) defects.push({ id: span.id, kind: "missing-result" });
		else if (span.resultIndices.length > 1) defects.push({ id: span.id, kind: "duplicate-result" });
	}
	return defects;
}

/**
 * Boundaries (0..n) that split no call/result pair. `safe[b]` is true when no
 * span has `first < b <= last`. Computed in O(n + spans) with a difference array.
 */
export function closureSafeBoundaries(entryCount: number, spans: ReadonlyMap<string, ToolCallSpan>): boolean[] {
	const crossing = new Int32Array(entryCount + 2);
	for (const span of spans.values()) {
		if (span.last <= span.first) continue;
		crossing[span.first + 1] = (crossing[span.first + 1] ?? 0) + 1;
		crossing[span.last + 1] = (crossing[span.last + 1] ?? 0) - 1;
	}
	const safe: boolean[] = [];
	let open = 0;
	for (let b = 0; b <= entryCount; b++) {
		open += crossing[b] ?? 0;
		safe.push(open === 0);
	}
	return safe;
}

/** True when cutting before `boundary` separates no call from its result. */
export function isClosureSafeBoundary(spans: ReadonlyMap<string, ToolCallSpan>, boundary: number): boolean {
	for (const span of spans.values()) {
		if (span.first < boundary && boundary <= span.last) return false;
	}
	return true;
}

/** True when the half-open range [start, end) contains every part of every id it touches. */
export function isClosedRange(spans: ReadonlyMap<string, ToolCallSpan>, start: number, end: number): boolean {
	return isClosureSafeBoundary(spans, start) && isClosureSafeBoundary(spans, end);
}

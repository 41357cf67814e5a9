/**
 * Tool call/result closure over an ordered branch of session entries.
 *
 * A boundary at index `b` splits entries into `[0, b)` and `[b, n)`. It is
 * closure-safe when no tool call has a part on each side: a provider
 * rejects a call whose result is missing and a result whose call is missing.
 * Calls pair with results by `toolCallId`, never by position or tool name.
 * Parallel calls, delayed results, results before their call and orphans on
 * either side are all handled by the same span rule.
 *
 * A tool call id is not unique on a branch: providers and local model
 * servers number calls per response (`call_0`, `call_1`, … in every reply),
 * so the same id comes back turn after turn. One span is one call and its
 * results: a call whose id was seen before opens a span of its own (unless
 * its only part so far is a result right before it, in the same batch), and
 * a result joins the latest span of its id. Spans are keyed by `key` (the
 * id with the index that opened the span), unique on the branch; `callSpans`
 * lists every span of one id, in order.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";

/**
 * Stop reasons of assistant messages Pi drops before a provider request; their
 * tool calls are abandoned, never answered.
 */
export const DROPPED_STOP_REASONS: ReadonlySet<string> = new Set(["aborted", "error"]);

/** Where one tool call and its results appear in a branch. */
export interface ToolCallSpan {
	/** The tool call id (not unique on a branch). */
	id: string;
	/** Unique on the branch: the id at the index of the entry that opened the span. */
	key: string;
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

/** The spans of a branch read so far: by key, by call id, and where the latest assistant message stands. */
export interface ToolSpanTable {
	/** Every span by its key, in order of opening. */
	spans: Map<string, ToolCallSpan>;
	/** Every span of one call id, in order of opening; a result joins the last. */
	callSpans: Map<string, ToolCallSpan[]>;
	/** Index of the latest assistant message read (-1 before the first). */
	assistantAt: number;
}

export function emptySpanTable(): ToolSpanTable {
	return { spans: new Map(), callSpans: new Map(), assistantAt: -1 };
}

/**
 * Record one entry's tool calls and its tool result in their spans (the
 * module comment says which span a part joins). `touched` hears each span
 * the entry opens or grows, for a view kept current as the branch grows.
 */
export function noteToolSpans(
	entry: SessionEntry,
	index: number,
	table: ToolSpanTable,
	touched?: (span: ToolCallSpan, opened: boolean) => void,
): void {
	const open = (id: string, name: string): ToolCallSpan => {
		const span = {
			id,
			key: `${id}@${index}`,
			first: index,
			last: index,
			callIndex: -1,
			resultIndices: [],
			toolName: name,
		};
		table.spans.set(span.key, span);
		const list = table.callSpans.get(id);
		if (list) list.push(span);
		else table.callSpans.set(id, [span]);
		touched?.(span, true);
		return span;
	};
	const grow = (span: ToolCallSpan): ToolCallSpan => {
		span.first = Math.min(span.first, index);
		span.last = Math.max(span.last, index);
		touched?.(span, false);
		return span;
	};
	const calls = toolCallIdsOf(entry);
	for (const call of calls) {
		const latest = table.callSpans.get(call.id)?.at(-1);
		// A result that came just before its call (no other response between) is this call's; anything else is not.
		const early = latest !== undefined && latest.callIndex === -1 && latest.last > table.assistantAt;
		const span = early ? grow(latest) : open(call.id, call.name);
		span.callIndex = index;
		span.toolName = call.name;
	}
	if (entry.type === "message" && entry.message.role === "assistant") table.assistantAt = index;
	const result = toolResultIdOf(entry);
	if (!result) return;
	const latest = table.callSpans.get(result.id)?.at(-1);
	(latest ? grow(latest) : open(result.id, result.name)).resultIndices.push(index);
}

/** Every tool call's span across the branch (by key; `callSpans` by call id). */
export function toolSpanTable(entries: readonly SessionEntry[]): ToolSpanTable {
	const table = emptySpanTable();
	entries.forEach((entry, index) => {
		noteToolSpans(entry, index, table);
	});
	return table;
}

/** Every tool call's span across the branch, keyed by `key`, in order of opening. */
export function toolCallSpans(entries: readonly SessionEntry[]): Map<string, ToolCallSpan> {
	return toolSpanTable(entries).spans;
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

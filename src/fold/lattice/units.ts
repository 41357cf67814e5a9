/**
 * Structural units over an ordered branch of session entries.
 *
 * A unit is the smallest closed piece a fold may align to. The branch is cut at
 * every closure-safe boundary (src/session/closure.ts), so a tool call and its
 * results always land in the same unit whatever their order or distance; each
 * piece is then classified:
 *
 * - `user`: a user message, custom message (entry or role), `!` bash execution
 *   or branch summary: context the human or host put in front of the model.
 * - `assistant`: an assistant message without tool calls.
 * - `tool-batch`: an assistant message with tool calls together with every
 *   result of those calls (and anything that sits between them).
 * - `orphan-result`: tool results whose call is nowhere on the branch.
 * - `rider`: entries that never reach the model (model/thinking changes,
 *   custom state, labels, session info, context edits, usage, excluded bash
 *   runs). They ride along inside whatever fold surrounds them.
 * - `barrier`: a compaction entry. Its summary stands for entries before it,
 *   so no fold may straddle or contain it.
 *
 * The module also finds the closed chapters the ladder may fold: runs of units
 * that start at a user unit and end where the next user unit or barrier begins.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { DROPPED_STOP_REASONS, type ToolCallSpan, type ToolSpanTable, toolSpanTable } from "../../session/closure.ts";

/** Pi's built-in read-only tools: completed batches of only these may fold automatically. */
export const DEFAULT_READ_ONLY_TOOLS: ReadonlySet<string> = new Set(["read", "grep", "find", "ls"]);

/** Assistant stop reasons whose message may still change: the unit is not closed. */
export const PENDING_STOP_REASONS: ReadonlySet<string> = new Set(["pending", "deferred"]);

export type UnitKind = "user" | "assistant" | "tool-batch" | "orphan-result" | "rider" | "barrier";

/** One structural unit: the half-open entry range `[start, end)` of the branch. */
export interface StructuralUnit {
	/** Position among the branch's units. */
	index: number;
	kind: UnitKind;
	start: number;
	end: number;
	/** True when the unit contributes to the model's context (not a rider or barrier). */
	context: boolean;
	/**
	 * True when nothing can still be added to the unit: always for non-batches
	 * (except a pending assistant response); for a tool batch when it is
	 * completed or its calls were abandoned by an aborted/failed response.
	 */
	closed: boolean;
	/** Tool batch: every call has at least one result. False for every other kind. */
	completed: boolean;
	/** Tool batch: every call's tool name is in the read-only set. False for every other kind. */
	readOnly: boolean;
	/** Tool call ids issued or answered inside the unit, in order of first appearance. */
	toolCallIds: string[];
	/** Tool names of those calls (distinct, in order of first appearance). */
	toolNames: string[];
}

/** An ordered branch with everything the fold rules need, computed once per branch. */
export interface BranchView {
	entries: readonly SessionEntry[];
	/** Entry id → index. The first occurrence wins if a branch repeats an id. */
	indexById: ReadonlyMap<string, number>;
	/**
	 * Each tool call with its results, where they sit: `spans` by a key unique
	 * on the branch, `callSpans` every span of one call id (ids repeat when a
	 * provider numbers calls per response). session/closure.ts pairs them.
	 */
	tools: ToolSpanTable;
	units: readonly StructuralUnit[];
	/** Entry index → index of the unit holding it. */
	unitOf: readonly number[];
	/** Entry index i → assistant messages among the entries before i (length: entries + 1). */
	responsesBefore: readonly number[];
	/** Indices of the tool-batch units, in order. */
	batchUnits: readonly number[];
	readOnlyTools: ReadonlySet<string>;
}

export interface BranchViewOptions {
	/** Tool names whose completed batches count as read-only. Defaults to Pi's `read`, `grep`, `find`, `ls`. */
	readOnlyTools?: ReadonlySet<string>;
}

/** A closed chapter: a finished user turn the ladder may fold, as a unit range. */
export interface ChapterSpan {
	/** First and one-past-last unit index. */
	firstUnit: number;
	endUnit: number;
	/** Entry range `[start, end)` trimmed to the first and last context unit. */
	start: number;
	end: number;
	/** Context units inside (riders and barriers excluded). */
	contextUnits: number;
}

/**
 * True for entries whose model content Pi lets a `context_edit` replace or
 * omit: user, assistant and tool-result messages and custom messages. Every
 * other context-bearing entry (a `!` bash run, a system message, a branch
 * summary, a compaction) cannot be hidden, so no fold may contain it.
 */
export function isEditableEntry(entry: SessionEntry): boolean {
	if (entry.type === "custom_message") return true;
	if (entry.type !== "message") return false;
	const role = entry.message.role;
	return role === "user" || role === "assistant" || role === "toolResult";
}

/** Kind of one entry taken alone (a message with tool calls reports `tool-batch`). */
export function entryUnitKind(entry: SessionEntry): UnitKind {
	switch (entry.type) {
		case "message":
			return messageUnitKind(entry.message);
		case "custom_message":
			return "user";
		case "compaction":
		case "branch_summary":
			return "barrier";
		default:
			return "rider";
	}
}

function messageUnitKind(message: AgentMessage): UnitKind {
	switch (message.role) {
		case "user":
			return "user";
		case "assistant":
			return message.content.some((part) => part.type === "toolCall") ? "tool-batch" : "assistant";
		case "toolResult":
			return "orphan-result";
		case "bashExecution":
			return message.excludeFromContext ? "rider" : "barrier";
		default:
			// custom, system, branchSummary, compactionSummary: context the model reads but Pi cannot edit.
			return "barrier";
	}
}

/** Stop reason of an assistant message entry, if it is one. */
function stopReasonOf(entry: SessionEntry | undefined): string | undefined {
	if (entry?.type !== "message" || entry.message.role !== "assistant") return undefined;
	return entry.message.stopReason;
}

/** Split a branch into structural units and index it. */
export function analyzeBranch(entries: readonly SessionEntry[], options: BranchViewOptions = {}): BranchView {
	const readOnlyTools = options.readOnlyTools ?? DEFAULT_READ_ONLY_TOOLS;
	const tools = toolSpanTable(entries);
	const indexById = new Map<string, number>();
	entries.forEach((entry, index) => {
		if (!indexById.has(entry.id)) indexById.set(entry.id, index);
	});
	const units = cutUnits(entries, 0, spansByFirstIndex(tools.spans), readOnlyTools, 0);
	const unitOf: number[] = [];
	for (const unit of units) for (let i = unit.start; i < unit.end; i++) unitOf.push(unit.index);
	const responsesBefore = [0];
	for (const entry of entries) responsesBefore.push((responsesBefore.at(-1) ?? 0) + (isResponse(entry) ? 1 : 0));
	const batchUnits = units.filter((unit) => unit.kind === "tool-batch").map((unit) => unit.index);
	return { entries, indexById, tools, units, unitOf, responsesBefore, batchUnits, readOnlyTools };
}

/** An assistant message: one response to one request. */
export function isResponse(entry: SessionEntry): boolean {
	return entry.type === "message" && entry.message.role === "assistant";
}

/** Tool call spans grouped by the index where each starts. */
export function spansByFirstIndex(spans: ReadonlyMap<string, ToolCallSpan>): Map<number, ToolCallSpan[]> {
	const byFirst = new Map<number, ToolCallSpan[]>();
	for (const span of spans.values()) {
		const list = byFirst.get(span.first) ?? [];
		list.push(span);
		byFirst.set(span.first, list);
	}
	return byFirst;
}

/**
 * The units of `entries[from..]`, numbered from `firstUnit`. `from` must be a
 * closure-safe boundary of the branch (0, or where a unit starts that no
 * span reaching into it has changed), so only spans starting at or after it
 * can cut what follows: a branch that grew is cut again from its last
 * unchanged unit on, never from the start.
 */
export function cutUnits(
	entries: readonly SessionEntry[],
	from: number,
	spansByFirst: ReadonlyMap<number, readonly ToolCallSpan[]>,
	readOnlyTools: ReadonlySet<string>,
	firstUnit: number,
): StructuralUnit[] {
	const crossing = new Int32Array(entries.length - from + 2);
	for (let i = from; i < entries.length; i++) {
		const starting = spansByFirst.get(i);
		if (starting === undefined) continue;
		for (const span of starting) {
			if (span.last <= span.first) continue;
			crossing[span.first + 1 - from] = (crossing[span.first + 1 - from] ?? 0) + 1;
			crossing[span.last + 1 - from] = (crossing[span.last + 1 - from] ?? 0) - 1;
		}
	}
	const units: StructuralUnit[] = [];
	let open = crossing[0] ?? 0;
	let start = from;
	for (let boundary = from + 1; boundary <= entries.length; boundary++) {
		open += crossing[boundary - from] ?? 0;
		if (open !== 0) continue;
		units.push(classifyRange(entries, start, boundary, spansByFirst, readOnlyTools, firstUnit + units.length));
		start = boundary;
	}
	return units;
}

function classifyRange(
	entries: readonly SessionEntry[],
	start: number,
	end: number,
	spansByFirst: ReadonlyMap<number, readonly ToolCallSpan[]>,
	readOnlyTools: ReadonlySet<string>,
	index: number,
): StructuralUnit {
	// One pass over the spans starting inside the range, no intermediate lists: a resume cuts every unit of the branch.
	const toolCallIds: string[] = [];
	const toolNames: string[] = [];
	let calls = 0;
	let completed = true;
	let abandoned = true;
	let readOnly = true;
	for (let i = start; i < end; i++) {
		const starting = spansByFirst.get(i);
		if (starting === undefined) continue;
		for (const span of starting) {
			toolCallIds.push(span.id);
			if (!toolNames.includes(span.toolName)) toolNames.push(span.toolName);
			if (span.callIndex === -1) continue;
			calls++;
			const answered = span.resultIndices.length > 0;
			if (!answered) completed = false;
			if (!answered && !DROPPED_STOP_REASONS.has(stopReasonOf(entries[span.callIndex]) ?? "")) abandoned = false;
			if (!readOnlyTools.has(span.toolName)) readOnly = false;
		}
	}
	const unit = (
		kind: UnitKind,
		context: boolean,
		closed: boolean,
		done = false,
		onlyReads = false,
	): StructuralUnit => ({
		index,
		start,
		end,
		toolCallIds,
		toolNames,
		completed: done,
		readOnly: onlyReads,
		kind,
		context,
		closed,
	});
	if (calls > 0) return unit("tool-batch", true, completed || abandoned, completed, readOnly);
	if (toolCallIds.length > 0) return unit("orphan-result", true, true);
	const first = entries[start];
	const kind = first ? entryUnitKind(first) : "rider";
	const pending = kind === "assistant" && PENDING_STOP_REASONS.has(stopReasonOf(first) ?? "");
	return unit(kind, kind !== "rider" && kind !== "barrier", !pending);
}

/** Units whose entry ranges intersect `[start, end)`, in order. */
export function unitsInRange(view: BranchView, start: number, end: number): StructuralUnit[] {
	if (end <= start) return [];
	const first = view.unitOf[start];
	const last = view.unitOf[end - 1];
	if (first === undefined || last === undefined) return [];
	return view.units.slice(first, last + 1);
}

/**
 * Closed chapters of a branch: each run of units from a user unit up to the
 * next user unit or barrier, when such a terminator exists (the turn is over),
 * every unit in it is closed, and it holds at least `minUnits` context units.
 * Runs that do not start at a user unit (the head of a branch, or what follows
 * a compaction) are not chapters.
 */
export function closedChapters(view: BranchView, minUnits: number): ChapterSpan[] {
	const chapters: ChapterSpan[] = [];
	const units = view.units;
	let open: number | undefined;
	for (let u = 0; u <= units.length; u++) {
		const unit = units[u];
		const terminates = unit === undefined || unit.kind === "user" || unit.kind === "barrier";
		if (!terminates) continue;
		if (open !== undefined && unit !== undefined) {
			const chapter = chapterOf(units, open, u);
			if (chapter && chapter.contextUnits >= minUnits) chapters.push(chapter);
		}
		open = unit?.kind === "user" ? u : undefined;
	}
	return chapters;
}

function chapterOf(units: readonly StructuralUnit[], firstUnit: number, endUnit: number): ChapterSpan | undefined {
	const run = units.slice(firstUnit, endUnit);
	if (run.some((unit) => !unit.closed)) return undefined;
	const context = run.filter((unit) => unit.context);
	const head = context[0];
	const tail = context[context.length - 1];
	if (!head || !tail) return undefined;
	return { firstUnit, endUnit, start: head.start, end: tail.end, contextUnits: context.length };
}

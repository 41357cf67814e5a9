/**
 * The span rules every fold obeys, as small checks over a branch view and a
 * placed lattice: resolving span ends, snapping outward to whole units and
 * whole folds, and the refusals (with messages that name the problem and the
 * next action) for barriers, open units, too-small spans, nesting, protected
 * entries and the fresh tail. lattice.ts composes them into operations.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { ToolCallSpan } from "../../session/closure.ts";
import { entryIdAt, innermostContaining, type LatticeIndex, partialOverlaps } from "./lattice-index.ts";
import { type FoldLattice, type FoldRefusal, refusal } from "./records.ts";
import { type BranchView, entryUnitKind, type StructuralUnit } from "./units.ts";

/** A tool-batch fold is exactly this many tool-batch units: one. */
export const MIN_TOOL_BATCH_UNITS = 1;
/** A chapter needs at least two context units (one unit alone is a tool batch or a single message). */
export const MIN_CHAPTER_UNITS = 2;
/** A consolidation joins at least two folds. */
export const MIN_CONSOLIDATION_FOLDS = 2;
/** Ids listed in one refusal message before "+n more". */
const MESSAGE_ID_LIMIT = 3;
/** Calls an ambiguous tool call id is refused with, listed by entry before "+n more": enough to pick one. */
const AMBIGUOUS_CALLS_LISTED = 8;

/** Entries that must stay raw. */
export interface FoldGuards {
	protectedEntryIds?: ReadonlySet<string>;
	/** Branch index where the fresh tail begins; entries at or after it never fold. Defaults to none. */
	freshTailStart?: number;
}

export type CorrectionReason = "unit-boundary" | "fold-boundary" | "trimmed-riders";

/** How a requested span was moved to legal boundaries. */
export interface SpanCorrection {
	requested: { first: string; last: string };
	firstEntryId: string;
	lastEntryId: string;
	reasons: CorrectionReason[];
	message: string;
}

export type Range = { start: number; end: number };

export function resolveEnd(lattice: FoldLattice, index: LatticeIndex, id: string): Range | FoldRefusal {
	const fold = index.placed.get(id);
	if (fold) return { start: fold.start, end: fold.end };
	if (lattice.folds.has(id)) return notOnBranch(id, index);
	const entry = index.view.indexById.get(id);
	if (entry !== undefined) return { start: entry, end: entry + 1 };
	const span = callSpan(index.view, id);
	if (span && "ok" in span) return span;
	if (span) return { start: span.first, end: span.last + 1 };
	return refusal(
		"unknown-id",
		`"${id}" is not an entry id, tool call id or fold id on this branch. Name span ends with ids from the transcript, or list fold ids with the status action (detail "tree").`,
	);
}

/**
 * The one call a tool call id names on this branch, or a refusal listing the
 * calls it names when the id repeats (a provider numbering calls per
 * response): an agent's id never silently means the first of them.
 */
export function callSpan(view: BranchView, id: string): ToolCallSpan | FoldRefusal | undefined {
	const spans = view.tools.callSpans.get(id);
	if (!spans || spans.length === 0) return undefined;
	if (spans.length === 1) return spans[0];
	const where = spans.map((span) => entryIdAt(view, span.callIndex >= 0 ? span.callIndex : span.first));
	const shown = where.slice(0, AMBIGUOUS_CALLS_LISTED).join(", ");
	const more = where.length > AMBIGUOUS_CALLS_LISTED ? ` (+${where.length - AMBIGUOUS_CALLS_LISTED} more)` : "";
	return refusal(
		"ambiguous-id",
		`Tool call id "${id}" names ${spans.length} calls on this branch (the provider numbers calls per response), in entries ${shown}${more}. Name the entry instead: its id is unique.`,
	);
}

export function notOnBranch(id: string, index: LatticeIndex): FoldRefusal {
	const why = index.detached.get(id) ?? "cannot be placed on this branch";
	return refusal("unknown-fold", `Fold ${id} ${why}, so it is not on this branch. Use a fold id listed by status.`);
}

export function snapToUnits(view: BranchView, start: number, end: number, reasons: Set<CorrectionReason>): Range {
	const first = view.units[view.unitOf[start] ?? -1];
	const last = view.units[view.unitOf[end - 1] ?? -1];
	const snapped = { start: first?.start ?? start, end: last?.end ?? end };
	if (snapped.start !== start || snapped.end !== end) reasons.add("unit-boundary");
	return snapped;
}

/** Widen until no fold partially overlaps the span, keeping whole units (fold edges are unit edges). */
export function snapToFolds(
	view: BranchView,
	index: LatticeIndex,
	start: number,
	end: number,
	reasons: Set<CorrectionReason>,
): Range {
	let range = { start, end };
	for (;;) {
		const overlaps = partialOverlaps(index, range.start, range.end);
		if (overlaps.length === 0) return range;
		reasons.add("fold-boundary");
		const widened = {
			start: Math.min(range.start, ...overlaps.map((fold) => fold.start)),
			end: Math.max(range.end, ...overlaps.map((fold) => fold.end)),
		};
		range = snapToUnits(view, widened.start, widened.end, reasons);
	}
}

/** A compaction entry stands for what precedes it; no fold may hold one (even one absorbed into a tool batch). */
export function checkBarrier(view: BranchView, start: number, end: number): FoldRefusal | undefined {
	for (let i = start; i < end; i++) {
		const entry = view.entries[i];
		if (!entry || entryUnitKind(entry) !== "barrier") continue;
		return refusal(
			"barrier",
			`Span crosses ${barrierName(entry)} ${entryIdAt(view, i)}, which Pi cannot hide from the model, so no fold may contain it. Fold the entries on one side of it.`,
		);
	}
	return undefined;
}

function barrierName(entry: SessionEntry): string {
	if (entry.type === "compaction") return "compaction entry";
	if (entry.type === "branch_summary") return "branch summary";
	if (entry.type === "message" && entry.message.role === "bashExecution") return "user bash run";
	return entry.type === "message" ? `${entry.message.role} message` : `${entry.type} entry`;
}

export function checkChapterUnits(view: BranchView, units: readonly StructuralUnit[]): FoldRefusal | undefined {
	const open = units.find((unit) => !unit.closed);
	if (open) return openUnit(view, open);
	const context = units.filter((unit) => unit.context).length;
	if (context < MIN_CHAPTER_UNITS) {
		return refusal(
			"span-too-small",
			`A chapter needs at least ${MIN_CHAPTER_UNITS} whole user, assistant or tool-batch units; this span holds ${context}. Widen the span to at least two turns, or name one tool call id to fold a single tool batch.`,
		);
	}
	return undefined;
}

export function checkPlacement(index: LatticeIndex, start: number, end: number): FoldRefusal | undefined {
	const holder = innermostContaining(index, start, end);
	if (!holder) return undefined;
	if (holder.start === start && holder.end === end) {
		return refusal(
			"already-folded",
			`Span is exactly fold ${holder.id} (${holder.record.kind}); nothing new to fold. Use rebrief to change its brief, or name a wider span.`,
			holder.id,
		);
	}
	return refusal(
		"inside-fold",
		`Span lies inside fold ${holder.id} (${entryIdAt(index.view, holder.start)}..${entryIdAt(index.view, holder.end - 1)}); a fold cannot be added inside another. Reboundary ${holder.id} to dissolve it first, or fold a span that contains all of it.`,
	);
}

export function checkGuards(
	view: BranchView,
	start: number,
	end: number,
	guards: FoldGuards,
	correction: SpanCorrection | undefined,
): FoldRefusal | undefined {
	const widened = correction ? ` (${correction.message})` : "";
	const freshStart = guards.freshTailStart ?? view.entries.length;
	if (end > freshStart) {
		return refusal(
			"fresh-tail",
			`Span reaches into the fresh tail, which starts at entry ${entryIdAt(view, freshStart)} and never folds${widened}. End the span before it, or fold it once it has aged out.`,
		);
	}
	const protectedIds = guards.protectedEntryIds;
	if (protectedIds && protectedIds.size > 0) {
		const hits = view.entries.slice(start, end).flatMap((entry) => (protectedIds.has(entry.id) ? [entry.id] : []));
		if (hits.length > 0) {
			return refusal(
				"protected",
				`Span includes protected ${hits.length === 1 ? "entry" : "entries"} ${listIds(hits)}${widened}. Unprotect ${hits.length === 1 ? "it" : "them"} first, or fold a span that leaves ${hits.length === 1 ? "it" : "them"} out.`,
			);
		}
	}
	return undefined;
}

export function notOneBatch(view: BranchView, body: readonly StructuralUnit[]): FoldRefusal {
	const described = body.map((unit) => `${unit.kind} ${entryIdAt(view, unit.start)}`);
	return refusal(
		"not-a-tool-batch",
		`A tool-batch fold is exactly one tool batch (an assistant tool call message with all its results); this span holds ${body.length} unit(s): ${listIds(described)}. Name one tool call id, or name whole turns (from a user message) to fold a chapter.`,
	);
}

export function openUnit(view: BranchView, unit: StructuralUnit): FoldRefusal {
	if (unit.kind !== "tool-batch") {
		return refusal(
			"open-unit",
			`Entry ${entryIdAt(view, unit.start)} is a response still in progress. Fold it once it has finished.`,
		);
	}
	const waiting: string[] = [];
	for (const span of view.tools.spans.values())
		if (span.first >= unit.start && span.first < unit.end && span.resultIndices.length === 0) waiting.push(span.id);
	return refusal(
		"open-unit",
		`Tool batch ${entryIdAt(view, unit.start)} is not completed: no result yet for ${listIds(waiting)}. Fold it after its results arrive, or end the span before it.`,
	);
}

export function contextEntryAt(view: BranchView, index: number): string | undefined {
	const unit = view.units[view.unitOf[index] ?? -1];
	return unit && unit.kind !== "rider" ? `${unit.kind} entry ${entryIdAt(view, index)}` : undefined;
}

export function describeCorrection(
	view: BranchView,
	first: string,
	last: string,
	start: number,
	end: number,
	reasons: CorrectionReason[],
): SpanCorrection {
	const firstEntryId = entryIdAt(view, start);
	const lastEntryId = entryIdAt(view, end - 1);
	const why = reasons
		.map((reason) =>
			reason === "unit-boundary"
				? "widened to whole units, keeping tool calls with their results"
				: reason === "fold-boundary"
					? "widened to whole existing folds"
					: "edge entries that never reach the model left out",
		)
		.join("; ");
	return {
		requested: { first, last },
		firstEntryId,
		lastEntryId,
		reasons,
		message: `span ${first}..${last} became ${firstEntryId}..${lastEntryId}: ${why}`,
	};
}

function listIds(ids: readonly string[]): string {
	const shown = ids.slice(0, MESSAGE_ID_LIMIT).join(", ");
	return ids.length > MESSAGE_ID_LIMIT ? `${shown} (+${ids.length - MESSAGE_ID_LIMIT} more)` : shown;
}

/**
 * Deep spans: the ladder's widest rung. Every run of closed context units
 * outside the fresh tail that no fold covers yet, cut only where a fold may
 * not reach (a barrier, a protected entry, an unfinished unit, a unit the
 * working set keeps raw, a fold the agent expanded or the ladder made).
 * Each run becomes one chapter-kind fold with one brief.
 *
 * The agent's marks never cut a run: a pending mark's units join it (the
 * mark still folds, as a fold inside the span), and so does a collapsed fold
 * the agent made. A marking agent then ends up with the same deep folds as
 * one that never marks, plus its own folds inside them.
 *
 * Why: a commit re-bills everything after its first changed byte, so once a
 * commit is paid for, everything older than the tail should go in it (deep
 * and rare beats shallow and frequent). And small results only pay as a
 * run: one brief per 100-byte result would cost more than the result, one
 * brief per run of them frees nearly all of it. A run takes its calls'
 * arguments (file contents in `write`, diffs in `edit`) along, which a
 * tool-batch fold leaves raw. The newest user message (the ask the agent is
 * working on) stays raw.
 *
 * Pure over the branch view, the lattice index and the window reading.
 */

import type { FoldPlacement, LatticeIndex } from "../lattice/lattice-index.ts";
import { MIN_CHAPTER_UNITS } from "../lattice/lattice-rules.ts";
import type { BranchView, StructuralUnit } from "../lattice/units.ts";
import { rangeTokens, type WindowReading } from "./budget.ts";

/** An uncovered run of closed context units, as an entry range, with the rent its tokens have paid. */
export interface DeepSpan {
	start: number;
	end: number;
	/** Window tokens the run shows now. */
	tokens: number;
	/** Σ over its units of window tokens × requests that carried the unit since it left the working set: the rent already paid for it unused, in token-requests. */
	tokenRequests: number;
}

export interface SpanRules {
	view: BranchView;
	index: LatticeIndex;
	reading: WindowReading;
	tailStart: number;
	/**
	 * True for a unit the ladder must leave raw (bookkeeping, a peek without `foldPeekResults`, protected, in
	 * the working set); `marked`: a pending mark covers it, so the working set does not keep it.
	 */
	keepRaw: (unit: StructuralUnit, marked: boolean) => boolean;
	/** True when `[start, end)` overlaps a pending mark: the agent asked for it folded, so the working set does not keep it. */
	overlapsMark: (start: number, end: number) => boolean;
	/** True for a placed fold a span may take in as a fold inside it (an agent's collapsed fold); any other cuts the run. */
	joins: (fold: FoldPlacement) => boolean;
	/** Requests that carried a unit since it left the working set: the rent it paid unused. */
	carriedUnused: (unit: StructuralUnit) => number;
}

/** Every deep span before `tailStart`, oldest first. */
export function deepSpans(rules: SpanRules): DeepSpan[] {
	const { view, index, tailStart } = rules;
	const out: DeepSpan[] = [];
	// The newest user message is the ask the agent is working on: it stays raw.
	const ask = newestUserUnit(view, tailStart);
	let run: StructuralUnit[] = [];
	// Context units of the run outside the folds it joins: a run of nothing but folds is no new span.
	let raw = 0;
	const close = () => {
		const span = raw > 0 ? spanOf(run, rules) : undefined;
		if (span) out.push(span);
		run = [];
		raw = 0;
	};
	const units = (start: number, end: number): StructuralUnit[] => {
		const out: StructuralUnit[] = [];
		for (let u = view.unitOf[start] ?? view.units.length; u < view.units.length; u++) {
			const unit = view.units[u];
			if (!unit || unit.start >= end) break;
			out.push(unit);
		}
		return out;
	};
	const gap = (start: number, end: number) => {
		if (end <= start) return;
		for (const unit of units(start, end)) {
			if (unit.end > tailStart || unit.end > end) {
				close();
				return;
			}
			if (!unit.context) {
				if (unit.kind === "barrier") close();
				else run.push(unit);
				continue;
			}
			// What the agent marked folds whatever the working set says; the span takes it in as a fold inside.
			const marked = rules.overlapsMark(unit.start, unit.end);
			const foldable =
				unit.index !== ask &&
				unit.closed &&
				(unit.kind !== "tool-batch" || unit.completed) &&
				unit.kind !== "orphan-result" &&
				!rules.keepRaw(unit, marked);
			if (foldable) {
				run.push(unit);
				raw++;
			} else close();
		}
	};
	let at = 0;
	for (const root of index.roots) {
		if (root.start >= tailStart) break;
		gap(at, root.start);
		if (root.end <= tailStart && rules.joins(root)) run.push(...units(root.start, root.end));
		else close();
		at = Math.max(at, root.end);
	}
	gap(at, tailStart);
	close();
	return out;
}

/** Index of the newest user unit before `tailStart`, or -1. */
function newestUserUnit(view: BranchView, tailStart: number): number {
	for (let u = view.unitOf[tailStart - 1] ?? -1; u >= 0; u--) {
		const unit = view.units[u];
		if (unit?.kind === "user" && isUserMessage(view, unit)) return u;
	}
	return -1;
}

/** A user message typed by the person (a custom message is a "user" unit too, but no ask). */
function isUserMessage(view: BranchView, unit: StructuralUnit): boolean {
	const entry = view.entries[unit.start];
	return entry?.type === "message" && entry.message.role === "user";
}

function spanOf(run: readonly StructuralUnit[], rules: SpanRules): DeepSpan | undefined {
	const context = run.filter((unit) => unit.context);
	if (context.length < MIN_CHAPTER_UNITS) return undefined;
	const first = context[0];
	const last = context.at(-1);
	if (!first || !last) return undefined;
	const { view, reading } = rules;
	let tokens = 0;
	let tokenRequests = 0;
	for (const unit of context) {
		const unitTokens = rangeTokens(view, reading, unit.start, unit.end);
		tokens += unitTokens;
		tokenRequests += unitTokens * rules.carriedUnused(unit);
	}
	return { start: first.start, end: last.end, tokens, tokenRequests };
}

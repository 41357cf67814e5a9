/**
 * Deep spans: the ladder's widest rung. Every run of closed context units
 * outside the fresh tail that no fold covers yet, cut only where a fold may
 * not reach (a barrier, a protected entry, an unfinished unit, a batch the
 * ladder must leave raw, an existing fold or pending mark). Each run becomes
 * one chapter-kind fold with one brief.
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

import type { LatticeIndex } from "../lattice/lattice-index.ts";
import { MIN_CHAPTER_UNITS } from "../lattice/lattice-rules.ts";
import type { BranchView, StructuralUnit } from "../lattice/units.ts";
import type { WindowReading } from "./budget.ts";

/** An uncovered run of closed context units, as an entry range, with the rent its tokens have paid. */
export interface DeepSpan {
	start: number;
	end: number;
	/** Window tokens the run shows now. */
	tokens: number;
	/** Σ over its entries of window tokens × requests that carried the entry: the rent already paid, in token-requests. */
	tokenRequests: number;
}

export interface SpanRules {
	view: BranchView;
	index: LatticeIndex;
	reading: WindowReading;
	tailStart: number;
	/** True for a unit the ladder must leave raw (bookkeeping, a peek without `foldPeekResults`, protected). */
	keepRaw: (unit: StructuralUnit) => boolean;
	/** True when `[start, end)` overlaps a pending mark: the mark folds it, not a span. */
	overlapsMark: (start: number, end: number) => boolean;
}

/** Every deep span before `tailStart`, oldest first. */
export function deepSpans(rules: SpanRules): DeepSpan[] {
	const { view, index, tailStart } = rules;
	const out: DeepSpan[] = [];
	const responsesTotal = view.responsesBefore[view.entries.length] ?? 0;
	// The newest user message is the ask the agent is working on: it stays raw.
	const ask = newestUserUnit(view, tailStart);
	let run: StructuralUnit[] = [];
	const close = () => {
		const span = spanOf(run, rules, responsesTotal);
		if (span) out.push(span);
		run = [];
	};
	const gap = (start: number, end: number) => {
		if (end <= start) return;
		const first = view.unitOf[start] ?? view.units.length;
		for (let u = first; u < view.units.length; u++) {
			const unit = view.units[u];
			if (!unit || unit.start >= end || unit.end > tailStart) break;
			if (unit.end > end) break;
			if (!unit.context) {
				if (unit.kind === "barrier") close();
				else run.push(unit);
				continue;
			}
			const foldable =
				unit.index !== ask &&
				unit.closed &&
				(unit.kind !== "tool-batch" || unit.completed) &&
				unit.kind !== "orphan-result" &&
				!rules.keepRaw(unit) &&
				!rules.overlapsMark(unit.start, unit.end);
			if (foldable) run.push(unit);
			else close();
		}
		close();
	};
	let at = 0;
	for (const root of index.roots) {
		if (root.start >= tailStart) break;
		gap(at, root.start);
		at = Math.max(at, root.end);
	}
	gap(at, tailStart);
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

function spanOf(run: readonly StructuralUnit[], rules: SpanRules, responsesTotal: number): DeepSpan | undefined {
	const context = run.filter((unit) => unit.context);
	if (context.length < MIN_CHAPTER_UNITS) return undefined;
	const first = context[0];
	const last = context.at(-1);
	if (!first || !last) return undefined;
	const { view, reading } = rules;
	let tokens = 0;
	let tokenRequests = 0;
	for (let i = first.start; i < last.end; i++) {
		const entryTokens = reading.entryTokens.get(view.entries[i]?.id ?? "") ?? 0;
		tokens += entryTokens;
		tokenRequests += entryTokens * (responsesTotal - (view.responsesBefore[i + 1] ?? responsesTotal));
	}
	return { start: first.start, end: last.end, tokens, tokenRequests };
}

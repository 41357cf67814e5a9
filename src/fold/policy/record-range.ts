/**
 * Where a record lies on the branch, and the spans the ladder leaves to the
 * agent: a pending mark's range, and the spans of folds the agent dissolved
 * with `reboundary` (it said that cut was wrong). Pure over the branch view
 * and the live lattice.
 */

import type { FoldLattice, FoldRecord } from "../lattice/records.ts";
import type { BranchView } from "../lattice/units.ts";

/**
 * Entry range of a record (a pending mark's, a dissolved fold's) on this
 * branch, or undefined when its entries are gone. Children are read from
 * `lattice`; the depth guard keeps a hand-built cyclic lattice from looping.
 */
export function recordRange(
	view: BranchView,
	lattice: FoldLattice,
	record: FoldRecord,
): { start: number; end: number } | undefined {
	let start = Number.POSITIVE_INFINITY;
	let end = -1;
	let whole = true;
	const visit = (parts: FoldRecord["parts"], depth: number): void => {
		for (const part of parts) {
			if (part.type === "entry") {
				const index = view.indexById.get(part.entryId) ?? -1;
				if (index < 0) whole = false;
				start = Math.min(start, index);
				end = Math.max(end, index + 1);
			} else {
				const child = lattice.folds.get(part.foldId);
				if (child && depth < lattice.folds.size) visit(child.parts, depth + 1);
				else whole = false;
			}
		}
	};
	visit(record.parts, 0);
	return whole && end > 0 ? { start, end } : undefined;
}

/**
 * True for a span the ladder must leave to the agent's re-cut: exactly the
 * span of a fold it dissolved, and, at the boundary of the dissolve itself,
 * anything overlapping one. The commit right after a reboundary is free, and
 * without this it folded the dissolved span again, as it was, at the very
 * boundary the agent was told its entries show raw from the next request on.
 */
export function dissolvedAt(
	view: BranchView,
	lattice: FoldLattice,
	dissolved: readonly FoldRecord[],
	justDissolved: boolean,
): (start: number, end: number) => boolean {
	const spans = dissolved.flatMap((record) => {
		const range = recordRange(view, lattice, record);
		return range ? [range] : [];
	});
	return justDissolved
		? (start, end) => spans.some((span) => start < span.end && span.start < end)
		: (start, end) => spans.some((span) => span.start === start && span.end === end);
}

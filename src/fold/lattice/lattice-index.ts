/**
 * Where each fold of a lattice sits on a branch.
 *
 * A fold is placed when all its leaves are on the branch and its parts are
 * contiguous and in order; it then covers the half-open entry range
 * `[start, end)`. A fold that cannot be placed (its entries belong to another
 * branch, or its parts are out of order) is detached: the operations ignore it
 * and `checkLattice` reports it.
 */

import { type FoldLattice, type FoldRecord, parentMap } from "./records.ts";
import type { BranchView, StructuralUnit } from "./units.ts";

export interface FoldPlacement {
	id: string;
	record: FoldRecord;
	start: number;
	end: number;
	/** Parent fold id, or undefined for a root. */
	parentId: string | undefined;
	/** 0 for a root, parent depth + 1 below it. */
	depth: number;
}

export interface LatticeIndex {
	view: BranchView;
	/** Placed folds by id. */
	placed: ReadonlyMap<string, FoldPlacement>;
	/** Fold id → why it could not be placed on this branch. */
	detached: ReadonlyMap<string, string>;
	/** Placed folds in transcript order: by start, outer before inner. */
	ordered: readonly FoldPlacement[];
	/** Placed root folds by start index. */
	rootAt: ReadonlyMap<number, FoldPlacement>;
	/** Placed root folds in transcript order. */
	roots: readonly FoldPlacement[];
}

type Range = { start: number; end: number } | { problem: string };

/**
 * Indexes already built, per lattice and view. Both are immutable values (an
 * operation returns a new lattice; a new branch gets a new view), so one
 * index serves every reader of the same pair within a request.
 */
const indexCache = new WeakMap<FoldLattice, WeakMap<BranchView, LatticeIndex>>();

/** Place every fold of `lattice` on the branch of `view`. */
export function indexLattice(lattice: FoldLattice, view: BranchView): LatticeIndex {
	let byView = indexCache.get(lattice);
	if (!byView) {
		byView = new WeakMap();
		indexCache.set(lattice, byView);
	}
	const known = byView.get(view);
	if (known) return known;
	const index = buildIndex(lattice, view);
	byView.set(view, index);
	return index;
}

function buildIndex(lattice: FoldLattice, view: BranchView): LatticeIndex {
	const parents = parentMap(lattice);
	const ranges = new Map<string, Range>();
	const rangeOf = (id: string, depth: number): Range => {
		const known = ranges.get(id);
		if (known) return known;
		const record = lattice.folds.get(id);
		let range: Range;
		if (!record) range = { problem: "is named as a part but has no record" };
		else if (depth > lattice.folds.size) range = { problem: "is its own ancestor" };
		else range = partsRange(record, view, (child) => rangeOf(child, depth + 1));
		ranges.set(id, range);
		return range;
	};

	const placed = new Map<string, FoldPlacement>();
	const detached = new Map<string, string>();
	for (const record of lattice.folds.values()) {
		const range = rangeOf(record.id, 0);
		if ("problem" in range) {
			detached.set(record.id, range.problem);
			continue;
		}
		placed.set(record.id, { id: record.id, record, ...range, parentId: parents.get(record.id), depth: 0 });
	}
	// A fold under a parent that cannot be placed is detached too: adopting it elsewhere would give it two parents.
	for (const placement of [...placed.values()]) {
		for (let at = placement.parentId; at !== undefined; at = parents.get(at)) {
			if (placed.has(at)) continue;
			placed.delete(placement.id);
			detached.set(placement.id, `sits under fold ${at}, which cannot be placed`);
			break;
		}
	}
	for (const placement of placed.values()) {
		let depth = 0;
		for (let at = placement.parentId; at !== undefined && depth <= placed.size; at = parents.get(at)) depth++;
		placement.depth = depth;
	}
	const ordered = [...placed.values()].sort((a, b) => a.start - b.start || b.end - a.end || a.depth - b.depth);
	const roots = ordered.filter((placement) => placement.parentId === undefined);
	const rootAt = new Map<number, FoldPlacement>();
	for (const placement of roots) rootAt.set(placement.start, placement);
	return { view, placed, detached, ordered, rootAt, roots };
}

function partsRange(record: FoldRecord, view: BranchView, childRange: (id: string) => Range): Range {
	let start: number | undefined;
	let end: number | undefined;
	for (const part of record.parts) {
		let range: Range;
		if (part.type === "entry") {
			const index = view.indexById.get(part.entryId);
			range =
				index === undefined
					? { problem: `holds entry ${part.entryId}, which is not on this branch` }
					: { start: index, end: index + 1 };
		} else {
			range = childRange(part.foldId);
			if ("problem" in range) range = { problem: `holds fold ${part.foldId}, which cannot be placed` };
		}
		if ("problem" in range) return range;
		if (end !== undefined && range.start !== end)
			return { problem: "has parts that are not contiguous on this branch" };
		start ??= range.start;
		end = range.end;
	}
	if (start === undefined || end === undefined) return { problem: "has no parts" };
	return { start, end };
}

/** Placed folds that intersect `[start, end)` without containing it or lying inside it. */
export function partialOverlaps(index: LatticeIndex, start: number, end: number): FoldPlacement[] {
	return index.ordered.filter(
		(fold) =>
			fold.start < end &&
			start < fold.end &&
			!(fold.start <= start && end <= fold.end) &&
			!(start <= fold.start && fold.end <= end),
	);
}

/** The innermost placed fold whose range contains `[start, end)`, if any. */
export function innermostContaining(index: LatticeIndex, start: number, end: number): FoldPlacement | undefined {
	let best: FoldPlacement | undefined;
	for (const fold of index.ordered) {
		if (fold.start <= start && end <= fold.end && (!best || fold.depth > best.depth)) best = fold;
	}
	return best;
}

/**
 * The units no placed root fold covers, in order: the gaps between root
 * folds (a unit at a gap's edge that a fold overlaps may be included). What
 * could still fold, without walking the folded bulk of a long branch.
 */
export function unitsOutsideRoots(index: LatticeIndex, view: BranchView): StructuralUnit[] {
	const out: StructuralUnit[] = [];
	let next = 0;
	const gap = (start: number, end: number) => {
		if (end <= start) return;
		const last = view.unitOf[end - 1] ?? -1;
		for (let u = Math.max(next, view.unitOf[start] ?? view.units.length); u <= last; u++) {
			const unit = view.units[u];
			if (unit) out.push(unit);
		}
		next = Math.max(next, last + 1);
	};
	let at = 0;
	for (const root of index.roots) {
		gap(at, root.start);
		at = Math.max(at, root.end);
	}
	gap(at, view.entries.length);
	return out;
}

/** Entry id at an index, for messages. */
export function entryIdAt(view: BranchView, index: number): string {
	return view.entries[index]?.id ?? `#${index}`;
}

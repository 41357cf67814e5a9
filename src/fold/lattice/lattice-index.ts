/**
 * Where each fold of a lattice sits on a branch.
 *
 * A fold is placed when all its leaves are on the branch, its parts are
 * contiguous and in order, its span has a shape the window can show
 * (`shapeProblem`: whole units, no barrier, nothing open, a tool-batch fold
 * exactly one completed batch), and it nests with the other placed folds
 * (`nestingProblems`: a fold inside another is one of its descendants); it
 * then covers the half-open entry range `[start, end)`. A fold that cannot be
 * placed (its entries belong to another branch, its parts are out of order,
 * or a forged or damaged record covers a tool call without its result or
 * entries another fold already covers) is detached: the window, the ladder
 * and the actions ignore it, and `checkLattice` reports it. This one check is
 * what keeps a hash-consistent record from ever sending a provider-invalid
 * request or one that leaves messages out.
 */

import { LayeredMap } from "./layered-map.ts";
import { type FoldLattice, type FoldRecord, growthOf, parentMap } from "./records.ts";
import { type BranchView, type StructuralUnit, unitsInRange } from "./units.ts";

/** Why a placed span cannot be shown, by the code `checkLattice` and `pi-fold verify` name it with. */
export type ShapeDefectCode = "misaligned" | "barrier" | "open-unit" | "partial-overlap" | "unparented";

export interface ShapeDefect {
	code: ShapeDefectCode;
	message: string;
}

/**
 * Why a fold of this kind over `[start, end)` cannot be shown on this
 * branch, or undefined when it can. Showing a brief for a span that cuts a
 * unit would leave a tool call without its result (or a result without its
 * call) in the request: the provider refuses it.
 */
export function shapeProblem(
	view: BranchView,
	record: FoldRecord,
	start: number,
	end: number,
): ShapeDefect | undefined {
	const units = unitsInRange(view, start, end);
	const first = units[0];
	const last = units[units.length - 1];
	const id = record.id;
	if (!first || !last || first.start !== start || last.end !== end)
		return { code: "misaligned", message: `fold ${id} does not start and end on unit boundaries` };
	if (units.some((unit) => unit.kind === "barrier"))
		return {
			code: "barrier",
			message: `fold ${id} contains an entry Pi cannot hide (a compaction, branch summary, bash run or system message)`,
		};
	if (record.kind === "tool-batch") {
		const context = units.filter((unit) => unit.context);
		const batch = context[0];
		if (context.length !== 1 || batch?.kind !== "tool-batch")
			return { code: "misaligned", message: `tool-batch fold ${id} is not exactly one tool batch` };
		if (!batch.completed) return { code: "open-unit", message: `tool-batch fold ${id} holds an incomplete batch` };
	} else if (units.some((unit) => !unit.closed)) return { code: "open-unit", message: `fold ${id} holds an open unit` };
	return undefined;
}

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
	/** Detached folds whose span is on the branch but has a shape the window cannot show. */
	misshapen: ReadonlyMap<string, ShapeDefect>;
	/** Placed folds in transcript order: by start, outer before inner. */
	ordered: readonly FoldPlacement[];
	/** Placed root folds by start index. */
	rootAt: ReadonlyMap<number, FoldPlacement>;
	/** Placed root folds in transcript order. */
	roots: readonly FoldPlacement[];
}

type Range = { start: number; end: number } | { problem: string; shape?: ShapeDefect };

/**
 * Indexes already built, per lattice and view. A lattice is an immutable
 * value (an operation returns a new one); a view only grows at its end while
 * it keeps its identity, which moves no fold. So one index serves every
 * reader of the same pair, and the index of a lattice grown by one record
 * (`withRecord`) is grown from its base's instead of built again.
 */
const indexCache = new WeakMap<FoldLattice, WeakMap<BranchView, LatticeIndex>>();

function cached(lattice: FoldLattice, view: BranchView): LatticeIndex | undefined {
	return indexCache.get(lattice)?.get(view);
}

/** Place every fold of `lattice` on the branch of `view`. */
export function indexLattice(lattice: FoldLattice, view: BranchView): LatticeIndex {
	const known = cached(lattice, view);
	if (known) return known;
	const growth = growthOf(lattice);
	const base = growth ? cached(growth.base, view) : undefined;
	const index = (growth && base && grownIndex(base, growth.record)) || buildIndex(lattice, view);
	let byView = indexCache.get(lattice);
	if (!byView) {
		byView = new WeakMap();
		indexCache.set(lattice, byView);
	}
	byView.set(view, index);
	return index;
}

/**
 * The index of `base`'s lattice plus one new record, when the record is a
 * root over placed root folds and the folds inside its span are exactly its
 * subtree (what every fold the rules allow is); undefined otherwise, and the
 * index is built from scratch.
 */
function grownIndex(base: LatticeIndex, record: FoldRecord): LatticeIndex | undefined {
	const { view } = base;
	const children = new Set<string>();
	for (const part of record.parts) {
		if (part.type !== "fold") continue;
		const child = base.placed.get(part.foldId);
		if (!child || child.parentId !== undefined || children.has(part.foldId)) return undefined;
		children.add(part.foldId);
	}
	const range = partsRange(record, view, (id) => base.placed.get(id) ?? { problem: "unplaced" });
	if ("problem" in range || shapeProblem(view, record, range.start, range.end)) return undefined;
	// No root may run into the new span from before it (roots are disjoint, so the one before is the only
	// candidate), and every fold placed inside the new span must sit under one of its children.
	const before = base.roots[lowerBound(base.roots, range.start) - 1];
	if (before && before.end > range.start) return undefined;
	const first = lowerBound(base.ordered, range.start);
	let last = first;
	for (; last < base.ordered.length && (base.ordered[last]?.start ?? 0) < range.end; last++) {
		const fold = base.ordered[last];
		if (!fold || fold.end > range.end) return undefined;
	}
	const moved = new Map<string, FoldPlacement>();
	for (const fold of base.ordered.slice(first, last)) {
		let root = fold;
		for (let at = fold.parentId; at !== undefined; at = base.placed.get(at)?.parentId) {
			const up = base.placed.get(at);
			if (!up) return undefined;
			root = up;
		}
		if (!children.has(root.id)) return undefined;
		const parentId = fold.parentId ?? record.id;
		moved.set(fold.id, { ...fold, parentId, depth: fold.depth + 1 });
	}
	const placement: FoldPlacement = { id: record.id, record, ...range, parentId: undefined, depth: 0 };
	moved.set(record.id, placement);
	const ordered = [
		...base.ordered.slice(0, first),
		placement,
		...base.ordered.slice(first, last).map((fold) => moved.get(fold.id) ?? fold),
		...base.ordered.slice(last),
	];
	const roots = base.roots.filter((fold) => !children.has(fold.id));
	roots.splice(lowerBound(roots, placement.start), 0, placement);
	const rootAt = new Map<number, FoldPlacement>();
	for (const root of roots) rootAt.set(root.start, root);
	const placed = LayeredMap.over(base.placed, moved);
	return { view, placed, detached: base.detached, misshapen: base.misshapen, ordered, rootAt, roots };
}

/** First position in `sorted` (by start) whose start is at or after `start`. */
function lowerBound(sorted: readonly FoldPlacement[], start: number): number {
	let lo = 0;
	let hi = sorted.length;
	while (lo < hi) {
		const mid = (lo + hi) >> 1;
		if ((sorted[mid]?.start ?? 0) < start) lo = mid + 1;
		else hi = mid;
	}
	return lo;
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
		if (record && !("problem" in range)) {
			const shape = shapeProblem(view, record, range.start, range.end);
			if (shape) range = { problem: `cannot be shown (${shape.message})`, shape };
		}
		ranges.set(id, range);
		return range;
	};

	const placed = new Map<string, FoldPlacement>();
	const detached = new Map<string, string>();
	const misshapen = new Map<string, ShapeDefect>();
	for (const record of lattice.folds.values()) {
		const range = rangeOf(record.id, 0);
		if ("problem" in range) {
			detached.set(record.id, range.problem);
			if (range.shape) misshapen.set(record.id, range.shape);
			continue;
		}
		placed.set(record.id, { id: record.id, record, ...range, parentId: parents.get(record.id), depth: 0 });
	}
	detachOrphans(placed, detached, parents);
	// Two placed folds that cross, or one inside another it is not part of, would each hide the other's
	// entries behind its own brief: the window would leave messages out. The outer (earlier) one stays.
	const crossing = nestingProblems(placed, parents);
	if (crossing.size > 0) {
		for (const [id, defect] of crossing) {
			placed.delete(id);
			detached.set(id, `cannot be shown (${defect.message})`);
			misshapen.set(id, defect);
		}
		detachOrphans(placed, detached, parents);
	}
	for (const placement of placed.values()) placement.depth = depthIn(placement.id, parents, placed.size);
	const ordered = [...placed.values()].sort((a, b) => a.start - b.start || b.end - a.end || a.depth - b.depth);
	const roots = ordered.filter((placement) => placement.parentId === undefined);
	const rootAt = new Map<number, FoldPlacement>();
	for (const placement of roots) rootAt.set(placement.start, placement);
	return { view, placed, detached, misshapen, ordered, rootAt, roots };
}

/**
 * Detach, until none is left, every placed fold under a parent that is not placed (adopting it elsewhere would
 * give it two parents) and every placed fold holding a fold part that is not placed (its brief would hide
 * entries no placed fold accounts for).
 */
function detachOrphans(
	placed: Map<string, FoldPlacement>,
	detached: Map<string, string>,
	parents: ReadonlyMap<string, string>,
): void {
	for (let changed = true; changed; ) {
		changed = false;
		for (const placement of [...placed.values()]) {
			const lost = lostNeighbour(placement, placed, parents);
			if (lost === undefined) continue;
			placed.delete(placement.id);
			detached.set(placement.id, lost);
			changed = true;
		}
	}
}

/** Why a placed fold loses its place with its parent or one of its fold parts unplaced, or undefined. */
function lostNeighbour(
	placement: FoldPlacement,
	placed: ReadonlyMap<string, FoldPlacement>,
	parents: ReadonlyMap<string, string>,
): string | undefined {
	const parentId = parents.get(placement.id);
	if (parentId !== undefined && !placed.has(parentId)) return `sits under fold ${parentId}, which cannot be placed`;
	for (const part of placement.record.parts)
		if (part.type === "fold" && !placed.has(part.foldId)) return `holds fold ${part.foldId}, which cannot be placed`;
	return undefined;
}

/** Steps from a fold up to its root through `parents` (bounded, should a forged lattice loop). */
function depthIn(id: string, parents: ReadonlyMap<string, string>, bound: number): number {
	let depth = 0;
	for (let at = parents.get(id); at !== undefined && depth <= bound; at = parents.get(at)) depth++;
	return depth;
}

/**
 * Placed folds that do not nest: one that crosses the end of an earlier fold, or lies inside a fold that is
 * not its ancestor. Scanned in transcript order (outer before inner), so the outer fold of a conflict stays
 * and the one found inside it is named.
 */
function nestingProblems(
	placed: ReadonlyMap<string, FoldPlacement>,
	parents: ReadonlyMap<string, string>,
): Map<string, ShapeDefect> {
	const problems = new Map<string, ShapeDefect>();
	const isAncestor = (ancestor: string, id: string): boolean => {
		for (let at = parents.get(id), steps = 0; at !== undefined && steps <= placed.size; at = parents.get(at), steps++)
			if (at === ancestor) return true;
		return false;
	};
	const depth = new Map([...placed.keys()].map((id) => [id, depthIn(id, parents, placed.size)]));
	const sorted = [...placed.values()].sort(
		(a, b) => a.start - b.start || b.end - a.end || (depth.get(a.id) ?? 0) - (depth.get(b.id) ?? 0),
	);
	const open: FoldPlacement[] = [];
	for (const fold of sorted) {
		while (open.length > 0 && (open[open.length - 1]?.end ?? 0) <= fold.start) open.pop();
		const outer = open[open.length - 1];
		if (outer && fold.end > outer.end)
			problems.set(fold.id, {
				code: "partial-overlap",
				message: `fold ${fold.id} partially overlaps fold ${outer.id}`,
			});
		else if (outer && !isAncestor(outer.id, fold.id))
			problems.set(fold.id, {
				code: "unparented",
				message: `fold ${fold.id} lies inside fold ${outer.id} but is not one of its parts`,
			});
		else open.push(fold);
	}
	return problems;
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
 * The tool-batch units no placed root fold covers, in order: those in the
 * gaps between root folds (a batch at a gap's edge that a fold overlaps may
 * be included). What could still fold, without walking the folded bulk of a
 * long branch or the entries around the batches.
 */
export function batchesOutsideRoots(index: LatticeIndex, view: BranchView): StructuralUnit[] {
	const out: StructuralUnit[] = [];
	const batches = view.batchUnits;
	let next = 0;
	const gap = (start: number, end: number) => {
		if (end <= start) return;
		const first = view.unitOf[start] ?? view.units.length;
		const last = view.unitOf[end - 1] ?? -1;
		// First batch at or after the gap's first unit (and after what an earlier gap took).
		let lo = next;
		let hi = batches.length;
		while (lo < hi) {
			const mid = (lo + hi) >> 1;
			if ((batches[mid] ?? 0) < first) lo = mid + 1;
			else hi = mid;
		}
		for (next = lo; next < batches.length && (batches[next] ?? 0) <= last; next++) {
			const unit = view.units[batches[next] ?? -1];
			if (unit) out.push(unit);
		}
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

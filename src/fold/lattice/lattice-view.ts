/**
 * Read-side views of a fold lattice on a branch: what is visible for a given
 * expanded set, the transcript-order tree for status, and a checker for every
 * structural rule (used on state rebuilt from disk and by the tests).
 *
 * Visibility is outside-in: a top-level fold is visible; expanding a visible
 * fold reveals its parts, and its child folds stay collapsed until they are
 * expanded in turn. An expanded id under a collapsed ancestor has no effect.
 */

import { canonicalSpanBytes, sha256Hex } from "../../session/canonical.ts";
import { BRIEF_MAX_CHARS } from "../briefs/brief.ts";
import { entryIdAt, type FoldPlacement, indexLattice } from "./lattice-index.ts";
import { MIN_CHAPTER_UNITS, MIN_CONSOLIDATION_FOLDS } from "./lattice-rules.ts";
import { childFoldIds, type FoldKind, type FoldLattice } from "./records.ts";
import { type BranchView, unitsInRange } from "./units.ts";

/** One item of the window's shape: a raw entry or a collapsed fold. */
export type LayoutItem =
	| { type: "entry"; entryId: string; index: number }
	| { type: "fold"; foldId: string; kind: FoldKind; start: number; end: number; depth: number };

export type FoldVisibility = "collapsed" | "expanded" | "hidden";

export interface FoldTreeRow {
	id: string;
	kind: FoldKind;
	depth: number;
	parentId: string | null;
	/** Entry range `[start, end)` on the branch. */
	start: number;
	end: number;
	firstEntryId: string;
	lastEntryId: string;
	childIds: string[];
	entryCount: number;
	sourceBytes: number;
	briefBytes: number;
	/** Hidden: some ancestor is collapsed. */
	state: FoldVisibility;
}

/** The branch as the window shows it: raw entries and collapsed folds, in transcript order. */
export function visibleLayout(lattice: FoldLattice, view: BranchView, expanded: ReadonlySet<string>): LayoutItem[] {
	const index = indexLattice(lattice, view);
	const items: LayoutItem[] = [];
	const emit = (fold: FoldPlacement): void => {
		if (!expanded.has(fold.id)) {
			const { id: foldId, start, end, depth } = fold;
			items.push({ type: "fold", foldId, kind: fold.record.kind, start, end, depth });
			return;
		}
		for (let i = fold.start; i < fold.end; ) {
			const child = childAt(fold, i, index.placed);
			if (child) {
				emit(child);
				i = child.end;
			} else {
				items.push({ type: "entry", entryId: entryIdAt(view, i), index: i });
				i++;
			}
		}
	};
	for (let i = 0; i < view.entries.length; ) {
		const root = index.rootAt.get(i);
		if (root) {
			emit(root);
			i = root.end;
		} else {
			items.push({ type: "entry", entryId: entryIdAt(view, i), index: i });
			i++;
		}
	}
	return items;
}

function childAt(
	fold: FoldPlacement,
	index: number,
	placed: ReadonlyMap<string, FoldPlacement>,
): FoldPlacement | undefined {
	for (const part of fold.record.parts) {
		if (part.type !== "fold") continue;
		const child = placed.get(part.foldId);
		if (child?.start === index) return child;
	}
	return undefined;
}

/** Every placed fold, nested ones included, in transcript order (outer before inner) with depth and parent. */
export function foldTree(
	lattice: FoldLattice,
	view: BranchView,
	expanded: ReadonlySet<string> = new Set(),
): FoldTreeRow[] {
	const index = indexLattice(lattice, view);
	const stateOf = (fold: FoldPlacement): FoldVisibility => {
		for (let at = fold.parentId; at !== undefined; at = index.placed.get(at)?.parentId) {
			if (!expanded.has(at)) return "hidden";
		}
		return expanded.has(fold.id) ? "expanded" : "collapsed";
	};
	return index.ordered.map((fold) => ({
		id: fold.id,
		kind: fold.record.kind,
		depth: fold.depth,
		parentId: fold.parentId ?? null,
		start: fold.start,
		end: fold.end,
		firstEntryId: entryIdAt(view, fold.start),
		lastEntryId: entryIdAt(view, fold.end - 1),
		childIds: childFoldIds(fold.record),
		entryCount: fold.end - fold.start,
		sourceBytes: fold.record.sizes.sourceBytes,
		briefBytes: fold.record.sizes.briefBytes,
		state: stateOf(fold),
	}));
}

export type LatticeDefectCode =
	| "detached"
	| "partial-overlap"
	| "duplicate-span"
	| "unparented"
	| "misaligned"
	| "too-small"
	| "open-unit"
	| "barrier"
	| "source-mismatch"
	| "brief-too-long";

export interface LatticeDefect {
	foldId: string;
	code: LatticeDefectCode;
	message: string;
}

/**
 * Every way a lattice breaks the structural rules on a branch. Empty means the
 * lattice is sound. With `verifySources`, each fold's source hash and sizes
 * are recomputed from the branch entries.
 */
export function checkLattice(
	lattice: FoldLattice,
	view: BranchView,
	options: { verifySources?: boolean } = {},
): LatticeDefect[] {
	const index = indexLattice(lattice, view);
	const defects: LatticeDefect[] = [];
	const add = (foldId: string, code: LatticeDefectCode, message: string): void => {
		defects.push({ foldId, code, message });
	};
	for (const [id, why] of index.detached) {
		// A span whose shape the window cannot show is named by its shape (the fold stays unshown either way).
		const shape = index.misshapen.get(id);
		if (shape) add(id, shape.code, shape.message);
		else add(id, "detached", `fold ${id} ${why}`);
	}

	const open: FoldPlacement[] = [];
	for (const fold of index.ordered) {
		while (open.length > 0 && (open[open.length - 1]?.end ?? 0) <= fold.start) open.pop();
		const outer = open[open.length - 1];
		// Crossing folds and folds inside a fold they are not part of are detached by placement (named above).
		if (outer && outer.start === fold.start && outer.end === fold.end) {
			add(fold.id, "duplicate-span", `folds ${outer.id} and ${fold.id} cover the same span`);
		}
		open.push(fold);
		checkShape(view, fold, add);
		if (options.verifySources) checkSource(view, fold, add);
	}
	return defects;
}

/** The rules placement does not enforce (a fold breaking them still shows correctly). */
function checkShape(
	view: BranchView,
	fold: FoldPlacement,
	add: (foldId: string, code: LatticeDefectCode, message: string) => void,
): void {
	const kind = fold.record.kind;
	if (kind !== "tool-batch") {
		const context = unitsInRange(view, fold.start, fold.end).filter((unit) => unit.context);
		const folds = fold.record.parts.filter((part) => part.type === "fold").length;
		if (kind === "chapter" && context.length < MIN_CHAPTER_UNITS) {
			add(fold.id, "too-small", `chapter ${fold.id} holds fewer than ${MIN_CHAPTER_UNITS} units`);
		}
		if (kind === "consolidation" && folds < MIN_CONSOLIDATION_FOLDS) {
			add(fold.id, "too-small", `consolidation ${fold.id} joins fewer than ${MIN_CONSOLIDATION_FOLDS} folds`);
		}
	}
	if (fold.record.brief.length > BRIEF_MAX_CHARS) {
		add(fold.id, "brief-too-long", `fold ${fold.id} has a brief over ${BRIEF_MAX_CHARS} characters`);
	}
}

function checkSource(
	view: BranchView,
	fold: FoldPlacement,
	add: (foldId: string, code: LatticeDefectCode, message: string) => void,
): void {
	const source = canonicalSpanBytes(view.entries.slice(fold.start, fold.end));
	const sizes = fold.record.sizes;
	if (sha256Hex(source) !== fold.record.sourceHash) {
		add(fold.id, "source-mismatch", `fold ${fold.id} source hash does not match its entries`);
	} else if (sizes.sourceBytes !== source.length || sizes.entryCount !== fold.end - fold.start) {
		add(fold.id, "source-mismatch", `fold ${fold.id} sizes do not match its entries`);
	}
}

/**
 * Fold lattice operations: create, consolidate, dissolve, rebrief.
 *
 * Each operation is a pure function of a lattice, a branch view and a request.
 * It returns a new lattice or a `FoldRefusal` whose message names the problem
 * and the next action; nothing is mutated. The structural rules:
 *
 * - Folds nest and never partially overlap. A requested span is widened
 *   outward to whole units and to whole existing folds (reported as a
 *   correction); a span strictly inside an existing fold is refused, since
 *   fold records are immutable and cannot adopt a new child.
 * - Every fold is a run of whole structural units (units.ts), so a tool call
 *   and its results are never separated; entries that never reach the model
 *   are trimmed from a span's edges, so a fold starts and ends with context.
 * - A tool-batch fold is exactly one completed tool batch. A chapter holds at
 *   least two context units, all closed. A consolidation joins at least two
 *   adjacent top-level folds (only non-context entries may sit between them).
 * - No fold contains a compaction entry, a protected entry, or any entry of
 *   the fresh tail.
 *
 * Planning is separate from recording so a host can preview a span (and ask a
 * model for its brief) before committing. createFold and consolidateFolds
 * plan again from the request; pass the previewed id as `expectedId` and a
 * span that changed in between is refused ("stale-plan") instead of getting a
 * brief written for other entries.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { canonicalPieces, canonicalSpanBytes, sha256Hex } from "../../session/canonical.ts";
import { SPLIT_CALL_LOOKBACK_ENTRIES } from "../../session/split-calls.ts";
import { utf8ByteLength } from "../../text/utf8.ts";
import { type ChildSpan, DEFAULT_CONTEXT_TOOL_NAME, deterministicBrief, finishBrief } from "../briefs/brief.ts";
import { entryIdAt, type FoldPlacement, indexLattice, type LatticeIndex } from "./lattice-index.ts";
import {
	type CorrectionReason,
	checkBarrier,
	checkChapterUnits,
	checkGuards,
	checkPlacement,
	contextEntryAt,
	describeCorrection,
	type FoldGuards,
	MIN_CONSOLIDATION_FOLDS,
	MIN_TOOL_BATCH_UNITS,
	notOnBranch,
	notOneBatch,
	openUnit,
	resolveEnd,
	type SpanCorrection,
	snapToFolds,
	snapToUnits,
} from "./lattice-rules.ts";
import {
	type BriefAttribution,
	childFoldIds,
	deriveFoldId,
	type FoldKind,
	type FoldLattice,
	type FoldOrigin,
	type FoldPart,
	type FoldProvenance,
	type FoldRecord,
	type FoldRefusal,
	parentMap,
	refusal,
	sourcePieces,
	unknownFold,
	withRecord,
} from "./records.ts";
import { type BranchView, unitsInRange } from "./units.ts";

export {
	type CorrectionReason,
	type FoldGuards,
	MIN_CHAPTER_UNITS,
	MIN_CONSOLIDATION_FOLDS,
	MIN_TOOL_BATCH_UNITS,
	type SpanCorrection,
} from "./lattice-rules.ts";

export type FoldRequestKind = "tool-batch" | "chapter";

/** A span named by its two ends. Each end is an entry id, a tool call id or a fold id. */
export interface FoldRequest {
	kind: FoldRequestKind;
	first: string;
	/** Defaults to `first`. The ends may be given in either order. */
	last?: string;
}

/** A legal fold, computed but not recorded. */
export interface FoldPlan {
	ok: true;
	id: string;
	kind: FoldKind;
	/** Entry range `[start, end)` on the branch. */
	start: number;
	end: number;
	firstEntryId: string;
	lastEntryId: string;
	parts: FoldPart[];
	childFoldIds: string[];
	/** The child folds with their leaf entries (slices of `leafEntries`), for the brief's index. */
	children: ChildSpan[];
	leafEntries: SessionEntry[];
	/** Entries just before the span (at most `SPLIT_CALL_LOOKBACK_ENTRIES`), for the brief of a call that continues one there. */
	before: SessionEntry[];
	/** Exact source: canonical span bytes of the leaf entries. Write it to the fold store. */
	source: Uint8Array;
	/** Offsets in `source` where a child fold's source begins or ends: the store keeps those parts once. */
	sourceCuts: number[];
	sourceHash: string;
	correction?: SpanCorrection;
}

/** What the store needs of a plan: the exact source and its cuts at child folds. */
export type StoredSource = Pick<FoldPlan, "source" | "sourceCuts">;

/** A brief written elsewhere (a model, or the agent via rebrief). Recall calls are appended by the lattice. */
export interface SuppliedBrief {
	text: string;
	generator: "model" | "supplied";
	model?: BriefAttribution;
}

export interface FoldOptions {
	origin: FoldOrigin;
	guards?: FoldGuards;
	/** Omit for a deterministic brief. */
	brief?: SuppliedBrief;
	/**
	 * Asked synchronously for the final plan when no `brief` is given: a brief
	 * prepared earlier (a model summary), or undefined for the deterministic
	 * one. Called once, at recording, so the brief a record is born with is
	 * the only one it ever shows.
	 */
	briefSource?: (plan: FoldPlan) => SuppliedBrief | undefined;
	toolName?: string;
	cwd?: string;
	estimateTokens?: (entries: readonly SessionEntry[]) => number;
	/** The id a preview (planFold / planConsolidation) returned; recording refuses if the plan now differs. */
	expectedId?: string;
}

export interface FoldCreated {
	ok: true;
	lattice: FoldLattice;
	record: FoldRecord;
	plan: FoldPlan;
}

export interface FoldDissolved {
	ok: true;
	lattice: FoldLattice;
	dissolved: FoldRecord;
	/** Folds that were direct parts of the dissolved fold and are now top-level. */
	released: string[];
}

export interface FoldRebriefed {
	ok: true;
	lattice: FoldLattice;
	record: FoldRecord;
}

/** Plan a tool-batch or chapter fold over a requested span. */
export function planFold(
	lattice: FoldLattice,
	view: BranchView,
	request: FoldRequest,
	guards: FoldGuards = {},
): FoldPlan | FoldRefusal {
	const index = indexLattice(lattice, view);
	const last = request.last ?? request.first;
	const a = resolveEnd(lattice, index, request.first);
	if ("ok" in a) return a;
	const b = resolveEnd(lattice, index, last);
	if ("ok" in b) return b;
	const reasons = new Set<CorrectionReason>();
	let start = Math.min(a.start, b.start);
	let end = Math.max(a.end, b.end);
	const requestedStart = start;
	const requestedEnd = end;

	({ start, end } = snapToUnits(view, start, end, reasons));
	const units = unitsInRange(view, start, end);
	const body = units.filter((unit) => unit.kind !== "rider");
	const head = body[0];
	const tail = body[body.length - 1];
	if (!head || !tail) {
		return refusal(
			"span-too-small",
			`Span ${entryIdAt(view, start)}..${entryIdAt(view, end - 1)} holds only entries that never reach the model. Name a span with user, assistant or tool entries.`,
		);
	}
	if (head.start > start || tail.end < end) reasons.add("trimmed-riders");
	start = head.start;
	end = tail.end;

	if (request.kind === "tool-batch") {
		if (body.length !== MIN_TOOL_BATCH_UNITS || head.kind !== "tool-batch") return notOneBatch(view, body);
	} else {
		({ start, end } = snapToFolds(view, index, start, end, reasons));
	}
	const structural =
		checkBarrier(view, start, end) ??
		(request.kind === "tool-batch"
			? head.completed
				? undefined
				: openUnit(view, head)
			: checkChapterUnits(view, unitsInRange(view, start, end)));
	if (structural) return structural;

	const correction =
		start !== requestedStart || end !== requestedEnd
			? describeCorrection(view, request.first, last, start, end, [...reasons])
			: undefined;
	const refused = checkPlacement(index, start, end) ?? checkGuards(view, start, end, guards, correction);
	if (refused) return refused;
	return makePlan(lattice, index, request.kind, start, end, correction);
}

/** Plan a consolidation of two or more adjacent top-level folds. */
export function planConsolidation(
	lattice: FoldLattice,
	view: BranchView,
	foldIds: readonly string[],
	guards: FoldGuards = {},
): FoldPlan | FoldRefusal {
	const ids = [...new Set(foldIds)];
	if (ids.length < MIN_CONSOLIDATION_FOLDS) {
		return refusal(
			"span-too-small",
			`Consolidation joins at least ${MIN_CONSOLIDATION_FOLDS} adjacent folds; got ${ids.length}. Name two or more neighbouring top-level folds.`,
		);
	}
	const index = indexLattice(lattice, view);
	const folds: FoldPlacement[] = [];
	for (const id of ids) {
		const fold = index.placed.get(id);
		if (!fold) return lattice.folds.has(id) ? notOnBranch(id, index) : unknownFold(id);
		if (fold.parentId !== undefined) {
			return refusal(
				"inside-fold",
				`Fold ${id} sits inside fold ${fold.parentId}; consolidation joins top-level folds only. Consolidate top-level folds, or reboundary ${fold.parentId} first.`,
			);
		}
		folds.push(fold);
	}
	folds.sort((x, y) => x.start - y.start);
	for (let k = 1; k < folds.length; k++) {
		const before = folds[k - 1];
		const after = folds[k];
		if (!before || !after) continue;
		for (let i = before.end; i < after.start; i++) {
			const between = index.rootAt.get(i)?.id ?? contextEntryAt(view, i);
			if (between) {
				return refusal(
					"not-adjacent",
					`Folds ${before.id} and ${after.id} are not adjacent: ${between} lies between them. Include it in the list (fold it first if it is raw), or consolidate neighbours only.`,
				);
			}
		}
	}
	const first = folds[0];
	const last = folds[folds.length - 1];
	if (!first || !last) return unknownFold(ids[0] ?? "");
	const refused = checkGuards(view, first.start, last.end, guards, undefined);
	if (refused) return refused;
	return makePlan(lattice, index, "consolidation", first.start, last.end, undefined);
}

/** Plan and record a tool-batch or chapter fold. */
export function createFold(
	lattice: FoldLattice,
	view: BranchView,
	request: FoldRequest,
	options: FoldOptions,
): FoldCreated | FoldRefusal {
	const plan = planFold(lattice, view, request, options.guards);
	return plan.ok ? recordPlan(lattice, plan, options) : plan;
}

/** Plan and record a consolidation. */
export function consolidateFolds(
	lattice: FoldLattice,
	view: BranchView,
	foldIds: readonly string[],
	options: FoldOptions,
): FoldCreated | FoldRefusal {
	const plan = planConsolidation(lattice, view, foldIds, options.guards);
	return plan.ok ? recordPlan(lattice, plan, options) : plan;
}

/**
 * Remove a top-level fold (for reboundary). Its parts stay where they were:
 * child folds become top-level, entries become raw. A nested fold is refused;
 * dissolve its parent first, outside-in.
 */
export function dissolveFold(lattice: FoldLattice, foldId: string): FoldDissolved | FoldRefusal {
	const record = lattice.folds.get(foldId);
	if (!record) return unknownFold(foldId);
	const parent = parentMap(lattice).get(foldId);
	if (parent !== undefined) {
		return refusal(
			"has-parent",
			`Fold ${foldId} is part of fold ${parent}. Dissolve ${parent} first (outside-in), then ${foldId}.`,
		);
	}
	const folds = new Map(lattice.folds);
	folds.delete(foldId);
	return { ok: true, lattice: { folds }, dissolved: record, released: childFoldIds(record) };
}

/** Replace a fold's brief: the supplied text, or a fresh deterministic brief when none is given. */
export function rebriefFold(
	lattice: FoldLattice,
	view: BranchView,
	foldId: string,
	options: { brief?: SuppliedBrief; toolName?: string; cwd?: string },
): FoldRebriefed | FoldRefusal {
	const record = lattice.folds.get(foldId);
	if (!record) return unknownFold(foldId);
	const index = indexLattice(lattice, view);
	const fold = index.placed.get(foldId);
	if (!fold) return notOnBranch(foldId, index);
	const entries = view.entries.slice(fold.start, fold.end);
	const children = childFoldIds(record).flatMap((id) => {
		const child = index.placed.get(id);
		return child ? [{ id, entries: view.entries.slice(child.start, child.end) }] : [];
	});
	const before = view.entries.slice(Math.max(0, fold.start - SPLIT_CALL_LOOKBACK_ENTRIES), fold.start);
	const made = makeBrief(record.id, record.kind, entries, children, record.provenance.origin, { ...options, before });
	if (!made.ok) return made;
	const updated: FoldRecord = {
		...record,
		brief: made.brief,
		sizes: { ...record.sizes, briefBytes: utf8ByteLength(made.brief) },
		provenance: made.provenance,
	};
	return { ok: true, lattice: withRecord(lattice, updated), record: updated };
}

function recordPlan(lattice: FoldLattice, plan: FoldPlan, options: FoldOptions): FoldCreated | FoldRefusal {
	if (options.expectedId !== undefined && options.expectedId !== plan.id) {
		return refusal(
			"stale-plan",
			`The span was planned as ${options.expectedId} but is now ${plan.id} (${plan.firstEntryId}..${plan.lastEntryId}): the lattice or branch changed in between. Plan it again and write its brief for the new span.`,
		);
	}
	const brief = options.brief ?? options.briefSource?.(plan);
	const made = makeBrief(plan.id, plan.kind, plan.leafEntries, plan.children, options.origin, {
		...options,
		before: plan.before,
		...(brief ? { brief } : {}),
	});
	if (!made.ok) return made;
	const sizes: FoldRecord["sizes"] = {
		sourceBytes: plan.source.length,
		briefBytes: utf8ByteLength(made.brief),
		entryCount: plan.leafEntries.length,
	};
	if (options.estimateTokens) sizes.estimatedTokens = options.estimateTokens(plan.leafEntries);
	const record: FoldRecord = {
		id: plan.id,
		kind: plan.kind,
		parts: plan.parts,
		brief: made.brief,
		sourceHash: plan.sourceHash,
		sizes,
		provenance: made.provenance,
	};
	return { ok: true, lattice: withRecord(lattice, record), record, plan };
}

function makeBrief(
	id: string,
	kind: FoldKind,
	entries: readonly SessionEntry[],
	children: readonly ChildSpan[],
	origin: FoldOrigin,
	options: { brief?: SuppliedBrief; toolName?: string; cwd?: string; before?: readonly SessionEntry[] },
): { ok: true; brief: string; provenance: FoldProvenance } | FoldRefusal {
	const toolName = options.toolName ?? DEFAULT_CONTEXT_TOOL_NAME;
	const supplied = options.brief;
	if (!supplied) {
		const brief = deterministicBrief({
			id,
			kind,
			entries,
			children,
			toolName,
			cwd: options.cwd,
			before: options.before,
		});
		return { ok: true, brief, provenance: { origin, briefGenerator: "deterministic" } };
	}
	if (!supplied.text.trim()) {
		return refusal(
			"empty-brief",
			`The brief for ${id} is empty. Supply brief text, or omit it for a deterministic brief.`,
		);
	}
	const provenance: FoldProvenance = { origin, briefGenerator: supplied.generator };
	if (supplied.model) provenance.model = supplied.model;
	const brief = finishBrief(supplied.text, id, toolName, { hasChildren: children.length > 0 });
	return { ok: true, brief, provenance };
}

function makePlan(
	lattice: FoldLattice,
	index: LatticeIndex,
	kind: FoldKind,
	start: number,
	end: number,
	correction: SpanCorrection | undefined,
): FoldPlan {
	const view = index.view;
	const parts: FoldPart[] = [];
	const children: ChildSpan[] = [];
	for (let i = start; i < end; ) {
		const root = index.rootAt.get(i);
		if (root && root.end <= end) {
			parts.push({ type: "fold", foldId: root.id });
			children.push({ id: root.id, entries: view.entries.slice(root.start, root.end) });
			i = root.end;
		} else {
			parts.push({ type: "entry", entryId: entryIdAt(view, i) });
			i++;
		}
	}
	const leafEntries = view.entries.slice(start, end);
	const { source, sourceCuts } = planSource(view, parts, children, leafEntries);
	const sourceHash = sha256Hex(source);
	const plan: FoldPlan = {
		ok: true,
		id: deriveFoldId(kind, sourceHash, lattice.folds),
		kind,
		start,
		end,
		firstEntryId: entryIdAt(view, start),
		lastEntryId: entryIdAt(view, end - 1),
		parts,
		childFoldIds: children.map((child) => child.id),
		children,
		leafEntries,
		before: view.entries.slice(Math.max(0, start - SPLIT_CALL_LOOKBACK_ENTRIES), start),
		source,
		sourceCuts,
		sourceHash,
	};
	if (correction) plan.correction = correction;
	return plan;
}

/** A plan's source, cut at its children when it has any (the store then keeps their sources once). */
function planSource(
	view: BranchView,
	parts: readonly FoldPart[],
	children: readonly ChildSpan[],
	leafEntries: readonly SessionEntry[],
): { source: Uint8Array; sourceCuts: number[] } {
	if (children.length === 0) return { source: canonicalSpanBytes(leafEntries), sourceCuts: [] };
	const childEntries = new Map(children.map((child) => [child.id, child.entries]));
	const pieces = sourcePieces(
		parts,
		(id) => childEntries.get(id),
		(id) => view.entries[view.indexById.get(id) ?? -1],
	);
	if (!pieces) return { source: canonicalSpanBytes(leafEntries), sourceCuts: [] };
	const { bytes, cuts } = canonicalPieces(pieces);
	return { source: bytes, sourceCuts: cuts };
}

/**
 * Fold records, fold ids, refusals, and the lattice container.
 *
 * A fold record is immutable plain data: an ordered list of parts (exact
 * session entries or other folds), the brief that stands in for them, and the
 * SHA-256 of the canonical bytes of its leaf entries. Records form a forest
 * (a DAG whose leaves are session entries; every fold has at most one parent)
 * held in a `FoldLattice`. This module owns the shapes and the checks that need
 * no branch: id derivation, record-set validation, and leaf resolution. Rules
 * that need the branch (spans, nesting, guards) live in lattice.ts.
 */

import { isSha256Hex, sha256Hex } from "../../session/canonical.ts";
import type { FoldKind } from "../briefs/brief.ts";
import { LayeredMap } from "./layered-map.ts";

export type { FoldKind };
export type FoldOrigin = "agent" | "ladder" | "command";
export type BriefGenerator = "deterministic" | "model" | "supplied";

export type FoldPart = { type: "entry"; entryId: string } | { type: "fold"; foldId: string };

/** Which model wrote a brief, when one did. */
export interface BriefAttribution {
	provider: string;
	model: string;
	effort?: string;
}

export interface FoldProvenance {
	origin: FoldOrigin;
	briefGenerator: BriefGenerator;
	/** Present when `briefGenerator` is "model". */
	model?: BriefAttribution;
}

export interface FoldSizes {
	/** UTF-8 bytes of the exact source (canonical span bytes of the leaf entries). */
	sourceBytes: number;
	/** UTF-8 bytes of the brief. */
	briefBytes: number;
	/** Leaf entries under the fold. */
	entryCount: number;
	/** Estimated tokens of the exact source, when the caller supplied an estimator. */
	estimatedTokens?: number;
}

export interface FoldRecord {
	id: string;
	kind: FoldKind;
	parts: FoldPart[];
	brief: string;
	/** Lowercase hex SHA-256 of `canonicalSpanBytes(leaf entries)`; the fold store's blob address. */
	sourceHash: string;
	sizes: FoldSizes;
	provenance: FoldProvenance;
}

/** Every fold known on a branch, keyed by id, in creation order. Never mutated: operations return a new one. */
export interface FoldLattice {
	readonly folds: ReadonlyMap<string, FoldRecord>;
}

export type RefusalCode =
	| "unknown-id"
	| "ambiguous-id"
	| "unknown-fold"
	| "span-too-small"
	| "not-a-tool-batch"
	| "open-unit"
	| "barrier"
	| "protected"
	| "fresh-tail"
	| "inside-fold"
	| "already-folded"
	| "not-adjacent"
	| "has-parent"
	| "empty-brief"
	| "stale-plan"
	| "invalid-record";

/** Why a fold operation did nothing. `message` names the problem and the next action. */
export interface FoldRefusal {
	ok: false;
	code: RefusalCode;
	message: string;
	/** The existing fold the refusal is about (already-folded: the fold that is exactly the span). */
	foldId?: string;
}

export function refusal(code: RefusalCode, message: string, foldId?: string): FoldRefusal {
	return foldId === undefined ? { ok: false, code, message } : { ok: false, code, message, foldId };
}

export function isRefusal(value: unknown): value is FoldRefusal {
	return typeof value === "object" && value !== null && (value as { ok?: unknown }).ok === false;
}

/** Prefix of every fold id. */
export const FOLD_ID_PREFIX = "f-";
/** Hex digits in a fold id when nothing collides (48 bits). */
export const FOLD_ID_HEX_LENGTH = 12;
/** Hex digits added each time a shorter id is already held by a different fold. */
export const FOLD_ID_HEX_STEP = 4;

const FOLD_ID_PATTERN = /^f-[0-9a-f]{12,64}$/;

/** True when `id` has the shape of a fold id (`f-` and 12 to 64 lowercase hex digits). */
export function isFoldId(id: string): boolean {
	return FOLD_ID_PATTERN.test(id);
}

/** The full-length digest a fold id is a prefix of: sha256 of kind and source hash. */
export function foldIdDigest(kind: FoldKind, sourceHash: string): string {
	return sha256Hex(`pi-fold:${kind}:${sourceHash}`);
}

/**
 * Deterministic fold id: `f-` + the first 12 hex digits of
 * sha256("pi-fold:<kind>:<sourceHash>"). If that id is already held by a fold
 * with a different kind or source (a 48-bit collision), the id grows by 4 hex
 * digits at a time until it is free; the same lattice history therefore always
 * yields the same ids. A fold with the same kind and source is the same fold
 * and keeps the short id (callers refuse it as already folded).
 */
export function deriveFoldId(kind: FoldKind, sourceHash: string, taken: ReadonlyMap<string, FoldRecord>): string {
	const digest = foldIdDigest(kind, sourceHash);
	for (let length = FOLD_ID_HEX_LENGTH; length <= digest.length; length += FOLD_ID_HEX_STEP) {
		const id = `${FOLD_ID_PREFIX}${digest.slice(0, length)}`;
		const holder = taken.get(id);
		if (!holder || (holder.kind === kind && holder.sourceHash === sourceHash)) return id;
	}
	// 64 hex digits held by a different source means a SHA-256 collision.
	throw new Error(`fold id space exhausted for ${kind}:${sourceHash}`);
}

export function emptyLattice(): FoldLattice {
	return { folds: new Map() };
}

/**
 * Lattices made by adding one new record to another: what an index of the
 * first can be grown from. The base is held weakly: its index can only be
 * grown from while something else still holds the base (the index cache is
 * keyed by it), and a strong link made every lattice hold all the lattices
 * before it, with their indexes: a live engine kept ~72 KB per committed
 * fold on a 5,000-entry session (3.5× a fresh engine's heap after 800 turns).
 */
const grownFrom = new WeakMap<FoldLattice, { base: WeakRef<FoldLattice>; record: FoldRecord }>();

/** A lattice with `record` added or replaced (same id), keeping creation order. */
export function withRecord(lattice: FoldLattice, record: FoldRecord): FoldLattice {
	const added = !lattice.folds.has(record.id);
	const grown: FoldLattice = { folds: LayeredMap.over(lattice.folds, [[record.id, record]]) };
	if (added) grownFrom.set(grown, { base: new WeakRef(lattice), record });
	return grown;
}

/** The lattice this one was made from by adding one new record (`withRecord`), while that lattice is still held. */
export function growthOf(lattice: FoldLattice): { base: FoldLattice; record: FoldRecord } | undefined {
	const growth = grownFrom.get(lattice);
	const base = growth?.base.deref();
	return growth && base ? { base, record: growth.record } : undefined;
}

/** Fold id → id of the fold whose parts name it. Roots are absent. */
export function parentMap(lattice: FoldLattice): Map<string, string> {
	const parents = new Map<string, string>();
	for (const record of lattice.folds.values()) {
		for (const part of record.parts) if (part.type === "fold") parents.set(part.foldId, record.id);
	}
	return parents;
}

/** Leaf entry ids of a fold, in transcript order. */
export function leafEntryIds(lattice: FoldLattice, foldId: string): string[] | FoldRefusal {
	if (!lattice.folds.has(foldId)) return unknownFold(foldId);
	const leaves: string[] = [];
	const visit = (id: string, depth: number): void => {
		const record = lattice.folds.get(id);
		// latticeFromRecords rejects cycles and dangling parts; the depth guard protects hand-built lattices.
		if (!record || depth > lattice.folds.size) throw new Error(`fold ${id} is dangling or cyclic`);
		for (const part of record.parts) {
			if (part.type === "entry") leaves.push(part.entryId);
			else visit(part.foldId, depth + 1);
		}
	};
	visit(foldId, 0);
	return leaves;
}

/**
 * The pieces a fold's source is cut into for the store: each child fold's
 * leaf entries, and each run of entries no child covers, in order. Their
 * canonical bytes concatenate to the fold's source, and a child's piece is
 * its own source, which the store already holds. Undefined when a part does
 * not resolve.
 */
export function sourcePieces<E>(
	parts: readonly FoldPart[],
	childEntries: (foldId: string) => readonly E[] | undefined,
	entry: (entryId: string) => E | undefined,
): E[][] | undefined {
	const pieces: E[][] = [];
	let run: E[] | undefined;
	for (const part of parts) {
		if (part.type === "fold") {
			const entries = childEntries(part.foldId);
			if (!entries) return undefined;
			pieces.push([...entries]);
			run = undefined;
			continue;
		}
		const found = entry(part.entryId);
		if (found === undefined) return undefined;
		if (!run) {
			run = [];
			pieces.push(run);
		}
		run.push(found);
	}
	return pieces;
}

/** Fold ids a fold's parts name directly, in order. */
export function childFoldIds(record: FoldRecord): string[] {
	return record.parts.flatMap((part) => (part.type === "fold" ? [part.foldId] : []));
}

export function unknownFold(foldId: string): FoldRefusal {
	return refusal(
		"unknown-fold",
		`No fold "${foldId}" on this branch. List fold ids with the status action (detail "tree") and retry with one of them.`,
	);
}

/** What is wrong with one record beside those already `taken` (id shape, repeat, derivation, hash, parts), if anything. */
function recordProblem(
	record: FoldRecord,
	taken: ReadonlyMap<string, FoldRecord>,
): { id: string; problem: string } | undefined {
	if (!isFoldId(record.id)) return { id: JSON.stringify(record.id), problem: "has no valid fold id" };
	if (taken.has(record.id)) return { id: record.id, problem: "appears twice" };
	if (!isSha256Hex(record.sourceHash)) return { id: record.id, problem: "has a malformed source hash" };
	if (!foldIdDigest(record.kind, record.sourceHash).startsWith(record.id.slice(FOLD_ID_PREFIX.length))) {
		return { id: record.id, problem: "has an id that does not derive from its kind and source hash" };
	}
	if (record.parts.length === 0) return { id: record.id, problem: "has no parts" };
	return undefined;
}

/**
 * Rebuild a lattice from persisted records (creation order), checking what a
 * record set can get wrong without the branch: id shape and derivation, hash
 * shape, dangling or repeated fold parts, a fold with two parents, cycles.
 */
export function latticeFromRecords(records: readonly FoldRecord[]): FoldLattice | FoldRefusal {
	const folds = new Map<string, FoldRecord>();
	const invalid = (id: string, problem: string): FoldRefusal =>
		refusal(
			"invalid-record",
			`Fold record ${id} ${problem}. Drop the record (its entries stay in the session log) and fold the span again.`,
		);
	for (const record of records) {
		const wrong = recordProblem(record, folds);
		if (wrong) return invalid(wrong.id, wrong.problem);
		folds.set(record.id, record);
	}
	const parents = new Map<string, string>();
	for (const record of folds.values()) {
		for (const part of record.parts) {
			if (part.type !== "fold") continue;
			if (!folds.has(part.foldId)) return invalid(record.id, `names a missing fold ${part.foldId}`);
			const other = parents.get(part.foldId);
			if (other !== undefined) return invalid(record.id, `shares child ${part.foldId} with ${other}`);
			parents.set(part.foldId, record.id);
		}
	}
	// Each fold's walk up to its root stops at a fold already known to reach one, so the check is linear.
	const reachesRoot = new Set<string>();
	for (const id of folds.keys()) {
		const path = new Set<string>();
		for (let at: string | undefined = id; at !== undefined && !reachesRoot.has(at); at = parents.get(at)) {
			if (path.has(at)) return invalid(id, "is its own ancestor");
			path.add(at);
		}
		for (const at of path) reachesRoot.add(at);
	}
	return { folds };
}

/**
 * The lattice of every record that `latticeFromRecords` would accept when
 * the records are added one at a time in order: a record that breaks a rule
 * is left out and the rest stand. Linear in the parts.
 */
export function latticeOfConsistent(records: readonly FoldRecord[]): FoldLattice {
	const folds = new Map<string, FoldRecord>();
	const adopted = new Set<string>();
	for (const record of records) {
		if (!acceptsRecord({ folds }, adopted, record)) continue;
		folds.set(record.id, record);
		for (const child of childFoldIds(record)) adopted.add(child);
	}
	return { folds };
}

/**
 * True when `record` may join `lattice` as `latticeFromRecords` would let it:
 * a sound record of its own, a new id, and fold parts that are folds of the
 * lattice without a parent (`adopted` holds those with one), each named once.
 */
export function acceptsRecord(
	lattice: FoldLattice,
	adopted: { has(id: string): boolean },
	record: FoldRecord,
): boolean {
	if (recordProblem(record, lattice.folds)) return false;
	const children = childFoldIds(record);
	// A missing child, a child with a parent already, or the record itself as a child.
	if (children.some((child) => !lattice.folds.has(child) || adopted.has(child))) return false;
	return new Set(children).size === children.length;
}

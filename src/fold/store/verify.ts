/**
 * `pi-fold verify` and `pi-fold gc` over one session file: every fold record
 * checked against the entries and the store (blob hash, parts, sizes, DAG
 * rules), every state delta, checkpoint and commit, every Fabric compaction
 * details record; blobs no fold references removed on request. The checks
 * are pure over a loaded session plus reads through the same verified store
 * every fold uses; the store is opened read-only, so verify never writes.
 */

import { lstat, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { parseCompactionDetails } from "../../compaction/records/details.ts";
import { isSha256Hex, spanEntryIds, spanHash } from "../../session/canonical.ts";
import { checkLattice, type LatticeDefectCode } from "../lattice/lattice-view.ts";
import { type FoldLattice, type FoldRecord, isRefusal, latticeFromRecords, leafEntryIds } from "../lattice/records.ts";
import { analyzeBranch, type BranchView } from "../lattice/units.ts";
import { liveLattice, rebuildState, stateEntryTypes } from "../state/state.ts";
import { FoldIntegrityError, type FoldStore, FoldStoreError } from "./store.ts";
import { FOLD_STORE_HASH_DIR, foldStoreDir, openFileFoldStore } from "./store-file.ts";

/** What kind of defect: one name per tamper class, so people and scripts can tell them apart. */
export type DefectKind =
	| "unreadable-state"
	| "rejected-record"
	| LatticeDefectCode
	| "source-conflict"
	| "blob-corrupt"
	| "blob-mismatch"
	| "blob-missing"
	| "blob-unreadable"
	| "compaction-details";

/** One problem found: what, where (an entry or fold id), and the next step. */
export interface Defect {
	kind: DefectKind;
	/** The entry or fold id the problem is located at. */
	where: string;
	problem: string;
	next: string;
}

export interface VerifyReport {
	branches: number;
	/** Distinct live folds checked (on any branch). */
	folds: number;
	/** Fold state entries read (records, deltas, checkpoints, commits), on any branch. */
	stateEntries: number;
	blobsChecked: number;
	compactions: number;
	defects: Defect[];
	/** Folds whose blob is missing from the store but rebuildable from the log (not defects). */
	rebuildable: string[];
}

/** Next steps, one per defect kind; the problem text says what and where. */
const NEXT_STEP: Readonly<Record<DefectKind, string>> = {
	"unreadable-state":
		"pi-fold ignores this entry; restore the line from a backup, or leave it: the folds it held stay unfolded",
	"rejected-record": "pi-fold ignores this record and its entries stay unfolded; fold the span again if wanted",
	detached: "the fold is ignored on this branch; fold the span again if wanted",
	"partial-overlap": "the later fold is ignored; fold the span again if wanted",
	"duplicate-span": "one of the two folds is redundant; expand or reboundary it",
	unparented: "the inner fold is not nested correctly; reboundary the outer fold",
	misaligned:
		"the fold cuts a unit (a tool call from its result), so pi-fold ignores it and its entries show raw; drop the record, or fold the span again if wanted",
	"too-small": "the chapter is below the minimum size; reboundary it",
	"open-unit":
		"the fold holds an unfinished unit, so pi-fold ignores it and its entries show raw; fold the span again once it has finished",
	barrier:
		"the fold covers an entry Pi cannot hide, so pi-fold ignores it and its entries show raw; fold the entries on one side of it",
	"source-mismatch": "the record does not describe its entries; drop the record and fold the span again",
	"brief-too-long": "the brief is capped when read; rebrief the fold",
	"source-conflict":
		"pi-fold serves neither as the fold's source (peek and expand refuse); compare the stored blob with the log (peek an entry id for the log's text) and restore the true one from a backup",
	"blob-corrupt":
		"move the corrupt blob aside (it is read-only); peek rebuilds it from the log when the log still hashes to the fold",
	"blob-mismatch":
		"the record names a blob of other entries (a forged or mixed-up sourceHash); drop the record and fold the span again",
	"blob-missing": "the exact source is lost; the fold can still be expanded only if the log is restored",
	"blob-unreadable": "make the blob path a regular readable file (not a FIFO, socket, device or link)",
	"compaction-details": "pi-fold treats this compaction as foreign; nothing to do unless the file was edited by hand",
};

/** Leaf entries of a session tree: each ends one branch. */
export function leafIds(entries: readonly SessionEntry[]): string[] {
	const parents = new Set(entries.map((entry) => entry.parentId).filter((id): id is string => typeof id === "string"));
	return entries.filter((entry) => !parents.has(entry.id)).map((entry) => entry.id);
}

/** Path from the root to `leaf` (a parent cycle, which the loader cuts, ends the path instead of looping). */
export function branchTo(entries: readonly SessionEntry[], leaf: string, byId = indexById(entries)): SessionEntry[] {
	const path: SessionEntry[] = [];
	const seen = new Set<string>();
	let current = byId.get(leaf);
	while (current && !seen.has(current.id)) {
		seen.add(current.id);
		path.push(current);
		current = current.parentId ? byId.get(current.parentId) : undefined;
	}
	return path.reverse();
}

function indexById(entries: readonly SessionEntry[]): Map<string, SessionEntry> {
	return new Map(entries.map((entry) => [entry.id, entry]));
}

/** Why a record the lattice left out was refused, in the lattice's words. */
function rejectionReason(lattice: FoldLattice, record: FoldRecord): string {
	const attempt = latticeFromRecords([...lattice.folds.values(), record]);
	if (isRefusal(attempt)) return attempt.message;
	return `fold record ${record.id} contradicts the other folds (overlap or bad nesting)`;
}

/** SHA-256 of the branch's entries `ids` name, as a span; undefined when any of them is not on the branch. */
function branchSpanHash(ids: readonly string[], view: BranchView): string | undefined {
	const onBranch = ids.map((id) => view.entries[view.indexById.get(id) ?? -1]);
	return onBranch.every((entry) => entry !== undefined) ? spanHash(onBranch) : undefined;
}

interface BlobContext {
	record: FoldRecord;
	/** The record's leaf entries; undefined when they cannot be resolved (a dissolved fold's parts): not compared. */
	leaves: readonly string[] | undefined;
	view: BranchView;
	/** Whether the branch's entries under the fold still hash to its source. */
	logMatches: boolean;
	/** Another fold whose record names the same blob, if any. */
	sharedWith: string | undefined;
}

type Found = { kind: DefectKind; problem: string } | "ok" | "rebuildable";

/** Check one fold's blob against its record; the store is only read. */
async function checkBlob(store: FoldStore, context: BlobContext): Promise<Found> {
	const { record, leaves, view } = context;
	const hash = record.sourceHash;
	try {
		if (!(await store.has(hash))) {
			if (leaves && branchSpanHash(leaves, view) === hash) return "rebuildable";
			return {
				kind: "blob-missing",
				problem: `source blob ${store.locate(hash)} is missing and the log no longer holds bytes hashing to it`,
			};
		}
		const blob = await store.read(hash);
		const ids = spanEntryIds(blob.text);
		if (leaves && ids.join("\n") !== leaves.join("\n")) {
			const other = context.sharedWith ? ` (the blob of fold ${context.sharedWith})` : "";
			return {
				kind: "blob-mismatch",
				problem: `blob ${hash}${other} holds entries ${ids.slice(0, 4).join(", ")}${ids.length > 4 ? ", …" : ""}, not the record's parts ${leaves.slice(0, 4).join(", ")}${leaves.length > 4 ? ", …" : ""}`,
			};
		}
		if (blob.bytes.length !== record.sizes.sourceBytes) {
			return {
				kind: "blob-mismatch",
				problem: `blob holds ${blob.bytes.length} bytes, the record says ${record.sizes.sourceBytes}`,
			};
		}
		if (!context.logMatches) {
			// A log edited after folding and a record re-pointed at a forged blob look alike from the file; a blob of
			// the log's current bytes in the store is a sign of the second.
			const logHash = branchSpanHash(leaves ?? [], view) ?? "";
			const repointed =
				logHash !== "" && (await store.has(logHash))
					? `; the store also holds blob ${logHash} of the log's current bytes, so the record was most likely re-pointed`
					: "";
			return {
				kind: "source-conflict",
				problem: `the stored blob of fold ${record.id} and the log disagree about its entries (${(leaves ?? ids)[0]}…${(leaves ?? ids).at(-1)}): the log was edited after folding, or the record was re-pointed at a forged blob${repointed}`,
			};
		}
		return "ok";
	} catch (error) {
		if (error instanceof FoldIntegrityError) return { kind: "blob-corrupt", problem: error.message };
		if (error instanceof FoldStoreError) return { kind: "blob-unreadable", problem: error.message };
		throw error;
	}
}

/**
 * What a dissolved fold's blob is checked against: its leaf entries when the
 * record still fits beside the live folds (its parts resolve), else only the
 * blob's own hash and size; the log when those entries are on the branch.
 */
function dissolvedBlobContext(lattice: FoldLattice, record: FoldRecord, view: BranchView): BlobContext {
	const withRecord = latticeFromRecords([...lattice.folds.values(), record]);
	const leaves = isRefusal(withRecord) ? undefined : leafEntryIds(withRecord, record.id);
	const ids = leaves === undefined || isRefusal(leaves) ? undefined : leaves;
	const logHash = ids === undefined ? undefined : branchSpanHash(ids, view);
	const logMatches = logHash === undefined || logHash === record.sourceHash;
	return { record, leaves: ids, view, logMatches, sharedWith: undefined };
}

/** Verify every branch's fold state, lattice, sources and compaction records (dissolved folds' blobs too). */
export async function verifySession(
	entries: readonly SessionEntry[],
	store: FoldStore | undefined,
	prefix: string,
): Promise<VerifyReport> {
	const report: VerifyReport = {
		branches: 0,
		folds: 0,
		stateEntries: 0,
		blobsChecked: 0,
		compactions: 0,
		defects: [],
		rebuildable: [],
	};
	const seenDefects = new Set<string>();
	const defect = (kind: DefectKind, where: string, problem: string) => {
		const key = `${kind}\n${where}\n${problem}`;
		if (seenDefects.has(key)) return;
		seenDefects.add(key);
		report.defects.push({ kind, where, problem, next: NEXT_STEP[kind] });
	};
	const types = stateEntryTypes(prefix);
	const ownTypes = new Set<string>(Object.values(types));
	report.stateEntries = entries.filter((e) => e.type === "custom" && ownTypes.has(e.customType)).length;
	const byId = indexById(entries);
	const checkedFolds = new Set<string>();
	for (const leaf of leafIds(entries)) {
		const branch = branchTo(entries, leaf, byId);
		report.branches++;
		const state = rebuildState(branch, prefix);
		for (const skipped of state.skippedDetails ?? []) defect("unreadable-state", skipped.entryId, skipped.reason);
		const unnamed = state.skipped - (state.skippedDetails?.length ?? 0);
		if (unnamed > 0)
			defect("unreadable-state", leaf, `${unnamed} more unreadable fold state entries on the branch ending here`);
		const lattice = liveLattice(state);
		const dissolved = new Set(state.data.dissolved);
		for (const record of state.records) {
			if (!dissolved.has(record.id) && !lattice.folds.has(record.id))
				defect("rejected-record", record.id, rejectionReason(lattice, record));
		}
		const view = analyzeBranch(branch);
		const sourceMismatch = new Set<string>();
		for (const problem of checkLattice(lattice, view, { verifySources: true })) {
			// A source mismatch is named once the blob is read: an edited log and a forged record look alike here.
			if (problem.code === "source-mismatch" && store) sourceMismatch.add(problem.foldId);
			else defect(problem.code, problem.foldId, problem.message);
		}
		const byHash = new Map<string, string[]>();
		for (const record of lattice.folds.values())
			byHash.set(record.sourceHash, [...(byHash.get(record.sourceHash) ?? []), record.id]);
		for (const record of lattice.folds.values()) {
			if (checkedFolds.has(record.id)) continue;
			checkedFolds.add(record.id);
			report.folds++;
			if (!store) continue;
			const leaves = leafEntryIds(lattice, record.id);
			const ids = Array.isArray(leaves) ? leaves : [];
			if (ids.length !== record.sizes.entryCount)
				defect(
					"source-mismatch",
					record.id,
					`record says ${record.sizes.entryCount} entries, its parts name ${ids.length}`,
				);
			const sharedWith = byHash.get(record.sourceHash)?.find((id) => id !== record.id);
			const logMatches = !sourceMismatch.has(record.id);
			const found = await checkBlob(store, { record, leaves: ids, view, logMatches, sharedWith });
			if (found === "rebuildable") report.rebuildable.push(record.id);
			else {
				if (found === "ok" || found.kind !== "blob-missing") report.blobsChecked++;
				if (found !== "ok") defect(found.kind, record.id, found.problem);
				// Not already explained by the blob: say the record does not describe its entries.
				if (!logMatches && (found === "ok" || found.kind === "blob-corrupt" || found.kind === "blob-unreadable"))
					defect("source-mismatch", record.id, `fold ${record.id} source hash does not match its entries`);
			}
		}
		// A dissolved fold folds nothing now, but its record still names a blob the store keeps (and gc spares).
		for (const record of state.records) {
			if (!dissolved.has(record.id) || checkedFolds.has(record.id)) continue;
			checkedFolds.add(record.id);
			if (!store) continue;
			const found = await checkBlob(store, dissolvedBlobContext(lattice, record, view));
			if (found === "rebuildable" || found === "ok" || found.kind !== "blob-missing") report.blobsChecked++;
			if (typeof found !== "string") defect(found.kind, record.id, `dissolved fold ${record.id}: ${found.problem}`);
		}
	}
	for (const entry of entries) {
		if (entry.type !== "compaction") continue;
		const details = entry.details as { compactor?: unknown } | undefined;
		if (details?.compactor !== "fabric") continue;
		report.compactions++;
		const parsed = parseCompactionDetails(details);
		if (!parsed.ok) defect("compaction-details", entry.id, `compaction details unreadable: ${parsed.reason}`);
	}
	return report;
}

/** Most nodes `hashesIn` visits per entry: a hostile entry cannot make gc walk forever. */
const HASH_SCAN_MAX_NODES = 100_000;

/** Every `sourceHash` string anywhere in a value, walked without recursion. */
function hashesIn(value: unknown, into: Set<string>): void {
	const stack: unknown[] = [value];
	for (let visited = 0; stack.length > 0 && visited < HASH_SCAN_MAX_NODES; visited++) {
		const node = stack.pop();
		if (typeof node !== "object" || node === null) continue;
		for (const [key, child] of Object.entries(node)) {
			if (key === "sourceHash" && typeof child === "string" && isSha256Hex(child)) into.add(child);
			else if (typeof child === "object" && child !== null) stack.push(child);
		}
	}
}

/**
 * Every source hash any fold state entry on any branch names: decoded records
 * and marks, and, so gc never removes a blob a damaged entry still names,
 * every `sourceHash` inside entries that do not decode.
 */
export function referencedHashes(entries: readonly SessionEntry[], prefix: string): Set<string> {
	const hashes = new Set<string>();
	const byId = indexById(entries);
	for (const leaf of leafIds(entries)) {
		const state = rebuildState(branchTo(entries, leaf, byId), prefix);
		for (const record of state.records) hashes.add(record.sourceHash);
		for (const mark of state.data.marks) hashes.add(mark.record.sourceHash);
	}
	const ownTypes = new Set<string>(Object.values(stateEntryTypes(prefix)));
	for (const entry of entries)
		if (entry.type === "custom" && ownTypes.has(entry.customType)) hashesIn(entry.data, hashes);
	return hashes;
}

export interface GcReport {
	storeDir: string;
	/** Blobs in the store (files named by a hash). */
	blobs: number;
	storeBytes: number;
	/** Blobs a fold references; never removed. */
	referenced: number;
	unreferenced: { hash: string; bytes: number }[];
	removed: number;
	/** Symbolic links found in the store tree: never followed, never removed (they may point anywhere). */
	links: string[];
}

/** Blobs of a session's store that no fold references; removed only with `apply`. */
export async function collectGarbage(
	entries: readonly SessionEntry[],
	sessionDir: string,
	sessionId: string,
	prefix: string,
	apply: boolean,
): Promise<GcReport> {
	const storeDir = foldStoreDir(sessionDir, sessionId);
	const hashDir = join(storeDir, FOLD_STORE_HASH_DIR);
	const referenced = referencedHashes(entries, prefix);
	const report: GcReport = {
		storeDir,
		blobs: 0,
		storeBytes: 0,
		referenced: 0,
		unreferenced: [],
		removed: 0,
		links: [],
	};
	// Directory entries are typed without following links: a link is listed, never walked or removed.
	const list = async (dir: string) => {
		const items = await readdir(dir, { withFileTypes: true }).catch(() => []);
		for (const item of items) if (item.isSymbolicLink()) report.links.push(join(dir, item.name));
		return items.filter((item) => !item.isSymbolicLink()).sort((a, b) => (a.name < b.name ? -1 : 1));
	};
	const storeInfo = await lstat(storeDir).catch(() => undefined);
	const hashInfo = storeInfo?.isDirectory() ? await lstat(hashDir).catch(() => undefined) : undefined;
	for (const [path, info] of [
		[storeDir, storeInfo],
		[hashDir, hashInfo],
	] as const)
		if (info?.isSymbolicLink()) report.links.push(path);
	const shards = hashInfo?.isDirectory() ? await list(hashDir) : [];
	for (const shard of shards.filter((item) => item.isDirectory())) {
		for (const blob of await list(join(hashDir, shard.name))) {
			// Only `<ab>/<hash>` files are blobs; quarantined `.corrupt` copies and temp files are left alone.
			const name = blob.name;
			if (!blob.isFile() || !isSha256Hex(name) || name.slice(0, 2) !== shard.name) continue;
			const path = join(hashDir, shard.name, name);
			const info = await lstat(path).catch(() => undefined);
			if (!info?.isFile()) continue;
			report.blobs++;
			report.storeBytes += info.size;
			if (referenced.has(name)) {
				report.referenced++;
				continue;
			}
			report.unreferenced.push({ hash: name, bytes: info.size });
			if (apply) {
				await rm(path, { force: true });
				report.removed++;
			}
		}
	}
	return report;
}

/** The file store of a session, read-only (verify never writes), or why there is none. */
export function readOnlyStore(sessionDir: string, sessionId: string): FoldStore | { problem: string } {
	try {
		return openFileFoldStore({ sessionDir, sessionId, readOnly: true });
	} catch (error) {
		return { problem: error instanceof Error ? error.message : String(error) };
	}
}

export { stateEntryTypes };

/**
 * `pi-fold verify` and `pi-fold gc` over one session file: every fold record
 * checked against the entries and the store, every state entry, every
 * compaction details record; blobs no fold references removed on request.
 * The checks are pure over a loaded session; the store is read through the
 * same verified store every fold uses.
 */

import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { parseCompactionDetails } from "../compaction/records/details.ts";
import { canonicalSpanBytes, sha256Hex } from "../session/canonical.ts";
import { checkLattice } from "./lattice-view.ts";
import { leafEntryIds } from "./records.ts";
import { liveLattice, rebuildState, stateEntryTypes } from "./state.ts";
import { FoldIntegrityError, type FoldStore, FoldStoreError } from "./store.ts";
import { FOLD_STORE_HASH_DIR, foldStoreDir, openFileFoldStore } from "./store-file.ts";
import { analyzeBranch } from "./units.ts";

/** One problem found, located by entry or fold id. */
export interface Defect {
	where: string;
	problem: string;
}

export interface VerifyReport {
	branches: number;
	folds: number;
	blobsChecked: number;
	compactions: number;
	defects: Defect[];
	/** Blobs missing from the store but rebuildable from the log (not defects). */
	rebuildable: string[];
}

/** Leaf entries of a session tree: each ends one branch. */
export function leafIds(entries: readonly SessionEntry[]): string[] {
	const parents = new Set(entries.map((entry) => entry.parentId).filter((id): id is string => typeof id === "string"));
	return entries.filter((entry) => !parents.has(entry.id)).map((entry) => entry.id);
}

/** Path from the root to `leaf`. */
export function branchTo(entries: readonly SessionEntry[], leaf: string): SessionEntry[] {
	const byId = new Map(entries.map((entry) => [entry.id, entry]));
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

/** Verify every branch's fold state, lattice, sources and compaction records. */
export async function verifySession(
	entries: readonly SessionEntry[],
	store: FoldStore | undefined,
	prefix: string,
): Promise<VerifyReport> {
	const report: VerifyReport = { branches: 0, folds: 0, blobsChecked: 0, compactions: 0, defects: [], rebuildable: [] };
	const seenDefects = new Set<string>();
	const defect = (where: string, problem: string) => {
		const key = `${where}\n${problem}`;
		if (seenDefects.has(key)) return;
		seenDefects.add(key);
		report.defects.push({ where, problem });
	};
	const checkedFolds = new Set<string>();
	for (const leaf of leafIds(entries)) {
		const branch = branchTo(entries, leaf);
		report.branches++;
		const state = rebuildState(branch, prefix);
		for (const skipped of state.skippedDetails ?? []) defect(skipped.entryId, `unreadable fold state: ${skipped.reason}`);
		if (state.skipped > (state.skippedDetails?.length ?? 0))
			defect(leaf, `${state.skipped} unreadable fold state entries in all on this branch`);
		const lattice = liveLattice(state);
		const dropped = state.records.filter((record) => !state.data.dissolved.includes(record.id) && !lattice.folds.has(record.id));
		for (const record of dropped) defect(record.id, "fold record contradicts the others (overlap or bad nesting); ignored");
		const view = analyzeBranch(branch);
		for (const problem of checkLattice(lattice, view, { verifySources: true }))
			defect(problem.foldId ?? leaf, problem.message);
		for (const record of lattice.folds.values()) {
			if (checkedFolds.has(record.id)) continue;
			checkedFolds.add(record.id);
			report.folds++;
			if (!store) continue;
			const leaves = leafEntryIds(lattice, record.id);
			const expected = Array.isArray(leaves) ? leaves : [];
			try {
				if (!(await store.has(record.sourceHash))) {
					const onBranch = expected.map((id) => view.entries[view.indexById.get(id) ?? -1]);
					const complete = onBranch.every((entry) => entry !== undefined);
					if (complete && sha256Hex(canonicalSpanBytes(onBranch)) === record.sourceHash)
						report.rebuildable.push(record.id);
					else defect(record.id, `source blob ${record.sourceHash} is missing and the log no longer holds its bytes`);
					continue;
				}
				const blob = await store.read(record.sourceHash);
				report.blobsChecked++;
				if (blob.bytes.length !== record.sizes.sourceBytes)
					defect(record.id, `blob holds ${blob.bytes.length} bytes, the record says ${record.sizes.sourceBytes}`);
				const ids = blob.text
					.split("\n")
					.filter(Boolean)
					.map((line) => {
						try {
							return String((JSON.parse(line) as { id?: unknown }).id);
						} catch {
							return "";
						}
					});
				if (ids.join("\n") !== expected.join("\n")) defect(record.id, "blob entries differ from the record's parts");
			} catch (error) {
				if (error instanceof FoldIntegrityError || error instanceof FoldStoreError) defect(record.id, error.message);
				else throw error;
			}
		}
	}
	for (const entry of entries) {
		if (entry.type !== "compaction") continue;
		const details = entry.details as { compactor?: unknown } | undefined;
		if (details?.compactor !== "fabric") continue;
		report.compactions++;
		const parsed = parseCompactionDetails(details);
		if (!parsed.ok) defect(entry.id, `compaction details unreadable: ${parsed.reason}`);
	}
	return report;
}

/** Every source hash any fold record or mark on any branch names. */
export function referencedHashes(entries: readonly SessionEntry[], prefix: string): Set<string> {
	const hashes = new Set<string>();
	for (const leaf of leafIds(entries)) {
		const state = rebuildState(branchTo(entries, leaf), prefix);
		for (const record of state.records) hashes.add(record.sourceHash);
		for (const mark of state.data.marks) hashes.add(mark.record.sourceHash);
	}
	return hashes;
}

export interface GcReport {
	storeDir: string;
	blobs: number;
	storeBytes: number;
	unreferenced: { hash: string; bytes: number }[];
	removed: number;
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
	const report: GcReport = { storeDir, blobs: 0, storeBytes: 0, unreferenced: [], removed: 0 };
	const shards = await readdir(hashDir).catch(() => [] as string[]);
	for (const shard of shards.sort()) {
		for (const name of (await readdir(join(hashDir, shard)).catch(() => [] as string[])).sort()) {
			if (!/^[0-9a-f]{64}$/.test(name)) continue;
			const path = join(hashDir, shard, name);
			const bytes = (await stat(path)).size;
			report.blobs++;
			report.storeBytes += bytes;
			if (referenced.has(name)) continue;
			report.unreferenced.push({ hash: name, bytes });
			if (apply) {
				await rm(path, { force: true });
				report.removed++;
			}
		}
	}
	return report;
}

/** The file store of a session, read-only: verify never writes. */
export function readOnlyStore(sessionDir: string, sessionId: string): FoldStore | undefined {
	try {
		return openFileFoldStore({ sessionDir, sessionId, readOnly: true });
	} catch {
		return undefined;
	}
}

export { stateEntryTypes };

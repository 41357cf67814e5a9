/**
 * One fold source checked against its record, its log and the store, for
 * `pi-fold verify`: the blob (or the parts it is stored as) read and hashed,
 * its entry ids and size against the record, the log's bytes against its
 * hash. A missing blob or part is rebuildable (not a defect) while the log
 * still holds bytes hashing to the fold; every defect says whether it does.
 */

import { spanEntryIds, spanHash } from "../../session/canonical.ts";
import { type FoldLattice, type FoldRecord, isRefusal, latticeFromRecords, leafEntryIds } from "../lattice/records.ts";
import type { BranchView } from "../lattice/units.ts";
import { FoldIntegrityError, type FoldStore, FoldStoreError } from "./store.ts";

/** The defects one source's check can find. */
export type BlobDefectKind = "source-conflict" | "blob-corrupt" | "blob-mismatch" | "blob-missing" | "blob-unreadable";

/** SHA-256 of the branch's entries `ids` name, as a span; undefined when any of them is not on the branch. */
export function branchSpanHash(ids: readonly string[], view: BranchView): string | undefined {
	const onBranch = ids.map((id) => view.entries[view.indexById.get(id) ?? -1]);
	return onBranch.every((entry) => entry !== undefined) ? spanHash(onBranch) : undefined;
}

export interface BlobContext {
	record: FoldRecord;
	/** The record's leaf entries; undefined when they cannot be resolved (a dissolved fold's parts): not compared. */
	leaves: readonly string[] | undefined;
	view: BranchView;
	/** Whether the branch's entries under the fold still hash to its source. */
	logMatches: boolean;
	/** Another fold whose record names the same blob, if any. */
	sharedWith: string | undefined;
}

export type Found = { kind: BlobDefectKind; problem: string } | "ok" | "rebuildable";

/** Whether the log can give a fold's source back, said in a defect. */
function logRebuild(context: BlobContext): string {
	const { leaves, view, record } = context;
	return leaves && branchSpanHash(leaves, view) === record.sourceHash
		? "the log still holds its exact bytes, so the source can be rebuilt from the log"
		: "the log no longer holds bytes hashing to it, so only a backup of the store can give the source back";
}

/** Check one fold's blob (or the parts it is stored as) against its record; the store is only read. */
export async function checkBlob(store: FoldStore, context: BlobContext): Promise<Found> {
	const { record, leaves, view } = context;
	const hash = record.sourceHash;
	const missing = (what: string): Found =>
		leaves && branchSpanHash(leaves, view) === hash
			? "rebuildable"
			: { kind: "blob-missing", problem: `${what} and the log no longer holds bytes hashing to it` };
	try {
		if (!(await store.has(hash))) return missing(`source blob ${store.locate(hash)} is missing`);
		const blob = await store.read(hash).catch((error: unknown) => {
			if (error instanceof FoldStoreError && error.code === "missing") return error;
			throw error;
		});
		if (blob instanceof FoldStoreError) return missing(blob.message.replace(/\. The session log.*$/, ""));
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
		const rebuild = logRebuild(context);
		if (error instanceof FoldIntegrityError) return { kind: "blob-corrupt", problem: `${error.message} (${rebuild})` };
		if (error instanceof FoldStoreError) return { kind: "blob-unreadable", problem: `${error.message} (${rebuild})` };
		throw error;
	}
}

/**
 * What the blob of a record outside the lattice (a pending mark) is checked
 * against: its leaf entries when the record fits beside the live folds (its
 * parts resolve), else only the blob's own hash and size; the log when those
 * entries are on the branch.
 */
export function unplacedBlobContext(lattice: FoldLattice, record: FoldRecord, view: BranchView): BlobContext {
	const withRecord = latticeFromRecords([...lattice.folds.values(), record]);
	const leaves = isRefusal(withRecord) ? undefined : leafEntryIds(withRecord, record.id);
	const ids = leaves === undefined || isRefusal(leaves) ? undefined : leaves;
	const logHash = ids === undefined ? undefined : branchSpanHash(ids, view);
	const logMatches = logHash === undefined || logHash === record.sourceHash;
	return { record, leaves: ids, view, logMatches, sharedWith: undefined };
}

/**
 * The verified read of a fold's source that peek, expand and search share:
 * the store checks the blob's hash, the decoded bytes are checked against
 * the record (size, leaf entry ids), and, while the fold's entries are on
 * the branch, the log against the record's hash. Blob, record and log agree
 * or nothing is served; a store failure is a refusal naming it.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { canonicalSpanBytes, spanEntryIds, spanHash } from "../../session/canonical.ts";
import { type ActionOutcome, type FoldWorkspace, failed, fromRefusal } from "../engine/workspace.ts";
import { type FoldRecord, type FoldRefusal, isRefusal, leafEntryIds, unknownFold } from "../lattice/records.ts";
import { type BlobSlice, FoldIntegrityError, FoldStoreError, sliceBytes } from "../store/store.ts";

export function storeFailure(error: unknown): ActionOutcome {
	if (error instanceof FoldIntegrityError) return failed("integrity", error.message);
	if (error instanceof FoldStoreError) return failed(error.code, error.message);
	throw error;
}

/** Leaf entries of a fold as they stand on the branch, or a refusal when any is missing. */
export function leafEntries(ws: FoldWorkspace, id: string): SessionEntry[] | FoldRefusal {
	const leaves = leafEntryIds(ws.lattice, id);
	if (isRefusal(leaves)) return leaves;
	const entries: SessionEntry[] = [];
	for (const leaf of leaves) {
		const index = ws.view.indexById.get(leaf);
		const entry = index === undefined ? undefined : ws.branch[index];
		if (!entry) return unknownFold(id);
		entries.push(entry);
	}
	return entries;
}

/**
 * Read a fold's verified source: the one check peek, expand and search share.
 * The blob's hash is checked by the store, its decoded parts against the
 * record (size, leaf entry ids), and, while the fold's entries are on this
 * branch, the log's bytes against the record's hash: a record re-pointed at
 * a forged blob of the same ids and length, or a log edited after folding,
 * is an integrity refusal, never bytes served as verified. A missing blob is
 * rebuilt from the session log (the ground truth) when the log still hashes
 * to the record, and served from those bytes when the store cannot take
 * them (read-only, full). A corrupt blob is an integrity error and is never
 * papered over.
 */
export async function readSource(
	ws: FoldWorkspace,
	record: FoldRecord,
	offset = 0,
	bytes?: number,
): Promise<BlobSlice | ActionOutcome> {
	try {
		const entries = leafEntries(ws, record.id);
		const logMatches = isRefusal(entries) ? undefined : spanHash(entries) === record.sourceHash;
		if (!(await ws.store.has(record.sourceHash))) {
			if (isRefusal(entries)) return fromRefusal(entries);
			if (!logMatches) return sessionChanged(ws, record);
			const source = canonicalSpanBytes(entries);
			await ws.store.put(source, { expectedHash: record.sourceHash }).catch((error: unknown) => {
				// The log's bytes are verified; a store that cannot keep them must not stop the read.
				if (!(error instanceof FoldStoreError) || error instanceof FoldIntegrityError) throw error;
			});
			return sliceBytes(record.sourceHash, source, offset, bytes);
		}
		const whole = await ws.store.read(record.sourceHash);
		const mismatch = sourceMismatch(ws, record, whole.bytes);
		if (mismatch) return failed("integrity", mismatch);
		if (logMatches === false) return sessionChanged(ws, record);
		return sliceBytes(record.sourceHash, whole.bytes, offset, bytes);
	} catch (error) {
		return storeFailure(error);
	}
}

/** Why verified blob bytes are not this record's source (another fold's blob), or undefined when they are. */
function sourceMismatch(ws: FoldWorkspace, record: FoldRecord, bytes: Uint8Array): string | undefined {
	const expected = leafEntryIds(ws.lattice, record.id);
	const problem = (what: string) =>
		`Fold ${record.id}: its blob ${record.sourceHash} hashes correctly but ${what}, so it is not this fold's source; the record was altered. Nothing is served. Run pi-fold verify on the session file.`;
	if (bytes.length !== record.sizes.sourceBytes)
		return problem(`holds ${bytes.length} bytes where the record says ${record.sizes.sourceBytes}`);
	if (isRefusal(expected)) return undefined;
	const ids = spanEntryIds(new TextDecoder().decode(bytes));
	if (ids.length !== expected.length || ids.some((id, i) => id !== expected[i]))
		return problem(
			`holds entries ${ids.slice(0, 3).join(", ")}… where the record names ${expected.slice(0, 3).join(", ")}…`,
		);
	return undefined;
}

function sessionChanged(ws: FoldWorkspace, record: FoldRecord): ActionOutcome {
	const first = record.parts[0];
	const entry = first?.type === "entry" ? first.entryId : undefined;
	const logText = entry ? ` Peek an entry id (${entry}) for the log's current text;` : "";
	return failed(
		"integrity",
		`Fold ${record.id}: the session entries it covers no longer hash to its source sha256 ${record.sourceHash}, so the stored source and the log disagree: the log was edited after folding, or the record was re-pointed at another blob. pi-fold cannot tell which, so neither is served as this fold's source, and the fold stays folded.${logText} the stored bytes stay at ${ws.store.locate(record.sourceHash)}. Run pi-fold verify on the session file.`,
	);
}

export function findRecord(ws: FoldWorkspace, id: string): FoldRecord | ActionOutcome {
	return ws.lattice.folds.get(id) ?? fromRefusal(unknownFold(id));
}

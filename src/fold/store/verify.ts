/**
 * `pi-fold verify` over one session file: every fold record checked against
 * the entries and the store (blob hash, parts, sizes, DAG rules), every
 * state delta, checkpoint and commit, every Fabric compaction details
 * record, and every source the fold state references (`referenced.ts`, the
 * definition gc keeps by) and every evidence artifact the transcript names,
 * read and hashed. The checks are pure over a loaded session plus reads
 * through the same verified store every fold uses; the stores are opened
 * read-only, so verify never writes. gc lives in gc.ts.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { parseCompactionDetails } from "../../compaction/records/details.ts";
import { checkLattice, type LatticeDefectCode } from "../lattice/lattice-view.ts";
import { type FoldLattice, type FoldRecord, isRefusal, latticeFromRecords, leafEntryIds } from "../lattice/records.ts";
import { analyzeBranch } from "../lattice/units.ts";
import { liveLattice, rebuildState, stateEntryTypes } from "../state/state.ts";
import { evidenceReferences } from "./evidence.ts";
import {
	branchTo,
	indexById,
	leafIds,
	partReferences,
	partsBeneath,
	referencedHashes,
	type StateReferences,
	stateReferences,
} from "./referenced.ts";
import { FoldIntegrityError, type FoldStore, FoldStoreError } from "./store.ts";
import { openFileFoldStore } from "./store-file.ts";
import { type BlobDefectKind, checkBlob, type Found, unplacedBlobContext } from "./verify-blob.ts";

/** What kind of defect: one name per tamper class, so people and scripts can tell them apart. */
export type DefectKind =
	| "unreadable-state"
	| "rejected-record"
	| LatticeDefectCode
	| BlobDefectKind
	| "evidence-corrupt"
	| "evidence-missing"
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
	/** Blobs of the fold store read and hashed (the sum of `checked` but evidence). */
	blobsChecked: number;
	/** What was read and hashed, by what references it (`referenced.ts`). */
	checked: { folds: number; marks: number; parts: number; named: number; evidence: number };
	compactions: number;
	defects: Defect[];
	/** Folds and marks whose blob is missing from the store but rebuildable from the log (not defects). */
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
	"evidence-corrupt":
		"the artifact's bytes cannot be trusted and the transcript holds only its head; restore the file from a backup (peek of it refuses until then)",
	"evidence-missing":
		"the exact result is lost (the transcript holds only its head); restore the artifact from a backup of the evidence directory",
	"compaction-details": "pi-fold treats this compaction as foreign; nothing to do unless the file was edited by hand",
};

/** Why a record the lattice left out was refused, in the lattice's words. */
function rejectionReason(lattice: FoldLattice, record: FoldRecord): string {
	const attempt = latticeFromRecords([...lattice.folds.values(), record]);
	if (isRefusal(attempt)) return attempt.message;
	return `fold record ${record.id} contradicts the other folds (overlap or bad nesting)`;
}

/** The stores verify reads, each opened read-only: the fold store, and the evidence directory when there is one. */
export interface VerifyStores {
	store: FoldStore | undefined;
	evidence?: FoldStore | undefined;
}

/**
 * Verify every branch's fold state, lattice and compaction records, and
 * read and hash every source the fold state references (`referenced.ts`:
 * committed folds, pending marks, the parts consolidations are stored as,
 * sources named by damaged lines) and every evidence artifact the
 * transcript names.
 */
export async function verifySession(
	entries: readonly SessionEntry[],
	stores: VerifyStores,
	prefix: string,
): Promise<VerifyReport> {
	const { store } = stores;
	const report: VerifyReport = {
		branches: 0,
		folds: 0,
		stateEntries: 0,
		blobsChecked: 0,
		checked: { folds: 0, marks: 0, parts: 0, named: 0, evidence: 0 },
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
	const references = stateReferences(entries, prefix);
	/** Each referenced source's check, by hash: what the parts beneath it owe their count to. */
	const outcomes = new Map<string, Found>();
	const byId = indexById(entries);
	const checkedFolds = new Set<string>();
	const checkedMarks = new Set<string>();
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
		const view = analyzeBranch(branch);
		for (const record of state.records) {
			if (dissolved.has(record.id) || lattice.folds.has(record.id)) continue;
			defect("rejected-record", record.id, rejectionReason(lattice, record));
			// Not folded, but still referenced (gc keeps its blob): read like a mark's.
			if (checkedFolds.has(record.id)) continue;
			checkedFolds.add(record.id);
			if (!store) continue;
			const found = await checkBlob(store, unplacedBlobContext(lattice, record, view));
			countFound(report, outcomes, record.sourceHash, found, "folds");
			if (typeof found !== "string") defect(found.kind, record.id, `rejected fold ${record.id}: ${found.problem}`);
		}
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
			countFound(report, outcomes, record.sourceHash, found, "folds");
			if (found === "rebuildable") report.rebuildable.push(record.id);
			else {
				if (found !== "ok") defect(found.kind, record.id, found.problem);
				// Not already explained by the blob: say the record does not describe its entries.
				if (!logMatches && (found === "ok" || found.kind === "blob-corrupt" || found.kind === "blob-unreadable"))
					defect("source-mismatch", record.id, `fold ${record.id} source hash does not match its entries`);
			}
		}
		// A pending mark folds nothing yet, but its source is stored when it is marked, and its commit reads it.
		for (const mark of state.data.marks) {
			const reference = references.marks.get(mark.record.sourceHash);
			if (reference?.record.id !== mark.record.id || checkedMarks.has(mark.record.id)) continue;
			checkedMarks.add(mark.record.id);
			if (!store) continue;
			const found = await checkBlob(store, unplacedBlobContext(lattice, mark.record, view));
			countFound(report, outcomes, mark.record.sourceHash, found, "marks");
			if (found === "rebuildable") report.rebuildable.push(mark.record.id);
			else if (found !== "ok") {
				const recorded = reference.entryId ? ` (recorded in entry ${reference.entryId})` : "";
				defect(found.kind, mark.record.id, `pending mark ${mark.record.id}${recorded}: ${found.problem}`);
			}
		}
	}
	if (store) await checkUnattributed(store, references, outcomes, report, defect);
	if (stores.evidence) await checkEvidence(stores.evidence, entries, report, defect);
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

type Checked = keyof VerifyReport["checked"];

/** Count one source's check: a missing blob is not a read, a rebuildable one is not a defect. */
function countFound(report: VerifyReport, outcomes: Map<string, Found>, hash: string, found: Found, as: Checked): void {
	outcomes.set(hash, found);
	if (found === "rebuildable" || (found !== "ok" && found.kind === "blob-missing")) return;
	report.checked[as]++;
	report.blobsChecked++;
}

type DefectSink = (kind: DefectKind, where: string, problem: string) => void;

/**
 * The referenced sources no record check read: the parts of sources stored
 * as part lists (counted as read when the source above them composed
 * cleanly; read one by one under a source that did not, so every corrupt
 * part is named), and sources only a damaged line still names.
 */
async function checkUnattributed(
	store: FoldStore,
	references: StateReferences,
	outcomes: ReadonlyMap<string, Found>,
	report: VerifyReport,
	defect: DefectSink,
): Promise<void> {
	const parts = await partReferences(store, referencedHashes(references));
	const composed = new Set<string>();
	for (const [hash, found] of outcomes)
		if (found === "ok") for (const part of partsBeneath(parts, hash)) composed.add(part);
	/** The referenced source a part lies under (the first whose list names it, up to a root). */
	const rootOf = (part: string): string => {
		let hash = part;
		const seen = new Set<string>();
		for (let up = parts.parts.get(hash); up !== undefined && !seen.has(up); up = parts.parts.get(hash)) {
			seen.add(up);
			hash = up;
			if (outcomes.has(hash)) break;
		}
		return hash;
	};
	const owner = (root: string): string =>
		references.folds.get(root) ?? references.marks.get(root)?.record.id ?? references.named.get(root) ?? root;
	for (const [part, list] of parts.parts) {
		if (outcomes.has(part)) continue;
		if (composed.has(part)) {
			report.checked.parts++;
			report.blobsChecked++;
			continue;
		}
		try {
			await store.verify(part);
			report.checked.parts++;
			report.blobsChecked++;
		} catch (error) {
			// A missing part is the source's own defect (or rebuildable), already said where it was checked.
			if (error instanceof FoldStoreError && error.code === "missing") continue;
			if (!(error instanceof FoldStoreError)) throw error;
			report.checked.parts++;
			report.blobsChecked++;
			// Already named by the check of the source above it.
			const root = rootOf(part);
			const above = outcomes.get(root);
			if (typeof above === "object" && above.problem.includes(part)) continue;
			const kind = error instanceof FoldIntegrityError ? "blob-corrupt" : "blob-unreadable";
			defect(kind, owner(root), `part ${part} of source ${list}: ${error.message}`);
		}
	}
	for (const [hash, entryId] of references.named) {
		if (outcomes.has(hash) || parts.parts.has(hash) || !(await store.has(hash))) continue;
		try {
			await store.verify(hash);
		} catch (error) {
			if (!(error instanceof FoldStoreError)) throw error;
			const kind = error instanceof FoldIntegrityError ? "blob-corrupt" : "blob-unreadable";
			defect(kind, entryId, `blob ${hash}, named by an unreadable fold state entry: ${error.message}`);
		}
		report.checked.named++;
		report.blobsChecked++;
	}
}

/** Every evidence artifact the transcript names, read and hashed. */
async function checkEvidence(
	evidence: FoldStore,
	entries: readonly SessionEntry[],
	report: VerifyReport,
	defect: DefectSink,
): Promise<void> {
	for (const [hash, entryId] of evidenceReferences(entries)) {
		try {
			await evidence.verify(hash);
			report.checked.evidence++;
		} catch (error) {
			if (!(error instanceof FoldStoreError)) throw error;
			if (error.code !== "missing") report.checked.evidence++;
			const kind = error.code === "missing" ? "evidence-missing" : "evidence-corrupt";
			defect(
				kind,
				entryId,
				`evidence artifact ${hash}, named by the tool result at entry ${entryId}: ${error.message}`,
			);
		}
	}
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

/**
 * The `active_context` actions (and `/fold-context`) as functions over one
 * snapshot of the branch and fold state.
 *
 * An action never touches Pi: it reads the workspace, verifies bytes through
 * the store, and returns the text for the model plus the change to persist
 * (new records, state ops, and the rewrite causes the commit will carry).
 * The runtime applies the change; a refused action returns no change, so
 * nothing moves when arguments or state are wrong.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { recallReport } from "../../compaction/records/recall-report.ts";
import { canonicalSpanBytes, sha256Hex } from "../../session/canonical.ts";
import { briefFacts, labelRanges, truncateText } from "../briefs/brief.ts";
import type { RewriteCause } from "../engine/instrument.ts";
import { consolidateFolds, createFold, dissolveFold, type FoldOptions, rebriefFold } from "../lattice/lattice.ts";
import { foldTree } from "../lattice/lattice-view.ts";
import {
	childFoldIds,
	type FoldLattice,
	type FoldOrigin,
	type FoldRecord,
	type FoldRefusal,
	isFoldId,
	isRefusal,
	leafEntryIds,
	unknownFold,
} from "../lattice/records.ts";
import type { BranchView } from "../lattice/units.ts";
import type { ResolvedOptions } from "../options.ts";
import { appliesImmediately } from "../policy/epoch.ts";
import type { FoldState } from "../state/state.ts";
import type { FoldOp } from "../state/state-schema.ts";
import { type BlobSlice, FoldIntegrityError, type FoldStore, FoldStoreError, sliceBytes } from "../store/store.ts";

/** Most bytes one peek may return. */
export const PEEK_MAX_BYTES = 48_000;

/** Everything an action may read. */
export interface FoldWorkspace {
	branch: readonly SessionEntry[];
	view: BranchView;
	state: FoldState;
	lattice: FoldLattice;
	store: FoldStore;
	options: ResolvedOptions;
	cwd: string;
	/** Branch index where the fresh tail starts; nothing at or after it folds. */
	freshTailStart: number;
	origin: FoldOrigin;
	/** Any entry of the session file by id (earlier branches too), for recalling compacted source; default: the branch. */
	sessionEntry?: (id: string) => SessionEntry | undefined;
}

/** What an action wants persisted. */
export interface FoldChange {
	records: FoldRecord[];
	ops: FoldOp[];
	causes: RewriteCause[];
}

export interface ActionOutcome {
	ok: boolean;
	/** Refusal or error code when not ok. */
	code?: string;
	text: string;
	change?: FoldChange;
	/** The fold the action created or addressed. */
	foldId?: string;
}

const failed = (code: string, text: string): ActionOutcome => ({ ok: false, code, text });
const fromRefusal = (refused: FoldRefusal): ActionOutcome => failed(refused.code, refused.message);

function foldOptions(ws: FoldWorkspace, brief?: string): FoldOptions {
	return {
		origin: ws.origin,
		guards: { protectedEntryIds: new Set(ws.state.data.protected), freshTailStart: ws.freshTailStart },
		brief: brief === undefined ? undefined : { text: brief, generator: "supplied" },
		toolName: ws.options.toolName,
		cwd: ws.cwd,
	};
}

/** Refusal codes after which a span that is not one tool batch is retried as a chapter. */
const CHAPTER_FALLBACK: ReadonlySet<string> = new Set(["not-a-tool-batch"]);

/** Fold a named span: a consolidation when every id is a fold, else one tool batch, else a chapter. */
export async function foldSpan(ws: FoldWorkspace, ids: readonly string[], brief?: string): Promise<ActionOutcome> {
	const options = foldOptions(ws, brief);
	let created: ReturnType<typeof createFold>;
	if (ids.length >= 2 && ids.every((id) => isFoldId(id) && ws.lattice.folds.has(id))) {
		created = consolidateFolds(ws.lattice, ws.view, ids, options);
	} else {
		const request = { first: ids[0] ?? "", last: ids.at(-1) };
		created = createFold(ws.lattice, ws.view, { ...request, kind: "tool-batch" }, options);
		if (isRefusal(created) && CHAPTER_FALLBACK.has(created.code)) {
			created = createFold(ws.lattice, ws.view, { ...request, kind: "chapter" }, options);
		}
	}
	if (isRefusal(created)) return fromRefusal(created);
	const { record, plan } = created;
	const stored = await storeSource(ws.store, plan.source, record.sourceHash);
	if (stored) return stored;
	const correction = plan.correction ? ` ${plan.correction.message.replace(/\.?$/, ".")}` : "";
	if (ws.options.foldScheduling === "epoch" && ws.origin === "agent" && !appliesImmediately(ws.branch, plan.end)) {
		return markFold(ws, record, correction);
	}
	const between =
		record.kind !== "consolidation" && ids.length > 2
			? ` The span runs from ${ids[0]} to ${ids.at(-1)}; the ${ids.length - 2} ids between them only lie inside it.`
			: "";
	return {
		ok: true,
		foldId: record.id,
		text:
			`Folded ${record.kind} ${record.id}: entries ${plan.firstEntryId}…${plan.lastEntryId} ` +
			`(${record.sizes.entryCount} entries, ${record.sizes.sourceBytes} bytes) now show a ${record.sizes.briefBytes}-byte brief ` +
			`from the next request on.${correction}${between} ${storedText(ws.store, record.sourceHash)}`,
		change: { records: [record], ops: [], causes: ["commit"] },
	};
}

/** Epoch scheduling: record a pending mark; nothing in the window moves until the runtime commits. */
function markFold(ws: FoldWorkspace, record: FoldRecord, correction: string): ActionOutcome {
	const again = ws.state.data.marks.some((mark) => mark.record.id === record.id);
	return {
		ok: true,
		foldId: record.id,
		text:
			`${again ? "Already marked" : "Marked"} ${record.kind} ${record.id} (${record.sizes.entryCount} entries, ${record.sizes.sourceBytes} bytes): ` +
			`it folds at the next commit, together with every other pending mark; the window is unchanged until then.${correction} ` +
			`Withdraw it with ${ws.options.toolName} ${JSON.stringify({ action: "unmark", id: record.id })}.`,
		change: again ? undefined : { records: [], ops: [{ op: "mark", mark: { record, origin: "agent" } }], causes: [] },
	};
}

/** Withdraw a pending mark (epoch scheduling). */
export function unmarkFold(ws: FoldWorkspace, id: string): ActionOutcome {
	if (!ws.state.data.marks.some((mark) => mark.record.id === id)) {
		const pending = ws.state.data.marks.map((mark) => mark.record.id);
		return failed(
			"not-marked",
			`${id} is not a pending mark${pending.length > 0 ? `; pending: ${pending.join(", ")}` : "; nothing is pending"}. A committed fold is undone with expand, not unmark.`,
		);
	}
	return {
		ok: true,
		foldId: id,
		text: `Withdrew the pending mark ${id}; nothing folds for it at the next commit.`,
		change: { records: [], ops: [{ op: "unmark", id }], causes: [] },
	};
}

/** How durable a fold's source is, said plainly: a memory store loses it when Pi exits. */
function storedText(store: FoldStore, hash: string): string {
	if (store.kind === "file") return `Source sha256 ${hash} is stored and verified.`;
	return `Source sha256 ${hash} is verified and held in ${store.location}; it is lost when Pi exits (the session log still holds the entries).`;
}

async function storeSource(store: FoldStore, source: Uint8Array, hash: string): Promise<ActionOutcome | undefined> {
	try {
		await store.put(source, { expectedHash: hash });
		return undefined;
	} catch (error) {
		return storeFailure(error);
	}
}

function storeFailure(error: unknown): ActionOutcome {
	if (error instanceof FoldIntegrityError) return failed("integrity", error.message);
	if (error instanceof FoldStoreError) return failed(error.code, error.message);
	throw error;
}

/** Leaf entries of a fold as they stand on the branch, or a refusal when any is missing. */
function leafEntries(ws: FoldWorkspace, id: string): SessionEntry[] | FoldRefusal {
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
 * Read a fold's verified source. The blob's hash is checked by the store and
 * its decoded parts against the record (size, leaf entry ids), so a record
 * naming another fold's blob cannot be served as its own. A missing blob is
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
		if (!(await ws.store.has(record.sourceHash))) {
			const entries = leafEntries(ws, record.id);
			if (isRefusal(entries)) return fromRefusal(entries);
			const source = canonicalSpanBytes(entries);
			if (sha256Hex(source) !== record.sourceHash) return sessionChanged(record);
			await ws.store.put(source, { expectedHash: record.sourceHash }).catch((error: unknown) => {
				// The log's bytes are verified; a store that cannot keep them must not stop the read.
				if (!(error instanceof FoldStoreError) || error instanceof FoldIntegrityError) throw error;
			});
			return sliceBytes(record.sourceHash, source, offset, bytes);
		}
		const whole = await ws.store.read(record.sourceHash);
		const mismatch = sourceMismatch(ws, record, whole.bytes);
		if (mismatch) return failed("integrity", mismatch);
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
	const ids = new TextDecoder()
		.decode(bytes)
		.split("\n")
		.filter((line) => line.length > 0)
		.map((line) => {
			try {
				return String((JSON.parse(line) as { id?: unknown }).id);
			} catch {
				return "";
			}
		});
	if (ids.length !== expected.length || ids.some((id, i) => id !== expected[i]))
		return problem(
			`holds entries ${ids.slice(0, 3).join(", ")}… where the record names ${expected.slice(0, 3).join(", ")}…`,
		);
	return undefined;
}

function sessionChanged(record: FoldRecord): ActionOutcome {
	return failed(
		"integrity",
		`Fold ${record.id}: the session entries it covers no longer hash to its source sha256 ${record.sourceHash}; the session log was edited. The fold stays folded. Peek shows the stored source; restore the log from a backup to expand it.`,
	);
}

function findRecord(ws: FoldWorkspace, id: string): FoldRecord | ActionOutcome {
	return ws.lattice.folds.get(id) ?? fromRefusal(unknownFold(id));
}

/**
 * Exact source of one fold at any depth, or of one session entry (compaction
 * summaries address entries, and a single entry inside a fold is a narrow
 * read), optionally a byte slice. Changes nothing.
 */
export async function peekFold(ws: FoldWorkspace, id: string, offset?: number, bytes?: number): Promise<ActionOutcome> {
	if (!ws.lattice.folds.has(id)) return peekEntry(ws, id, offset, bytes);
	const record = findRecord(ws, id);
	if ("ok" in record) return record;
	const slice = await readSource(ws, record, offset ?? 0, bytes ?? PEEK_MAX_BYTES);
	if ("ok" in slice) return slice;
	const children = childFoldIds(record);
	const next =
		slice.nextOffset === undefined
			? "This is the end of the source."
			: `More follows: ${ws.options.toolName} ${JSON.stringify({ action: "peek", id, offset: slice.nextOffset })}`;
	const header = [
		`Fold ${record.id} (${record.kind}), source sha256 ${record.sourceHash} verified.`,
		`Bytes ${slice.offset}–${slice.end} of ${slice.totalBytes}, one canonical JSON session entry per line. ${next}`,
		...(children.length > 0 ? [`Child folds, each peekable: ${childList(ws, children)}.`] : []),
		"The window is unchanged; expand restores this span in place.",
	];
	return { ok: true, foldId: record.id, text: `${header.join("\n")}\n\n${slice.text}` };
}

/** Most child folds a peek header names; a consolidation of more lists the rest by count. */
export const PEEK_CHILDREN_LISTED = 64;
/** Bound on one child's label summary in a peek header. */
const PEEK_CHILD_LABEL_CHARS = 60;

/** Child fold ids with the step labels each covers, so a narrow peek can go straight to the right one. */
function childList(ws: FoldWorkspace, children: readonly string[]): string {
	const listed = children.slice(0, PEEK_CHILDREN_LISTED).map((id) => {
		const entries = leafEntries(ws, id);
		const labels = isRefusal(entries) ? [] : labelRanges(briefFacts(entries).labels);
		return labels.length > 0 ? `${id} (${truncateText(labels.join(", "), PEEK_CHILD_LABEL_CHARS)})` : id;
	});
	const rest = children.length - listed.length;
	return rest > 0 ? `${listed.join(", ")} and ${rest} more` : listed.join(", ");
}

/** Peek of an entry or operation address; the checks and wording live in src/compaction/records/recall-report.ts. */
function peekEntry(ws: FoldWorkspace, id: string, offset = 0, bytes = PEEK_MAX_BYTES): ActionOutcome {
	const report = recallReport({
		address: id,
		branch: ws.branch,
		entryById: (entryId) => ws.sessionEntry?.(entryId),
		toolName: ws.options.toolName,
		offset,
		bytes,
	});
	return report.ok ? { ok: true, text: report.text } : failed(report.code, report.text);
}

/** Restore a collapsed fold's source in place (one level: child folds stay collapsed). */
export async function expandFold(ws: FoldWorkspace, id: string): Promise<ActionOutcome> {
	const record = findRecord(ws, id);
	if ("ok" in record) return record;
	const row = foldTree(ws.lattice, ws.view, new Set(ws.state.data.expanded)).find((item) => item.id === id);
	if (!row) return fromRefusal(unknownFold(id));
	if (row.state === "expanded")
		return failed(
			"already-expanded",
			`Fold ${id} is already expanded. Refold it with {"action":"refold","id":"${id}"}.`,
		);
	if (row.state === "hidden") {
		return failed(
			"inside-fold",
			`Fold ${id} is inside collapsed fold ${row.parentId}. Expand ${row.parentId} first (outside-in), or peek ${id} without expanding.`,
		);
	}
	const slice = await readSource(ws, record);
	if ("ok" in slice) return slice;
	const entries = leafEntries(ws, id);
	if (isRefusal(entries)) return fromRefusal(entries);
	if (sha256Hex(canonicalSpanBytes(entries)) !== record.sourceHash) return sessionChanged(record);
	const children = childFoldIds(record);
	return {
		ok: true,
		foldId: id,
		text:
			`Expanded ${record.kind} ${id}: ${record.sizes.entryCount} entries (${record.sizes.sourceBytes} bytes, sha256 verified) ` +
			`show their original content from the next request on.` +
			(children.length > 0 ? ` Nested folds stay collapsed: ${children.join(", ")}.` : ""),
		change: { records: [], ops: [{ op: "expand", id }], causes: ["expand"] },
	};
}

/** Collapse an expanded fold again. */
export function refoldFold(ws: FoldWorkspace, id: string): ActionOutcome {
	const record = findRecord(ws, id);
	if ("ok" in record) return record;
	if (!ws.state.data.expanded.includes(id)) {
		return failed(
			"not-expanded",
			`Fold ${id} is not expanded, so there is nothing to refold. Status (detail "tree") shows each fold's state.`,
		);
	}
	return {
		ok: true,
		foldId: id,
		text: `Refolded ${record.kind} ${id}: its brief replaces the span again from the next request on.`,
		change: { records: [], ops: [{ op: "refold", id }], causes: ["refold"] },
	};
}

/** Entry ids named directly or through a tool call id (the call and every result). */
function resolveEntryIds(ws: FoldWorkspace, ids: readonly string[]): string[] | ActionOutcome {
	const out: string[] = [];
	for (const id of ids) {
		if (ws.view.indexById.has(id)) out.push(id);
		else if (ws.view.spans.has(id)) {
			const span = ws.view.spans.get(id);
			const indices = [span?.callIndex ?? -1, ...(span?.resultIndices ?? [])].filter((index) => index >= 0);
			for (const index of indices) {
				const entry = ws.branch[index];
				if (entry) out.push(entry.id);
			}
		} else {
			return failed(
				"unknown-id",
				`"${id}" is not an entry id or tool call id on this branch. Protection names entries (as status lists them) or tool call ids, not folds.`,
			);
		}
	}
	return [...new Set(out)];
}

/** Keep entries raw from now on. Never reveals or rewrites anything by itself. */
export function protectEntries(ws: FoldWorkspace, ids: readonly string[], protect: boolean): ActionOutcome {
	const resolved = resolveEntryIds(ws, ids);
	if (!Array.isArray(resolved)) return resolved;
	const current = new Set(ws.state.data.protected);
	const changed = resolved.filter((id) => current.has(id) !== protect);
	const verb = protect ? "Protected" : "Unprotected";
	const note = protect
		? " They will never be folded; protection changes nothing already in the window (a fold that already covers them stays until you expand it)."
		: " They may be folded again.";
	return {
		ok: true,
		text: `${verb} ${changed.length} entr${changed.length === 1 ? "y" : "ies"}${changed.length > 0 ? `: ${changed.join(", ")}` : ""} (${resolved.length - changed.length} already ${protect ? "protected" : "unprotected"}).${note}`,
		change:
			changed.length > 0
				? { records: [], ops: [{ op: protect ? "protect" : "unprotect", ids: changed }], causes: [] }
				: undefined,
	};
}

/** Replace a brief that reads wrong: the agent's text, or a fresh deterministic brief. */
export function rebrief(ws: FoldWorkspace, id: string, brief?: string): ActionOutcome {
	const made = rebriefFold(ws.lattice, ws.view, id, {
		brief: brief === undefined ? undefined : { text: brief, generator: "supplied" },
		toolName: ws.options.toolName,
		cwd: ws.cwd,
	});
	if (isRefusal(made)) return fromRefusal(made);
	return {
		ok: true,
		foldId: id,
		text: `Rebriefed ${made.record.kind} ${id} (${made.record.sizes.briefBytes} bytes); the new brief shows from the next request on.`,
		change: { records: [], ops: [{ op: "rebrief", id, brief: made.record.brief }], causes: ["rebrief"] },
	};
}

/** Dissolve a mis-cut top-level fold and, when `ids` are given, fold that span instead. */
export async function reboundary(
	ws: FoldWorkspace,
	id: string,
	ids?: readonly string[],
	brief?: string,
): Promise<ActionOutcome> {
	const dissolved = dissolveFold(ws.lattice, id);
	if (isRefusal(dissolved)) return fromRefusal(dissolved);
	const dissolveOp: FoldOp = { op: "dissolve", id };
	const released =
		dissolved.released.length > 0 ? ` Its nested folds stand on their own: ${dissolved.released.join(", ")}.` : "";
	if (!ids || ids.length === 0) {
		return {
			ok: true,
			foldId: id,
			text: `Dissolved ${id}; its entries show raw from the next request on.${released} Fold the span you meant with {"action":"fold","ids":[first,last]}.`,
			change: { records: [], ops: [dissolveOp], causes: ["reboundary"] },
		};
	}
	const refolded = await foldSpan({ ...ws, lattice: dissolved.lattice }, ids, brief);
	if (!refolded.ok || !refolded.change) {
		return { ...refolded, text: `Reboundary of ${id} refused, nothing changed: ${refolded.text}` };
	}
	if (refolded.foldId === id) {
		return failed(
			"same-span",
			`The span you named snaps to exactly the span of ${id}; nothing to re-cut. Name different ends.`,
		);
	}
	return {
		ok: true,
		foldId: refolded.foldId,
		text: `Dissolved ${id}.${released} ${refolded.text}`,
		change: { records: refolded.change.records, ops: [dissolveOp], causes: ["reboundary"] },
	};
}

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
import { keptFromIndex } from "../../compaction/records/recall.ts";
import { recallReport } from "../../compaction/records/recall-report.ts";
import { canonicalSpanBytes, sha256Hex } from "../../session/canonical.ts";
import { PI_CHARS_PER_TOKEN } from "../../session/tokens.ts";
import { briefFacts, labelRanges, truncateText } from "../briefs/brief.ts";
import type { RewriteCause } from "../engine/instrument.ts";
import { consolidateFolds, createFold, dissolveFold, type FoldOptions, rebriefFold } from "../lattice/lattice.ts";
import { indexLattice } from "../lattice/lattice-index.ts";
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
	withRecord,
} from "../lattice/records.ts";
import type { BranchView } from "../lattice/units.ts";
import type { ResolvedOptions } from "../options.ts";
import { appliesImmediately } from "../policy/epoch.ts";
import { BACKSTOP_OCCUPANCY } from "../policy/ladder.ts";
import type { FoldState } from "../state/state.ts";
import type { FoldOp } from "../state/state-schema.ts";
import { type BlobSlice, FoldIntegrityError, type FoldStore, FoldStoreError, sliceBytes } from "../store/store.ts";
import { type Crowding, expandRoom, type WindowRoom } from "./expand-room.ts";

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
	/** What the next request holds and its budget, for an expand's admission; absent: the window is unknown. */
	room?: () => WindowRoom;
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

/** What the window shows until a pending mark commits, when nothing else changes it. */
const UNCHANGED_UNTIL_COMMIT = "the window is unchanged until then";

/** Fold a named span: a consolidation when every id is a fold, else one tool batch, else a chapter. */
export function foldSpan(ws: FoldWorkspace, ids: readonly string[], brief?: string): Promise<ActionOutcome> {
	return spanFold(ws, ids, brief, UNCHANGED_UNTIL_COMMIT);
}

/** `foldSpan`, saying what the window shows until a mark (epoch scheduling) commits. */
async function spanFold(
	ws: FoldWorkspace,
	ids: readonly string[],
	brief: string | undefined,
	untilCommit: string,
): Promise<ActionOutcome> {
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
	if (isRefusal(created)) return created.foldId ? alreadyFolded(ws, created.foldId) : fromRefusal(created);
	const { record, plan } = created;
	const stored = await storeSource(ws.store, plan.source, record.sourceHash);
	if (stored) return stored;
	const correction = plan.correction ? ` ${plan.correction.message.replace(/\.?$/, ".")}` : "";
	if (ws.options.foldScheduling === "epoch" && ws.origin === "agent" && !appliesImmediately(ws.branch, plan.end)) {
		return markFold(ws, record, correction, untilCommit);
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

/** The span asked for is exactly a fold that exists (often one the ladder made first): name it; nothing changes. */
function alreadyFolded(ws: FoldWorkspace, id: string): ActionOutcome {
	const record = ws.lattice.folds.get(id);
	const by = record?.provenance.origin === "ladder" ? " (folded by the automatic ladder)" : "";
	const call = (action: string) => `${ws.options.toolName} ${JSON.stringify({ action, id })}`;
	return {
		ok: true,
		foldId: id,
		text: `Already folded: that span is exactly ${record?.kind ?? "fold"} ${id}${by}; nothing changed. Read it with ${call("peek")}, restore it with ${call("expand")}.`,
	};
}

/** Epoch scheduling: record a pending mark; nothing in the window moves until the runtime commits. */
function markFold(ws: FoldWorkspace, record: FoldRecord, correction: string, untilCommit: string): ActionOutcome {
	const again = ws.state.data.marks.some((mark) => mark.record.id === record.id);
	return {
		ok: true,
		foldId: record.id,
		text:
			`${again ? "Already marked" : "Marked"} ${record.kind} ${record.id} (${record.sizes.entryCount} entries, ${record.sizes.sourceBytes} bytes): ` +
			`it folds at the next commit, together with every other pending mark; ${untilCommit}.${correction} ` +
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
		const logMatches = isRefusal(entries) ? undefined : sha256Hex(canonicalSpanBytes(entries)) === record.sourceHash;
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

function sessionChanged(ws: FoldWorkspace, record: FoldRecord): ActionOutcome {
	const first = record.parts[0];
	const entry = first?.type === "entry" ? first.entryId : undefined;
	const logText = entry ? ` Peek an entry id (${entry}) for the log's current text;` : "";
	return failed(
		"integrity",
		`Fold ${record.id}: the session entries it covers no longer hash to its source sha256 ${record.sourceHash}, so the stored source and the log disagree: the log was edited after folding, or the record was re-pointed at another blob. pi-fold cannot tell which, so neither is served as this fold's source, and the fold stays folded.${logText} the stored bytes stay at ${ws.store.locate(record.sourceHash)}. Run pi-fold verify on the session file.`,
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
	const mark = ws.lattice.folds.has(id) ? undefined : ws.state.data.marks.find((m) => m.record.id === id);
	if (mark) return peekMark(ws, mark.record, offset, bytes);
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

/** Peek of a pending mark (epoch scheduling): its verified source, and that nothing is folded yet. */
async function peekMark(
	ws: FoldWorkspace,
	record: FoldRecord,
	offset = 0,
	bytes = PEEK_MAX_BYTES,
): Promise<ActionOutcome> {
	// A mark is a record not yet committed; read it through the same verified read as a fold.
	const slice = await readSource({ ...ws, lattice: withRecord(ws.lattice, record) }, record, offset, bytes);
	if ("ok" in slice) return slice;
	const next =
		slice.nextOffset === undefined
			? "This is the end of the source."
			: `More follows: ${ws.options.toolName} ${JSON.stringify({ action: "peek", id: record.id, offset: slice.nextOffset })}`;
	const header = [
		`${record.id} is a pending mark (${record.kind}, ${record.sizes.entryCount} entries): it folds at the next commit; until then its entries show raw in the window. Source sha256 ${record.sourceHash} verified.`,
		`Bytes ${slice.offset}–${slice.end} of ${slice.totalBytes}, one canonical JSON session entry per line. ${next}`,
		`Withdraw it with ${ws.options.toolName} ${JSON.stringify({ action: "unmark", id: record.id })}.`,
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
	const span = indexLattice(ws.lattice, ws.view).placed.get(id);
	if (!span) return fromRefusal(unknownFold(id));
	// Entries before the latest compaction's kept entry are gone from the window: expanding shows nothing there.
	const keptFrom = keptFromIndex(ws.branch);
	if (span.end <= keptFrom) return compactedAway(ws, record, keptFrom);
	const room = ws.room
		? expandRoom(ws.room(), record, span, ws.view, (child) => ws.lattice.folds.get(child)?.brief)
		: ({ kind: "fits" } as const);
	if (room.kind === "over") return noRoom(ws, id, room);
	// The same verified read as peek: the blob, the record and the log agree, or nothing is restored.
	const slice = await readSource(ws, record);
	if ("ok" in slice) return slice;
	const entries = leafEntries(ws, id);
	if (isRefusal(entries)) return fromRefusal(entries);
	const children = childFoldIds(record);
	const partly =
		span.start < keptFrom
			? ` A compaction removed its entries before ${ws.branch[keptFrom]?.id ?? "the kept entry"} from the window; those stay out (peek reads them).`
			: "";
	const pressed =
		room.kind === "pressed"
			? ` The next request will hold ~${percent(room.after, room.budget)} of its budget: past ${percent(BACKSTOP_OCCUPANCY, 1)} the automatic ladder folds other spans around this one (never this one); refold it when you are done.`
			: "";
	return {
		ok: true,
		foldId: id,
		text:
			`Expanded ${record.kind} ${id}: ${record.sizes.entryCount} entries (${record.sizes.sourceBytes} bytes, sha256 verified) ` +
			`show their original content from the next request on.` +
			(children.length > 0 ? ` Nested folds stay collapsed: ${children.join(", ")}.` : "") +
			partly +
			pressed,
		change: { records: [], ops: [{ op: "expand", id }], causes: ["expand"] },
	};
}

const percent = (part: number, whole: number): string => `${Math.round((100 * part) / whole)}%`;

/** A peek call, as the model writes it. */
function peekCall(ws: FoldWorkspace, id: string, slice?: { offset: number; bytes: number }): string {
	return `${ws.options.toolName} ${JSON.stringify({ action: "peek", id, ...slice })}`;
}

/** An expand of a span a compaction already removed from the window: nothing would come back. */
function compactedAway(ws: FoldWorkspace, record: FoldRecord, keptFrom: number): ActionOutcome {
	const compaction = ws.branch.slice(keptFrom).find((entry) => entry.type === "compaction");
	return failed(
		"compacted",
		`Fold ${record.id} was removed from the window by a compaction${compaction ? ` (${compaction.id})` : ""}: expanding it cannot bring its entries back, so nothing changed. Its exact source (${record.sizes.sourceBytes} bytes) is still stored: read it with ${peekCall(ws, record.id)}.`,
	);
}

/** An expand the serving budget cannot hold: Pi would compact the span away again. */
function noRoom(ws: FoldWorkspace, id: string, room: Crowding): ActionOutcome {
	// Half the room left, in bytes, makes a slice that reads without crowding the window.
	const bytes = Math.min(
		PEEK_MAX_BYTES,
		Math.max(2_000, Math.floor(((room.budget - room.before) * PI_CHARS_PER_TOKEN) / 2)),
	);
	return failed(
		"no-room",
		`Expand of ${id} refused, nothing changed: it would add ~${room.added} tokens and take the next request to ~${room.after} of its ${room.budget}-token budget, past which Pi compacts (removing the span again). Read it in slices instead: ${peekCall(ws, id, { offset: 0, bytes })}; or make room first (refold an expanded fold, fold other spans) and expand again.`,
	);
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

/**
 * Dissolve a mis-cut top-level fold and, when `ids` are given, fold that span instead. The dissolve shows the
 * entries raw from the next request on; the new span folds in the same change, or, under epoch scheduling, is
 * a pending mark like any agent fold (unmark withdraws it; the dissolve's rewrite makes the next commit free).
 */
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
	const refolded = await spanFold({ ...ws, lattice: dissolved.lattice }, ids, brief, "its entries show raw until then");
	if (!refolded.ok || !refolded.change) {
		return { ...refolded, text: `Reboundary of ${id} refused, nothing changed: ${refolded.text}` };
	}
	if (refolded.foldId === id) {
		return failed(
			"same-span",
			`The span you named snaps to exactly the span of ${id}; nothing to re-cut. Name different ends.`,
		);
	}
	// A mark's op goes with the dissolve: it is a real pending mark, committed (or withdrawn) like any other.
	return {
		ok: true,
		foldId: refolded.foldId,
		text: `Dissolved ${id}.${released} ${refolded.text}`,
		change: { records: refolded.change.records, ops: [dissolveOp, ...refolded.change.ops], causes: ["reboundary"] },
	};
}

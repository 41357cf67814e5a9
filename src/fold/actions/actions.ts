/**
 * The `active_context` actions (and `/fold-context`) as functions over one
 * snapshot of the branch and fold state.
 *
 * An action never touches Pi: it reads the workspace, verifies bytes through
 * the store, and returns the text for the model plus the change to persist
 * (new records, state ops, and the rewrite causes the commit will carry).
 * The runtime applies the change; a refused action returns no change, so
 * nothing moves when arguments or state are wrong. The workspace and outcome
 * types are the engine's (engine/workspace.ts), the verified read is in
 * source-read.ts, peek in peek.ts.
 */

import { keptFromIndex } from "../../compaction/records/recall.ts";
import { PI_CHARS_PER_TOKEN } from "../../session/tokens.ts";
import { type ActionOutcome, type FoldWorkspace, failed, fromRefusal } from "../engine/workspace.ts";
import { consolidateFolds, createFold, dissolveFold, type FoldOptions, rebriefFold } from "../lattice/lattice.ts";
import { indexLattice } from "../lattice/lattice-index.ts";
import { callSpan } from "../lattice/lattice-rules.ts";
import { foldTree } from "../lattice/lattice-view.ts";
import { childFoldIds, type FoldPart, type FoldRecord, isFoldId, isRefusal, unknownFold } from "../lattice/records.ts";
import { appliesImmediately } from "../policy/epoch.ts";
import { BACKSTOP_OCCUPANCY } from "../policy/ladder.ts";
import type { FoldOp } from "../state/state-schema.ts";
import type { FoldStore } from "../store/store.ts";
import { type Crowding, expandRoom } from "./expand-room.ts";
import { PEEK_MAX_BYTES, peekCall } from "./peek.ts";
import { findRecord, leafEntries, readSource, storeFailure } from "./source-read.ts";

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
	const mark = ws.state.data.marks.find((item) => item.record.id === id);
	if (!mark) {
		const pending = ws.state.data.marks.map((item) => item.record.id);
		return failed(
			"not-marked",
			`${id} is not a pending mark${pending.length > 0 ? `; pending: ${pending.join(", ")}` : "; nothing is pending"}. A committed fold is undone with expand, not unmark.`,
		);
	}
	return {
		ok: true,
		foldId: id,
		// The ladder folds stale spans on its own (at the very next commit, when the rewrite is free): say how to stop it.
		text:
			`Withdrew the pending mark ${id}; it does not fold as your mark. The automatic ladder still folds stale spans ` +
			`on its own when that pays; to keep these entries raw: ${ws.options.toolName} ${JSON.stringify({ action: "protect", ids: spanEnds(mark.record.parts) })}.`,
		change: { records: [], ops: [{ op: "unmark", id }], causes: [] },
	};
}

/** The first and last ids of a record's parts (entry or fold ids), as protect takes them. */
function spanEnds(parts: readonly FoldPart[]): string[] {
	const idOf = (part: FoldPart | undefined) => (part?.type === "fold" ? part.foldId : (part?.entryId ?? ""));
	const first = idOf(parts[0]);
	const last = idOf(parts.at(-1));
	return first === last ? [first] : [first, last];
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
		const span = ws.view.indexById.has(id) ? undefined : callSpan(ws.view, id);
		if (span && "ok" in span) return fromRefusal(span);
		if (ws.view.indexById.has(id)) out.push(id);
		else if (span) {
			const indices = [span.callIndex, ...span.resultIndices].filter((index) => index >= 0);
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

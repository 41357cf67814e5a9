/**
 * Durable fold state: what the runtime has decided, rebuilt from the branch.
 *
 * Fold records are immutable and persist once each as a `custom` entry
 * `<prefix>:fold`. Everything that changes (expanded folds, protected entries,
 * rebriefs, dissolved folds, pending marks) persists as small deltas
 * `<prefix>:delta`; every `CHECKPOINT_INTERVAL` deltas a `<prefix>:checkpoint`
 * carries the whole mutable state, so rebuilding replays at most that many
 * deltas. Entries live on the branch, so another branch sees only its own
 * folds. Unknown versions and malformed data are skipped and counted, never
 * trusted.
 */

import type { ContextEditEntry, SessionEntry } from "@earendil-works/pi-coding-agent";
import { utf8ByteLength } from "../compaction/utf8.ts";
import { emptyLattice, type FoldLattice, type FoldRecord, isRefusal, latticeFromRecords } from "./records.ts";

/** Deltas between checkpoints: bounds replay after the last checkpoint. */
export const CHECKPOINT_INTERVAL = 16;
/** Version written into every persisted fold entry. */
export const STATE_FORMAT_VERSION = 1;

export interface PendingMark {
	/** The fold the commit would create. */
	record: FoldRecord;
	origin: "agent" | "ladder";
}

/** Mutable fold state (records aside). Plain data; every change returns a new value. */
export interface FoldStateData {
	expanded: readonly string[];
	protected: readonly string[];
	/** Rebriefs: fold id → brief that replaces the record's. */
	briefs: Readonly<Record<string, string>>;
	/** Folds dissolved by reboundary; their records stay for history but no longer fold anything. */
	dissolved: readonly string[];
	marks: readonly PendingMark[];
	/**
	 * What an entry showed before pi-fold first folded it, when that was not
	 * its raw content (another extension's context edit). Expanding restores
	 * this, so expand is byte-identical to the never-folded window.
	 */
	baselines: Readonly<Record<string, ContextEditEntry["replacement"]>>;
}

export type FoldOp =
	| { op: "expand"; id: string }
	| { op: "refold"; id: string }
	| { op: "protect"; ids: string[] }
	| { op: "unprotect"; ids: string[] }
	| { op: "rebrief"; id: string; brief: string }
	| { op: "dissolve"; id: string }
	| { op: "restore"; id: string }
	| { op: "mark"; mark: PendingMark }
	| { op: "unmark"; id: string }
	| { op: "clear-marks"; ids: string[] }
	| { op: "baseline"; entries: Record<string, ContextEditEntry["replacement"]> };

export interface FoldState {
	records: readonly FoldRecord[];
	data: FoldStateData;
	/** Deltas applied since the last checkpoint on this branch. */
	deltasSinceCheckpoint: number;
	/** Persisted fold entries that were skipped as unreadable. */
	skipped: number;
}

export const EMPTY_STATE_DATA: FoldStateData = {
	expanded: [],
	protected: [],
	briefs: {},
	dissolved: [],
	marks: [],
	baselines: {},
};

export function emptyFoldState(): FoldState {
	return { records: [], data: EMPTY_STATE_DATA, deltasSinceCheckpoint: 0, skipped: 0 };
}

/** Custom entry types under a namespace prefix. */
export function stateEntryTypes(prefix: string) {
	return { fold: `${prefix}:fold`, delta: `${prefix}:delta`, checkpoint: `${prefix}:checkpoint` } as const;
}

const without = (list: readonly string[], ids: readonly string[]) => list.filter((item) => !ids.includes(item));
const withAll = (list: readonly string[], ids: readonly string[]) => [
	...list,
	...ids.filter((id) => !list.includes(id)),
];

/** Apply one delta to state data. */
export function applyOp(data: FoldStateData, op: FoldOp): FoldStateData {
	switch (op.op) {
		case "expand":
			return { ...data, expanded: withAll(data.expanded, [op.id]) };
		case "refold":
			return { ...data, expanded: without(data.expanded, [op.id]) };
		case "protect":
			return { ...data, protected: withAll(data.protected, op.ids) };
		case "unprotect":
			return { ...data, protected: without(data.protected, op.ids) };
		case "rebrief":
			return { ...data, briefs: { ...data.briefs, [op.id]: op.brief } };
		case "dissolve":
			return { ...data, dissolved: withAll(data.dissolved, [op.id]), expanded: without(data.expanded, [op.id]) };
		case "restore":
			return { ...data, dissolved: without(data.dissolved, [op.id]) };
		case "mark":
			return { ...data, marks: [...data.marks.filter((mark) => mark.record.id !== op.mark.record.id), op.mark] };
		case "unmark":
			return { ...data, marks: data.marks.filter((mark) => mark.record.id !== op.id) };
		case "clear-marks":
			return { ...data, marks: data.marks.filter((mark) => !op.ids.includes(mark.record.id)) };
		case "baseline":
			// The first baseline recorded for an entry is the one from before any fold.
			return { ...data, baselines: { ...op.entries, ...data.baselines } };
	}
}

/** What to persist for a batch of changes: new records, one delta, and a checkpoint when due. */
export interface PersistPlan {
	entries: { customType: string; data: unknown }[];
	state: FoldState;
}

/**
 * Apply new records and ops to the state and return the custom entries that
 * make the change durable. A checkpoint replaces the delta once the interval
 * is reached, so replay never exceeds `CHECKPOINT_INTERVAL` deltas.
 */
export function persistChange(
	state: FoldState,
	prefix: string,
	records: readonly FoldRecord[],
	requested: readonly FoldOp[],
): PersistPlan {
	const types = stateEntryTypes(prefix);
	const entries: PersistPlan["entries"] = records.map((record) => ({
		customType: types.fold,
		data: { v: STATE_FORMAT_VERSION, record },
	}));
	// Folding a span again after it was dissolved yields the same id; the new record must not stay dissolved.
	const restores: FoldOp[] = records
		.filter((record) => state.data.dissolved.includes(record.id))
		.map((record) => ({ op: "restore", id: record.id }));
	const ops = [...requested, ...restores];
	const data = ops.reduce(applyOp, state.data);
	let deltas = state.deltasSinceCheckpoint;
	if (ops.length > 0) {
		if (deltas + 1 >= CHECKPOINT_INTERVAL) {
			entries.push({ customType: types.checkpoint, data: { v: STATE_FORMAT_VERSION, state: data } });
			deltas = 0;
		} else {
			entries.push({ customType: types.delta, data: { v: STATE_FORMAT_VERSION, ops } });
			deltas++;
		}
	}
	return {
		entries,
		state: {
			records: mergeRecords(state.records, records),
			data,
			deltasSinceCheckpoint: deltas,
			skipped: state.skipped,
		},
	};
}

/** Add records, a later record with a known id replacing the earlier one in place. */
function mergeRecords(existing: readonly FoldRecord[], added: readonly FoldRecord[]): FoldRecord[] {
	const merged = [...existing];
	for (const record of added) {
		const at = merged.findIndex((known) => known.id === record.id);
		if (at === -1) merged.push(record);
		else merged[at] = record;
	}
	return merged;
}

/** Rebuild fold state from the active branch's custom entries. */
export function rebuildState(branch: readonly SessionEntry[], prefix: string): FoldState {
	const types = stateEntryTypes(prefix);
	let records: FoldRecord[] = [];
	let data = EMPTY_STATE_DATA;
	let deltas = 0;
	let skipped = 0;
	for (const entry of branch) {
		if (entry.type !== "custom") continue;
		const payload = entry.data as { v?: unknown; record?: unknown; ops?: unknown; state?: unknown } | undefined;
		if (entry.customType !== types.fold && entry.customType !== types.delta && entry.customType !== types.checkpoint) {
			continue;
		}
		if (!payload || payload.v !== STATE_FORMAT_VERSION) {
			skipped++;
			continue;
		}
		if (entry.customType === types.fold) {
			const record = payload.record as FoldRecord;
			if (isRecordShape(record)) records = mergeRecords(records, [record]);
			else skipped++;
		} else if (entry.customType === types.delta) {
			if (!Array.isArray(payload.ops)) {
				skipped++;
				continue;
			}
			// A malformed op is skipped and counted; the valid ones around it still apply.
			for (const op of payload.ops) {
				if (isFoldOp(op)) data = applyOp(data, op);
				else skipped++;
			}
			deltas++;
		} else if (isStateData(payload.state)) {
			data = { ...EMPTY_STATE_DATA, ...payload.state };
			deltas = 0;
		} else skipped++;
	}
	return { records, data, deltasSinceCheckpoint: deltas, skipped };
}

/**
 * The lattice of folds that still fold something (dissolved folds removed),
 * each record carrying the brief it shows now: a rebrief replaces the brief
 * and its size here, once, so no reader has to patch it in.
 */
export function liveLattice(state: FoldState): FoldLattice {
	const dissolved = new Set(state.data.dissolved);
	const live = state.records
		.filter((record) => !dissolved.has(record.id))
		.map((record) => withCurrentBrief(state, record));
	const whole = latticeFromRecords(live);
	if (!isRefusal(whole)) return whole;
	// Only an inconsistent record set (a hand-edited log) pays for this: records
	// are added one at a time so a bad one drops only itself and its entries
	// simply stay unfolded.
	let lattice: FoldLattice = emptyLattice();
	for (const record of live) {
		const next = latticeFromRecords([...lattice.folds.values(), record]);
		if (!isRefusal(next)) lattice = next;
	}
	return lattice;
}

/** The brief a fold currently shows (a rebrief wins over the record's). */
export function currentBrief(state: FoldState, record: FoldRecord): string {
	return state.data.briefs[record.id] ?? record.brief;
}

function withCurrentBrief(state: FoldState, record: FoldRecord): FoldRecord {
	const brief = state.data.briefs[record.id];
	if (brief === undefined || brief === record.brief) return record;
	return { ...record, brief, sizes: { ...record.sizes, briefBytes: utf8ByteLength(brief) } };
}

function isRecordShape(value: unknown): value is FoldRecord {
	const record = value as FoldRecord | undefined;
	return (
		typeof record === "object" &&
		record !== null &&
		typeof record.id === "string" &&
		typeof record.brief === "string" &&
		typeof record.sourceHash === "string" &&
		Array.isArray(record.parts)
	);
}

const isString = (value: unknown): value is string => typeof value === "string";
const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.every(isString);

/** Shape check for one persisted op: never trust a delta that merely parses. */
export function isFoldOp(value: unknown): value is FoldOp {
	if (typeof value !== "object" || value === null) return false;
	const op = value as Record<string, unknown>;
	switch (op.op) {
		case "expand":
		case "refold":
		case "dissolve":
		case "restore":
		case "unmark":
			return isString(op.id);
		case "protect":
		case "unprotect":
		case "clear-marks":
			return isStringList(op.ids);
		case "rebrief":
			return isString(op.id) && isString(op.brief);
		case "baseline":
			return (
				typeof op.entries === "object" &&
				op.entries !== null &&
				Object.values(op.entries).every((value) => value === null || (typeof value === "object" && "content" in value))
			);
		case "mark": {
			const mark = op.mark as { record?: unknown; origin?: unknown } | undefined;
			return isRecordShape(mark?.record) && (mark?.origin === "agent" || mark?.origin === "ladder");
		}
		default:
			return false;
	}
}

function isStateData(value: unknown): value is FoldStateData {
	const data = value as FoldStateData | undefined;
	return (
		typeof data === "object" &&
		data !== null &&
		isStringList(data.expanded) &&
		isStringList(data.protected) &&
		isStringList(data.dissolved) &&
		Array.isArray(data.marks) &&
		typeof data.briefs === "object" &&
		data.briefs !== null &&
		Object.values(data.briefs).every(isString)
	);
}

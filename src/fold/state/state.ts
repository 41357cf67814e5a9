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

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { utf8ByteLength } from "../../text/utf8.ts";
import { LayeredMap } from "../lattice/layered-map.ts";
import {
	acceptsRecord,
	childFoldIds,
	type FoldLattice,
	type FoldRecord,
	isRefusal,
	latticeFromRecords,
	latticeOfConsistent,
	parentMap,
	withRecord,
} from "../lattice/records.ts";
import { StateDataBuilder } from "./state-data.ts";
import { decodeOp, decodeRecord, decodeStateData, type FoldOp, type FoldStateData } from "./state-schema.ts";

/** Deltas between checkpoints: bounds replay after the last checkpoint. */
export const CHECKPOINT_INTERVAL = 16;
/** Version written into every persisted fold entry. */
export const STATE_FORMAT_VERSION = 1;

export interface FoldState {
	records: readonly FoldRecord[];
	data: FoldStateData;
	/** Deltas applied since the last checkpoint on this branch. */
	deltasSinceCheckpoint: number;
	/** Persisted fold entries that were skipped as unreadable. */
	skipped: number;
	/** The first few skipped items, by entry id and why. */
	skippedDetails?: readonly SkippedEntry[];
}

export interface SkippedEntry {
	entryId: string;
	reason: string;
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
	return {
		fold: `${prefix}:fold`,
		delta: `${prefix}:delta`,
		checkpoint: `${prefix}:checkpoint`,
		commit: `${prefix}:commit`,
	} as const;
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
	commit?: unknown,
): PersistPlan {
	const types = stateEntryTypes(prefix);
	// Folding a span again after it was dissolved yields the same id; the new record must not stay dissolved.
	const builder = new StateDataBuilder(state.data);
	const restores: FoldOp[] = records
		.filter((record) => builder.isDissolved(record.id))
		.map((record) => ({ op: "restore", id: record.id }));
	const ops = [...requested, ...restores];
	for (const op of ops) builder.apply(op);
	const data = builder.data();
	let deltas = state.deltasSinceCheckpoint;
	// A runtime commit is one line: a crash persists all of it or none of it, never a mix of its folds.
	const entries: PersistPlan["entries"] =
		commit === undefined
			? records.map((record) => ({ customType: types.fold, data: { v: STATE_FORMAT_VERSION, record } }))
			: [{ customType: types.commit, data: { v: STATE_FORMAT_VERSION, records, ops, summary: commit } }];
	if (commit !== undefined && ops.length > 0) deltas++;
	if (commit !== undefined && deltas >= CHECKPOINT_INTERVAL) {
		entries.push({ customType: types.checkpoint, data: { v: STATE_FORMAT_VERSION, state: data } });
		deltas = 0;
	} else if (commit === undefined && ops.length > 0) {
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
			skippedDetails: state.skippedDetails,
		},
	};
}

/** Add records, a later record with a known id replacing the earlier one in place. */
function mergeRecords(existing: readonly FoldRecord[], added: readonly FoldRecord[]): FoldRecord[] {
	const merged = new RecordList(existing);
	for (const record of added) merged.add(record);
	return merged.records;
}

/** Records in order with an index by id, so adding one costs constant time. */
class RecordList {
	readonly records: FoldRecord[];
	private readonly at = new Map<string, number>();

	constructor(records: readonly FoldRecord[] = []) {
		this.records = [...records];
		this.records.forEach((record, index) => {
			if (!this.at.has(record.id)) this.at.set(record.id, index);
		});
	}

	add(record: FoldRecord): void {
		const index = this.at.get(record.id);
		if (index === undefined) {
			this.at.set(record.id, this.records.length);
			this.records.push(record);
		} else this.records[index] = record;
	}
}

/** Most skipped state entries named in status and verify; the count covers all of them. */
export const SKIPPED_DETAILS_MAX = 16;

/**
 * Rebuild fold state from the active branch's custom entries. Every record,
 * op and checkpoint is checked all the way down (state-schema.ts); a
 * malformed item is skipped, counted and named, and never breaks another
 * fold or the session.
 */
export function rebuildState(branch: readonly SessionEntry[], prefix: string): FoldState {
	const types = stateEntryTypes(prefix);
	const records = new RecordList();
	let data = new StateDataBuilder(EMPTY_STATE_DATA);
	let deltas = 0;
	let skipped = 0;
	const details: SkippedEntry[] = [];
	const skip = (entryId: string, reason: string) => {
		skipped++;
		if (details.length < SKIPPED_DETAILS_MAX) details.push({ entryId, reason });
	};
	for (const entry of branch) {
		if (entry.type !== "custom") continue;
		if (
			entry.customType !== types.fold &&
			entry.customType !== types.delta &&
			entry.customType !== types.checkpoint &&
			entry.customType !== types.commit
		) {
			continue;
		}
		const payload = entry.data as
			| { v?: unknown; record?: unknown; records?: unknown; ops?: unknown; state?: unknown }
			| undefined;
		if (typeof payload !== "object" || payload === null || payload.v !== STATE_FORMAT_VERSION) {
			skip(entry.id, "unknown version or no data");
			continue;
		}
		if (entry.customType === types.commit) {
			// All of a commit or none of it: one bad record or op drops the whole commit.
			const committed = Array.isArray(payload.records) ? payload.records.map(decodeRecord) : [undefined];
			const ops = Array.isArray(payload.ops) ? payload.ops.map(decodeOp) : [undefined];
			if (committed.some((r) => r === undefined) || ops.some((op) => op === undefined)) {
				skip(entry.id, "malformed commit (none of its folds applied)");
				continue;
			}
			for (const record of committed as FoldRecord[]) records.add(record);
			for (const op of ops as FoldOp[]) data.apply(op);
			if (ops.length > 0) deltas++;
		} else if (entry.customType === types.fold) {
			const record = decodeRecord(payload.record);
			if (record) records.add(record);
			else skip(entry.id, "malformed fold record");
		} else if (entry.customType === types.delta) {
			if (!Array.isArray(payload.ops)) {
				skip(entry.id, "delta without ops");
				continue;
			}
			// A malformed op is skipped and counted; the valid ones around it still apply.
			payload.ops.forEach((raw: unknown, index: number) => {
				const op = decodeOp(raw);
				if (op) data.apply(op);
				else skip(entry.id, `malformed op ${index}`);
			});
			deltas++;
		} else {
			const state = decodeStateData(payload.state);
			if (state) {
				data = new StateDataBuilder(state.data);
				deltas = 0;
				if (state.badBaselines) skip(entry.id, "malformed baselines in checkpoint (dropped)");
			} else skip(entry.id, "malformed checkpoint");
		}
	}
	return {
		records: records.records,
		data: data.data(),
		deltasSinceCheckpoint: deltas,
		skipped,
		skippedDetails: details,
	};
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
	// Only an inconsistent record set (a hand-edited log) gets here: records are
	// added one at a time so a bad one drops only itself and its entries simply
	// stay unfolded.
	return latticeOfConsistent(live);
}

/** A state's live lattice, with each fold's parent (what a record added later may not adopt again). */
export interface LiveLattice {
	state: FoldState;
	lattice: FoldLattice;
	parents: ReadonlyMap<string, string>;
}

/**
 * The live lattice of `state`, grown from `previous` when `state` only added
 * records to it (the usual commit or fold: no dissolve, restore or rebrief,
 * every new record acceptable): each new record costs its parts, not a
 * rebuild of every fold. Anything else rebuilds it.
 */
export function liveLatticeAfter(previous: LiveLattice | undefined, state: FoldState): LiveLattice {
	const grown = previous ? grownLattice(previous, state) : undefined;
	if (grown) return grown;
	const lattice = liveLattice(state);
	return { state, lattice, parents: parentMap(lattice) };
}

function grownLattice(previous: LiveLattice, state: FoldState): LiveLattice | undefined {
	const before = previous.state;
	if (!sameStrings(before.data.dissolved, state.data.dissolved)) return undefined;
	if (!sameStrings(Object.entries(before.data.briefs).flat(), Object.entries(state.data.briefs).flat()))
		return undefined;
	if (state.records.length < before.records.length) return undefined;
	for (let i = 0; i < before.records.length; i++) if (state.records[i] !== before.records[i]) return undefined;
	let { lattice, parents } = previous;
	for (const added of state.records.slice(before.records.length)) {
		const record = withCurrentBrief(state, added);
		if (!acceptsRecord(lattice, parents, record)) return undefined;
		lattice = withRecord(lattice, record);
		parents = LayeredMap.over(
			parents,
			childFoldIds(record).map((child) => [child, record.id] as const),
		);
	}
	return { state, lattice, parents };
}

function sameStrings(a: readonly string[], b: readonly string[]): boolean {
	return a.length === b.length && a.every((item, index) => item === b[index]);
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

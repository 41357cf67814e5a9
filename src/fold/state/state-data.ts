/**
 * Fold state data built op by op, each op in constant time. The persisted
 * shape (`FoldStateData`: arrays and plain objects, what a checkpoint
 * carries) is produced once, when the data is read; while ops apply, sets and
 * maps hold it, so replaying a delta of n ops costs O(n), not O(n²).
 *
 * Order is the persisted shape's: a list keeps first-insertion order, a
 * removed item that comes back goes to the end; a pending mark marked again
 * moves to the end; a rebrief keeps its fold's place. Baselines keep the
 * first value recorded per entry, and the newest op's keys come first (the
 * order the earlier `{...new, ...old}` spread gave). One difference from that
 * spread of arrays: an id named twice in one op is listed once.
 */

import type { ContextEditEntry } from "@earendil-works/pi-coding-agent";
import type { FoldOp, FoldStateData, PendingMark } from "./state-schema.ts";

type Replacement = ContextEditEntry["replacement"];

export class StateDataBuilder {
	private readonly expanded: Set<string>;
	private readonly protectedIds: Set<string>;
	private readonly briefs: Map<string, string>;
	private readonly dissolved: Set<string>;
	private readonly marks: Map<string, PendingMark>;
	/** First value recorded per entry (oldest op wins). */
	private readonly baselineValues: Map<string, Replacement>;
	/** Keys of each baseline op, oldest first; the data's own baselines are the first batch. */
	private readonly baselineBatches: string[][];

	constructor(data: FoldStateData) {
		this.expanded = new Set(data.expanded);
		this.protectedIds = new Set(data.protected);
		this.briefs = new Map(Object.entries(data.briefs));
		this.dissolved = new Set(data.dissolved);
		this.marks = new Map(data.marks.map((mark) => [mark.record.id, mark]));
		this.baselineValues = new Map(Object.entries(data.baselines));
		this.baselineBatches = [Object.keys(data.baselines)];
	}

	/** True when fold `id` is dissolved now. */
	isDissolved(id: string): boolean {
		return this.dissolved.has(id);
	}

	apply(op: FoldOp): void {
		switch (op.op) {
			case "expand":
				this.expanded.add(op.id);
				return;
			case "refold":
				this.expanded.delete(op.id);
				return;
			case "protect":
				for (const id of op.ids) this.protectedIds.add(id);
				return;
			case "unprotect":
				for (const id of op.ids) this.protectedIds.delete(id);
				return;
			case "rebrief":
				this.briefs.set(op.id, op.brief);
				return;
			case "dissolve":
				this.dissolved.add(op.id);
				this.expanded.delete(op.id);
				return;
			case "restore":
				this.dissolved.delete(op.id);
				return;
			case "mark":
				this.marks.delete(op.mark.record.id);
				this.marks.set(op.mark.record.id, op.mark);
				return;
			case "unmark":
				this.marks.delete(op.id);
				return;
			case "clear-marks":
				for (const id of op.ids) this.marks.delete(id);
				return;
			case "baseline": {
				const keys = Object.keys(op.entries);
				// The first baseline recorded for an entry is the one from before any fold.
				for (const key of keys)
					if (!this.baselineValues.has(key)) this.baselineValues.set(key, op.entries[key] ?? null);
				this.baselineBatches.push(keys);
			}
		}
	}

	/** The data in its persisted shape. */
	data(): FoldStateData {
		return {
			expanded: [...this.expanded],
			protected: [...this.protectedIds],
			briefs: Object.fromEntries(this.briefs),
			dissolved: [...this.dissolved],
			marks: [...this.marks.values()],
			baselines: this.baselineObject(),
		};
	}

	private baselineObject(): FoldStateData["baselines"] {
		const pairs: [string, Replacement][] = [];
		const placed = new Set<string>();
		for (let batch = this.baselineBatches.length - 1; batch >= 0; batch--) {
			for (const key of this.baselineBatches[batch] ?? []) {
				if (placed.has(key)) continue;
				placed.add(key);
				pairs.push([key, this.baselineValues.get(key) ?? null]);
			}
		}
		return Object.fromEntries(pairs);
	}
}

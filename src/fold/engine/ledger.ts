/**
 * What the engine has decided: the fold state (rebuilt from a branch's
 * custom entries, then changed by actions and commits), its live lattice,
 * the custom entries that make each change durable (queued for the host),
 * and the entries any fold has covered (only these are ever restored). The
 * engine orders the steps; this holds their results.
 */

import type { ContextEditEntry, SessionEntry } from "@earendil-works/pi-coding-agent";
import type { FoldLattice, FoldRecord } from "../lattice/records.ts";
import {
	emptyFoldState,
	type FoldState,
	type LiveLattice,
	liveLatticeAfter,
	persistChange,
	rebuildState,
} from "../state/state.ts";
import type { CommitSummary } from "./commit.ts";
import { EntryQueue } from "./queue.ts";
import { baselineOp } from "./session-facts.ts";
import type { FoldChange } from "./workspace.ts";

export class FoldLedger {
	private current: FoldState = emptyFoldState();
	private live: LiveLattice | undefined;
	/** Entries some fold record (live or dissolved) has covered: only these are ever restored. */
	private covered = new Set<string>();
	/** Custom entries decided and not yet persisted. */
	readonly queued = new EntryQueue();

	/** The fold state of a new branch, from its custom entries (`prefix`'s types). */
	reset(branch: readonly SessionEntry[], prefix: string): void {
		this.current = rebuildState(branch, prefix);
		this.covered = new Set();
		this.queued.clear();
	}

	get state(): FoldState {
		return this.current;
	}

	/** The live lattice of the state (dissolved folds removed, rebriefs applied), rebuilt only when the state changes. */
	lattice(): FoldLattice {
		if (this.live?.state !== this.current) this.live = liveLatticeAfter(this.live, this.current);
		return this.live.lattice;
	}

	/** Each live fold's parent, by fold id. */
	parents(): ReadonlyMap<string, string> {
		this.lattice();
		return this.live?.parents ?? new Map();
	}

	get managed(): ReadonlySet<string> {
		return this.covered;
	}

	/** Entries `records` cover, and entries a stray brief sits on: the window may restore them. */
	cover(records: readonly FoldRecord[], entryIds: Iterable<string> = []): void {
		for (const record of records)
			for (const part of record.parts) if (part.type === "entry") this.covered.add(part.entryId);
		for (const id of entryIds) this.covered.add(id);
	}

	/**
	 * A change made durable: the state and the custom entries to persist. An
	 * entry another extension had edited before a fold first covers it keeps
	 * that edit as the baseline an expand restores (`latestEdits`).
	 */
	apply(
		change: FoldChange,
		prefix: string,
		latestEdits: ReadonlyMap<string, ContextEditEntry>,
		commit?: CommitSummary,
	): void {
		const baselines = baselineOp(change.records, latestEdits, this.covered);
		const ops = baselines ? [...change.ops, baselines] : change.ops;
		const plan = persistChange(this.current, prefix, change.records, ops, commit);
		this.current = plan.state;
		this.cover(change.records);
		this.queued.push(...plan.entries);
	}
}

/**
 * The edits that move the persisted window to the fold state (`planWindow`
 * + `editDrafts`), kept from one request to the next. The plan depends on
 * the fold state and on which entries Pi projects; the drafts also on the
 * latest edit of each entry. So the plan is made again only when the fold
 * state changes other than by new folds, or the branch is replaced or
 * compacted. New folds (a commit, an agent's fold) re-plan only their own
 * entries; when edits land (ours, persisted at a boundary, or another
 * extension's) only their targets and the entries that still had a draft are
 * compared again. Appended entries that are not edits change nothing: no
 * fold covers them.
 */

import type { ContextEditEntryDraft, SessionEntry } from "@earendil-works/pi-coding-agent";
import { indexLattice } from "../lattice/lattice-index.ts";
import { LayeredMap } from "../lattice/layered-map.ts";
import { type FoldLattice, leafEntryIds } from "../lattice/records.ts";
import type { FoldState } from "../state/state.ts";
import type { BranchTracker } from "./branch.ts";
import {
	type DesiredContent,
	type DraftScope,
	editDrafts,
	placeFold,
	planWindow,
	type WindowPlan,
} from "./materialize.ts";
import type { WindowModel } from "./window.ts";

export interface DraftsInput {
	state: FoldState;
	lattice: FoldLattice;
	/** Fold id → the fold whose parts name it, in `lattice`. */
	parents: ReadonlyMap<string, string>;
	brandNoun: string;
	branch: BranchTracker;
	window: WindowModel;
	/** Entries some fold record, live or dissolved, has covered. */
	managed: ReadonlySet<string>;
}

interface Made {
	state: FoldState;
	lattice: FoldLattice;
	structure: number;
	editCount: number;
	/** Branch length the plan was made on, when a fold's entries were missing then (the plan may change as it grows). */
	grownFrom: number | undefined;
	plan: WindowPlan;
	drafts: ContextEditEntryDraft[];
}

export class DraftsMemo {
	private made: Made | undefined;

	/** Forget everything (a new session or branch). */
	clear(): void {
		this.made = undefined;
	}

	drafts(input: DraftsInput): ContextEditEntryDraft[] {
		// A branch pi-fold never folded needs no edits.
		if (input.state.records.length === 0) return [];
		const { branch } = input;
		const made = this.made;
		const current =
			made !== undefined &&
			made.state === input.state &&
			made.structure === branch.structureVersion &&
			(made.grownFrom === undefined || made.grownFrom === branch.entries.length);
		if (!current) return (made && this.grow(input, made)) ?? this.make(input);
		if (made.editCount === branch.editCount) return made.drafts;
		const touched = new Set([
			...made.drafts.map((draft) => draft.targetId),
			...branch.editTargetsSince(made.editCount),
		]);
		made.drafts = editDrafts(entriesOf(branch, touched), made.plan, this.scope(input));
		made.editCount = branch.editCount;
		return made.drafts;
	}

	private scope(input: DraftsInput): DraftScope {
		const baselines = input.state.data.baselines;
		return {
			inWindow: (id) => input.window.inWindow(id),
			managed: (id) => input.managed.has(id),
			baseline: (id) => (Object.hasOwn(baselines, id) ? baselines[id] : undefined),
			edits: input.branch.latestEdits,
		};
	}

	private make(input: DraftsInput): ContextEditEntryDraft[] {
		const { branch, lattice, state } = input;
		const entries = branch.entries;
		const plan = planWindow(entries, {
			lattice,
			expanded: new Set(state.data.expanded),
			brandNoun: input.brandNoun,
			inWindow: (id) => input.window.inWindow(id),
		});
		const drafts = editDrafts(entries, plan, this.scope(input));
		const incomplete = indexLattice(lattice, branch.view).detached.size > 0;
		this.made = {
			state,
			lattice,
			structure: branch.structureVersion,
			editCount: branch.editCount,
			grownFrom: incomplete ? entries.length : undefined,
			plan,
			drafts,
		};
		return drafts;
	}

	/**
	 * The plan after the state only gained folds: each new visible fold's
	 * entries planned over the old plan, and those entries (with those that
	 * still had a draft) compared again. Undefined when anything else changed,
	 * or a new fold cannot show here: the plan is made again.
	 */
	private grow(input: DraftsInput, made: Made): ContextEditEntryDraft[] | undefined {
		const { state, lattice, branch } = input;
		if (made.structure !== branch.structureVersion || made.grownFrom !== undefined) return undefined;
		if (!onlyGained(made.state, state)) return undefined;
		const added = state.records.slice(made.state.records.length);
		if (lattice.folds.size !== made.lattice.folds.size + added.length) return undefined;
		if (added.some((record) => lattice.folds.get(record.id) !== record)) return undefined;
		const expanded = new Set(state.data.expanded);
		const entryOf = (id: string) => branch.entries[branch.view.indexById.get(id) ?? -1];
		const inWindow = (id: string) => input.window.inWindow(id);
		const planInput = { lattice, expanded, brandNoun: input.brandNoun, inWindow };
		const changed: [string, DesiredContent][] = [];
		const touched = new Set(made.drafts.map((draft) => draft.targetId));
		for (const record of added) {
			if (input.parents.has(record.id)) continue;
			if (expanded.has(record.id)) return undefined;
			const placed = placeFold(record.id, entryOf, planInput);
			const leaves = leafEntryIds(lattice, record.id);
			if (!placed || !Array.isArray(leaves)) return undefined;
			// An entry planned before that the new fold leaves raw would need a deletion: plan again instead.
			if (leaves.some((leaf) => made.plan.desired.has(leaf) && !placed.has(leaf))) return undefined;
			changed.push(...placed);
			for (const leaf of leaves) touched.add(leaf);
		}
		const plan: WindowPlan = { desired: LayeredMap.over(made.plan.desired, changed), visible: [] };
		const drafts = editDrafts(entriesOf(branch, touched), plan, this.scope(input));
		this.made = { ...made, state, lattice, editCount: branch.editCount, plan, drafts };
		return drafts;
	}
}

/** The branch entries with these ids, in branch order. */
function entriesOf(branch: BranchTracker, ids: ReadonlySet<string>): SessionEntry[] {
	const indexOf = (id: string) => branch.view.indexById.get(id) ?? -1;
	return [...ids]
		.map(indexOf)
		.filter((index) => index >= 0)
		.sort((a, b) => a - b)
		.flatMap((index) => branch.entries[index] ?? []);
}

/** True when `next` is `previous` with records added and nothing else the window shows changed. */
function onlyGained(previous: FoldState, next: FoldState): boolean {
	if (next.records.length < previous.records.length) return false;
	for (let i = 0; i < previous.records.length; i++) if (next.records[i] !== previous.records[i]) return false;
	const same = (x: readonly unknown[], y: readonly unknown[]) =>
		x.length === y.length && x.every((item, i) => item === y[i]);
	const pairs = (record: Readonly<Record<string, unknown>>) => Object.entries(record).flat();
	const a = previous.data;
	const b = next.data;
	return (
		same(a.expanded, b.expanded) &&
		same(a.dissolved, b.dissolved) &&
		same(pairs(a.briefs), pairs(b.briefs)) &&
		same(pairs(a.baselines), pairs(b.baselines))
	);
}

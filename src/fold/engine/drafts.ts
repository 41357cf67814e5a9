/**
 * The edits that move the persisted window to the fold state (`planWindow`
 * + `editDrafts`), kept from one request to the next. The plan depends on
 * the fold state and on which entries Pi projects; the drafts also on the
 * latest edit of each entry. So the plan is made again only when the state
 * changes or the branch is replaced or compacted, and when edits land (ours,
 * persisted at a boundary, or another extension's) only their targets and the
 * entries that still had a draft are compared again. Appended entries that
 * are not edits change nothing: no fold covers them.
 */

import type { ContextEditEntryDraft } from "@earendil-works/pi-coding-agent";
import { indexLattice } from "../lattice/lattice-index.ts";
import type { FoldLattice } from "../lattice/records.ts";
import type { FoldState } from "../state/state.ts";
import type { BranchTracker } from "./branch.ts";
import { type DraftScope, editDrafts, planWindow, type WindowPlan } from "./materialize.ts";
import type { WindowModel } from "./window.ts";

export interface DraftsInput {
	state: FoldState;
	lattice: FoldLattice;
	brandNoun: string;
	branch: BranchTracker;
	window: WindowModel;
	/** Entries some fold record, live or dissolved, has covered. */
	managed: ReadonlySet<string>;
}

interface Made {
	state: FoldState;
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
		if (!current) return this.make(input);
		if (made.editCount === branch.editCount) return made.drafts;
		made.drafts = this.recheck(input, made);
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
			structure: branch.structureVersion,
			editCount: branch.editCount,
			grownFrom: incomplete ? entries.length : undefined,
			plan,
			drafts,
		};
		return drafts;
	}

	/** Compare again only the entries new edits target and those that still had a draft. */
	private recheck(input: DraftsInput, made: Made): ContextEditEntryDraft[] {
		const { branch } = input;
		const touched = new Set([
			...made.drafts.map((draft) => draft.targetId),
			...branch.editTargetsSince(made.editCount),
		]);
		const indexOf = (id: string) => branch.view.indexById.get(id) ?? -1;
		const entries = [...touched]
			.map(indexOf)
			.filter((index) => index >= 0)
			.sort((a, b) => a - b)
			.flatMap((index) => branch.entries[index] ?? []);
		return editDrafts(entries, made.plan, this.scope(input));
	}
}

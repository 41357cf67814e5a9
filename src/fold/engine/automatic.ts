/**
 * The automatic commit's decision step: the ladder's input from the branch,
 * the lattice, the fold state and the window reading; the ladder's verdict;
 * and, when it commits, every decided fold planned against one evolving
 * lattice. Pure: the engine applies the plan once the host has stored the
 * new folds' sources.
 */

import type { AutomaticFacts } from "../actions/status.ts";
import type { FoldOptions } from "../lattice/lattice.ts";
import type { FoldLattice, FoldRecord } from "../lattice/records.ts";
import type { BranchView } from "../lattice/units.ts";
import type { ResolvedOptions } from "../options.ts";
import type { WindowReading } from "../policy/budget.ts";
import { type CommitDecision, decideCommit, type LadderInput } from "../policy/ladder.ts";
import type { FoldState } from "../state/state.ts";
import { describeCommit, type EngineCounters, type PlannedCommit, planCommit } from "./commit.ts";
import type { HostFacts } from "./host-facts.ts";

/**
 * Why the ladder is asked out of turn: Pi is about to compact, the provider
 * refused a request as too long, or a request is over the serving budget.
 */
export type ForcedBy = "threshold" | "overflow" | "fence";

/** What may fold at a later commit, for the summarizer to prepare briefs: the ladder's input and fresh tail. */
export interface PrepareHint {
	input: LadderInput;
	tailStart: number;
}

export type AutomaticPlan =
	| { kind: "off" }
	| { kind: "declined"; decision: CommitDecision; prepare: PrepareHint }
	| { kind: "empty"; decision: CommitDecision }
	| { kind: "planned"; decision: CommitDecision; planned: PlannedCommit; input: LadderInput };

export interface AutomaticInput {
	view: BranchView;
	lattice: FoldLattice;
	state: FoldState;
	reading: WindowReading;
	host: HostFacts;
	options: ResolvedOptions;
	/** A rewrite happens anyway (an action announced one) or the cache is cold. */
	freeRewrite: boolean;
	/** A reboundary's dissolve is part of the pending rewrite (see `LadderInput.justDissolved`). */
	justDissolved?: boolean;
	force?: ForcedBy;
	/** Commit only if the window ends at or under this many tokens (Pi's compaction line, or the overflow line), else decline. */
	under?: number;
	/** Briefs prepared before this commit (model summaries); undefined: deterministic. */
	briefSource?: FoldOptions["briefSource"];
}

/** Ask the ladder and, when it commits, plan the commit. */
export function planAutomatic(input: AutomaticInput): AutomaticPlan {
	const { view, lattice, state, reading, host, options } = input;
	const protectedIds = new Set(state.data.protected);
	const ladder: LadderInput = {
		view,
		lattice,
		protectedIds,
		reading,
		budget: host.budget,
		prices: host.prices,
		contextToolName: options.toolName,
		foldPeekResults: options.foldPeekResults,
		marks: state.data.marks,
		expanded: new Set(state.data.expanded),
		dissolved: dissolvedRecords(state),
		justDissolved: input.justDissolved ?? false,
		freeRewrite: input.freeRewrite,
		force: input.force,
	};
	const decision = decideCommit(ladder);
	const enough = input.under === undefined || reading.total - decision.freedTokens <= input.under;
	if (!decision.commit || !enough) {
		return { kind: "declined", decision, prepare: { input: ladder, tailStart: decision.freshTailStart } };
	}
	const planned = planCommit(decision, {
		view,
		lattice,
		protectedIds,
		freshTailStart: decision.freshTailStart,
		toolName: options.toolName,
		cwd: host.cwd,
		...(input.briefSource ? { briefSource: input.briefSource } : {}),
	});
	return planned ? { kind: "planned", decision, planned, input: ladder } : { kind: "empty", decision };
}

/** The records the agent dissolved (reboundary), which the ladder never folds again as they were. */
function dissolvedRecords(state: FoldState): FoldRecord[] {
	if (state.data.dissolved.length === 0) return [];
	const dissolved = new Set(state.data.dissolved);
	return state.records.filter((record) => dissolved.has(record.id));
}

/**
 * What status reports of the automatic commits: scheduling, pending marks
 * (with the window's reading only when there are some), the last commit and
 * why the last boundary declined, and the counters.
 */
export function automaticFacts(input: {
	options: ResolvedOptions;
	marks: FoldState["data"]["marks"];
	reading: () => WindowReading;
	view: BranchView;
	counters: EngineCounters;
	lastDecision: CommitDecision | undefined;
}): AutomaticFacts {
	const { marks, counters, lastDecision } = input;
	const { lastCommit } = counters;
	return {
		scheduling: input.options.foldScheduling,
		marks,
		reading: marks.length > 0 ? input.reading() : undefined,
		view: input.view,
		lastCommit,
		lastCommitText: lastCommit ? describeCommit(lastCommit) : undefined,
		declined: lastDecision?.commit === false ? lastDecision.declined : undefined,
		commits: counters.commits,
		cancelledCompactions: counters.cancelledCompactions,
		fenceRefusals: counters.fenceRefusals,
	};
}

/**
 * The automatic commit's decision step: the ladder's input from the branch,
 * the lattice, the fold state and the window reading; the ladder's verdict;
 * and, when it commits, every decided fold planned against one evolving
 * lattice. Pure: the engine applies the plan once the host has stored the
 * new folds' sources.
 */

import type { ContextEditEntryDraft } from "@earendil-works/pi-coding-agent";
import type { FoldOptions } from "../lattice/lattice.ts";
import type { FoldLattice, FoldRecord } from "../lattice/records.ts";
import type { BranchView } from "../lattice/units.ts";
import type { ResolvedOptions } from "../options.ts";
import type { WindowReading } from "../policy/budget.ts";
import { type CommitDecision, decideCommit, type LadderInput } from "../policy/ladder.ts";
import type { FoldState } from "../state/state.ts";
import {
	type CommitSummary,
	describeCommit,
	type EngineCounters,
	type PlannedCommit,
	planCommit,
	type QueuedEntry,
} from "./commit.ts";
import type { HostFacts } from "./host-facts.ts";
import type { AutomaticFacts } from "./status-facts.ts";

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

/** What a host asks of one commit: the reason it is out of turn, and the line the window must end under. */
export interface CommitRequest {
	force?: ForcedBy;
	/** Commit only if the window ends at or under this many tokens (Pi's compaction line, or the overflow line). */
	under?: number;
}

/**
 * What a commit came to: committed (`folds` new folds; none when it only
 * settled marks), declined by the ladder (its decision: what it could have
 * freed, the rent paid and the rewrite's price, and why),
 * off (another process writes the session), or not applied because a source
 * could not be stored. `prepare` is what the summarizer may prepare for the
 * next commit.
 */
export type CommitOutcome =
	| {
			kind: "committed";
			folded: boolean;
			folds: number;
			summary: CommitSummary;
			prepare: PrepareHint;
			/** Stored sources found corrupt and rebuilt from the log's verified bytes (the corrupt copy kept aside). */
			repaired: { foldId: string; quarantined: string }[];
	  }
	| { kind: "declined"; folded: false; decision: CommitDecision; prepare?: PrepareHint }
	| { kind: "off"; folded: false; prepare?: undefined }
	| {
			kind: "store-failed";
			folded: false;
			storeError: string;
			/** The store's error code ("no-space", "read-only", "io", …) and its own message, for the person. */
			storeCode: string | undefined;
			storeProblem: string;
			prepare?: undefined;
	  };

/** What the engine asks its host while it commits (the Pi adapter's answers; a replay gives none). */
export interface EngineHost {
	/** Briefs prepared ahead of a commit (the model summarizer's); undefined: deterministic briefs. */
	briefSource?(cwd: string): FoldOptions["briefSource"];
	/** An entry another process appended to the session file, if one did: automatic folding stops. */
	foreignEntry?(): string | undefined;
}

/** A boundary's result: the commit (when the ladder decided) and what the host persists, if anything. */
export interface BoundaryOutcome {
	commit: CommitOutcome | undefined;
	handed: { custom: QueuedEntry[]; drafts: ContextEditEntryDraft[] } | undefined;
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
		workingSetShare: options.workingSetShare,
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

/**
 * The automatic commits' bookkeeping between decisions: what status reports
 * (the counters, the last decision), whether the provider's prefix cache is
 * presumed cold, whether another process writing the session stopped
 * folding, and whether anything changed since the ladder last decided.
 */
export class CommitBook {
	/** A blocking tool ran since the last commit: the prefix cache is presumed cold, a commit costs no extra re-read. */
	coldCache = false;
	/** Set once another process is seen appending to the session file: automatic folding stops. */
	otherWriter: string | undefined;
	readonly counters: Omit<EngineCounters, "fenceRefusals"> = {
		lastCommit: undefined,
		commits: 0,
		cancelledCompactions: 0,
	};
	/** The ladder's last decision (for status: why a boundary did not commit). */
	lastDecision: CommitDecision | undefined;
	/**
	 * A change was applied since the ladder last decided (its own commit, an
	 * action, a threshold commit). Without one, the settle boundary after a
	 * run's last turn would decide exactly what that turn's boundary did, from
	 * the same branch and state, so it is skipped: a boundary listener costs
	 * Pi a projection of the whole branch before and after each handler.
	 */
	changedSinceDecision = true;

	/** A new branch: its last persisted commit (status survives a resume), nothing else carried over. */
	reset(lastCommit: CommitSummary | undefined): void {
		this.coldCache = false;
		this.otherWriter = undefined;
		this.counters.lastCommit = lastCommit;
		this.lastDecision = undefined;
		this.changedSinceDecision = true;
	}

	/** The ladder decided (or was off: the last decision stands). */
	decided(plan: AutomaticPlan): void {
		if (plan.kind === "off") return;
		this.lastDecision = plan.decision;
		this.changedSinceDecision = false;
	}

	/** A planned commit could not be carried out (its sources could not be stored). */
	declined(decision: CommitDecision, why: string): void {
		this.lastDecision = { ...decision, commit: false, declined: why };
	}

	/** A commit was applied. */
	committed(summary: CommitSummary): void {
		this.counters.lastCommit = summary;
		this.counters.commits++;
		this.coldCache = false;
	}
}

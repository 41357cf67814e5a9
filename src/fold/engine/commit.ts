/**
 * The commit: every fold decided for one boundary (pending marks, the
 * ladder's picks) turned into fold records in one pass, so they land as one
 * rewrite. Pure: the runtime stores the sources and persists the change.
 *
 * A committed mark goes through the same planning as an immediate fold
 * (`createFold` / `consolidateFolds`), so it yields the identical record. A
 * mark that can no longer fold (now protected, or its span changed) is
 * refused by name and dropped; the rest of the commit applies.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { canonicalJson } from "../../session/canonical.ts";
import { consolidateFolds, createFold, type FoldOptions, type StoredSource } from "../lattice/lattice.ts";
import { type FoldLattice, type FoldRecord, isRefusal } from "../lattice/records.ts";
import type { BranchView } from "../lattice/units.ts";
import type { CommitDecision, CommitReason, LadderCandidate, Rung } from "../policy/ladder.ts";
import type { FoldOp } from "../state/state-schema.ts";
import type { FoldChange } from "./workspace.ts";

/** Bound on the refusal lines a commit summary keeps. */
export const COMMIT_SUMMARY_MAX_REFUSALS = 8;

/** What one commit did: persisted as `<prefix>:commit` and shown by status. */
export interface CommitSummary {
	v: 1;
	reason: CommitReason;
	/** Fold ids created, with the rung that took each and whether the agent marked it. */
	folds: { id: string; rung: Rung; origin: "agent" | "ladder" }[];
	/** Marks refused at commit, by fold id, with why. */
	refused: { id: string; code: string; message: string }[];
	freedTokens: number;
	rewrittenTokens: number;
	carriedCost: number;
	rewriteCost: number;
	/** The expected re-fetches of what the commit hides (the ladder's price of a miss). */
	refetchCost: number;
	savingsPerRequest: number;
	occupancyBefore: number | null;
}

/** What the engine counts between events besides the fold state (status reports them). */
export interface EngineCounters {
	lastCommit: CommitSummary | undefined;
	commits: number;
	cancelledCompactions: number;
	fenceRefusals: number;
}

export interface PlannedCommit {
	change: FoldChange;
	/** Exact source of every new record (and where it cuts at child folds), by source hash, for the store. */
	sources: Map<string, StoredSource>;
	summary: CommitSummary;
}

export interface CommitContext {
	view: BranchView;
	lattice: FoldLattice;
	protectedIds: ReadonlySet<string>;
	freshTailStart: number;
	toolName: string;
	cwd: string;
	/** Briefs prepared before this commit (model summaries), asked once per new record; undefined: deterministic. */
	briefSource?: FoldOptions["briefSource"];
}

/** Plan every selected candidate of a commit decision against one evolving lattice. */
export function planCommit(decision: CommitDecision, context: CommitContext): PlannedCommit | undefined {
	if (!decision.commit || !decision.reason) return undefined;
	let lattice = context.lattice;
	const records: FoldRecord[] = [];
	const sources = new Map<string, StoredSource>();
	const folds: CommitSummary["folds"] = [];
	const refused: CommitSummary["refused"] = [];
	const settledMarks: string[] = [];
	// Tool batches before the chapters and consolidations that may absorb them, and a fold inside another
	// (an agent's mark inside a deep span) before the one that holds it.
	const ordered = [...decision.selected].sort(
		(a, b) => kindOrder(a) - kindOrder(b) || a.end - a.start - (b.end - b.start) || a.start - b.start,
	);
	for (const candidate of ordered) {
		const origin = candidate.mark?.origin ?? "ladder";
		const options: FoldOptions = {
			origin,
			guards: { protectedEntryIds: context.protectedIds, freshTailStart: context.freshTailStart },
			toolName: context.toolName,
			cwd: context.cwd,
			...(context.briefSource ? { briefSource: context.briefSource } : {}),
		};
		const created = createCandidate(lattice, context.view, candidate, options);
		if (candidate.mark) settledMarks.push(candidate.mark.record.id);
		if (isRefusal(created)) {
			if (candidate.mark) refused.push({ id: candidate.mark.record.id, code: created.code, message: created.message });
			continue;
		}
		lattice = created.lattice;
		records.push(created.record);
		sources.set(created.record.sourceHash, { source: created.plan.source, sourceCuts: created.plan.sourceCuts });
		folds.push({ id: created.record.id, rung: candidate.rung, origin });
	}
	if (records.length === 0 && settledMarks.length === 0) return undefined;
	const ops: FoldOp[] = settledMarks.length > 0 ? [{ op: "clear-marks", ids: settledMarks }] : [];
	return {
		change: { records, ops, causes: records.length > 0 ? ["commit"] : [] },
		sources,
		summary: {
			v: 1,
			reason: decision.reason,
			folds,
			refused: refused.slice(0, COMMIT_SUMMARY_MAX_REFUSALS),
			freedTokens: decision.freedTokens,
			rewrittenTokens: decision.rewrittenTokens,
			carriedCost: decision.carriedCost,
			rewriteCost: decision.rewriteCost,
			refetchCost: decision.refetchCost,
			savingsPerRequest: decision.savingsPerRequest,
			occupancyBefore: decision.occupancy,
		},
	};
}

function kindOrder(candidate: LadderCandidate): number {
	return candidate.kind === "tool-batch" ? 0 : candidate.kind === "chapter" ? 1 : 2;
}

function createCandidate(
	lattice: FoldLattice,
	view: BranchView,
	candidate: LadderCandidate,
	options: FoldOptions,
): ReturnType<typeof createFold> {
	if (candidate.kind === "consolidation") return consolidateFolds(lattice, view, candidate.ids, options);
	const [first = "", last] = candidate.ids;
	return createFold(lattice, view, { kind: candidate.kind, first, last }, options);
}

/** One-line account of a commit for status and notifications. */
export function describeCommit(summary: CommitSummary): string {
	const agent = summary.folds.filter((fold) => fold.origin === "agent").length;
	const byRung = new Map<string, number>();
	for (const fold of summary.folds) byRung.set(fold.rung, (byRung.get(fold.rung) ?? 0) + 1);
	const rungs = [...byRung].map(([rung, count]) => `${count} ${rung}`).join(", ");
	const refused = summary.refused.length > 0 ? `; refused ${summary.refused.map((r) => r.id).join(", ")}` : "";
	return `commit (${summary.reason}): ${summary.folds.length} folds (${rungs || "none"}; ${agent} marked by the agent, ${summary.folds.length - agent} added by the ladder), ~${summary.freedTokens.toLocaleString("en-US")} tokens freed, ~${summary.rewrittenTokens.toLocaleString("en-US")} re-read${refused}`;
}

/** A custom entry waiting for a turn boundary. */
export interface QueuedEntry {
	customType: string;
	data: unknown;
}

/**
 * Entries handed to the last boundary that the branch does not hold: Pi drops
 * a whole boundary when any draft in it is invalid, so they go to the front
 * of the queue again. Edits need no such care: they are recomputed from the
 * fold state at every boundary.
 */
export function requeueLost(
	inFlight: readonly QueuedEntry[],
	queued: readonly QueuedEntry[],
	branch: readonly SessionEntry[],
): QueuedEntry[] {
	if (inFlight.length === 0) return [...queued];
	const key = (customType: string, data: unknown) => `${customType}\n${canonicalJson(data)}`;
	const persisted = new Set(
		branch.flatMap((entry) => (entry.type === "custom" ? [key(entry.customType, entry.data)] : [])),
	);
	const lost = inFlight.filter((entry) => !persisted.has(key(entry.customType, entry.data)));
	return [...lost, ...queued];
}

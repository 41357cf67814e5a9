/**
 * Whether a rendered summary keeps a compaction within its target, and the
 * budget record details v2 stores for it. Pure functions over a live cut plan
 * (`budget.ts`).
 *
 * Floor. The reserve ceiling can lie below anything a compaction can reach:
 * Pi's default reserveTokens (16,384) on a 20,000-token window leaves 3,254
 * tokens, and on overflow 90% of the failed size less reserveTokens leaves
 * nothing when the request was under 18,205 tokens, while the fixed context
 * plus a compact-all summary of a long session is more. Cancelling then left
 * the session stuck: every threshold compaction, `/compact` and overflow
 * recovery cancelled. So when the smallest compaction (compact-all, or a
 * kept tail of entries that project to nothing, such as the failed reply Pi
 * omits before overflow recovery) still misses the target, it is accepted if
 * it stays within the floor: 90% of the working window
 * (`SAFE_WINDOW_FRACTION`, no reserve) and the reduction ceiling, so it fits
 * the window the model has and always shrinks the context. It leaves less room than reserveTokens asks for, which
 * no compaction could give; the caller tells the user (`fitsAfterSummary`
 * reports `atFloor`). Past the floor it still cancels. Pi's own threshold
 * (window − reserveTokens) may then fire again after the next turn; each such
 * compaction must still shrink the context by the reduction margin, so none
 * repeats without growth in between.
 */

import type { BindingConstraint, ContinuityBudgetDetails } from "../records/details.ts";
import { SUMMARY_MAX_BYTES } from "../summary/render.ts";
import {
	type ContinuityBudget,
	calibratedSummaryTokens,
	type LiveCutPlan,
	projectAfter,
	summaryTokensForBytes,
} from "./budget.ts";

export interface SummaryFit {
	fits: boolean;
	summaryTokens: number;
	/** Calibrated projection after compaction; absent in the fallback. */
	projectedTokensAfter?: number;
	/** The target it must not exceed (the floor when `atFloor`); absent in the fallback. */
	limitTokens?: number;
	/** Accepted at the floor: a compact-all that misses the target but fits the floor, leaving less room than asked. */
	atFloor?: { targetTokens: number; binding: BindingConstraint; reserveTokens: number; contextWindow: number };
}

/**
 * Whether a rendered summary of `summaryBytes` UTF-8 bytes and
 * `summaryCharacters` UTF-16 code units (default: as many as bytes, the most
 * there can be) keeps the compaction within its target. When it does not, the
 * caller cancels instead of persisting an expanding or over-budget result. The
 * fallback can only check the summary's own bound, since it knows no window.
 */
export function fitsAfterSummary(
	plan: LiveCutPlan,
	summaryBytes: number,
	summaryCharacters = summaryBytes,
): SummaryFit {
	const withinSummaryBound = summaryBytes <= SUMMARY_MAX_BYTES;
	const budget = plan.budget;
	if (!budget) return { fits: withinSummaryBound, summaryTokens: summaryTokensForBytes(summaryBytes) };
	const summaryTokens = calibratedSummaryTokens(summaryBytes, summaryCharacters, budget.tokenScale);
	const projectedTokensAfter = projectAfter(
		budget.fixedOverheadTokens,
		budget.tokenScale,
		budget.retainedRawTokens,
		summaryTokens,
	);
	const fitsTarget = projectedTokensAfter <= budget.targetContextTokens;
	// The smallest compaction: nothing kept that costs tokens (compact-all, or a tail of emptied entries only).
	const smallest = plan.compactAll || plan.retainedRawTokens === 0;
	if (withinSummaryBound && !fitsTarget && smallest && projectedTokensAfter <= budget.floorCeilingTokens) {
		return {
			fits: true,
			summaryTokens,
			projectedTokensAfter,
			limitTokens: budget.floorCeilingTokens,
			atFloor: {
				targetTokens: budget.targetContextTokens,
				binding: budget.bindingConstraint,
				reserveTokens: budget.reserveTokens,
				contextWindow: budget.contextWindow,
			},
		};
	}
	return {
		fits: withinSummaryBound && fitsTarget,
		summaryTokens,
		projectedTokensAfter,
		limitTokens: budget.targetContextTokens,
	};
}

/** Details v2 budget record for a plan's budget and the actual summary size (see `fitsAfterSummary`). */
export function budgetDetails(
	budget: ContinuityBudget,
	summaryBytes: number,
	summaryCharacters = summaryBytes,
): ContinuityBudgetDetails {
	return {
		strategy: "continuity",
		contextWindow: budget.contextWindow,
		targetContextRatio: budget.targetContextRatio,
		targetContextTokens: budget.targetContextTokens,
		reserveTokens: budget.reserveTokens,
		keepRecentTokens: budget.keepRecentTokens,
		rawTokensBefore: budget.rawTokensBefore,
		fixedContextEstimateTokens: budget.fixedContextEstimateTokens,
		tokenScale: budget.tokenScale,
		fixedOverheadTokens: budget.fixedOverheadTokens,
		summaryReserveTokens: budget.summaryReserveTokens,
		retainedRawTokens: budget.retainedRawTokens,
		projectedTokensAfter: projectAfter(
			budget.fixedOverheadTokens,
			budget.tokenScale,
			budget.retainedRawTokens,
			calibratedSummaryTokens(summaryBytes, summaryCharacters, budget.tokenScale),
		),
		continuityTargetTokens: budget.continuityTargetTokens,
		occupancyCeilingTokens: budget.occupancyCeilingTokens,
		safeCeilingTokens: budget.safeCeilingTokens,
		reductionCeilingTokens: budget.reductionCeilingTokens,
		rawTailTokenBudget: budget.rawTailTokenBudget,
		bindingConstraint: budget.bindingConstraint,
	};
}

/**
 * Why a commit happened, in words a person reads. The ladder's reasons are
 * wire values (`<prefix>:commit` entries carry them); the report and
 * `/context` show these phrases instead, so "priced" or "backstop" never
 * reach a person unexplained.
 */

import { BACKSTOP_OCCUPANCY, type CommitReason } from "../policy/ladder.ts";

const backstop = `${Math.round(BACKSTOP_OCCUPANCY * 100)}%`;

/** One short phrase per reason, completing "folded because …". */
export const COMMIT_REASON_TEXT: Readonly<Record<CommitReason, string>> = {
	priced: "carrying the stale text had already cost as much as the rewrite",
	backstop: `the window was ${backstop} full`,
	"long-context": "the window neared the model's long-context price tier",
	// The ladder commits for free when the window is rewritten anyway: another change at the same boundary
	// (a fold, expand, refold, rebrief or reboundary) or a cache a blocking tool left cold. The summary
	// records only the reason, so the phrase names both.
	"free-rewrite":
		"the window was being rewritten anyway (another change at the same turn, or a cache a blocking tool left cold)",
	threshold: "Pi was about to compact",
	overflow: "the provider refused the request as too long",
	fence: "the next request was over budget",
};

/** The phrase for a reason read from a log; an unknown value is shown as it was written. */
export function commitReasonText(reason: string): string {
	return Object.hasOwn(COMMIT_REASON_TEXT, reason) ? COMMIT_REASON_TEXT[reason as CommitReason] : `"${reason}"`;
}

/** When the next commit comes: every rung of the ladder that commits, in the person's words. */
export const COMMIT_MOMENTS =
	`when carrying the stale text has cost as much as the rewrite, when the window reaches ${backstop} of the budget or nears a long-context price tier, ` +
	"when the window is rewritten anyway (another change, or a cache a blocking tool left cold), before Pi compacts, when the provider refuses a request as too long, or when the next request would not fit.";

/** When pending marks land, for `/context`. */
export const PENDING_MARKS_COMMIT_TEXT = `They land together at the next commit: ${COMMIT_MOMENTS}`;

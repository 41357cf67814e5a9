/**
 * Why a commit happened, in words a person reads. The ladder's reasons are
 * wire values (`<prefix>:commit` entries carry them); the report and
 * `/context` show these phrases instead, so "priced" or "backstop" never
 * reach a person unexplained.
 */

import type { CommitReason } from "../policy/ladder.ts";

/** One short phrase per reason, completing "folded because …". */
export const COMMIT_REASON_TEXT: Readonly<Record<CommitReason, string>> = {
	priced: "carrying the stale text had already cost as much as the rewrite",
	backstop: "the window was 80% full",
	"long-context": "the window neared the model's long-context price tier",
	"free-rewrite": "the cache was cold anyway (after a blocking tool)",
	threshold: "Pi was about to compact",
	fence: "the next request was over budget",
};

/** The phrase for a reason read from a log; an unknown value is shown as it was written. */
export function commitReasonText(reason: string): string {
	return Object.hasOwn(COMMIT_REASON_TEXT, reason) ? COMMIT_REASON_TEXT[reason as CommitReason] : `"${reason}"`;
}

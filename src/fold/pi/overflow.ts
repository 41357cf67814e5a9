/**
 * A request the provider refused as too long (issue 18, item 9): the line a
 * lossless fold must bring the window under before Pi's overflow compaction
 * may be cancelled, and what the person is told either way. Pure: the
 * adapter (runtime.ts) carries the fold out.
 *
 * Why a fold and no compaction record: Pi 1.6.0 retries an overflow only
 * when its recovery compaction completes; a cancelled one ends the run with
 * the failed reply omitted. `agent_before_settle` may ask for one more
 * request (`continue: true`), and that request is the retry, carrying the
 * folded window. So the fold cancels the compaction and the next boundary
 * asks Pi to go on: nothing is summarized, nothing lossy is written.
 */

import { OVERFLOW_WINDOW_FRACTION } from "../../compaction/cut/budget.ts";

/**
 * Tokens the retried request may hold. The refusal proves the provider's
 * window is below the failed request (the compactor's rule: 90% of its
 * size, or the model's window if smaller); Pi's `reserveTokens` stays free
 * below that, as it does under Pi's own compaction line. At most 0.
 */
export function overflowLine(failedTokens: number, contextWindow: number, reserveTokens: number): number {
	const window = Math.min(contextWindow, Math.floor(failedTokens * OVERFLOW_WINDOW_FRACTION));
	return Math.max(0, window - reserveTokens);
}

const tokens = (n: number) => `~${Math.round(n).toLocaleString("en-US")} tokens`;

/** What a fold that made the request fit did, for the person. */
export function overflowFoldedText(input: {
	brand: string;
	failedTokens: number;
	folds: number;
	freedTokens: number;
	retry: boolean;
	/** The status command's name, without the slash. */
	command: string;
}): string {
	const { brand, failedTokens, folds, freedTokens } = input;
	const next = input.retry
		? "Pi retries the request with the folded window; nothing was summarized."
		: "Pi's compaction was cancelled; nothing was summarized.";
	return (
		`${brand}: the provider refused the request as too long (${tokens(failedTokens)} by pi-fold's estimate). ` +
		`Folded ${folds} span${folds === 1 ? "" : "s"} losslessly instead, freeing ${tokens(freedTokens)} ` +
		`(now ${tokens(failedTokens - freedTokens)}). ${next} Every original is one peek away: ` +
		`/${input.command} lists the folds, /${input.command} peek <id> reads one.`
	);
}

/** Why folding was not enough, for the person: Pi's compaction goes ahead. */
export function overflowNotEnoughText(input: {
	brand: string;
	failedTokens: number;
	freedTokens: number;
	line: number;
	reserveTokens: number;
}): string {
	const { brand, failedTokens, freedTokens, line } = input;
	const room =
		line === 0
			? `90% of the failed request leaves no room once compaction.reserveTokens (${input.reserveTokens.toLocaleString("en-US")}) is kept free`
			: `the request must get under ${tokens(line)} (90% of the failed size, less compaction.reserveTokens ${input.reserveTokens.toLocaleString("en-US")})`;
	const folding =
		freedTokens > 0
			? `folding every eligible span would free only ${tokens(freedTokens)}`
			: "nothing outside the newest turns can fold";
	return (
		`${brand}: the provider refused the request as too long (${tokens(failedTokens)} by pi-fold's estimate); ` +
		`${room}, and ${folding}. Folding was not enough, so nothing was folded; Pi's recovery compaction goes ahead.`
	);
}

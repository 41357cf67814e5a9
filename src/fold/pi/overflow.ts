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
 *
 * Pi asks no handler at all when it finds nothing to compact (the window is
 * under `keepRecentTokens`): it omits the failed reply and ends the run.
 * `unrecoveredOverflow` finds that case at `agent_before_settle`, where the
 * same fold and retry apply, with Pi's `reserveTokens` read from its
 * settings (`piReserveTokens`), as no compaction event carries them.
 */

import { isContextOverflow } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { OVERFLOW_WINDOW_FRACTION, overflowWindow } from "../../compaction/cut/budget.ts";
import { isPlainRecord } from "../../session/records/record-guards.ts";

/**
 * Tokens the retried request may hold. The refusal proves the provider's
 * window is below the failed request (the compactor's rule: 90% of its
 * size, or the model's window if smaller); Pi's `reserveTokens` stays free
 * below that, as it does under Pi's own compaction line. At most 0.
 */
export function overflowLine(failedTokens: number, contextWindow: number, reserveTokens: number): number {
	return Math.max(0, overflowWindow(contextWindow, failedTokens) - reserveTokens);
}

/** The overflow fraction as the person reads it ("90%"). */
const OVERFLOW_PERCENT = `${Math.round(OVERFLOW_WINDOW_FRACTION * 100)}%`;

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

/** Why folding was not enough, for the person: Pi's compaction goes ahead, or (`compacts` false) Pi has none to run. */
export function overflowNotEnoughText(input: {
	brand: string;
	failedTokens: number;
	freedTokens: number;
	line: number;
	reserveTokens: number;
	compacts: boolean;
}): string {
	const { brand, failedTokens, freedTokens, line } = input;
	const room =
		line === 0
			? `${OVERFLOW_PERCENT} of the failed request leaves no room once compaction.reserveTokens (${input.reserveTokens.toLocaleString("en-US")}) is kept free`
			: `the request must get under ${tokens(line)} (${OVERFLOW_PERCENT} of the failed size, less compaction.reserveTokens ${input.reserveTokens.toLocaleString("en-US")})`;
	const folding =
		freedTokens > 0
			? `folding every eligible span would free only ${tokens(freedTokens)}`
			: "nothing outside the newest turns can fold";
	return (
		`${brand}: the provider refused the request as too long (${tokens(failedTokens)} by pi-fold's estimate); ` +
		`${room}, and ${folding}. Folding was not enough, so nothing was folded; ` +
		(input.compacts
			? "Pi's recovery compaction goes ahead."
			: "Pi found nothing to compact either (the window is under compaction.keepRecentTokens), so the request is unanswered: lower compaction.keepRecentTokens, or shorten the request.")
	);
}

/**
 * The failed reply of an overflow Pi gave up on without asking anyone: the
 * newest assistant message is a context-overflow error that Pi omitted from
 * the window (its recovery's first step), and no compaction followed.
 * Undefined otherwise, also when Pi's one recovery attempt per ask was
 * already spent (it then omits nothing), so a retry never loops.
 */
export function unrecoveredOverflow(branch: readonly SessionEntry[]): SessionEntry | undefined {
	const at = branch.findLastIndex((entry) => entry.type === "message" && entry.message.role === "assistant");
	const failed = branch[at];
	if (failed?.type !== "message" || failed.message.role !== "assistant") return undefined;
	if (failed.message.stopReason !== "error" || !isContextOverflow(failed.message)) return undefined;
	const after = branch.slice(at + 1);
	if (after.some((entry) => entry.type === "compaction")) return undefined;
	const omitted = after.some(
		(entry) => entry.type === "context_edit" && entry.targetId === failed.id && entry.replacement === null,
	);
	return omitted ? failed : undefined;
}

/**
 * Pi's `compaction.reserveTokens` for `model` from its effective settings,
 * resolved as Pi does (the model's override, then the setting); undefined
 * when neither is a non-negative integer (Pi's default then applies).
 */
export function piReserveTokens(settings: unknown, model: { provider: string; id: string }): number | undefined {
	const compaction = isPlainRecord(settings) ? settings.compaction : undefined;
	if (!isPlainRecord(compaction)) return undefined;
	const overrides = compaction.modelOverrides;
	const override = isPlainRecord(overrides) ? overrides[`${model.provider}/${model.id}`] : undefined;
	const valid = (value: unknown) =>
		Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : undefined;
	return (isPlainRecord(override) ? valid(override.reserveTokens) : undefined) ?? valid(compaction.reserveTokens);
}

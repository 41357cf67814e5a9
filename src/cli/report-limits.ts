/**
 * What the report says where a session cannot support a figure, instead of
 * printing one it cannot stand behind:
 *
 * - no request recorded prompt usage (converted logs and some older ones
 *   record output only): nothing of what was sent can be priced, no cache
 *   share or peak is known, and the replay has no calibration, so "what
 *   pi-fold would have saved" shows Pi's estimate of the transcript in
 *   tokens, said to be one, with no cost and no percentage;
 * - a "saving" that is a loss (a short session, where pi-fold folds nothing
 *   and each request still carries its tool's declaration) is said as
 *   what it is, with why.
 *
 * Formatting only, over figures computed elsewhere (cost/session-cost.ts,
 * cost/projected-savings.ts).
 */

import type { ArmScore } from "../cost/out-of-view/arm-score.ts";
import type { ProjectedSavings } from "../cost/projected-savings.ts";
import type { SessionCost } from "../cost/session-cost.ts";

const integer = new Intl.NumberFormat("en-US");
const money = (dollars: number): string => `$${dollars.toFixed(4)}`;
const plural = (n: number, word: string): string => `${integer.format(n)} ${word}${n === 1 ? "" : "s"}`;
const hidden = (arm: ArmScore): string =>
	`${integer.format(arm.summary.repliesWithAbsent)} of ${integer.format(arm.summary.replies)}`;

/** Why nothing sent can be priced: the same words in every section that needs them. */
export function noPromptUsageText(requests: number): string {
	return `none of the ${plural(requests, "request")} recorded prompt usage (input, cache read and cache write are 0: a converted or older log), so what each request sent is unknown`;
}

/** The "Cost" block for a log whose requests recorded no prompt: the ledger as recorded, and why nothing else is priced. */
export function unpricedCostSection(cost: SessionCost): string[] {
	return [
		"Cost:",
		`  Pi's ledger            ${money(cost.recordedCost)} (as recorded on each request)`,
		`  not priced             ${noPromptUsageText(cost.requests.length)}; only output was recorded (${integer.format(cost.usage.output)} tokens)`,
	];
}

/** The replay had no recorded prompt to calibrate against: its figures are Pi's estimates, not provider tokens. */
export function estimatesOnly(projection: ProjectedSavings): boolean {
	return projection.calibration.points === 0;
}

/**
 * "What pi-fold would have saved" for a log without prompt usage: the two
 * replays in Pi's own estimate of the transcript (no system prompt: the log
 * does not hold it), unpriced.
 */
export function estimatedSavingsSection(projection: ProjectedSavings, requests: number): string[] {
	const { native, projected } = projection;
	const row = (label: string, a: number, b: number) =>
		`  ${label.padEnd(20)} ${integer.format(Math.round(a)).padStart(12)}  ${integer.format(Math.round(b)).padStart(12)}`;
	const compactions = native.compactions === 0 ? "no compaction needed" : plural(native.compactions, "compaction");
	return [
		`What pi-fold would have saved: not priced: ${noPromptUsageText(requests)}.`,
		"  The active branch replayed through Pi's own compaction and through pi-fold's default ladder, in Pi's estimate of the transcript (characters / 4; the system prompt is not in the log):",
		`  ${"".padEnd(20)} ${"Pi alone".padStart(12)}  ${"with pi-fold".padStart(12)}`,
		row("tokens sent (est.)", native.promptTokens, projected.promptTokens),
		row("peak request (est.)", native.peakPromptTokens, projected.peakPromptTokens),
		// What each window hid needs no price: replies that referred to something their request did not show.
		`  ${"hidden from".padEnd(20)} ${hidden(projection.outOfView.native).padStart(12)}  ${hidden(projection.outOfView.projected).padStart(12)}`,
		`  Pi alone             ${compactions}`,
		`  with pi-fold         ${plural(projection.commits, "commit")} folding ${plural(projection.folds, "span")}; its tool's declaration counted, ~${integer.format(projection.declarationTokens)} tokens a request`,
	];
}

/** The "saving" line: the saving, or, when pi-fold would have cost more, how much more and why. */
export function savingLine(projection: ProjectedSavings): string {
	const saved = projection.native.cost - projection.projected.cost;
	const share = projection.native.cost > 0 ? (Math.abs(saved) / projection.native.cost) * 100 : 0;
	const folded = `${plural(projection.commits, "commit")} folding ${plural(projection.folds, "span")}`;
	if (saved >= 0) return `  saving           ${money(saved)} (${share.toFixed(1)}%), ${folded}`;
	const why =
		projection.commits === 0
			? `it folded nothing and its tool's declaration adds ~${integer.format(projection.declarationTokens)} tokens to each request`
			: `${folded} saved less than its tool's declaration costs (~${integer.format(projection.declarationTokens)} tokens a request)`;
	return `  saving           none: pi-fold would have cost ${money(-saved)} (${share.toFixed(1)}%) more; ${why}`;
}

/**
 * Markdown for the replay benchmark: one table per log, the provider's
 * recorded usage first, then every replayed policy under the cost model,
 * with ratios to the recorded cost and to the modelled as-recorded sequence.
 */

import { FALLBACK_CARD_NAME } from "../../src/cost/fold-replay.ts";
import type { LogReplay, PolicyRow } from "./log-replay.ts";
import type { PolicyName } from "./policies.ts";
import type { SequenceTotals } from "./pricing.ts";

const integer = new Intl.NumberFormat("en-US");
const money = (value: number) => `$${value.toFixed(2)}`;
const ratio = (value: number, base: number) => (base > 0 ? `${(value / base).toFixed(2)}×` : "—");

export const POLICY_LABELS: Readonly<Record<PolicyName, string>> = {
	recorded: "(a) as recorded, modelled",
	ladder: "(b) pi-fold ladder",
	"fold-all": "(c) fold all but the newest batch",
};

function cells(totals: SequenceTotals): string[] {
	return [
		integer.format(totals.requests),
		integer.format(totals.promptTokens),
		integer.format(totals.cachedTokens),
		integer.format(totals.uncachedTokens),
		money(totals.cost),
	];
}

function rowLine(row: PolicyRow, replay: LogReplay, modelled: SequenceTotals | undefined): string {
	const { priced } = row;
	return `| ${POLICY_LABELS[row.policy]} | ${cells(priced).join(" | ")} | ${row.replay.commits} (${row.replay.folds}) | ${row.replay.rewrites} (${row.replay.unattributed}) | ${integer.format(priced.peakPromptTokens)} | ${ratio(priced.cost, replay.recorded.cost)} | ${modelled ? ratio(priced.cost, modelled.cost) : "—"} |`;
}

/** The table and the facts under it for one log. */
export function replayFacts(name: string, replay: LogReplay): string[] {
	const modelled = replay.rows.find((row) => row.policy === "recorded")?.priced;
	const fallback = replay.rows[0]?.priced.fallbackPriced ?? 0;
	const ttl = replay.cache.ttlSeconds === undefined ? "no expiry" : `TTL ${replay.cache.ttlSeconds} s`;
	const r = replay.recorded;
	return [
		`### ${name}`,
		"",
		`- Main model ${replay.mainModelKey}; serving budget ${replay.budget === undefined ? "unknown" : integer.format(replay.budget)} tokens (catalog context window); cache model: ${ttl}, ${integer.format(replay.cache.minCachedTokens ?? 0)}-token minimum; ${fallback} request(s) of a model the catalog does not know priced with the \`${FALLBACK_CARD_NAME}\` card.`,
		`- Calibration (${replay.calibration.method}): provider tokens ≈ ${integer.format(Math.round(replay.calibration.overhead))} + ${replay.calibration.scale.toFixed(3)} × Pi estimate; the ladder's fixed part: ${integer.format(replay.fixedTokens)} estimated tokens. Compactions in the log (kept where recorded): ${replay.compactions}.`,
		`- The as-recorded replay sent exactly the prompts \`sessionRequests\` derives from the log: ${replay.recordedMatchesLog ? "yes" : "NO"}.`,
		"",
		"| sequence | requests | prompt tokens | cached | uncached | cost | commits (folds) | rewrites (unattributed) | peak prompt | cost / recorded | cost / (a) |",
		"| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
		`| provider recorded (Pi's ledger) | ${cells(r).join(" | ")} | — | — | ${integer.format(r.peakPromptTokens)} | 1.00× | ${modelled ? ratio(r.cost, modelled.cost) : "—"} |`,
		...replay.rows.map((row) => rowLine(row, replay, modelled)),
		"",
	];
}

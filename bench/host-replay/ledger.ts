/**
 * The cache ledger of one host-replay run (pure): what every request the
 * provider answered costs under the session model's rate card, with the
 * provider's prefix cache expiring on the recorded clock.
 *
 * Per request: prompt tokens are the loopback's count under the run's
 * tokenizer (the session log's calibrated estimate, `calibratedTokenizer`:
 * what `pi-fold report` counts for the same messages); cached tokens are the
 * longest prefix shared with any earlier answered request still alive in the cache (a prefix lives for
 * the card's cache lifetime after the last request that used it, measured on
 * the recorded timestamps, so a request more than that after the previous
 * one reads nothing), rounded by the provider's rules; the rest is fresh,
 * billed as the card's provider bills it (input, or a cache write where the
 * API marks prompts for caching); output is the reply's estimate. Each
 * request is priced at the tier its own prompt selects. Refused or failed
 * requests are counted, never billed.
 */

import { type PricedRequest, priceRequest, type TokenUsage } from "../../src/cost/price.ts";
import type { RateCard } from "../../src/pricing/rate-card.ts";
import {
	type PromptCacheRules,
	PromptPrefixIndex,
	type PromptTokenizer,
	promptCacheUsage,
} from "../../test/harness/provider-rules.ts";
import type { RequestKind } from "../agent/agent.ts";
import type { RunRequest } from "./run-arm.ts";

const MS_PER_SECOND = 1000;

/** How the ledger prices a run. */
export interface LedgerRules {
	card: RateCard;
	cacheRules: PromptCacheRules;
	/** Cache lifetime in seconds; undefined: never expires. */
	ttlSeconds: number | undefined;
	/** How tokens are counted: the loopback's tokenizer in the same run (default: its characters / 4). */
	tokenizer?: PromptTokenizer;
}

export interface LedgerRow {
	index: number;
	kind: RequestKind;
	at: number;
	billed: boolean;
	promptTokens: number;
	cachedTokens: number;
	uncachedTokens: number;
	outputTokens: number;
	/** An agent request whose prompt does not start with the previous agent request's prompt. */
	rewrite: boolean;
	priced?: PricedRequest;
}

export interface Ledger {
	rows: LedgerRow[];
	cost: number;
	uncached: number;
	cached: number;
	output: number;
	/** Billed requests (every kind). */
	requests: number;
	agentRequests: number;
	summarizations: number;
	sideRequests: number;
	/** Requests the provider refused or answered with a failure. */
	unbilled: number;
	rewrites: number;
	peakPrompt: number;
}

/** Price every request of a run, in arrival order. */
export function buildLedger(requests: readonly RunRequest[], rules: LedgerRules): Ledger {
	const cache = new PromptPrefixIndex(rules.ttlSeconds === undefined ? undefined : rules.ttlSeconds * MS_PER_SECOND);
	const rows: LedgerRow[] = [];
	let previousAgentPrompt: string | undefined;
	for (const { request, kind, at } of requests) {
		const billed = request.reply !== undefined;
		const prompt = request.prompt;
		let { promptTokens } = promptCacheUsage(prompt, 0, rules.cacheRules, rules.tokenizer);
		let cachedTokens = 0;
		let rewrite = false;
		let priced: PricedRequest | undefined;
		if (billed) {
			({ promptTokens, cachedTokens } = promptCacheUsage(
				prompt,
				cache.sharedChars(prompt, at),
				rules.cacheRules,
				rules.tokenizer,
			));
			cache.remember(prompt, at);
			priced = priceRequest(rules.card, usage(rules.card, promptTokens, cachedTokens, request.completionTokens ?? 0));
			if (kind === "agent") {
				rewrite = previousAgentPrompt !== undefined && !prompt.startsWith(previousAgentPrompt);
				previousAgentPrompt = prompt;
			}
		}
		rows.push({
			index: request.index,
			kind,
			at,
			billed,
			promptTokens,
			cachedTokens,
			uncachedTokens: billed ? promptTokens - cachedTokens : 0,
			outputTokens: billed ? (request.completionTokens ?? 0) : 0,
			rewrite,
			...(priced ? { priced } : {}),
		});
	}
	const billedRows = rows.filter((row) => row.billed);
	const sum = (pick: (row: LedgerRow) => number) => billedRows.reduce((total, row) => total + pick(row), 0);
	return {
		rows,
		cost: sum((row) => row.priced?.cost.total ?? 0),
		uncached: sum((row) => row.uncachedTokens),
		cached: sum((row) => row.cachedTokens),
		output: sum((row) => row.outputTokens),
		requests: billedRows.length,
		agentRequests: billedRows.filter((row) => row.kind === "agent").length,
		summarizations: billedRows.filter((row) => row.kind === "summarization").length,
		sideRequests: billedRows.filter((row) => row.kind === "side").length,
		unbilled: rows.length - billedRows.length,
		rewrites: rows.filter((row) => row.rewrite).length,
		peakPrompt: Math.max(0, ...billedRows.map((row) => row.promptTokens)),
	};
}

/** Billed usage of one request: the fresh part as the card's provider bills it. */
export function usage(card: RateCard, promptTokens: number, cachedTokens: number, output: number): TokenUsage {
	const fresh = promptTokens - cachedTokens;
	return card.freshInputBilling === "cacheWrite"
		? { input: 0, cacheRead: cachedTokens, cacheWrite: fresh, output }
		: { input: fresh, cacheRead: cachedTokens, cacheWrite: 0, output };
}

/**
 * The provider-side ledger of one benchmark run, as pure functions over the
 * requests the loopback provider recorded.
 *
 * Owns what a run cost and how its window moved: per request the prompt
 * tokens (the loopback's chars/4 estimate of the canonical prompt), the cached
 * tokens the simulated cache served (longest common prefix with any earlier
 * request, provider minimum and granularity applied), the output tokens, the
 * price under the named rate card (each request at the tier its own prompt
 * selects), and whether it rewrote the window: an agent request that is not a
 * pure extension of the previous agent request (summarization and other side
 * calls are separate conversations and are left out of the comparison).
 */

import { type PricedRequest, priceSession, type SessionPrice, type TokenUsage } from "../../src/cost/price.ts";
import type { RateCard } from "../../src/pricing/rate-card.ts";
import type { RecordedRequest } from "../../test/harness/loopback-provider.ts";
import { classifyRequest, type RequestKind } from "./agent.ts";

export interface LedgerRow {
	index: number;
	kind: RequestKind;
	promptTokens: number;
	cachedTokens: number;
	outputTokens: number;
	/** Refused by the provider (pairing defects) or answered with an error. */
	rejected: boolean;
	/** An agent request whose prompt does not start with the previous agent request's prompt. */
	rewrite: boolean;
	priced: PricedRequest;
}

export interface Ledger {
	rows: LedgerRow[];
	price: SessionPrice;
	billedCalls: number;
	rejected: number;
	rewrites: number;
	summarizationCalls: number;
	sideCalls: number;
	/** Largest prompt of any billed request, in tokens. */
	peakPrompt: number;
}

/** Usage as billed: uncached prompt at the input rate (OpenAI-style automatic caching), cache reads, output. */
function usageOf(request: RecordedRequest): TokenUsage {
	const prompt = request.cache.promptTokens;
	const cached = Math.min(request.cache.cachedTokens, prompt);
	return { input: prompt - cached, cacheRead: cached, cacheWrite: 0, output: request.completionTokens ?? 0 };
}

/** Build the ledger of a run. Rejected requests are counted but not billed (a provider bills no refused call). */
export function buildLedger(requests: readonly RecordedRequest[], card: RateCard): Ledger {
	const billed = requests.filter((request) => request.reply !== undefined);
	const price = priceSession(card, billed.map(usageOf));
	const rows: LedgerRow[] = [];
	let previousAgentPrompt: string | undefined;
	let billedIndex = 0;
	for (const request of requests) {
		const kind = classifyRequest(request.body);
		const rejected = request.reply === undefined;
		let rewrite = false;
		if (kind === "agent" && !rejected) {
			rewrite = previousAgentPrompt !== undefined && !request.prompt.startsWith(previousAgentPrompt);
			previousAgentPrompt = request.prompt;
		}
		const priced = rejected ? undefined : price.requests[billedIndex++];
		rows.push({
			index: request.index,
			kind,
			promptTokens: request.cache.promptTokens,
			cachedTokens: rejected ? 0 : request.cache.cachedTokens,
			outputTokens: request.completionTokens ?? 0,
			rejected,
			rewrite,
			priced: priced ?? { promptTokens: request.cache.promptTokens, tierAbove: null, cost: ZERO_PRICE },
		});
	}
	return {
		rows,
		price,
		billedCalls: billed.length,
		rejected: requests.length - billed.length,
		rewrites: rows.filter((row) => row.rewrite).length,
		summarizationCalls: rows.filter((row) => row.kind === "summarization" && !row.rejected).length,
		sideCalls: rows.filter((row) => row.kind === "side" && !row.rejected).length,
		peakPrompt: price.peakPrompt?.tokens ?? 0,
	};
}

const ZERO_PRICE = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, total: 0 } as const;

/** The ledger's own consistency: totals equal the sum of rows, and cost equals the sum of its parts. */
export function ledgerProblems(ledger: Ledger): string[] {
	const problems: string[] = [];
	const billed = ledger.rows.filter((row) => !row.rejected);
	const sum = (pick: (row: LedgerRow) => number) => billed.reduce((total, row) => total + pick(row), 0);
	const { usage, tiered } = ledger.price;
	if (sum((row) => row.promptTokens) !== usage.input + usage.cacheRead)
		problems.push("prompt tokens ≠ uncached input + cache read");
	if (sum((row) => row.cachedTokens) !== usage.cacheRead) problems.push("cached tokens ≠ cache read");
	if (sum((row) => row.outputTokens) !== usage.output) problems.push("output tokens ≠ output total");
	const parts = tiered.input + tiered.cacheRead + tiered.cacheWrite + tiered.output;
	if (Math.abs(parts - tiered.total) > 1e-9) problems.push("cost ≠ sum of its parts");
	if (Math.abs(sum((row) => row.priced.cost.total) - tiered.total) > 1e-9) problems.push("cost ≠ sum of request costs");
	if (billed.length !== ledger.billedCalls) problems.push("billed calls ≠ billed rows");
	return problems;
}

/**
 * Pricing of replayed request sequences: every policy's prompts through one
 * prefix-cache model and the rate card of each request's own model
 * (`modelSequence`, src/cost/projected-savings.ts), beside what the provider
 * recorded for the same requests.
 *
 * Prompts are calibrated to provider tokens with the log's own fit
 * (`calibrateRequests` over the recorded requests), the same fit for every
 * policy, so the policies differ only in what they sent.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { catalogRateCard } from "../../src/cost/catalog.ts";
import type { PrefixCacheOptions } from "../../src/cost/prefix-cache.ts";
import { type ModelledSequence, modelSequence } from "../../src/cost/projected-savings.ts";
import { sessionCost } from "../../src/cost/session-cost.ts";
import type { SessionRequest } from "../../src/cost/session-requests.ts";
import type { Calibration } from "../../src/session/tokens.ts";

/** Totals of one request sequence, modelled or recorded (costs in USD, each request at its own model's card and tier). */
export interface SequenceTotals extends Omit<ModelledSequence, "requests"> {
	requests: number;
	outputTokens: number;
}

/** Price a request sequence under the cache model, each request with its model's card (`cardForModelKey`). */
export function priceSequence(
	requests: readonly SessionRequest[],
	calibration: Calibration,
	cache: PrefixCacheOptions,
): SequenceTotals {
	const { requests: _modelled, ...totals } = modelSequence(requests, calibration, cache);
	const outputTokens = requests.reduce((sum, request) => sum + request.output, 0);
	return { ...totals, requests: requests.length, outputTokens };
}

/** What the provider recorded for the log (every assistant message with usage), and Pi's ledger cost. */
export function recordedTotals(entries: readonly SessionEntry[]): SequenceTotals {
	const cost = sessionCost(entries, { cardFor: catalogRateCard });
	const usage = cost.usage;
	const prompt = usage.input + usage.cacheRead + usage.cacheWrite;
	return {
		requests: cost.requests.length,
		promptTokens: prompt,
		cachedTokens: usage.cacheRead,
		uncachedTokens: usage.input + usage.cacheWrite,
		outputTokens: usage.output,
		cost: cost.recordedCost,
		peakPromptTokens: cost.peakPrompt?.tokens ?? 0,
		fallbackPriced: 0,
	};
}

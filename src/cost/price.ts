/**
 * Pricing requests and sessions with a rate card.
 *
 * Two sources of usage go through the same arithmetic: recorded usage (what
 * the provider reported on each assistant message) and simulated usage (what
 * the prefix-cache model says a request sequence would bill). Each request is
 * priced at the tier its own prompt selects; the session total is priced both
 * tiered and flat, because the spec quotes both (the gap is the long-context
 * surcharge, a price-schedule effect rather than a token-volume one).
 */

import { cacheWrite1hRate, flatCard, type RateCard, ratesFor, TOKENS_PER_PRICE_UNIT } from "../pricing/rate-card.ts";
import type { CachedRequest } from "./prefix-cache.ts";

/** Billed tokens of one request, in a provider's categories. */
export interface TokenUsage {
	input: number;
	cacheRead: number;
	/** All cache writes, including `cacheWrite1h`. */
	cacheWrite: number;
	/** Part of `cacheWrite` written with one-hour retention (Anthropic only). */
	cacheWrite1h?: number;
	output: number;
}

/** Dollars per token category. */
export interface CostParts {
	input: number;
	cacheRead: number;
	cacheWrite: number;
	output: number;
	total: number;
}

export interface PricedRequest {
	promptTokens: number;
	/** Tier threshold in force, or null at base rates. */
	tierAbove: number | null;
	cost: CostParts;
}

export interface SessionPrice {
	card: string;
	requests: PricedRequest[];
	usage: Required<TokenUsage>;
	/** Each request at the tier its prompt selects. */
	tiered: CostParts;
	/** Every request at base rates. */
	flat: CostParts;
	/** tiered.total − flat.total. */
	surcharge: number;
	/** Requests priced above base (their prompt exceeded a tier threshold). */
	requestsAboveTier: number;
	/** Largest prompt, in tokens, and its request index (null for an empty session). */
	peakPrompt: { tokens: number; request: number } | null;
	/** Pooled cache share: Σ cacheRead / Σ prompt. */
	cacheShare: number;
}

export const ZERO_COST: Readonly<CostParts> = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, total: 0 };

/** Prompt tokens of a request: everything it sent, cached or not. */
export function promptTokens(usage: TokenUsage): number {
	return usage.input + usage.cacheRead + usage.cacheWrite;
}

/** Pooled cache share of usage totals: cacheRead / (input + cacheRead + cacheWrite), 0 when nothing was sent. */
export function cacheShareOf(usage: TokenUsage): number {
	const prompt = promptTokens(usage);
	return prompt > 0 ? usage.cacheRead / prompt : 0;
}

/** Price one request at the tier its prompt selects. */
export function priceRequest(card: RateCard, usage: TokenUsage): PricedRequest {
	const prompt = promptTokens(usage);
	const { rates, tierAbove } = ratesFor(card, prompt);
	const longWrite = usage.cacheWrite1h ?? 0;
	const shortWrite = usage.cacheWrite - longWrite;
	const input = (rates.input * usage.input) / TOKENS_PER_PRICE_UNIT;
	const cacheRead = (rates.cacheRead * usage.cacheRead) / TOKENS_PER_PRICE_UNIT;
	const cacheWrite = (rates.cacheWrite * shortWrite + cacheWrite1hRate(rates) * longWrite) / TOKENS_PER_PRICE_UNIT;
	const output = (rates.output * usage.output) / TOKENS_PER_PRICE_UNIT;
	return {
		promptTokens: prompt,
		tierAbove,
		cost: { input, cacheRead, cacheWrite, output, total: input + cacheRead + cacheWrite + output },
	};
}

/** Add cost parts. */
export function addCost(a: CostParts, b: CostParts): CostParts {
	return {
		input: a.input + b.input,
		cacheRead: a.cacheRead + b.cacheRead,
		cacheWrite: a.cacheWrite + b.cacheWrite,
		output: a.output + b.output,
		total: a.total + b.total,
	};
}

/** Price a request sequence (recorded or simulated usage) with one card, tiered and flat. */
export function priceSession(card: RateCard, usages: readonly TokenUsage[]): SessionPrice {
	const flat = flatCard(card);
	const usage: Required<TokenUsage> = { input: 0, cacheRead: 0, cacheWrite: 0, cacheWrite1h: 0, output: 0 };
	let tiered: CostParts = ZERO_COST;
	let flatTotal: CostParts = ZERO_COST;
	let requestsAboveTier = 0;
	let peakPrompt: SessionPrice["peakPrompt"] = null;
	const requests = usages.map((one, index) => {
		const priced = priceRequest(card, one);
		tiered = addCost(tiered, priced.cost);
		flatTotal = addCost(flatTotal, priceRequest(flat, one).cost);
		if (priced.tierAbove !== null) requestsAboveTier++;
		if (peakPrompt === null || priced.promptTokens > peakPrompt.tokens) {
			peakPrompt = { tokens: priced.promptTokens, request: index };
		}
		usage.input += one.input;
		usage.cacheRead += one.cacheRead;
		usage.cacheWrite += one.cacheWrite;
		usage.cacheWrite1h += one.cacheWrite1h ?? 0;
		usage.output += one.output;
		return priced;
	});
	return {
		card: card.name,
		requests,
		usage,
		tiered,
		flat: flatTotal,
		surcharge: tiered.total - flatTotal.total,
		requestsAboveTier,
		peakPrompt,
		cacheShare: cacheShareOf(usage),
	};
}

/**
 * Usage the cache model implies for one request: the cached prefix is a cache
 * read; the fresh rest is billed as input or as a cache write, as the card's
 * provider does; output is whatever the caller knows the request produced.
 */
export function simulatedUsage(
	card: RateCard,
	request: Pick<CachedRequest, "cachedTokens" | "freshTokens">,
	output: number,
): TokenUsage {
	const fresh = request.freshTokens;
	return card.freshInputBilling === "cacheWrite"
		? { input: 0, cacheRead: request.cachedTokens, cacheWrite: fresh, output }
		: { input: fresh, cacheRead: request.cachedTokens, cacheWrite: 0, output };
}

/** Price a simulated request sequence: one output count per request (0 where unknown). */
export function priceSimulated(
	card: RateCard,
	requests: readonly CachedRequest[],
	outputs: readonly number[] = [],
): SessionPrice {
	return priceSession(
		card,
		requests.map((request, index) => simulatedUsage(card, request, outputs[index] ?? 0)),
	);
}

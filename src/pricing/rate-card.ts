/**
 * Provider rate cards: what one request costs, per million tokens, and which
 * prices apply to it.
 *
 * A card has base rates and optional request-wide tiers. A tier applies to the
 * WHOLE request (every input, cache and output token) when the request's prompt
 * (fresh input + cache read + cache write) strictly exceeds its threshold; the
 * highest exceeded threshold wins. That is Pi's own rule (`calculateCost` in
 * pi-ai) and the spec's ("a long-context tier … on any request whose context
 * exceeds the model's 272,000-token window"), so re-pricing a Pi ledger with
 * the model's catalog card reproduces it.
 *
 * Cards are plain data. `rateCardFromModelCost` turns a pi-ai `ModelCost`
 * (same units: USD per million tokens) into a card; `flatCard` drops the tiers
 * so flat-rate and tiered figures can be quoted side by side.
 */

import type { ModelCost } from "@earendil-works/pi-ai";

/** Token counts are priced per this many tokens. */
export const TOKENS_PER_PRICE_UNIT = 1_000_000;

/**
 * Anthropic bills a cache write with one-hour retention at this multiple of the
 * base input rate (pi-ai applies the same rule); used when a card gives no
 * explicit `cacheWrite1h` rate.
 */
export const LONG_RETENTION_WRITE_INPUT_MULTIPLIER = 2;

/** USD per million tokens for each kind of token a provider bills. */
export interface Rates {
	input: number;
	cacheRead: number;
	cacheWrite: number;
	output: number;
	/** One-hour-retention cache writes; default `LONG_RETENTION_WRITE_INPUT_MULTIPLIER × input`. */
	cacheWrite1h?: number;
}

/** Rates that replace the base rates for a whole request whose prompt exceeds `contextAbove` tokens. */
export interface RateTier extends Rates {
	contextAbove: number;
}

/**
 * How a provider bills the part of a prompt it could not serve from cache.
 * `input`: at the input rate (OpenAI-style automatic caching). `cacheWrite`: at
 * the cache-write rate, because the prompt is marked for caching
 * (Anthropic-style explicit breakpoints, which Pi sets on every request).
 * Only the simulated pricing needs this; recorded usage already says.
 */
export type FreshInputBilling = "input" | "cacheWrite";

export interface RateCard {
	name: string;
	/** Where the figures come from, for the report. */
	source: string;
	base: Rates;
	/** Request-wide tiers, any order. Empty for a flat card. */
	tiers: readonly RateTier[];
	freshInputBilling: FreshInputBilling;
}

/** The prices that apply to one request, and which tier (if any) selected them. */
export interface AppliedRates {
	rates: Rates;
	/** Threshold of the tier in force, or null at base rates. */
	tierAbove: number | null;
}

/** Rates for a request whose prompt is `promptTokens`: the highest tier strictly exceeded, else base. */
export function ratesFor(card: RateCard, promptTokens: number): AppliedRates {
	let applied: AppliedRates = { rates: card.base, tierAbove: null };
	for (const tier of card.tiers) {
		if (promptTokens > tier.contextAbove && (applied.tierAbove === null || tier.contextAbove > applied.tierAbove)) {
			applied = { rates: tier, tierAbove: tier.contextAbove };
		}
	}
	return applied;
}

/** The lowest tier threshold: requests above it pay more than base. Null for a flat card. */
export function longContextThreshold(card: RateCard): number | null {
	let lowest: number | null = null;
	for (const tier of card.tiers) if (lowest === null || tier.contextAbove < lowest) lowest = tier.contextAbove;
	return lowest;
}

/** The same card without tiers: every request at base rates. */
export function flatCard(card: RateCard): RateCard {
	return { ...card, name: `${card.name} (flat)`, tiers: [] };
}

/** Effective one-hour cache-write rate of a rate set. */
export function cacheWrite1hRate(rates: Rates): number {
	return rates.cacheWrite1h ?? rates.input * LONG_RETENTION_WRITE_INPUT_MULTIPLIER;
}

/** APIs whose requests Pi marks for caching, so an uncached prompt tail is billed as a cache write. */
export const CACHE_WRITING_APIS: ReadonlySet<string> = new Set(["anthropic-messages", "bedrock-converse-stream"]);

/** A card from a pi-ai model's `cost` field (USD per million tokens), tiers included. */
export function rateCardFromModelCost(
	name: string,
	cost: ModelCost,
	options: { api?: string; source?: string } = {},
): RateCard {
	const rates = (from: { input: number; cacheRead: number; cacheWrite: number; output: number }): Rates => ({
		input: from.input,
		cacheRead: from.cacheRead,
		cacheWrite: from.cacheWrite,
		output: from.output,
	});
	return {
		name,
		source: options.source ?? "Pi model catalog",
		base: rates(cost),
		tiers: (cost.tiers ?? []).map((tier) => ({ ...rates(tier), contextAbove: tier.inputTokensAbove })),
		freshInputBilling: options.api !== undefined && CACHE_WRITING_APIS.has(options.api) ? "cacheWrite" : "input",
	};
}

/** Threshold of the spec's long-context tier: the transport's 272,000-token per-request window. */
export const GPT_5_6_LONG_CONTEXT_ABOVE = 272_000;

/**
 * Named cards, as data. `gpt-5.6` carries the figures spec/pi-fold.md quotes
 * for the measured openai-codex run (they reproduce that ledger to the cent).
 * OpenAI reports no cache writes; a write recorded by another provider is a
 * prompt token OpenAI would bill as uncached input, so the write rate is the
 * input rate (it never affects an OpenAI ledger). The Anthropic
 * cards copy Pi 1.6.0's catalog figures for the two models in the bundled real
 * logs (the catalog lists no long-context tier for them).
 */
export const NAMED_RATE_CARDS: Readonly<Record<string, RateCard>> = {
	"gpt-5.6": {
		name: "gpt-5.6",
		source: "spec/pi-fold.md, measured openai-codex ledger",
		base: { input: 5, cacheRead: 0.5, cacheWrite: 5, output: 30 },
		tiers: [{ contextAbove: GPT_5_6_LONG_CONTEXT_ABOVE, input: 10, cacheRead: 1, cacheWrite: 10, output: 45 }],
		freshInputBilling: "input",
	},
	"claude-opus-4-5": {
		name: "claude-opus-4-5",
		source: "Pi 1.6.0 catalog, anthropic",
		base: { input: 5, cacheRead: 0.5, cacheWrite: 6.25, output: 25 },
		tiers: [],
		freshInputBilling: "cacheWrite",
	},
	"claude-sonnet-4-5": {
		name: "claude-sonnet-4-5",
		source: "Pi 1.6.0 catalog, anthropic",
		base: { input: 3, cacheRead: 0.3, cacheWrite: 3.75, output: 15 },
		tiers: [],
		freshInputBilling: "cacheWrite",
	},
};

/** Look up a named card. */
export function namedRateCard(name: string): RateCard | undefined {
	return Object.hasOwn(NAMED_RATE_CARDS, name) ? NAMED_RATE_CARDS[name] : undefined;
}

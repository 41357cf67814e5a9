/**
 * The serving budget every ratio is measured against, the window's token
 * reading, the prices a commit is weighed with, and the provider-window
 * fence. Pure functions over plain facts the runtime reads from Pi.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionProjection } from "@earendil-works/pi-coding-agent";
import type { RateCard } from "../../pricing/rate-card.ts";
import { longContextThreshold, ratesFor } from "../../pricing/rate-card.ts";
import { estimateMessageTokens, PI_CHARS_PER_TOKEN } from "../../session/tokens.ts";
import type { BranchView } from "../lattice/units.ts";

export interface BudgetFacts {
	/** Estimated tokens of the current window (Pi's reading when it has one). */
	tokens: number | null;
	/** The transport's per-request max-input descriptor (model.contextWindow). */
	descriptor: number | undefined;
	/** `providerTotalWindow` when configured. */
	providerTotalWindow: number | undefined;
	/** Output tokens reserved per request (model.maxTokens). */
	outputReservation: number | undefined;
	/** Pi's compaction reserve (`compaction.reserveTokens`); Pi's default when unknown. */
	reserveTokens?: number;
}

/**
 * Pi 1.6.0's default `compaction.reserveTokens`: Pi compacts once a request's
 * context passes contextWindow − reserveTokens (`shouldCompact` in Pi's
 * core/compaction/compaction.js).
 */
export const PI_DEFAULT_RESERVE_TOKENS = 16_384;

/**
 * Serving budget: Pi's own compaction line (the descriptor less Pi's
 * reserve), so no request the ladder lets through makes Pi compact; with a
 * `providerTotalWindow`, also that total less the output reservation,
 * whichever binds. The model's maxTokens alone does not bind under the
 * descriptor: pi-ai clamps a request's max output to the room the prompt
 * leaves (`clampMaxTokensToContext`), so Pi's reserve is the line.
 */
export function servingBudget(facts: BudgetFacts): number | undefined {
	const reserve = facts.reserveTokens ?? PI_DEFAULT_RESERVE_TOKENS;
	// A window no larger than Pi's reserve has no line left (Pi compacts after every turn it can): measuring against
	// zero would blind the ladder and the warnings, so such a window is its own budget.
	const line =
		facts.descriptor === undefined
			? undefined
			: facts.descriptor > reserve
				? facts.descriptor - reserve
				: facts.descriptor;
	if (facts.providerTotalWindow === undefined) return line;
	const total = facts.providerTotalWindow - (facts.outputReservation ?? 0);
	return line === undefined ? total : Math.min(total, line);
}

/**
 * The provider's hard limit, past which a request is refused (or silently
 * truncated): the provider total less the output reservation when
 * configured, else the descriptor. The fence refuses only past it; between
 * Pi's line and it, Pi compacts.
 */
export function providerLimit(facts: BudgetFacts): number | undefined {
	if (facts.providerTotalWindow !== undefined) return facts.providerTotalWindow - (facts.outputReservation ?? 0);
	return facts.descriptor;
}

/** Window tokens per projected entry, and their sum plus the fixed part (system prompt, tool declarations). */
export interface WindowReading {
	/** Entry id → estimated tokens it contributes to the window now (0 when omitted). */
	entryTokens: ReadonlyMap<string, number>;
	/** Estimated tokens of the system prompt and tool declarations. */
	fixedTokens: number;
	/** fixedTokens plus every entry's tokens. */
	total: number;
	/**
	 * Tokens of the entries at branch positions `[start, end)`, when the
	 * reader keeps a running sum (the engine does); else sum `entryTokens`.
	 */
	rangeTokens?: (start: number, end: number) => number;
}

/** Tokens the entries at branch positions `[start, end)` show in the window now (the running sum when kept). */
export function rangeTokens(view: BranchView, reading: WindowReading, start: number, end: number): number {
	if (reading.rangeTokens) return reading.rangeTokens(start, end);
	let total = 0;
	for (let i = start; i < end; i++) total += reading.entryTokens.get(view.entries[i]?.id ?? "") ?? 0;
	return total;
}

/** Estimates per message object: Pi's projection reuses an unedited entry's message, so most are hits. */
const tokenMemo = new WeakMap<AgentMessage, number>();

function memoTokens(message: AgentMessage): number {
	let tokens = tokenMemo.get(message);
	if (tokens === undefined) {
		tokens = estimateMessageTokens(message);
		tokenMemo.set(message, tokens);
	}
	return tokens;
}

/** Estimate the window Pi would send for a projection: Pi's own chars/4 rule per message. */
export function readWindow(
	projection: Pick<SessionProjection, "entries">,
	fixedText: string,
	tokensOf: (message: AgentMessage) => number = memoTokens,
): WindowReading {
	const entryTokens = new Map<string, number>();
	let total = Math.ceil(fixedText.length / PI_CHARS_PER_TOKEN);
	for (const entry of projection.entries) {
		let tokens = 0;
		for (const message of entry.messages) if (message.role !== "system") tokens += tokensOf(message);
		entryTokens.set(entry.sourceEntry.id, (entryTokens.get(entry.sourceEntry.id) ?? 0) + tokens);
		total += tokens;
	}
	return { entryTokens, fixedTokens: total - sum(entryTokens.values()), total };
}

function sum(values: Iterable<number>): number {
	let total = 0;
	for (const value of values) total += value;
	return total;
}

/**
 * Relative prices of one prompt token, the only prices a commit decision
 * needs: carrying a token costs `cached` per request, re-reading one after a
 * rewrite costs `uncached`.
 */
export interface TokenPrices {
	uncached: number;
	cached: number;
	/** Prompt size above which every token of a request is billed at a higher tier; null when flat. */
	longContextAbove: number | null;
}

/**
 * Cached-to-uncached price ratio assumed when the model has no usable price
 * (a local or free model): OpenAI, Anthropic and Google all bill a cache
 * read at about a tenth of fresh input.
 */
export const DEFAULT_CACHED_PRICE_RATIO = 0.1;

/** Prices for the decision from a rate card, or the default ratio when the card is missing or free. */
export function tokenPrices(card: RateCard | undefined): TokenPrices {
	if (!card) return { uncached: 1, cached: DEFAULT_CACHED_PRICE_RATIO, longContextAbove: null };
	const rates = ratesFor(card, 0).rates;
	const uncached = card.freshInputBilling === "cacheWrite" ? rates.cacheWrite : rates.input;
	if (!(uncached > 0) || !(rates.cacheRead >= 0) || rates.cacheRead >= uncached) {
		return { uncached: 1, cached: DEFAULT_CACHED_PRICE_RATIO, longContextAbove: longContextThreshold(card) };
	}
	return { uncached, cached: rates.cacheRead, longContextAbove: longContextThreshold(card) };
}

/** What the fence says about a request about to go out. */
export type FenceVerdict = { ok: true } | { ok: false; tokens: number; budget: number; message: string };

/**
 * The provider-window fence: a request whose estimated prompt exceeds the
 * serving budget would be refused by the provider (or silently truncated),
 * so it must not be sent. Called after every lossless fold was tried.
 */
export function fenceVerdict(tokens: number, budget: number | undefined, brandNoun: string): FenceVerdict {
	if (budget === undefined || tokens <= budget) return { ok: true };
	return {
		ok: false,
		tokens,
		budget,
		message: `${brandNoun}: request not sent: the window is ~${tokens.toLocaleString("en-US")} tokens, over the ${budget.toLocaleString("en-US")}-token budget (the window less the room kept for the answer), and no lossless fold can make room. Run /compact, or expand less.`,
	};
}

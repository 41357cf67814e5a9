/**
 * The charged cost (pure): what a session's hidden references would have
 * cost a real model to get back, added to the raw cost the replay billed. A
 * replay answers every request with the recorded reply, so it never pays for
 * what the window hid; this charges every arm by one rule, pi-fold's and Pi's
 * alike (a compaction summary hides things too, and a re-read costs what a
 * peek does).
 *
 * The rule: a reply with absent references pays, per hidden source (the most
 * recent earlier message an absent reference came from), one search and one
 * peek. Each is a further model request that re-sends the reply's prompt, at
 * the cached rate (it was just sent), plus the call the model wrote (output)
 * and the bytes the call added (the call and its result, fresh). A search
 * adds a handful of hits; a peek adds the source itself. What the added bytes
 * cost the requests after the reply is not charged (the two arms would carry
 * or fold them differently; leaving it out keeps the rule a lower bound for
 * both).
 */

import type { RateCard } from "../../pricing/rate-card.ts";
import { type PricedRequest, priceRequest, simulatedUsage } from "../price.ts";
import type { HiddenSource, ReplyScore } from "./scorer.ts";

/** A model that cannot see a name searches for it once: one search request per hidden source. */
export const SEARCHES_PER_HIDDEN_SOURCE = 1;
/** …and opens the source the hit names once: one peek (or re-read) request per hidden source. */
export const PEEKS_PER_HIDDEN_SOURCE = 1;
/** Output tokens of one search or peek call (a tool name and a short argument object). */
export const CALL_OUTPUT_TOKENS = 40;
/** Hits a search returns (pi-fold's search shows a handful; a grep about as many lines). */
export const SEARCH_HITS = 5;
/** Characters of one hit: issue 16's two-line hit form measured about 230 characters. */
export const SEARCH_HIT_CHARS = 230;
/** Characters per token of the added bytes before the session's scale (Pi's estimate). */
const CHARS_PER_TOKEN = 4;

export interface ChargeRules {
	card: RateCard;
	/** Provider tokens per estimated token (the session's calibration scale). */
	scale: number;
}

/** What the hidden references of a session (or one reply) cost on top of the raw cost. */
export interface HiddenCharge {
	/** Further model requests: searches and peeks. */
	requests: number;
	/** USD. */
	cost: number;
}

function addedTokens(chars: number, scale: number): number {
	return Math.round(scale * Math.ceil(chars / CHARS_PER_TOKEN));
}

/** One further request: the reply's prompt read from cache, the call and its result fresh, the call as output. */
function furtherRequest(rules: ChargeRules, promptTokens: number, addedChars: number): PricedRequest {
	const fresh = addedTokens(addedChars, rules.scale) + CALL_OUTPUT_TOKENS;
	return priceRequest(
		rules.card,
		simulatedUsage(rules.card, { cachedTokens: promptTokens, freshTokens: fresh }, CALL_OUTPUT_TOKENS),
	);
}

/** The charge of one reply's hidden sources, its request having sent `promptTokens`. */
export function replyCharge(
	rules: ChargeRules,
	promptTokens: number,
	hidden: readonly Pick<HiddenSource, "chars">[],
): HiddenCharge {
	let cost = 0;
	let requests = 0;
	for (const source of hidden) {
		for (let search = 0; search < SEARCHES_PER_HIDDEN_SOURCE; search++) {
			cost += furtherRequest(rules, promptTokens, SEARCH_HITS * SEARCH_HIT_CHARS).cost.total;
			requests++;
		}
		for (let peek = 0; peek < PEEKS_PER_HIDDEN_SOURCE; peek++) {
			cost += furtherRequest(rules, promptTokens, source.chars).cost.total;
			requests++;
		}
	}
	return { requests, cost };
}

/**
 * The charge of a session: every scored reply's, with the prompt tokens its
 * request sent (`promptTokensOf`; a reply whose request the caller cannot
 * price is a programming error, so it throws naming the reply).
 */
export function sessionCharge(
	rules: ChargeRules,
	replies: readonly ReplyScore[],
	promptTokensOf: (reply: ReplyScore) => number | undefined,
): HiddenCharge {
	let cost = 0;
	let requests = 0;
	for (const reply of replies) {
		if (reply.hiddenSources.length === 0) continue;
		const prompt = promptTokensOf(reply);
		if (prompt === undefined)
			throw new Error(
				`charged cost: no prompt size for reply ${reply.id ?? `#${reply.step}`} (its request was not priced)`,
			);
		const charge = replyCharge(rules, prompt, reply.hiddenSources);
		cost += charge.cost;
		requests += charge.requests;
	}
	return { requests, cost };
}

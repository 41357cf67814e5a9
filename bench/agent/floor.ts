/**
 * The floor: the cheapest lossless schedule of a run's stage sequence under
 * the same cost model, found with perfect hindsight by dynamic programming.
 *
 * Model (every quantity in tokens; `FloorInput` says where each comes from):
 * - Requests r_1 … r_{N+1}: r_1 carries the fixed prefix P (system prompt,
 *   tool declarations, the user message); r_i (i ≥ 2) follows stage i−1's
 *   result. Probes, peeks, re-reads and summaries are not part of the floor:
 *   lossless folding keeps every fact recoverable, and recovering one is
 *   work any arm does on top, so leaving it out keeps the floor a lower bound.
 * - Stage m occupies e + s_m raw (call and result envelope plus its
 *   payload) or e + b folded (its brief).
 * - A schedule is a set of commit points. A commit before r_i (3 ≤ i ≤ N+1)
 *   folds every stage still raw except the newest (stage i−1); a stage never
 *   unfolds (lossless: its source stays one peek away).
 * - Cache: a request that follows no commit is a pure append, so its cached
 *   part is the whole previous prompt; a commit re-bills everything from the
 *   first stage it folds. Cached tokens are rounded by the provider's cache
 *   rules (minimum prefix, block size), as the loopback provider does.
 * - Every request must fit the window (prompt ≤ window); each is priced at
 *   the tier its own prompt selects, with a fixed output per request.
 */

import { priceRequest } from "../../src/cost/price.ts";
import type { RateCard } from "../../src/pricing/rate-card.ts";
import { type PromptCacheRules, roundCachedTokens } from "../../test/harness/provider-rules.ts";

export interface FloorInput {
	/** Fixed prefix P: the arm's first request prompt tokens (measured). */
	prefixTokens: number;
	/** Envelope e of one stage (assistant call plus tool-result framing), tokens. */
	envelopeTokens: number;
	/** Payload s_m of each stage, in order (stage 1 first). */
	stageTokens: readonly number[];
	/** A folded stage's brief b, tokens. */
	briefTokens: number;
	/** Output tokens of each request (one stage call). */
	outputTokens: number;
	/** Largest prompt allowed. */
	windowTokens: number;
	cacheRules: PromptCacheRules;
	card: RateCard;
}

export interface FloorResult {
	cost: number;
	/** Requests before which a commit happens (1-based request index). */
	commits: number[];
	uncachedInput: number;
	cacheRead: number;
	output: number;
	requests: number;
	peakPrompt: number;
}

interface RequestCost {
	cost: number;
	uncached: number;
	cached: number;
	prompt: number;
}

/** Cheapest schedule, or undefined when no schedule keeps every request inside the window. */
export function floorSchedule(input: FloorInput): FloorResult | undefined {
	const n = input.stageTokens.length;
	const e = input.envelopeTokens;
	// raw[m] / folded[m]: tokens of stages 1..m all raw / all folded (prefix sums).
	const raw = [0];
	for (let m = 1; m <= n; m++) raw.push((raw[m - 1] ?? 0) + e + (input.stageTokens[m - 1] ?? 0));
	const foldedUpTo = (m: number) => m * (e + input.briefTokens);
	// Prompt of r_i when stages 1..f are folded and f+1..i−1 raw.
	const prompt = (i: number, f: number) =>
		input.prefixTokens + foldedUpTo(f) + (raw[i - 1] ?? 0) - (raw[Math.min(f, i - 1)] ?? 0);
	const price = (promptTokens: number, cachedShared: number): RequestCost | undefined => {
		if (promptTokens > input.windowTokens) return undefined;
		const cached = Math.min(roundCachedTokens(cachedShared, input.cacheRules), promptTokens);
		const usage = { input: promptTokens - cached, cacheRead: cached, cacheWrite: 0, output: input.outputTokens };
		return { cost: priceRequest(input.card, usage).cost.total, uncached: usage.input, cached, prompt: promptTokens };
	};
	// Folded stages after a commit before r_c: 1..c−2 (none for the start, c = 0).
	const foldedAfter = (c: number) => (c === 0 ? 0 : c - 2);
	/** Appends r_from..r_to under the last commit c (the request before r_from is cached whole). */
	const appends = (c: number, from: number, to: number): RequestCost[] | undefined => {
		const out: RequestCost[] = [];
		for (let i = from; i <= to; i++) {
			const shared = i === 1 ? 0 : prompt(i - 1, foldedAfter(c));
			const cost = price(prompt(i, foldedAfter(c)), shared);
			if (!cost) return undefined;
			out.push(cost);
		}
		return out;
	};
	/** A commit before r_c after the last commit c': re-bills from the first stage it folds. */
	const commit = (previous: number, c: number): RequestCost | undefined => {
		const firstNew = foldedAfter(previous) + 1;
		const shared = input.prefixTokens + foldedUpTo(firstNew - 1);
		return price(prompt(c, foldedAfter(c)), shared);
	};

	interface Best {
		cost: number;
		commits: number[];
		parts: RequestCost[];
	}
	const best = new Map<number, Best>([[0, { cost: 0, commits: [], parts: [] }]]);
	const total = (parts: readonly RequestCost[]) => parts.reduce((sum, part) => sum + part.cost, 0);
	let finish: Best | undefined;
	const last = n + 1;
	const order = [0, ...Array.from({ length: Math.max(0, last - 2) }, (_, k) => k + 3)];
	for (const c of order) {
		const from = best.get(c);
		if (!from) continue;
		const start = c === 0 ? 1 : c + 1;
		const tail = appends(c, start, last);
		if (tail) {
			const cost = from.cost + total(tail);
			if (!finish || cost < finish.cost) finish = { cost, commits: from.commits, parts: [...from.parts, ...tail] };
		}
		for (let next = Math.max(3, start); next <= last; next++) {
			const between = appends(c, start, next - 1);
			const landing = commit(c, next);
			if (!between || !landing) continue;
			const cost = from.cost + total(between) + landing.cost;
			const known = best.get(next);
			if (!known || cost < known.cost)
				best.set(next, { cost, commits: [...from.commits, next], parts: [...from.parts, ...between, landing] });
		}
	}
	if (!finish) return undefined;
	return {
		cost: finish.cost,
		commits: finish.commits,
		uncachedInput: finish.parts.reduce((sum, part) => sum + part.uncached, 0),
		cacheRead: finish.parts.reduce((sum, part) => sum + part.cached, 0),
		output: finish.parts.length * input.outputTokens,
		requests: finish.parts.length,
		peakPrompt: Math.max(0, ...finish.parts.map((part) => part.prompt)),
	};
}

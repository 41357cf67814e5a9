/**
 * The hindsight floor of a replayed session (pure): the cheapest lossless
 * schedule of its request sequence with perfect hindsight, under the same
 * token estimate, cache rules, cache lifetime, window and rate card as the
 * ledger. It generalizes the agent benchmark's floor (bench/agent/floor.ts)
 * from one stage per request to any recorded session.
 *
 * Model (sizes in characters of the canonical prompt; tokens = chars / 4 as
 * the loopback counts them):
 * - Request i carries the fixed prefix P (system prompt, tool declarations)
 *   and every unit (one wire message) sent so far; the units new in request
 *   i are the ones appended since request i−1 (the previous reply, its
 *   results, a user message).
 * - A schedule is a set of commit points. A commit before request c folds
 *   every unit request c−1 already carried that is older than the fresh
 *   tail (the newest units of request c holding at least `tailChars`, as
 *   pi-fold keeps its newest 8,192 tokens raw), except user messages (the
 *   person's words stay raw): the newly folded span becomes one brief of
 *   `briefChars`, written where the span began; earlier briefs stay. So the
 *   newest exchange is always raw, and a fold is never undone (its source is
 *   one recall away). With no tail the floor commits almost before every
 *   request, a bound no agent that keeps recent context raw can reach.
 * - Cache: a request that follows no commit reads the whole previous prompt
 *   from cache; a commit re-bills everything from the first unit it folds.
 *   A request more than the cache lifetime after the previous one reads
 *   nothing. Cached tokens are rounded by the provider's rules.
 * - Every request must stay at or under `limitTokens` (Pi's compaction line,
 *   window − reserveTokens) and is priced at the tier its prompt selects,
 *   with its recorded output.
 * Found by dynamic programming over (last commit, briefs so far), keeping per
 * commit point only the schedules no other beats on both cost and briefs
 * (fewer briefs never make a later request dearer).
 */

import { priceRequest } from "../../src/cost/price.ts";
import type { RateCard } from "../../src/pricing/rate-card.ts";
import { CHARS_PER_TOKEN, type PromptCacheRules, roundCachedTokens } from "../../test/harness/provider-rules.ts";
import { usage } from "./ledger.ts";

const MS_PER_SECOND = 1000;

/** One wire message first sent in some request. */
export interface FloorUnit {
	chars: number;
	/** False for user messages, which no schedule folds. */
	foldable: boolean;
}

export interface FloorRequest {
	/** Units first sent in this request, in prompt order. */
	units: readonly FloorUnit[];
	output: number;
	/** Recorded time (ms). */
	at: number;
}

export interface FloorInput {
	prefixChars: number;
	requests: readonly FloorRequest[];
	briefChars: number;
	/** Newest characters a commit keeps raw (0: only the newest exchange). */
	tailChars: number;
	limitTokens: number;
	card: RateCard;
	cacheRules: PromptCacheRules;
	ttlSeconds: number | undefined;
}

export interface FloorResult {
	cost: number;
	/** Requests (1-based) before which the schedule commits. */
	commits: number[];
	uncached: number;
	cached: number;
	peakPrompt: number;
}

interface Priced {
	cost: number;
	uncached: number;
	cached: number;
	prompt: number;
}

interface State {
	cost: number;
	briefs: number;
	commits: number[];
	uncached: number;
	cached: number;
	peak: number;
}

/** Cheapest schedule, or undefined when none keeps every request under the limit. */
export function floorSchedule(input: FloorInput): FloorResult | undefined {
	const n = input.requests.length;
	if (n === 0) return { cost: 0, commits: [], uncached: 0, cached: 0, peakPrompt: 0 };
	// Units in prompt order; unitsBefore[i]: units carried by request i (1-based), unitsBefore[0] = 0.
	const units: FloorUnit[] = [];
	const carried = [0];
	for (const request of input.requests) {
		units.push(...request.units);
		carried.push(units.length);
	}
	// raw[m] / kept[m]: chars of units 1..m all raw / of the user messages among them.
	const raw = [0];
	const kept = [0];
	for (const unit of units) {
		raw.push((raw.at(-1) ?? 0) + unit.chars);
		kept.push((kept.at(-1) ?? 0) + (unit.foldable ? 0 : unit.chars));
	}
	// firstFoldable[m]: index (1-based) of the first foldable unit after m, or units.length + 1.
	const firstFoldable = new Array<number>(units.length + 2).fill(units.length + 1);
	for (let m = units.length - 1; m >= 0; m--)
		firstFoldable[m] = units[m]?.foldable ? m + 1 : (firstFoldable[m + 1] ?? 0);
	const ttlMs = input.ttlSeconds === undefined ? undefined : input.ttlSeconds * MS_PER_SECOND;
	const at = (i: number) => input.requests[i - 1]?.at ?? 0;
	const output = (i: number) => input.requests[i - 1]?.output ?? 0;
	// Units folded once the last commit was before request c: those request c−1 carried, older than the tail.
	const folded = (c: number): number => {
		if (c <= 1) return 0;
		const newest = raw[carried[c] ?? 0] ?? 0;
		let m = carried[c - 1] ?? 0;
		while (m > 0 && newest - (raw[m] ?? 0) < input.tailChars) m--;
		return m;
	};
	const prompt = (i: number, c: number, briefs: number) => {
		const f = folded(c);
		return input.prefixChars + briefs * input.briefChars + (kept[f] ?? 0) + (raw[carried[i] ?? 0] ?? 0) - (raw[f] ?? 0);
	};
	const price = (i: number, promptChars: number, sharedChars: number): Priced | undefined => {
		const promptTokens = Math.ceil(promptChars / CHARS_PER_TOKEN);
		if (promptTokens > input.limitTokens) return undefined;
		const cold = i > 1 && ttlMs !== undefined && at(i) - at(i - 1) > ttlMs;
		const shared = cold ? 0 : Math.floor(sharedChars / CHARS_PER_TOKEN);
		const cached = Math.min(roundCachedTokens(shared, input.cacheRules), promptTokens);
		const cost = priceRequest(input.card, usage(input.card, promptTokens, cached, output(i))).cost.total;
		return { cost, uncached: promptTokens - cached, cached, prompt: promptTokens };
	};
	const add = (state: State, part: Priced, commit?: number): State => ({
		cost: state.cost + part.cost,
		briefs: state.briefs + (commit === undefined ? 0 : 1),
		commits: commit === undefined ? state.commits : [...state.commits, commit],
		uncached: state.uncached + part.uncached,
		cached: state.cached + part.cached,
		peak: Math.max(state.peak, part.prompt),
	});

	// fronts[c]: schedules whose last commit is before request c (c = 1: none), priced through request c.
	const fronts: State[][] = Array.from({ length: n + 1 }, () => []);
	const first = price(1, prompt(1, 1, 0), 0);
	if (!first) return undefined;
	fronts[1] = [add({ cost: 0, briefs: 0, commits: [], uncached: 0, cached: 0, peak: 0 }, first)];
	let best: State | undefined;
	for (let c = 1; c <= n; c++) {
		for (const start of prune(fronts[c] ?? [])) {
			let state = start;
			let reached = c === n;
			for (let next = c + 1; next <= n; next++) {
				// Commit before `next`: it must fold at least one unit not folded yet.
				const from = folded(c);
				const firstNew = firstFoldable[from] ?? units.length + 1;
				if (firstNew <= folded(next)) {
					const shared =
						input.prefixChars +
						state.briefs * input.briefChars +
						(kept[from] ?? 0) +
						(raw[firstNew - 1] ?? 0) -
						(raw[from] ?? 0);
					const landing = price(next, prompt(next, next, state.briefs + 1), shared);
					if (landing) fronts[next]?.push(add(state, landing, next));
				}
				const appended = price(next, prompt(next, c, state.briefs), prompt(next - 1, c, state.briefs));
				if (!appended) break;
				state = add(state, appended);
				reached = next === n;
			}
			if (reached && (!best || state.cost < best.cost)) best = state;
		}
	}
	if (!best) return undefined;
	return {
		cost: best.cost,
		commits: best.commits,
		uncached: best.uncached,
		cached: best.cached,
		peakPrompt: best.peak,
	};
}

/** Schedules no other beats on both cost and briefs, cheapest first. */
function prune(states: readonly State[]): State[] {
	const sorted = [...states].sort((a, b) => a.cost - b.cost || a.briefs - b.briefs);
	const front: State[] = [];
	for (const state of sorted) if (front.every((kept) => state.briefs < kept.briefs)) front.push(state);
	return front;
}

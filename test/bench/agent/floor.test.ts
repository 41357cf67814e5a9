import { describe, expect, it } from "vitest";
import { type FloorInput, floorSchedule } from "../../../bench/agent/floor.ts";
import { PROVIDER_CACHE_RULES } from "../../../bench/agent/presets.ts";
import { priceRequest } from "../../../src/cost/price.ts";
import { NAMED_RATE_CARDS } from "../../../src/pricing/rate-card.ts";
import { testCard } from "../../fixtures/cost.ts";
import { roundCachedTokens } from "../../harness/provider-rules.ts";

/** $1 / $0.10 per M input / cache read: a dollar figure reads as tokens × 10⁻⁶. */
const CARD = testCard();
const gpt56 = NAMED_RATE_CARDS["gpt-5.6"]!;

function floorInput(partial: Partial<FloorInput> = {}): FloorInput {
	return {
		prefixTokens: 100,
		envelopeTokens: 10,
		stageTokens: [1000, 1000],
		briefTokens: 50,
		outputTokens: 0,
		windowTokens: 1_000_000,
		cacheRules: {},
		card: CARD,
		...partial,
	};
}

interface Segment {
	key: string;
	tokens: number;
}

interface Simulated {
	cost: number;
	uncached: number;
	cached: number;
	peak: number;
}

/**
 * An independent reading of the floor's rules: build every request's prompt
 * as segments (prefix, then each stage raw or as its brief), cache the common
 * segment prefix with the previous request, price each request on its own.
 * Undefined when a request exceeds the window.
 */
function simulateSchedule(input: FloorInput, commits: readonly number[]): Simulated | undefined {
	const commitSet = new Set(commits);
	let folded = 0;
	let previous: Segment[] = [];
	const total: Simulated = { cost: 0, uncached: 0, cached: 0, peak: 0 };
	for (let request = 1; request <= input.stageTokens.length + 1; request++) {
		if (commitSet.has(request)) folded = request - 2;
		const segments: Segment[] = [{ key: "prefix", tokens: input.prefixTokens }];
		for (let stage = 1; stage < request; stage++)
			segments.push(
				stage <= folded
					? { key: `brief ${stage}`, tokens: input.envelopeTokens + input.briefTokens }
					: { key: `raw ${stage}`, tokens: input.envelopeTokens + (input.stageTokens[stage - 1] ?? 0) },
			);
		const prompt = segments.reduce((sum, segment) => sum + segment.tokens, 0);
		if (prompt > input.windowTokens) return undefined;
		let shared = 0;
		for (let index = 0; index < Math.min(previous.length, segments.length); index++) {
			if (previous[index]?.key !== segments[index]?.key) break;
			shared += segments[index]?.tokens ?? 0;
		}
		const cached = Math.min(roundCachedTokens(shared, input.cacheRules), prompt);
		const priced = priceRequest(input.card, {
			input: prompt - cached,
			cacheRead: cached,
			cacheWrite: 0,
			output: input.outputTokens,
		});
		total.cost += priced.cost.total;
		total.uncached += prompt - cached;
		total.cached += cached;
		total.peak = Math.max(total.peak, prompt);
		previous = segments;
	}
	return total;
}

/** Every set of commit points (a commit can come before requests 3 … N+1). */
function allSchedules(stages: number): number[][] {
	const points = Array.from({ length: Math.max(0, stages - 1) }, (_, index) => index + 3);
	const schedules: number[][] = [];
	for (let mask = 0; mask < 2 ** points.length; mask++)
		schedules.push(points.filter((_, bit) => (mask & (1 << bit)) !== 0));
	return schedules;
}

const never: number[] = [];
const everyRequest = (stages: number) => Array.from({ length: Math.max(0, stages - 1) }, (_, index) => index + 3);

/** Deterministic pseudo-random stage sizes and schedules (no Math.random: a failure must repeat). */
function lcg(seed: number): () => number {
	let state = seed >>> 0;
	return () => {
		state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
		return state / 2 ** 32;
	};
}

describe("floor of a hand-computable sequence", () => {
	// P = 100, e = 10, two stages of 1,000, output 0: requests r1 = P, r2 = P + 1,010, r3 = P + 2,020 raw.
	it("commits before the last request when a brief is cheap, at the hand-computed cost", () => {
		// Never: r1 100 fresh; r2 1,010 fresh + 100 cached; r3 1,010 fresh + 1,110 cached → 2,120 + 0.1 × 1,210 = 2,241.
		// Commit before r3: prompt P + (10 + 50) + 1,010 = 1,170, only P cached → 100 + 1,110 + 1,170 − 0.9 × 200 = 2,200.
		const result = floorSchedule(floorInput());
		expect(result).toBeDefined();
		expect(result?.commits).toEqual([3]);
		expect(result?.cost).toBeCloseTo(2_200e-6, 12);
		expect(result?.uncachedInput).toBe(100 + 1_010 + 1_070);
		expect(result?.cacheRead).toBe(0 + 100 + 100);
		expect(result?.requests).toBe(3);
		expect(result?.peakPrompt).toBe(1_170);
		expect(result?.output).toBe(0);
		expect(result?.cost).toBeLessThanOrEqual(simulateSchedule(floorInput(), never)?.cost ?? Number.NaN);
		expect(simulateSchedule(floorInput(), never)?.cost).toBeCloseTo(2_241e-6, 12);
	});

	it("never commits when a brief costs nearly what the stage does", () => {
		// Commit before r3: prompt P + 910 + 1,010 = 2,020, only P cached → 1,920 + 10 = 1,930 against 1,121 appended.
		const input = floorInput({ briefTokens: 900 });
		const result = floorSchedule(input);
		expect(result?.commits).toEqual([]);
		expect(result?.cost).toBeCloseTo(2_241e-6, 12);
		expect(result?.cost).toBeLessThan(simulateSchedule(input, [3])?.cost ?? Number.NaN);
	});

	it("bills output on every request", () => {
		const result = floorSchedule(floorInput({ outputTokens: 7 }));
		expect(result?.output).toBe(21);
		// $10 per M output tokens on top of the input-only figure.
		expect(result?.cost).toBeCloseTo(2_200e-6 + 21 * 10e-6, 12);
	});

	it("commits to stay inside the window, and gives up when no schedule fits", () => {
		// r3 raw is 2,120 tokens, over a 1,500 window; folded it is 2,020 with a 900-token brief (still over) or 1,170.
		expect(floorSchedule(floorInput({ briefTokens: 900, windowTokens: 1_500 }))).toBeUndefined();
		const forced = floorSchedule(floorInput({ briefTokens: 900, windowTokens: 2_020 }));
		expect(forced?.commits).toEqual([3]);
		expect(forced?.peakPrompt).toBe(2_020);
		// r2 (1,110) cannot be folded: nothing before it but the stage it follows.
		expect(floorSchedule(floorInput({ windowTokens: 1_100 }))).toBeUndefined();
		// A prompt exactly at the window fits.
		expect(floorSchedule(floorInput({ windowTokens: 1_170 }))?.peakPrompt).toBe(1_170);
	});

	it("serves no cache below the provider's 1,024-token minimum and whole 128-token blocks above it", () => {
		const below = floorSchedule(
			floorInput({ prefixTokens: 1_000, stageTokens: [2_000], cacheRules: PROVIDER_CACHE_RULES }),
		);
		expect(below?.cacheRead).toBe(0);
		expect(below?.uncachedInput).toBe(1_000 + 3_010);
		const above = floorSchedule(
			floorInput({ prefixTokens: 1_500, stageTokens: [2_000], cacheRules: PROVIDER_CACHE_RULES }),
		);
		// 1,500 shared → 11 blocks of 128.
		expect(above?.cacheRead).toBe(1_408);
		expect(above?.uncachedInput).toBe(1_500 + 3_510 - 1_408);
	});

	it("handles a run of one stage and of none", () => {
		expect(floorSchedule(floorInput({ stageTokens: [500] }))).toMatchObject({ commits: [], requests: 2 });
		expect(floorSchedule(floorInput({ stageTokens: [] }))).toMatchObject({ commits: [], requests: 1, peakPrompt: 100 });
	});
});

describe("floor against every schedule of a short sequence", () => {
	const cases: { name: string; input: FloorInput }[] = [
		{
			name: "ideal cache, flat card",
			input: floorInput({ stageTokens: [900, 2_400, 300, 1_800, 700, 2_000, 1_200], briefTokens: 150 }),
		},
		{
			name: "provider cache rules, a long-context tier the raw run crosses, a tight window",
			input: floorInput({
				prefixTokens: 1_300,
				envelopeTokens: 40,
				stageTokens: [3_000, 1_100, 4_200, 2_600, 3_900, 1_700, 2_900],
				briefTokens: 150,
				outputTokens: 25,
				windowTokens: 16_000,
				cacheRules: PROVIDER_CACHE_RULES,
				card: { ...gpt56, tiers: [{ ...gpt56.tiers[0]!, contextAbove: 9_000 }] },
			}),
		},
	];

	for (const { name, input } of cases) {
		it(`is the cheapest feasible schedule (${name})`, () => {
			const result = floorSchedule(input);
			expect(result).toBeDefined();
			if (!result) return;
			const feasible = allSchedules(input.stageTokens.length).flatMap((commits) => {
				const simulated = simulateSchedule(input, commits);
				return simulated ? [{ commits, cost: simulated.cost }] : [];
			});
			expect(feasible.length).toBeGreaterThan(1);
			const cheapest = Math.min(...feasible.map((schedule) => schedule.cost));
			expect(result.cost).toBeCloseTo(cheapest, 12);
			for (const schedule of feasible) expect(result.cost).toBeLessThanOrEqual(schedule.cost + 1e-12);
			// The schedule it reports costs what it says, token for token.
			const own = simulateSchedule(input, result.commits);
			expect(own?.cost).toBeCloseTo(result.cost, 12);
			expect(result.uncachedInput).toBe(own?.uncached);
			expect(result.cacheRead).toBe(own?.cached);
			expect(result.peakPrompt).toBe(own?.peak);
			expect(result.requests).toBe(input.stageTokens.length + 1);
			expect(result.output).toBe((input.stageTokens.length + 1) * input.outputTokens);
		});
	}

	it("is no dearer than never committing or committing before every request", () => {
		const input = cases[0]!.input;
		const result = floorSchedule(input);
		const stages = input.stageTokens.length;
		expect(result?.cost).toBeLessThanOrEqual(simulateSchedule(input, never)?.cost ?? Number.NaN);
		expect(result?.cost).toBeLessThanOrEqual(simulateSchedule(input, everyRequest(stages))?.cost ?? Number.NaN);
	});
});

describe("floor of a long sequence", () => {
	// Full-preset proportions: a measured prefix, ~6–12k-token stages, the 600-character brief, gpt-5.6, 272k window.
	const random = lcg(7);
	const stages = Array.from({ length: 40 }, () => 6_000 + Math.floor(random() * 6_000));
	const input: FloorInput = {
		prefixTokens: 2_900,
		envelopeTokens: 45,
		stageTokens: stages,
		briefTokens: 150,
		outputTokens: 12,
		windowTokens: 272_000,
		cacheRules: PROVIDER_CACHE_RULES,
		card: gpt56,
	};
	const result = floorSchedule(input);

	it("finds a schedule although appending every stage overflows the window", () => {
		expect(simulateSchedule(input, never)).toBeUndefined();
		expect(result).toBeDefined();
		expect(result?.peakPrompt).toBeLessThanOrEqual(input.windowTokens);
	});

	it("costs no more than any schedule built by hand", () => {
		const points = everyRequest(stages.length);
		const built: number[][] = [
			points,
			points.filter((point) => point % 2 === 0),
			points.filter((point) => point % 3 === 0),
			points.filter((point) => point % 10 === 0),
			points.filter((point) => point > 20),
		];
		for (let draw = 0; draw < 40; draw++) built.push(points.filter(() => random() < 0.3));
		let checked = 0;
		for (const commits of built) {
			const simulated = simulateSchedule(input, commits);
			if (!simulated) continue;
			checked++;
			expect(result?.cost).toBeLessThanOrEqual(simulated.cost + 1e-12);
		}
		expect(checked).toBeGreaterThan(10);
	});

	it("commits before every request from the third, as docs/benchmarks.md says of these rules", () => {
		expect(result?.commits).toEqual(everyRequest(stages.length));
		expect(simulateSchedule(input, everyRequest(stages.length))?.cost).toBeCloseTo(result?.cost ?? Number.NaN, 12);
	});
});

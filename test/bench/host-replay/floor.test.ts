import { describe, expect, it } from "vitest";
import { prng } from "../../../bench/generate.ts";
import { type FloorInput, type FloorRequest, floorSchedule } from "../../../bench/host-replay/floor.ts";
import { usage } from "../../../bench/host-replay/ledger.ts";
import { priceRequest } from "../../../src/cost/price.ts";
import type { RateCard } from "../../../src/pricing/rate-card.ts";
import { roundCachedTokens } from "../../../test/harness/provider-rules.ts";

const CARD: RateCard = {
	name: "test",
	source: "test",
	base: { input: 3, cacheRead: 0.3, cacheWrite: 3.75, output: 15 },
	tiers: [{ input: 6, cacheRead: 0.6, cacheWrite: 7.5, output: 22.5, contextAbove: 4_000 }],
	freshInputBilling: "cacheWrite",
};

function randomInput(seed: number): FloorInput {
	const random = prng(seed);
	const between = (low: number, high: number) => Math.floor(low + random() * (high - low + 1));
	let at = 0;
	const requests: FloorRequest[] = Array.from({ length: between(3, 9) }, (_, index) => {
		at += random() < 0.2 ? 400_000 : 20_000;
		const units =
			index === 0
				? [{ chars: between(40, 400), foldable: false }]
				: Array.from({ length: between(1, 3) }, () => ({ chars: between(100, 6_000), foldable: random() < 0.85 }));
		return { units, output: between(10, 400), at };
	});
	return {
		prefixChars: between(1_000, 6_000),
		requests,
		briefChars: 600,
		tailChars: random() < 0.5 ? 0 : between(500, 8_000),
		limitTokens: between(5_000, 12_000),
		card: CARD,
		cacheRules: { minCachedTokens: 256 },
		ttlSeconds: 300,
	};
}

/**
 * An independent oracle: every subset of commit points, each request's prompt
 * built as an explicit list of items (prefix, briefs, raw units) and its cache
 * read as the common leading items with the previous prompt.
 */
function bruteForce(input: FloorInput): number | undefined {
	const units = input.requests.flatMap((request) => request.units);
	const carried: number[] = [];
	let total = 0;
	for (const request of input.requests) {
		total += request.units.length;
		carried.push(total);
	}
	const n = input.requests.length;
	const sizeOf = (from: number, to: number) => units.slice(from, to).reduce((sum, unit) => sum + unit.chars, 0);
	let best: number | undefined;
	for (let mask = 0; mask < 1 << (n - 1); mask++) {
		// foldedBy[m] = which commit folded unit m (its brief sits at that commit's first folded unit).
		const foldedBy: (number | undefined)[] = units.map(() => undefined);
		let cost = 0;
		let previous: { key: string; chars: number }[] | undefined;
		let feasible = true;
		for (let i = 0; i < n; i++) {
			if (i >= 1 && mask & (1 << (i - 1))) {
				// Commit before request i (0-based): fold what request i−1 carried, older than the tail of request i.
				const newest = sizeOf(0, carried[i] ?? 0);
				let boundary = carried[i - 1] ?? 0;
				while (boundary > 0 && newest - sizeOf(0, boundary) < input.tailChars) boundary--;
				let foldedAny = false;
				for (let m = 0; m < boundary; m++)
					if (units[m]?.foldable && foldedBy[m] === undefined) {
						foldedBy[m] = i;
						foldedAny = true;
					}
				if (!foldedAny) {
					feasible = false;
					break;
				}
			}
			const items: { key: string; chars: number }[] = [{ key: "P", chars: input.prefixChars }];
			const briefed = new Set<number>();
			for (let m = 0; m < (carried[i] ?? 0); m++) {
				const by = foldedBy[m];
				if (by === undefined) items.push({ key: `u${m}`, chars: units[m]?.chars ?? 0 });
				else if (!briefed.has(by)) {
					briefed.add(by);
					items.push({ key: `b${by}`, chars: input.briefChars });
				}
			}
			const promptChars = items.reduce((sum, item) => sum + item.chars, 0);
			const promptTokens = Math.ceil(promptChars / 4);
			if (promptTokens > input.limitTokens) {
				feasible = false;
				break;
			}
			let shared = 0;
			const cold = i > 0 && (input.requests[i]?.at ?? 0) - (input.requests[i - 1]?.at ?? 0) > 300_000;
			if (previous && !cold) {
				for (let k = 0; k < Math.min(items.length, previous.length) && items[k]?.key === previous[k]?.key; k++)
					shared += items[k]?.chars ?? 0;
			}
			const cached = Math.min(roundCachedTokens(Math.floor(shared / 4), input.cacheRules), promptTokens);
			cost += priceRequest(input.card, usage(input.card, promptTokens, cached, input.requests[i]?.output ?? 0)).cost
				.total;
			previous = items;
		}
		if (feasible && (best === undefined || cost < best)) best = cost;
	}
	return best;
}

describe("floorSchedule", () => {
	it("finds the cheapest schedule an exhaustive search over every commit set finds", () => {
		let compared = 0;
		for (let seed = 1; seed <= 120; seed++) {
			const input = randomInput(seed);
			const expected = bruteForce(input);
			const found = floorSchedule(input);
			if (expected === undefined) {
				expect(found, `seed ${seed}`).toBeUndefined();
				continue;
			}
			compared++;
			expect(found?.cost, `seed ${seed}`).toBeCloseTo(expected, 9);
		}
		expect(compared).toBeGreaterThan(60);
	});

	it("never costs more than sending everything raw when that fits", () => {
		const input = { ...randomInput(7), limitTokens: 1_000_000 };
		const found = floorSchedule(input);
		const raw = floorSchedule({ ...input, briefChars: 10_000_000 });
		expect(found).toBeDefined();
		expect(found?.cost).toBeLessThanOrEqual(raw?.cost ?? 0);
	});

	it("reports no schedule when one exchange alone is past the limit", () => {
		const input = randomInput(3);
		const huge = { units: [{ chars: 400_000, foldable: true }], output: 1, at: 1e9 };
		expect(floorSchedule({ ...input, requests: [...input.requests, huge] })).toBeUndefined();
	});
});

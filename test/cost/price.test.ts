import { describe, expect, it } from "vitest";
import { simulatePrefixCache } from "../../src/cost/prefix-cache.ts";
import { cacheShareOf, priceRequest, priceSession, priceSimulated, simulatedUsage } from "../../src/cost/price.ts";
import { NAMED_RATE_CARDS } from "../../src/pricing/rate-card.ts";
import { appendOnly, testCard, usage } from "../fixtures/cost.ts";

const gpt56 = NAMED_RATE_CARDS["gpt-5.6"]!;

describe("pricing one request", () => {
	it("prices each token category at the card's per-million rate", () => {
		const priced = priceRequest(gpt56, usage({ input: 20_000, cacheRead: 200_000, output: 4_000 }));
		expect(priced.tierAbove).toBeNull();
		expect(priced.promptTokens).toBe(220_000);
		expect(priced.cost.input).toBeCloseTo(0.1, 12);
		expect(priced.cost.cacheRead).toBeCloseTo(0.1, 12);
		expect(priced.cost.output).toBeCloseTo(0.12, 12);
		expect(priced.cost.total).toBeCloseTo(0.32, 12);
	});

	it("bills the whole request at the long tier once its prompt exceeds the threshold", () => {
		const at = priceRequest(gpt56, usage({ input: 2_000, cacheRead: 270_000, output: 1_000 }));
		const over = priceRequest(gpt56, usage({ input: 2_001, cacheRead: 270_000, output: 1_000 }));
		expect(at.cost.total).toBeCloseTo(0.01 + 0.135 + 0.03, 12);
		expect(over.tierAbove).toBe(272_000);
		// input 2,001 × $10/M + cache read 270,000 × $1/M + output 1,000 × $45/M
		expect(over.cost.total).toBeCloseTo(0.02001 + 0.27 + 0.045, 12);
	});

	it("prices one-hour cache writes at twice the input rate unless the card says otherwise", () => {
		const card = testCard();
		expect(priceRequest(card, usage({ cacheWrite: 1_000_000, cacheWrite1h: 400_000 })).cost.cacheWrite).toBeCloseTo(
			0.6 * 1.25 + 0.4 * 2,
			12,
		);
		const explicit = testCard({ base: { ...card.base, cacheWrite1h: 3 } });
		expect(priceRequest(explicit, usage({ cacheWrite: 100_000, cacheWrite1h: 100_000 })).cost.cacheWrite).toBeCloseTo(
			0.3,
			12,
		);
	});
});

describe("pricing a session", () => {
	it("sums tiered and flat side by side, with the surcharge and the requests that paid it", () => {
		const session = priceSession(gpt56, [
			usage({ input: 10_000, cacheRead: 100_000, output: 1_000 }),
			usage({ input: 10_000, cacheRead: 300_000, output: 2_000 }),
			usage({ input: 500, cacheRead: 310_000, output: 100 }),
		]);
		const flatTotal = (10_000 * 5 + 100_000 * 0.5 + 1_000 * 30 + 10_000 * 5 + 300_000 * 0.5 + 2_000 * 30) / 1e6;
		const flatThird = (500 * 5 + 310_000 * 0.5 + 100 * 30) / 1e6;
		const tieredTail = (10_000 * 10 + 300_000 * 1 + 2_000 * 45 + 500 * 10 + 310_000 * 1 + 100 * 45) / 1e6;
		expect(session.flat.total).toBeCloseTo(flatTotal + flatThird, 12);
		expect(session.tiered.total).toBeCloseTo((10_000 * 5 + 100_000 * 0.5 + 1_000 * 30) / 1e6 + tieredTail, 12);
		expect(session.surcharge).toBeCloseTo(session.tiered.total - session.flat.total, 12);
		expect(session.requestsAboveTier).toBe(2);
		expect(session.peakPrompt).toEqual({ tokens: 310_500, request: 2 });
		expect(session.usage).toMatchObject({ input: 20_500, cacheRead: 710_000, output: 3_100 });
		expect(session.cacheShare).toBeCloseTo(710_000 / 730_500, 12);
		expect(session.tiered.total).toBeCloseTo(
			session.tiered.input + session.tiered.cacheRead + session.tiered.cacheWrite + session.tiered.output,
			12,
		);
	});

	it("has no peak and a zero share for an empty session", () => {
		const empty = priceSession(gpt56, []);
		expect(empty).toMatchObject({ peakPrompt: null, cacheShare: 0, requestsAboveTier: 0 });
		expect(empty.tiered.total).toBe(0);
		expect(cacheShareOf(usage())).toBe(0);
	});
});

describe("pricing the cache model's simulated usage", () => {
	it("bills the fresh tail as input or as a cache write, as the card's provider does", () => {
		const [, second] = simulatePrefixCache(appendOnly([1000, 200])).requests;
		expect(simulatedUsage(testCard(), second!, 50)).toEqual(usage({ input: 200, cacheRead: 1000, output: 50 }));
		expect(simulatedUsage(testCard({ freshInputBilling: "cacheWrite" }), second!, 50)).toEqual(
			usage({ cacheWrite: 200, cacheRead: 1000, output: 50 }),
		);
	});

	it("prices a simulated sequence with per-request outputs", () => {
		const { requests } = simulatePrefixCache(appendOnly([1_000_000, 1_000_000]));
		const priced = priceSimulated(testCard(), requests, [100_000]);
		// request 0: 1M fresh input + 0.1M output; request 1: 1M cached + 1M fresh, no output known.
		expect(priced.tiered.total).toBeCloseTo(1 + 1 + 0.1 + 1, 12);
		expect(priced.usage).toMatchObject({ input: 2_000_000, cacheRead: 1_000_000, output: 100_000 });
	});
});

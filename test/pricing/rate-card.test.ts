import { calculateCost, type Usage } from "@earendil-works/pi-ai";
import { describe, expect, it } from "vitest";
import { catalogModel, catalogRateCard, resolveRateCard } from "../../src/cost/catalog.ts";
import { priceRequest } from "../../src/cost/price.ts";
import {
	flatCard,
	GPT_5_6_LONG_CONTEXT_ABOVE,
	longContextThreshold,
	NAMED_RATE_CARDS,
	rateCardFromModelCost,
	ratesFor,
} from "../../src/pricing/rate-card.ts";
import { zeroUsage } from "../fixtures/common.ts";
import { testCard, usage } from "../fixtures/cost.ts";

const gpt56 = NAMED_RATE_CARDS["gpt-5.6"]!;

describe("rate card tiers", () => {
	it("bills a request at exactly the threshold at base rates and one token over at the long tier", () => {
		expect(ratesFor(gpt56, GPT_5_6_LONG_CONTEXT_ABOVE)).toEqual({ rates: gpt56.base, tierAbove: null });
		const over = ratesFor(gpt56, GPT_5_6_LONG_CONTEXT_ABOVE + 1);
		expect(over.tierAbove).toBe(272_000);
		expect(over.rates).toMatchObject({ input: 10, cacheRead: 1, output: 45 });
	});

	it("carries the spec's gpt-5.6 figures", () => {
		expect(gpt56.base).toMatchObject({ input: 5, cacheRead: 0.5, output: 30 });
		expect(longContextThreshold(gpt56)).toBe(272_000);
	});

	it("picks the highest exceeded tier whatever order the tiers are listed in", () => {
		const card = testCard({
			tiers: [
				{ contextAbove: 200, input: 3, cacheRead: 0.3, cacheWrite: 3, output: 30 },
				{ contextAbove: 100, input: 2, cacheRead: 0.2, cacheWrite: 2, output: 20 },
			],
		});
		expect(ratesFor(card, 100).tierAbove).toBeNull();
		expect(ratesFor(card, 150).tierAbove).toBe(100);
		expect(ratesFor(card, 201).rates.input).toBe(3);
		expect(longContextThreshold(card)).toBe(100);
		expect(flatCard(card).tiers).toEqual([]);
		expect(ratesFor(flatCard(card), 10_000).tierAbove).toBeNull();
	});

	it("derives a card from a Pi model cost, tiers and cache-write billing included", () => {
		const card = rateCardFromModelCost(
			"m",
			{
				input: 2,
				output: 8,
				cacheRead: 0.2,
				cacheWrite: 2.5,
				tiers: [{ inputTokensAbove: 1000, input: 4, output: 16, cacheRead: 0.4, cacheWrite: 5 }],
			},
			{ api: "anthropic-messages" },
		);
		expect(card.base).toEqual({ input: 2, cacheRead: 0.2, cacheWrite: 2.5, output: 8 });
		expect(card.tiers).toEqual([{ contextAbove: 1000, input: 4, cacheRead: 0.4, cacheWrite: 5, output: 16 }]);
		expect(card.freshInputBilling).toBe("cacheWrite");
		const plain = rateCardFromModelCost("n", { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 });
		expect(plain).toMatchObject({ tiers: [], freshInputBilling: "input" });
	});
});

describe("rate cards by name", () => {
	it("resolves named cards first, then provider/model from Pi's catalog", () => {
		expect(resolveRateCard("gpt-5.6")).toBe(gpt56);
		const opus = resolveRateCard("anthropic/claude-opus-4-5");
		expect(opus?.base).toEqual({ input: 5, cacheRead: 0.5, cacheWrite: 6.25, output: 25 });
		expect(opus?.freshInputBilling).toBe("cacheWrite");
		expect(resolveRateCard("openai/gpt-5.5")?.tiers[0]?.contextAbove).toBe(272_000);
		for (const name of ["nope", "anthropic/", "/x", "anthropic/no-such-model", "no-such-provider/x"]) {
			expect(resolveRateCard(name)).toBeUndefined();
		}
	});

	it("prices usage exactly as pi-ai's calculateCost does, tier and one-hour writes included", () => {
		const cases: [string, string, Partial<Usage>][] = [
			["openai", "gpt-5.5", { input: 10_000, cacheRead: 200_000, output: 5_000 }],
			["openai", "gpt-5.5", { input: 12_001, cacheRead: 260_000, output: 5_000 }],
			["anthropic", "claude-opus-4-5", { input: 3, cacheRead: 80_000, cacheWrite: 9_000, output: 700 }],
			["anthropic", "claude-opus-4-5", { input: 3, cacheRead: 80_000, cacheWrite: 9_000, cacheWrite1h: 4_000 }],
		];
		for (const [provider, id, partial] of cases) {
			const model = catalogModel(provider, id)!;
			const full: Usage = { ...zeroUsage(), ...partial };
			const expected = calculateCost(model, full).total;
			const ours = priceRequest(catalogRateCard(provider, id)!, usage(partial)).cost.total;
			expect(ours).toBeCloseTo(expected, 12);
		}
	});
});

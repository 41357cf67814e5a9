/** The serving budget, the window reading, decision prices and the provider-window fence. */

import { buildSessionProjection } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import {
	DEFAULT_CACHED_PRICE_RATIO,
	fenceVerdict,
	PI_DEFAULT_RESERVE_TOKENS,
	readWindow,
	servingBudget,
	tokenPrices,
} from "../../../src/fold/policy/budget.ts";
import { appliesImmediately, EPOCH_IMMEDIATE_TAIL_TOKENS } from "../../../src/fold/policy/epoch.ts";
import { namedRateCard } from "../../../src/pricing/rate-card.ts";
import { FoldBranch } from "../../fixtures/fold.ts";

describe("serving budget", () => {
	it("is Pi's compaction line (descriptor less Pi's reserve), or the provider total less the output if lower", () => {
		const facts = { tokens: null, descriptor: 272_000, outputReservation: 32_000 };
		// Pi compacts above contextWindow − reserveTokens: the budget never passes that line.
		expect(servingBudget({ ...facts, providerTotalWindow: undefined })).toBe(272_000 - PI_DEFAULT_RESERVE_TOKENS);
		expect(servingBudget({ ...facts, providerTotalWindow: undefined, reserveTokens: 40_000 })).toBe(232_000);
		// A provider total that binds harder than Pi's line wins.
		expect(servingBudget({ ...facts, providerTotalWindow: 272_000 })).toBe(240_000);
		expect(servingBudget({ ...facts, providerTotalWindow: 372_000 })).toBe(272_000 - PI_DEFAULT_RESERVE_TOKENS);
		expect(servingBudget({ ...facts, descriptor: undefined, providerTotalWindow: 372_000 })).toBe(340_000);
		expect(servingBudget({ ...facts, descriptor: undefined, providerTotalWindow: undefined })).toBeUndefined();
	});
});

describe("window reading", () => {
	it("counts each projected entry with Pi's chars/4 rule, plus the fixed text", () => {
		const b = new FoldBranch();
		const user = b.user("x".repeat(400));
		const reading = readWindow(buildSessionProjection(b.entries), "s".repeat(40));
		expect(reading.entryTokens.get(user)).toBe(100);
		expect(reading.fixedTokens).toBe(10);
		expect(reading.total).toBe(110);
	});
});

describe("decision prices", () => {
	it("reads cached and uncached input from the card, with its long-context tier", () => {
		const card = namedRateCard("gpt-5.6");
		if (!card) throw new Error("gpt-5.6 card missing");
		const prices = tokenPrices(card);
		expect(prices.cached / prices.uncached).toBeCloseTo(0.1);
		expect(prices.longContextAbove).toBe(272_000);
	});

	it("falls back to the common tenth for a missing or free card", () => {
		expect(tokenPrices(undefined)).toEqual({ uncached: 1, cached: DEFAULT_CACHED_PRICE_RATIO, longContextAbove: null });
		const free = {
			name: "free",
			source: "t",
			base: { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 },
			tiers: [],
			freshInputBilling: "input" as const,
		};
		expect(tokenPrices(free).cached).toBe(DEFAULT_CACHED_PRICE_RATIO);
	});
});

describe("provider-window fence", () => {
	it("refuses a request over the serving budget, naming both sizes and the next step; passes one at the budget", () => {
		expect(fenceVerdict(100_000, 100_000, "active-context")).toEqual({ ok: true });
		expect(fenceVerdict(5, undefined, "active-context")).toEqual({ ok: true });
		const refused = fenceVerdict(100_001, 100_000, "active-context");
		expect(refused.ok).toBe(false);
		if (!refused.ok)
			expect(refused.message).toMatch(/~100,001 tokens, over the 100,000-token budget \(the window less .*\/compact/);
	});
});

describe("epoch placement", () => {
	it(`applies a fold at once when at most ${EPOCH_IMMEDIATE_TAIL_TOKENS} tokens follow it`, () => {
		const b = new FoldBranch();
		b.user("go");
		b.tool({ id: "a", name: "bash" }, "x".repeat(4_000));
		const end = b.entries.length;
		b.tool({ id: "b", name: "bash" }, "y".repeat(4 * EPOCH_IMMEDIATE_TAIL_TOKENS - 200));
		expect(appliesImmediately(b.entries, end)).toBe(true);
		b.tool({ id: "c", name: "bash" }, "z".repeat(400));
		expect(appliesImmediately(b.entries, end)).toBe(false);
	});
});

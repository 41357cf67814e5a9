import { describe, expect, it } from "vitest";
import { catalogRateCard } from "../../src/cost/catalog.ts";
import { priceByModel, recordedRequests, sessionCost } from "../../src/cost/session-cost.ts";
import { NAMED_RATE_CARDS } from "../../src/pricing/rate-card.ts";
import { loadSessionFile } from "../../src/session/load.ts";
import { testCard, UsageLogBuilder, usage } from "../fixtures/cost.ts";
import { REAL_SESSIONS } from "../fixtures/session.ts";

function smallLog(): UsageLogBuilder {
	const log = new UsageLogBuilder();
	log.user("start");
	log.assistant("one", usage({ input: 100_000, output: 1_000 }), { cost: 0.53 });
	log.user("more");
	log.assistant("two", usage({ input: 5_000, cacheRead: 280_000, output: 2_000 }), { cost: 0.47 });
	log.user("elsewhere");
	log.assistant("three", usage({ input: 10, output: 10 }), { provider: "local", model: "tiny", cost: 0 });
	return log;
}

describe("a session's recorded cost", () => {
	it("reads every assistant message's usage and ledger cost in file order", () => {
		const requests = recordedRequests(smallLog().entries);
		expect(requests.map((r) => [r.provider, r.model, r.recordedCost])).toEqual([
			["openai", "gpt-5.5", 0.53],
			["openai", "gpt-5.5", 0.47],
			["local", "tiny", 0],
		]);
		expect(requests[1]?.usage).toEqual(usage({ input: 5_000, cacheRead: 280_000, output: 2_000 }));
	});

	it("re-prices each request with its own model's card and leaves unknown models unpriced", () => {
		const requests = recordedRequests(smallLog().entries);
		const priced = priceByModel(requests, (provider) => (provider === "openai" ? testCard() : undefined));
		expect(priced.unpricedRequests).toBe(1);
		expect(priced.groups.map((g) => [g.model, g.requests, g.price !== undefined])).toEqual([
			["gpt-5.5", 2, true],
			["tiny", 1, false],
		]);
		expect(priced.tiered.total).toBeCloseTo((105_000 * 1 + 280_000 * 0.1 + 3_000 * 10) / 1e6, 12);
	});

	it("summarizes ledger, cache share, peak context and requests above the card's threshold", () => {
		const cost = sessionCost(smallLog().entries, { cardFor: catalogRateCard, card: NAMED_RATE_CARDS["gpt-5.6"]! });
		expect(cost.recordedCost).toBeCloseTo(1, 12);
		expect(cost.cacheShare).toBeCloseTo(280_000 / 385_010, 12);
		expect(cost.peakPrompt).toEqual({ tokens: 285_000, entryId: "u4" });
		expect(cost.threshold).toBe(272_000);
		expect(cost.requestsAboveThreshold).toBe(1);
		expect(cost.card?.requestsAboveTier).toBe(1);
		expect(cost.card?.surcharge).toBeGreaterThan(0);
		// Without a named card the threshold comes from the catalog card of the models used.
		expect(sessionCost(smallLog().entries, { cardFor: catalogRateCard }).threshold).toBe(272_000);
		expect(sessionCost(smallLog().entries, { cardFor: () => testCard() }).threshold).toBeNull();
	});
});

describe("re-pricing the real logs with Pi's catalog", () => {
	it.each([
		["before compaction", REAL_SESSIONS.beforeCompaction, 42.5959],
		["large", REAL_SESSIONS.large, 30.3302],
	])("reproduces the %s log's own ledger to the cent", (_name, path, ledger) => {
		const cost = sessionCost(loadSessionFile(path).entries, { cardFor: catalogRateCard });
		expect(cost.recordedCost).toBeCloseTo(ledger, 4);
		expect(cost.catalog.tiered.total).toBeCloseTo(cost.recordedCost, 2);
		expect(cost.catalog.surcharge).toBe(0);
	});
});

import { describe, expect, it } from "vitest";
import { buildLedger, ledgerProblems } from "../../../bench/agent/ledger.ts";
import { PROVIDER_CACHE_RULES } from "../../../bench/agent/presets.ts";
import { GPT_5_6_LONG_CONTEXT_ABOVE, NAMED_RATE_CARDS } from "../../../src/pricing/rate-card.ts";
import {
	measuredRequests,
	recordedRequests,
	requestBody,
	toolMessage,
	userMessage,
} from "../../fixtures/agent-bench.ts";
import type { WireMessage } from "../../harness/provider-rules.ts";

const gpt56 = NAMED_RATE_CARDS["gpt-5.6"]!;
const TIER = GPT_5_6_LONG_CONTEXT_ABOVE;

describe("billing one request", () => {
	it("bills the base tier at exactly the threshold", () => {
		const ledger = buildLedger(
			recordedRequests([{ promptTokens: TIER, cachedTokens: 200_000, completionTokens: 1_000 }]),
			gpt56,
		);
		const row = ledger.rows[0];
		expect(row?.priced.tierAbove).toBeNull();
		// 72,000 × $5/M + 200,000 × $0.50/M + 1,000 × $30/M
		expect(row?.priced.cost.total).toBeCloseTo(0.36 + 0.1 + 0.03, 12);
		expect(ledger.price.requestsAboveTier).toBe(0);
		expect(ledger.price.surcharge).toBe(0);
	});

	it("bills the whole request at the long-context tier one token above it", () => {
		const ledger = buildLedger(
			recordedRequests([{ promptTokens: TIER + 1, cachedTokens: 200_000, completionTokens: 1_000 }]),
			gpt56,
		);
		const row = ledger.rows[0];
		expect(row?.priced.tierAbove).toBe(TIER);
		// 72,001 × $10/M + 200,000 × $1/M + 1,000 × $45/M
		expect(row?.priced.cost.total).toBeCloseTo(0.72001 + 0.2 + 0.045, 12);
		expect(ledger.price.requestsAboveTier).toBe(1);
		expect(ledger.price.flat.total).toBeCloseTo(0.360005 + 0.1 + 0.03, 12);
		expect(ledger.price.surcharge).toBeCloseTo(0.72001 + 0.2 + 0.045 - (0.360005 + 0.1 + 0.03), 12);
		expect(ledger.peakPrompt).toBe(TIER + 1);
	});

	it("bills uncached prompt tokens at the input rate and cached ones at the cache-read rate", () => {
		const ledger = buildLedger(recordedRequests([{ promptTokens: 10_000, cachedTokens: 8_192 }]), gpt56);
		expect(ledger.price.usage).toMatchObject({ input: 1_808, cacheRead: 8_192, cacheWrite: 0, output: 0 });
		expect(ledger.rows[0]?.priced.cost.input).toBeCloseTo((1_808 * 5) / 1e6, 12);
		expect(ledger.rows[0]?.priced.cost.cacheRead).toBeCloseTo((8_192 * 0.5) / 1e6, 12);
	});
});

describe("the simulated cache the ledger bills", () => {
	/** An agent conversation whose k-th request adds one tool result of `chars` characters. */
	function growing(resultChars: readonly number[]) {
		const messages: WireMessage[] = [userMessage("go")];
		return resultChars.map((chars, index) => {
			if (index > 0) messages.push(toolMessage(`call_${index}`, "x".repeat(chars)));
			return { body: { ...requestBody("agent", "go"), messages: [...messages] }, reply: { text: "next" } };
		});
	}

	it("serves nothing below 1,024 shared tokens and whole 128-token blocks above", () => {
		const requests = measuredRequests(growing([0, 3_900, 2_000, 9_000, 30_000]), PROVIDER_CACHE_RULES);
		const ledger = buildLedger(requests, gpt56);
		const shared = requests.map((request) => Math.floor(request.cache.cachedChars / 4));
		// Request 2 shares about 1,000 tokens with request 1: just short of the minimum, so all of it is fresh.
		expect(shared[2]).toBeGreaterThan(900);
		expect(shared[2]).toBeLessThan(1_024);
		expect(ledger.rows[2]?.cachedTokens).toBe(0);
		expect(ledger.rows[2]?.priced.cost.input).toBeCloseTo((ledger.rows[2]!.promptTokens * 5) / 1e6, 12);
		expect(shared[3]).toBeGreaterThanOrEqual(1_024);
		expect(ledger.rows[3]?.cachedTokens).toBeGreaterThan(0);
		expect(ledger.rows[3]?.cachedTokens).toBeLessThan(shared[3] ?? 0);
		for (const [index, row] of ledger.rows.entries()) {
			const tokens = shared[index] ?? 0;
			expect(row.cachedTokens % 128).toBe(0);
			expect(row.cachedTokens).toBe(tokens < 1_024 ? 0 : Math.floor(tokens / 128) * 128);
			expect(row.cachedTokens).toBeLessThanOrEqual(row.promptTokens);
		}
		expect(ledger.price.usage.cacheRead).toBe(ledger.rows.reduce((sum, row) => sum + row.cachedTokens, 0));
		expect(ledgerProblems(ledger)).toEqual([]);
	});
});

describe("ledger rows", () => {
	it("counts a rejected request but bills nothing for it, and keeps later rows on their own prices", () => {
		const ledger = buildLedger(
			recordedRequests([
				{ promptTokens: 1_000 },
				{ promptTokens: 5_000, cachedTokens: 1_024, rejected: true },
				{ promptTokens: 3_000, cachedTokens: 1_024, completionTokens: 10 },
			]),
			gpt56,
		);
		expect(ledger.billedCalls).toBe(2);
		expect(ledger.rejected).toBe(1);
		expect(ledger.rows[1]).toMatchObject({ rejected: true, cachedTokens: 0 });
		expect(ledger.rows[1]?.priced.cost.total).toBe(0);
		expect(ledger.rows[2]?.priced.promptTokens).toBe(3_000);
		expect(ledger.rows[2]?.priced.cost.total).toBeCloseTo((1_976 * 5 + 1_024 * 0.5 + 10 * 30) / 1e6, 12);
		expect(ledger.price.usage.input + ledger.price.usage.cacheRead).toBe(4_000);
		expect(ledger.peakPrompt).toBe(3_000);
		expect(ledgerProblems(ledger)).toEqual([]);
	});

	it("flags an agent request that does not extend the previous agent request as a rewrite", () => {
		const ledger = buildLedger(
			recordedRequests([
				{ prompt: "A", promptTokens: 1 },
				{ prompt: "AB", promptTokens: 1 },
				// Side calls and summaries are other conversations: never compared, never the baseline.
				{ kind: "summarization", prompt: "S", promptTokens: 1 },
				{ kind: "side", prompt: "Z", promptTokens: 1 },
				{ prompt: "ABC", promptTokens: 1 },
				{ prompt: "AX", promptTokens: 1 },
				// A refused request is not the baseline either.
				{ prompt: "Q", promptTokens: 1, rejected: true },
				{ prompt: "AXY", promptTokens: 1 },
			]),
			gpt56,
		);
		expect(ledger.rows.map((row) => row.rewrite)).toEqual([false, false, false, false, false, true, false, false]);
		expect(ledger.rewrites).toBe(1);
		expect(ledger.rows.map((row) => row.kind)).toEqual([
			"agent",
			"agent",
			"summarization",
			"side",
			"agent",
			"agent",
			"agent",
			"agent",
		]);
		expect(ledger.summarizationCalls).toBe(1);
		expect(ledger.sideCalls).toBe(1);
	});
});

describe("ledgerProblems", () => {
	const ledger = () =>
		buildLedger(
			recordedRequests([
				{ promptTokens: 2_000, completionTokens: 40 },
				{ promptTokens: 4_000, cachedTokens: 1_920, completionTokens: 60 },
			]),
			gpt56,
		);

	it("finds none in a ledger it built", () => {
		expect(ledgerProblems(ledger())).toEqual([]);
	});

	it("names a row that disagrees with the totals", () => {
		const tampered = ledger();
		const second = tampered.rows[1]!;
		tampered.rows[1] = { ...second, cachedTokens: second.cachedTokens + 128, outputTokens: 0 };
		expect(ledgerProblems(tampered)).toEqual(["cached tokens ≠ cache read", "output tokens ≠ output total"]);
		const priced = ledger();
		priced.price = { ...priced.price, tiered: { ...priced.price.tiered, total: priced.price.tiered.total + 0.01 } };
		expect(ledgerProblems(priced)).toEqual(["cost ≠ sum of its parts", "cost ≠ sum of request costs"]);
		expect(ledgerProblems({ ...ledger(), billedCalls: 3 })).toEqual(["billed calls ≠ billed rows"]);
	});
});

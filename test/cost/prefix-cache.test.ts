import { describe, expect, it } from "vitest";
import { PrefixCache, simulatePrefixCache } from "../../src/cost/prefix-cache.ts";
import { appendOnly, msg, req } from "../fixtures/cost.ts";

describe("positional prefix cache", () => {
	it("serves an append-only conversation's whole previous prompt from cache", () => {
		const result = simulatePrefixCache(appendOnly([100, 20, 30, 50]));
		expect(result.requests.map((r) => [r.promptTokens, r.cachedTokens, r.freshTokens])).toEqual([
			[100, 0, 100],
			[120, 100, 20],
			[150, 120, 30],
			[200, 150, 50],
		]);
		expect(result.requests.map((r) => r.cachedMessages)).toEqual([0, 1, 2, 3]);
		expect(result.requests.map((r) => r.matchedRequest)).toEqual([null, 0, 1, 2]);
		expect(result).toMatchObject({ promptTokens: 570, cachedTokens: 370, freshTokens: 200 });
		expect(result.cacheShare).toBeCloseTo(370 / 570, 12);
	});

	it("re-bills everything after a rewrite in the middle, however small the change", () => {
		const a = msg("a", 1000);
		const b = msg("b", 500);
		const c = msg("c", 2000);
		const d = msg("d", 100);
		const result = simulatePrefixCache([
			req([a, b, c]),
			req([a, b, c, d]),
			// b rewritten to one token: c and d are re-sent unchanged but sit after the change.
			req([a, msg("b'", 1), c, d]),
		]);
		const third = result.requests[2]!;
		expect(third).toMatchObject({ cachedMessages: 1, cachedTokens: 1000, promptTokens: 3101, freshTokens: 2101 });
		expect(third.matchedRequest).toBe(1);
	});

	it("matches any earlier request, not only the previous one", () => {
		const base = [msg("sys", 400), msg("u1", 100)];
		const result = simulatePrefixCache([
			req([...base, msg("a1", 300), msg("a2", 300)]),
			req([msg("sys", 400), msg("other", 50)]),
			// back on the first branch: its whole prompt is still cached.
			req([...base, msg("a1", 300), msg("a2", 300), msg("a3", 10)]),
		]);
		expect(result.requests[1]).toMatchObject({ cachedTokens: 400, matchedRequest: 0 });
		expect(result.requests[2]).toMatchObject({ cachedTokens: 1100, freshTokens: 10, matchedRequest: 0 });
	});

	it("serves a prefix shorter than the minimum cacheable size fresh", () => {
		const requests = appendOnly([600, 600, 600]);
		const result = simulatePrefixCache(requests, { minCachedTokens: 1024 });
		expect(result.requests.map((r) => r.cachedTokens)).toEqual([0, 0, 1200]);
		expect(result.requests[1]?.matchedRequest).toBeNull();
	});

	it("expires prefixes unused for longer than the time-to-live, and a hit refreshes them", () => {
		const a = msg("a", 1000);
		const b = msg("b", 10);
		const c = msg("c", 10);
		const ttl = { ttlSeconds: 300 };
		const refreshed = simulatePrefixCache([req([a], 0), req([a, b], 200_000), req([a, b, c], 450_000)], ttl);
		expect(refreshed.requests.map((r) => r.cachedTokens)).toEqual([0, 1000, 1010]);
		const expired = simulatePrefixCache([req([a], 0), req([a, b], 301_000), req([a, b, c], 302_000)], ttl);
		// The re-sent prefix is written again, so the next request hits it.
		expect(expired.requests.map((r) => r.cachedTokens)).toEqual([0, 0, 1010]);
	});

	it("gives the same numbers incrementally as over the whole sequence", () => {
		const requests = [...appendOnly([5, 6, 7]), req([msg("m0", 5), msg("x", 9)])];
		const cache = new PrefixCache();
		const incremental = requests.map((request) => cache.observe(request));
		expect(incremental).toEqual(simulatePrefixCache(requests).requests);
		expect(cache.size).toBe(4);
	});

	it("reports a zero share for no requests and for empty prompts", () => {
		expect(simulatePrefixCache([])).toMatchObject({ promptTokens: 0, cacheShare: 0 });
		expect(simulatePrefixCache([req([]), req([])]).cacheShare).toBe(0);
	});
});

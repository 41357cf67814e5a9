import { describe, expect, it } from "vitest";
import { simulatePrefixCache } from "../../src/cost/prefix-cache.ts";
import { promptTokens } from "../../src/cost/price.ts";
import {
	calibrateRequests,
	FIXED_PREFIX_DIGEST,
	promptRequests,
	sessionRequests,
} from "../../src/cost/session-requests.ts";
import { loadSessionFile } from "../../src/session/load.ts";
import { IDENTITY_CALIBRATION } from "../../src/session/tokens.ts";
import { UsageLogBuilder, usage } from "../fixtures/cost.ts";
import { BranchBuilder, REAL_SESSIONS } from "../fixtures/session.ts";

function toolSession(): BranchBuilder {
	const b = new BranchBuilder();
	b.user("read the config");
	b.assistant("", [{ id: "c1", name: "read", args: { path: "a.ts" } }]);
	b.result("c1", "x".repeat(4000));
	b.assistant("", [{ id: "c2", name: "read", args: { path: "b.ts" } }]);
	b.result("c2", "y".repeat(400));
	b.assistant("done");
	return b;
}

describe("a session's request sequence", () => {
	it("has one request per assistant message whose prompt is the context before it", () => {
		const requests = sessionRequests(toolSession().entries);
		expect(requests.map((r) => [r.entryId, r.context.length])).toEqual([
			["e2", 1],
			["e4", 3],
			["e6", 5],
		]);
		// The same message has the same digest in every request that carries it.
		expect(requests[2]?.context.slice(0, 3)).toEqual(requests[1]?.context);
		expect(requests[1]?.context[2]?.tokens).toBeGreaterThanOrEqual(1000);
		expect(requests[0]?.modelKey).toBe("test/test-model");
	});

	it("sees a context edit as a rewrite in the middle: the cache breaks at the edited message", () => {
		const b = toolSession();
		const first = b.entries[2]!.id; // the 4,000-character read result
		b.edit(first, { content: "[folded]" });
		b.user("next");
		b.assistant("after the fold");
		const requests = sessionRequests(b.entries);
		const result = simulatePrefixCache(promptRequests(requests));
		const last = result.requests.at(-1)!;
		// Fixed prefix + user + assistant survive; the edited result and everything after it is fresh.
		expect(last.cachedMessages).toBe(3);
		expect(last.freshTokens).toBe(last.promptTokens - last.cachedTokens);
		expect(last.promptTokens).toBeLessThan(result.requests[2]!.promptTokens);
	});

	it("keys the fixed prefix by the serving model, so a model switch shares nothing", () => {
		const log = new UsageLogBuilder();
		log.user("hello");
		log.assistant("a", usage({ input: 10 }), { model: "m1" });
		log.user("again");
		log.assistant("b", usage({ input: 20 }), { model: "m2" });
		const prompts = promptRequests(sessionRequests(log.entries), { ...IDENTITY_CALIBRATION, overhead: 50 });
		expect(prompts.map((p) => p.messages[0])).toEqual([
			{ digest: `${FIXED_PREFIX_DIGEST}:openai/m1`, tokens: 50 },
			{ digest: `${FIXED_PREFIX_DIGEST}:openai/m2`, tokens: 50 },
		]);
		expect(simulatePrefixCache(prompts).requests[1]?.cachedTokens).toBe(0);
	});

	it("calibrates against the real log's recorded prompts and bounds its recorded cache share", () => {
		const session = loadSessionFile(REAL_SESSIONS.beforeCompaction);
		const requests = sessionRequests(session.entries);
		expect(requests).toHaveLength(484);
		const calibration = calibrateRequests(requests);
		expect(calibration.method).toBe("least-squares");
		const modelled = simulatePrefixCache(promptRequests(requests, calibration));
		let recordedPrompt = 0;
		let recordedRead = 0;
		for (const request of requests) {
			recordedPrompt += request.recorded ? promptTokens(request.recorded) : 0;
			recordedRead += request.recorded?.cacheRead ?? 0;
		}
		expect(Math.abs(modelled.promptTokens - recordedPrompt) / recordedPrompt).toBeLessThan(0.05);
		// An ideal positional cache serves at least what the provider really served.
		expect(modelled.cacheShare).toBeGreaterThanOrEqual(recordedRead / recordedPrompt);
		expect(modelled.cacheShare).toBeLessThan(1);
	});
});

/**
 * What `pi-fold report` prices besides the prompts: Pi's threshold
 * compaction inside the pi-fold replay (as the runtime meets it), failed
 * replies billed nothing, and output estimated when the log recorded none.
 */

import { describe, expect, it } from "vitest";
import { replayBranch } from "../../src/cost/fold-replay.ts";
import { replayNativeCompaction } from "../../src/cost/native-replay.ts";
import { modelSequence } from "../../src/cost/projected-savings.ts";
import { sessionRequests } from "../../src/cost/session-requests.ts";
import type { HostFacts } from "../../src/fold/engine/host-facts.ts";
import { resolveOptions } from "../../src/fold/options.ts";
import { tokenPrices } from "../../src/fold/policy/budget.ts";
import { estimateMessageTokens, IDENTITY_CALIBRATION } from "../../src/session/tokens.ts";
import { readTurns, SMALL_PI_COMPACTION } from "../fixtures/session.ts";

const session = readTurns;
const SETTINGS = SMALL_PI_COMPACTION;
const HOST: HostFacts = { budget: 12_000, prices: tokenPrices(undefined), fixedTokens: 0, cwd: "/" };
const pi = { settings: SETTINGS, calibration: IDENTITY_CALIBRATION, cwd: "/" };
const line = SETTINGS.contextWindow - SETTINGS.reserveTokens;
const sizes = (requests: ReturnType<typeof sessionRequests>) =>
	requests.map((request) => request.context.reduce((sum, message) => sum + message.tokens, 0));

describe("the report's pi-fold replay meets Pi's threshold", () => {
	it("compacts exactly where the native replay does when nothing folds", async () => {
		const branch = session(20, 4_000);
		const replay = await replayBranch(branch, "recorded", resolveOptions(), () => HOST, pi);
		const native = replayNativeCompaction(branch, SETTINGS, IDENTITY_CALIBRATION);
		expect(replay.compactions).toBeGreaterThan(0);
		expect(replay.compactions).toBe(native.compactions);
		expect(sizes(replay.requests)).toEqual(sizes(sessionRequests(native.branch)));
		expect(replay.summaries).toEqual(native.summaries);
		// Without Pi's threshold the same replay runs past the window.
		const unchecked = await replayBranch(branch, "recorded", resolveOptions(), () => HOST);
		expect(Math.max(...sizes(unchecked.requests))).toBeGreaterThan(SETTINGS.contextWindow);
	});

	it("lets a ladder commit stand in for the compaction, as the runtime cancels Pi's", async () => {
		// Provider tokens twice Pi's estimate: the ladder, reading the estimate, lets the window cross Pi's line.
		const calibration = { ...IDENTITY_CALIBRATION, scale: 2, charsPerToken: 2 };
		const branch = session(24, 3_000);
		const replay = await replayBranch(branch, "ladder", resolveOptions(), () => HOST, { ...pi, calibration });
		expect(replay.cancelledCompactions + replay.compactions).toBeGreaterThan(0);
		expect(replay.unattributed).toBe(0);
		// Every request after a check stays within one exchange (about 800 estimated tokens) of Pi's line.
		expect(Math.max(...sizes(replay.requests)) * calibration.scale).toBeLessThan(line + 2 * 800);
	});
});

describe("modelSequence", () => {
	it("bills a failed reply nothing and estimates output the log did not record", () => {
		const requests = sessionRequests(session(3, 400));
		const reply = session(3, 400).filter((entry) => entry.type === "message" && entry.message.role === "assistant");
		const estimate = reply[1]?.type === "message" ? estimateMessageTokens(reply[1].message) : 0;
		const all = modelSequence(requests, IDENTITY_CALIBRATION, {});
		const failed = modelSequence(
			requests.map((request, index) => (index === 1 ? { ...request, failed: true } : request)),
			IDENTITY_CALIBRATION,
			{},
		);
		expect(failed.requests).toHaveLength(all.requests.length);
		expect(failed.requests[1]).toEqual({ promptTokens: 0, cachedTokens: 0, uncachedTokens: 0, cost: 0 });
		expect(failed.cost).toBeLessThan(all.cost);
		// The fixture records no output: each reply is billed as Pi's estimate of it.
		expect(estimate).toBeGreaterThan(0);
		const withOutput = modelSequence(
			requests.map((request) => ({ ...request, outputEstimate: 0 })),
			IDENTITY_CALIBRATION,
			{},
		);
		expect(all.cost).toBeGreaterThan(withOutput.cost);
	});
});

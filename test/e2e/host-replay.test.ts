/**
 * Smoke check of the host-replay benchmark (bench/host-replay) on its smoke
 * preset: the first six user turns of the larger real log replayed in real
 * Pi 1.6.0, native and pi-fold defaults, twice. Asserted: every run
 * completes, every recorded request is made in order and answered, the
 * provider sees no request it would refuse, no rewrite goes unattributed, the
 * ledger's figures are the same on a rerun made at the same time, and
 * `pi-fold report`'s ratio (pi-fold over Pi alone, Pi's compaction replayed)
 * is within 0.05 of the host's. No timing thresholds.
 */

import { describe, expect, it } from "vitest";
import type { RunMetrics } from "../../bench/host-replay/metrics.ts";
import { PRESETS, SMOKE_SESSION } from "../../bench/host-replay/sessions.ts";
import { runSession } from "../../bench/host-replay/suite.ts";

/** Every figure of a run except the wall clock. */
function figures(run: RunMetrics) {
	const { ledger } = run;
	return {
		arm: run.arm,
		cost: ledger.cost,
		uncached: ledger.uncached,
		cached: ledger.cached,
		output: ledger.output,
		requests: ledger.requests,
		rewrites: ledger.rewrites,
		peak: ledger.peakPrompt,
		commits: run.commits,
		compactions: run.compactions,
		pastLine: run.pastLine,
	};
}

describe("host replay, smoke preset", () => {
	it("replays native and pi-fold defaults to the end with valid requests and the same ledger on a rerun", async () => {
		const preset = PRESETS.smoke;
		const window = preset?.windows[0];
		if (!preset || window === undefined) throw new Error("smoke preset missing");
		// The rerun goes side by side (two Pi processes at once): figures must not depend on timing either.
		const [first, second] = await Promise.all([
			runSession(SMOKE_SESSION, window, preset),
			runSession(SMOKE_SESSION, window, preset),
		]);
		for (const run of first.runs) {
			const where = run.arm;
			expect(run.failure, where).toBeUndefined();
			expect(run.exitCode, where).toBe(0);
			expect(run.desyncs, where).toEqual([]);
			expect(run.invalidRequests, where).toBe(0);
			expect(run.unattributedRewrites, where).toBe(0);
			// Every recorded reply was played and billed; the recorded failures were not.
			expect(run.ledger.agentRequests, where).toBe(first.expectedReplies);
			expect(run.ledger.unbilled, where).toBe(first.expectedRequests - first.expectedReplies);
		}
		// pi-fold report's estimate (Pi's compaction replayed as the baseline) agrees with the host.
		const host = (first.runs[1]?.ledger.cost ?? 0) / (first.runs[0]?.ledger.cost ?? 1);
		expect(Math.abs(first.reportRatio - host)).toBeLessThanOrEqual(0.05);
		expect(first.floor).toBeDefined();
		expect(second.runs.map(figures)).toEqual(first.runs.map(figures));
		expect(second.floor).toEqual(first.floor);
	}, 150_000);
});

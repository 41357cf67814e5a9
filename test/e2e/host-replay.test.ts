/**
 * Smoke check of the host-replay benchmark (bench/host-replay) on its smoke
 * preset: the first six user turns of the larger real log replayed in real
 * Pi 1.6.0, native and pi-fold defaults, twice, and the sanity arm (Pi
 * alone on an endless window) once. Asserted: every run completes, every
 * recorded request is made in order and answered, the provider sees no
 * request it would refuse, no rewrite goes unattributed, the ledger's figures
 * and the out-of-view scores are the same on a rerun made at the same time,
 * the sanity arm scores every reference raw (nothing compacted, nothing
 * hidden), and `pi-fold report`'s ratio (pi-fold over Pi alone, Pi's
 * compaction replayed) is within 0.05 of the host's, raw and charged. No
 * timing thresholds.
 */

import { describe, expect, it } from "vitest";
import type { RunMetrics } from "../../bench/host-replay/metrics.ts";
import { sessionOutcome } from "../../bench/host-replay/report.ts";
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
		// It leaves the sanity arm out (one run of it is the check).
		const [first, second] = await Promise.all([
			runSession(SMOKE_SESSION, window, preset),
			runSession(SMOKE_SESSION, window, { ...preset, arms: preset.arms.filter((arm) => arm.name !== "sanity") }),
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
		expect(first.runs.map((run) => run.arm)).toEqual(["native", "defaults", "sanity"]);
		// Pi alone with nothing compacted hides nothing: every reference of every reply is raw.
		const sanity = first.scores.sanity?.summary;
		expect(sanity?.replies).toBe(first.expectedReplies);
		expect(sanity?.references.raw).toBeGreaterThan(200);
		expect(sanity?.references).toMatchObject({ brief: 0, absent: 0 });
		expect(first.scores.sanity?.charge).toEqual({ requests: 0, cost: 0 });
		// pi-fold report's estimate (Pi's compaction replayed as the baseline) agrees with the host, raw and charged.
		const native = sessionOutcome(first)?.native;
		const defaults = sessionOutcome(first)?.defaults;
		if (!native || !defaults) throw new Error("native or defaults run missing");
		expect(Math.abs(first.report.raw - defaults.rawCost / native.rawCost)).toBeLessThanOrEqual(0.05);
		expect(Math.abs(first.report.charged - defaults.chargedCost / native.chargedCost)).toBeLessThanOrEqual(0.05);
		expect(first.floor).toBeDefined();
		expect(second.runs.map(figures)).toEqual(first.runs.slice(0, 2).map(figures));
		expect(second.scores).toEqual({ native: first.scores.native, defaults: first.scores.defaults });
		expect(second.floor).toEqual(first.floor);
	}, 300_000);
});

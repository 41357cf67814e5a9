/**
 * Smoke check of the agent benchmark (bench/agent) on its small preset, for
 * the native and pi-fold-defaults arms: real Pi 1.6.0, the bench extension,
 * the scripted agent and the ledger work together. Only what must hold
 * whatever the fold policy does is asserted: every stage completes, every
 * probe is answered correctly, no request is rejected, the ledger adds up.
 * No timing and no cost thresholds.
 */

import { describe, expect, it } from "vitest";
import { ARMS, PRESETS, presetWorkload } from "../../bench/agent/presets.ts";
import { runAgentBench } from "../../bench/agent/suite.ts";
import { probeSchedule } from "../../bench/agent/workload.ts";

const SMOKE_ARMS = ["native", "defaults"];

describe("agent benchmark, small preset", () => {
	it("runs native and pi-fold defaults to the end with every probe answered and a consistent ledger", async () => {
		const preset = PRESETS.small;
		if (!preset) throw new Error("small preset missing");
		const arms = ARMS.filter((arm) => SMOKE_ARMS.includes(arm.name));
		const results = await runAgentBench(preset, arms);
		const probes = probeSchedule(presetWorkload(preset, preset.seeds[0] ?? 1));
		expect(probes.length).toBeGreaterThan(0);
		for (const { arm, runs } of results) {
			expect(runs).toHaveLength(preset.seeds.length);
			for (const run of runs) {
				const where = `${arm.name} seed ${run.seed}`;
				expect(run.failure, where).toBeUndefined();
				expect(run.agentError, where).toBeUndefined();
				expect(run.exitCode, where).toBe(0);
				expect(run.stagesCompleted, where).toBe(preset.stages);
				expect(run.probes, where).toBe(probes.length);
				const lookups = run.probesSearch + run.probesSearchPeek + run.probesNavigate;
				expect(run.probesVisible + lookups + run.probesReread, where).toBe(probes.length);
				expect(run.probesMissed + run.probesUnanswered, where).toBe(0);
				expect(run.rejected, where).toBe(0);
				expect(run.unattributedRewrites, where).toBe(0);
				expect(run.ledgerProblems, where).toEqual([]);
				expect(run.totalTokens, where).toBe(run.uncachedInput + run.cacheRead + run.output);
				expect(run.floor, where).toBeDefined();
			}
		}
	}, 90_000);
});

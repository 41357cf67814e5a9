import { describe, expect, it } from "vitest";
import { parseWorkload, WORKLOAD_ENV } from "../../../bench/agent/config.ts";
import { PRESETS } from "../../../bench/agent/presets.ts";
import {
	FACT_HEX_DIGITS,
	FULL_MAX_BYTES,
	FULL_MIN_BYTES,
	factLine,
	factPattern,
	factValue,
	PROBE_FIRST_STAGE,
	PROBE_MAX_AGE,
	PROBE_MIN_AGE,
	PROBE_PATTERN,
	probeLine,
	probeSchedule,
	probeTarget,
	scaledBounds,
	stageBytes,
	stageText,
	TURN_RANGE_PATTERN,
	turnRanges,
	userMessages,
	type Workload,
} from "../../../bench/agent/workload.ts";

function workload(partial: Partial<Workload> = {}): Workload {
	return { seed: 1, stages: 16, minBytes: 1_024, maxBytes: 2_048, ...partial };
}

const stagesOf = (w: Workload) => Array.from({ length: w.stages }, (_, index) => index + 1);
const FACT_LINE = /^FACT S\d+: /;

describe("stage text", () => {
	it("is a pure function of (seed, stage)", () => {
		const w = workload();
		for (const stage of stagesOf(w)) expect(stageText(w, stage)).toBe(stageText({ ...w }, stage));
		expect(stageText(w, 3)).not.toBe(stageText(w, 4));
		expect(stageText(w, 3)).not.toBe(stageText(workload({ seed: 2 }), 3));
	});

	it("is exactly its planned size, inside the workload's byte bounds", () => {
		const bounds = [
			workload(),
			workload({ minBytes: 600, maxBytes: 700 }),
			workload({ ...scaledBounds(1), stages: 64 }),
		];
		for (const w of bounds) {
			for (const seed of [1, 2, 3]) {
				for (const stage of stagesOf(w)) {
					const sized = { ...w, seed };
					const bytes = Buffer.byteLength(stageText(sized, stage), "utf8");
					expect(bytes, `seed ${seed} stage ${stage}`).toBe(stageBytes(sized, stage));
					expect(bytes).toBeGreaterThanOrEqual(w.minBytes);
					expect(bytes).toBeLessThanOrEqual(w.maxBytes);
				}
			}
		}
	});

	it("carries exactly one fact line, its own, about 40% of the way down", () => {
		const w = workload({ stages: 24 });
		for (const stage of stagesOf(w)) {
			const lines = stageText(w, stage).split("\n");
			const facts = lines.filter((line) => FACT_LINE.test(line));
			expect(facts).toEqual([factLine(w.seed, stage)]);
			const at = lines.indexOf(factLine(w.seed, stage)) / lines.length;
			expect(at).toBeGreaterThan(0.3);
			expect(at).toBeLessThan(0.5);
			expect(factPattern(stage).exec(stageText(w, stage))?.[1]).toBe(factValue(w.seed, stage));
		}
	});

	it("starts with a header naming the stage, and a re-read says so and asks nothing", () => {
		const w = workload();
		const probed = probeSchedule(w)[0];
		expect(probed).toBeDefined();
		if (!probed) return;
		expect(stageText(w, probed.stage).split("\n")[0]).toBe(
			`repo_stage ${probed.stage} of ${w.stages}: notes for this stage follow.`,
		);
		const reread = stageText(w, probed.stage, true);
		expect(reread.split("\n")[0]).toContain("(re-read)");
		expect(PROBE_PATTERN.exec(reread)).toBeNull();
		expect(reread).toContain(factLine(w.seed, probed.stage));
	});

	it("ends a probing stage with the probe line, and the probe names its target without its fact", () => {
		const w = workload({ stages: 20 });
		for (const { stage, target } of probeSchedule(w)) {
			const text = stageText(w, stage);
			expect(text.endsWith(`\n${probeLine(target)}`)).toBe(true);
			expect(Number(PROBE_PATTERN.exec(text)?.[1])).toBe(target);
			expect(factPattern(target).test(probeLine(target))).toBe(false);
		}
		for (const stage of stagesOf(w).filter((s) => probeTarget(w.seed, s) === undefined))
			expect(PROBE_PATTERN.exec(stageText(w, stage))).toBeNull();
	});
});

describe("facts", () => {
	it("are 12 hex digits, fixed per (seed, stage)", () => {
		expect(factValue(1, 5)).toMatch(new RegExp(`^[0-9a-f]{${FACT_HEX_DIGITS}}$`));
		expect(factValue(1, 5)).toBe(factValue(1, 5));
		expect(factValue(1, 5)).not.toBe(factValue(2, 5));
		expect(factLine(3, 7)).toBe(`FACT S7: ${factValue(3, 7)}`);
	});

	it("match only their own stage and a whole value", () => {
		const value = factValue(1, 12);
		expect(factPattern(1).test(`FACT S12: ${value}`)).toBe(false);
		expect(factPattern(12).exec(`x FACT S12: ${value}\\n`)?.[1]).toBe(value);
		expect(factPattern(12).test(`FACT S12: ${value}a`)).toBe(false);
		expect(factPattern(12).test(`FACT S12: ${value.slice(0, 11)}`)).toBe(false);
		expect(factPattern(12).test(`ANSWER S12: ${value}`)).toBe(false);
	});
});

describe("probes", () => {
	it("start at stage 5, come every third stage, and ask about a stage at least three back", () => {
		const w = workload({ stages: 40 });
		const schedule = probeSchedule(w);
		expect(schedule.map((probe) => probe.stage)).toEqual([5, 8, 11, 14, 17, 20, 23, 26, 29, 32, 35, 38]);
		for (const { stage, target } of schedule) {
			expect(target).toBeGreaterThanOrEqual(1);
			expect(target).toBeLessThanOrEqual(stage - PROBE_MIN_AGE);
		}
		for (let stage = 1; stage < PROBE_FIRST_STAGE; stage++) expect(probeTarget(w.seed, stage)).toBeUndefined();
	});

	it(`reach back at most ${PROBE_MAX_AGE} stages in a long run, and some reach nearly that far`, () => {
		const ages = probeSchedule(workload({ stages: 400 })).map(({ stage, target }) => stage - target);
		expect(Math.max(...ages)).toBeLessThanOrEqual(PROBE_MAX_AGE);
		expect(Math.max(...ages)).toBeGreaterThan(PROBE_MAX_AGE - 20);
		expect(Math.min(...ages)).toBeGreaterThanOrEqual(PROBE_MIN_AGE);
	});

	it("differ between seeds but not between calls", () => {
		const targets = (seed: number) => probeSchedule(workload({ seed, stages: 64 })).map((probe) => probe.target);
		expect(targets(1)).toEqual(targets(1));
		expect(targets(1)).not.toEqual(targets(2));
	});
});

describe("stage sizes", () => {
	it("fall inside the bounds, inclusive, deterministically", () => {
		const w = workload({ minBytes: 100, maxBytes: 103, stages: 200 });
		const sizes = stagesOf(w).map((stage) => stageBytes(w, stage));
		expect(new Set(sizes)).toEqual(new Set([100, 101, 102, 103]));
		expect(stagesOf(w).map((stage) => stageBytes(w, stage))).toEqual(sizes);
	});

	it("draw each stage's band by its share, then a size inside the band", () => {
		const bands = [{ share: 0.1, minBytes: 80_000, maxBytes: 120_000 }];
		const w = workload({ stages: 1_000, minBytes: 300, maxBytes: 4_096, bands });
		const sizes = stagesOf(w).map((stage) => stageBytes(w, stage));
		const large = sizes.filter((size) => size >= 80_000);
		expect(large.length).toBeGreaterThan(70);
		expect(large.length).toBeLessThan(130);
		expect(sizes.every((size) => (size >= 300 && size <= 4_096) || (size >= 80_000 && size <= 120_000))).toBe(true);
		for (const stage of [1, 500, 1_000]) expect(stageText(w, stage)).toHaveLength(stageBytes(w, stage));
	});

	it("scale from the issue's 24–48 KB, as the presets use them", () => {
		expect(scaledBounds(1)).toEqual({ minBytes: FULL_MIN_BYTES, maxBytes: FULL_MAX_BYTES });
		expect(scaledBounds(0.75)).toEqual({ minBytes: 18_432, maxBytes: 36_864 });
		const small = PRESETS.small!;
		expect(scaledBounds(0.75)).toEqual({ minBytes: small.minBytes, maxBytes: small.maxBytes });
	});
});

describe("turns", () => {
	it("split the stages evenly, and each user message names its range as the agent reads it", () => {
		const w = workload({ stages: 180, turns: 6 });
		expect(turnRanges(w)).toEqual([
			[1, 30],
			[31, 60],
			[61, 90],
			[91, 120],
			[121, 150],
			[151, 180],
		]);
		const ranges = userMessages(w).map((text) => TURN_RANGE_PATTERN.exec(text)?.slice(1, 3).map(Number));
		expect(ranges).toEqual(turnRanges(w));
		expect(userMessages(workload({ stages: 12 }))).toHaveLength(1);
		expect(TURN_RANGE_PATTERN.exec(userMessages(workload({ stages: 12 }))[0] ?? "")?.slice(1, 3)).toEqual(["1", "12"]);
	});

	it("and bands travel to the bench extension, checked", () => {
		const bands = [{ share: 0.05, minBytes: 80, maxBytes: 120 }];
		const env = (value: unknown) => ({ [WORKLOAD_ENV]: JSON.stringify(value) });
		expect(parseWorkload(env({ ...workload(), turns: 6, bands }))).toEqual({ ...workload(), turns: 6, bands });
		expect(() => parseWorkload(env({ ...workload(), turns: 0 }))).toThrow(/turns/);
		expect(() => parseWorkload(env({ ...workload(), bands: [{ share: 1, minBytes: 5, maxBytes: 1 }] }))).toThrow(
			/bands/,
		);
	});
});

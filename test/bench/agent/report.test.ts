import { describe, expect, it } from "vitest";
import type { RunMetrics } from "../../../bench/agent/metrics.ts";
import { ARMS, PRESETS } from "../../../bench/agent/presets.ts";
import { type ArmRuns, cell, renderProblems, renderTables, renderTargets } from "../../../bench/agent/report.ts";
import { floorResult, runMetrics } from "../../fixtures/agent-bench.ts";

const PRESET = PRESETS.small!;
const fixed = (digits: number) => (value: number) => value.toFixed(digits);

/** An arm's runs, one per seed, each built from the defaults plus one override per seed. */
function arm(name: string, perSeed: Partial<RunMetrics>[]): ArmRuns {
	const spec = ARMS.find((candidate) => candidate.name === name);
	if (!spec) throw new Error(`no arm ${name}`);
	return { arm: spec, runs: perSeed.map((partial, index) => runMetrics({ arm: name, seed: index + 1, ...partial })) };
}

/** The cells of the first table row with this label in `lines`, after `from` (a heading line), if given. */
function row(lines: readonly string[], label: string, from?: string): string[] {
	const start = from === undefined ? 0 : lines.indexOf(from);
	expect(start).toBeGreaterThanOrEqual(0);
	const line = lines.slice(start).find((candidate) => candidate.startsWith(`| ${label} |`));
	expect(line, label).toBeDefined();
	return (line ?? "")
		.split(" | ")
		.slice(1)
		.map((part) => part.replace(/ \|$/, ""));
}

const RATIOS = "Ratios to native (median over median):";

describe("cell", () => {
	it("is the median with the range over an odd count", () => {
		expect(cell([3, 1, 2], fixed(0))).toBe("2 [1–3]");
		expect(cell([10, 1, 7, 3, 4], fixed(0))).toBe("4 [1–10]");
	});

	it("is the mean of the middle two over an even count", () => {
		expect(cell([4, 1, 2, 10], fixed(1))).toBe("3.0 [1.0–10.0]");
		expect(cell([1, 2], fixed(1))).toBe("1.5 [1.0–2.0]");
	});

	it("is the bare value for one seed or when the range formats to one value, and a dash for none", () => {
		expect(cell([7], fixed(0))).toBe("7");
		expect(cell([2, 2, 2], fixed(0))).toBe("2");
		expect(cell([2.01, 2.02], fixed(1))).toBe("2.0");
		expect(cell([], fixed(0))).toBe("—");
	});
});

describe("renderTables", () => {
	const arms = [
		arm("native", [
			{ cost: 1.2, wallMs: 1_000, foldCalls: 0 },
			{ cost: 0.9, wallMs: 2_000 },
			{ cost: 1, wallMs: 4_000 },
		]),
		arm("defaults", [
			{ cost: 0.5, wallMs: 5_000, commits: 40, foldCalls: 61, foldRefusals: 1, floor: floorResult({ cost: 0.25 }) },
			{ cost: 0.7, wallMs: 5_000, commits: 40, foldCalls: 61, foldRefusals: 3, floor: floorResult({ cost: 0.35 }) },
		]),
	];
	const lines = renderTables(arms);

	it("puts every arm side by side with the median and range over its seeds", () => {
		expect(lines[0]).toBe("| measure | native | defaults |");
		expect(lines[1]).toBe("| --- | ---: | ---: |");
		expect(row(lines, "Cost (tiered)")).toEqual(["$1.00 [$0.90–$1.20]", "$0.60 [$0.50–$0.70]"]);
		expect(row(lines, "Wall clock")).toEqual(["2.0 s [1.0 s–4.0 s]", "5.0 s"]);
		expect(row(lines, "Commits (context_edit boundaries)")).toEqual(["0", "40"]);
		expect(row(lines, "Total tokens")).toEqual(["1,000,000", "1,000,000"]);
	});

	it("shows fold calls with the refused ones in brackets", () => {
		expect(row(lines, "Fold calls (refused)")[1]).toBe("61 (2 [1–3])");
		expect(row(lines, "Fold calls (refused)")[0]).toBe("0 (0)");
	});

	it("shows each run's distance to its own floor, and a dash without a floor", () => {
		expect(row(lines, "Cost / floor")[1]).toBe("2.00×");
		expect(row(lines, "Floor cost")[1]).toBe("$0.30 [$0.25–$0.35]");
		const noFloor = renderTables([arm("native", [{ floor: undefined }])]);
		expect(row(noFloor, "Cost / floor")).toEqual(["—"]);
	});

	it("adds a ratio table: each arm's median over native's", () => {
		expect(row(lines, "Cost (tiered)", RATIOS)).toEqual(["1.00×", "0.60×"]);
		expect(row(lines, "Wall clock", RATIOS)).toEqual(["1.00×", "2.50×"]);
		// Rows that are not ratios stay out of it.
		const ratioLines = lines.slice(lines.indexOf(RATIOS));
		expect(ratioLines.some((line) => line.startsWith("| Commits"))).toBe(false);
		// A zero baseline gives a dash, not Infinity.
		expect(row(lines, "Stage re-reads", RATIOS)).toEqual(["—", "—"]);
	});

	it("has no ratio table without a working native arm", () => {
		expect(renderTables([arms[1]!])).not.toContain(RATIOS);
		const failedNative = arm("native", [{ failure: "boom" }]);
		expect(renderTables([failedNative, arms[1]!])).not.toContain(RATIOS);
	});

	it("marks a failed arm in every row and says why, while the others still show", () => {
		const withFailure = renderTables([...arms, arm("compactor", [{ failure: "registration threw" }])]);
		expect(row(withFailure, "Cost (tiered)")).toEqual(["$1.00 [$0.90–$1.20]", "$0.60 [$0.50–$0.70]", "failed"]);
		expect(row(withFailure, "Fold calls (refused)")[2]).toBe("failed");
		expect(row(withFailure, "Cost (tiered)", RATIOS)[2]).toBe("—");
		expect(withFailure.at(-1)).toBe("- compactor: failed: registration threw");
	});
});

describe("renderTargets", () => {
	const passing = [
		arm("native", [{ cost: 1, rereads: 3 }]),
		arm("defaults", [{ cost: 0.6, peakPrompt: 32_000, rereads: 1 }]),
		arm("epoch-marking", [{ uncachedInput: 30_000, cost: 0.9 }]),
		arm("immediate-marking", [{ uncachedInput: 100_000 }]),
	];

	it("says met for each target the medians meet", () => {
		const lines = renderTargets(passing, PRESET);
		expect(lines).toContain("- Defaults vs native cost ≤ 0.7×: 0.60× — met");
		expect(lines).toContain("- Defaults: 0 compactions: 0 — met");
		expect(lines).toContain("- Defaults: 0 long-context surcharge: 0.00 — met");
		expect(lines).toContain("- Defaults: peak ≤ 80% of the serving budget (40,000): 0.80 — met");
		expect(lines).toContain("- Defaults: 12/12 stages, every probe answered: met");
		expect(lines).toContain("- Defaults: re-reads ≤ one third of native's: 1 vs 3 — met");
		expect(lines).toContain("- Epoch vs immediate uncached input ≤ 0.35×: 0.30× — met");
		expect(lines).toContain("- Epoch cost below native: 0.90× — met");
		expect(lines).toContain("- native within 1.25× of its floor: 1.00× — met");
	});

	it("says not met when a median misses", () => {
		const missing = [
			arm("native", [{ cost: 1, rereads: 3 }]),
			arm("defaults", [
				{ cost: 0.71, peakPrompt: 32_001, compactions: 1, stagesCompleted: 11, rereads: 2 },
				{ cost: 0.75, peakPrompt: 40_000, compactions: 1, stagesCompleted: 12, probesMissed: 1, rereads: 2 },
				{
					cost: 0.8,
					peakPrompt: 40_000,
					compactions: 1,
					stagesCompleted: 12,
					rereads: 2,
					floor: floorResult({ cost: 0.5 }),
				},
			]),
		];
		const lines = renderTargets(missing, PRESET);
		expect(lines).toContain("- Defaults vs native cost ≤ 0.7×: 0.75× — not met");
		expect(lines).toContain("- Defaults: 0 compactions: 1 — not met");
		expect(lines).toContain("- Defaults: peak ≤ 80% of the serving budget (40,000): 1.00 — not met");
		expect(lines).toContain("- Defaults: re-reads ≤ one third of native's: 2 vs 3 — not met");
		// Median cost 0.75 over median floor distance of 0.71, 0.75, 1.6 → 0.75.
		expect(lines).toContain("- defaults within 1.25× of its floor: 0.75× — met");
	});

	it("says n/a for a target whose arms did not run or failed", () => {
		const lines = renderTargets([arm("native", [{ cost: 1 }]), arm("defaults", [{ failure: "boom" }])], PRESET);
		expect(lines).toContain("- Defaults vs native cost ≤ 0.7×: —× — n/a");
		expect(lines).toContain("- Epoch vs immediate uncached input ≤ 0.35×: —× — n/a");
		expect(lines).toContain("- Defaults: 12/12 stages, every probe answered: n/a");
		expect(lines).toContain("- defaults within 1.25× of its floor: —× — n/a");
	});
});

describe("renderProblems", () => {
	it("lists agent errors, ledger problems, non-zero exits and side requests, and skips failed arms", () => {
		const lines = renderProblems([
			arm("native", [{}, { agentError: "stuck", exitCode: 1, ledgerProblems: ["cost ≠ sum of its parts"] }]),
			arm("defaults", [{ sideCalls: 2 }]),
			arm("compactor", [{ failure: "boom", exitCode: 1 }]),
		]);
		expect(lines).toEqual([
			"- native seed 2: agent stopped: stuck",
			"- native seed 2: ledger: cost ≠ sum of its parts",
			"- native seed 2: Pi exited with 1",
			"- defaults seed 1: 2 tool-less side requests (answered with a fixed text)",
		]);
		expect(renderProblems([arm("native", [{}, {}])])).toEqual([]);
	});
});

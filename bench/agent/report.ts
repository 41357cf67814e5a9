/**
 * The agent benchmark's report: every arm side by side, median and range over
 * seeds, ratios to native, distance to the floor and the issue's targets, as
 * markdown built by pure functions from the runs' metrics.
 */

import { median } from "../harness.ts";
import type { RunMetrics } from "./metrics.ts";
import type { ArmSpec, Preset } from "./presets.ts";

/** Share of the serving budget the defaults arm's peak must stay under (issue 8's target). */
export const PEAK_BUDGET_SHARE = 0.8;
/** Cost ratio defaults / native the issue targets. */
export const DEFAULTS_COST_TARGET = 0.7;
/** Uncached-input ratio epoch / immediate the issue targets. */
export const EPOCH_UNCACHED_TARGET = 0.35;
/** Every arm's cost within this multiple of its floor. */
export const FLOOR_TARGET = 1.25;

const integer = new Intl.NumberFormat("en-US");

interface Row {
	label: string;
	value: (run: RunMetrics) => number | undefined;
	format: (value: number) => string;
	/** Shown in the ratio table. */
	ratio?: boolean;
}

const num = (value: number) => integer.format(Math.round(value));
const usd = (value: number) => `$${value.toFixed(value >= 100 ? 0 : 2)}`;
const share = (value: number) => value.toFixed(3);
const seconds = (value: number) => `${(value / 1000).toFixed(1)} s`;

const ROWS: readonly Row[] = [
	{ label: "Total tokens", value: (r) => r.totalTokens, format: num, ratio: true },
	{ label: "Uncached input", value: (r) => r.uncachedInput, format: num, ratio: true },
	{ label: "Cache read", value: (r) => r.cacheRead, format: num, ratio: true },
	{ label: "Output", value: (r) => r.output, format: num, ratio: true },
	{ label: "Billed calls", value: (r) => r.billedCalls, format: num, ratio: true },
	{ label: "Cost (tiered)", value: (r) => r.cost, format: usd, ratio: true },
	{ label: "Cost at flat base rates", value: (r) => r.flatCost, format: usd, ratio: true },
	{ label: "Pooled cache share", value: (r) => r.cacheShare, format: share },
	{ label: "Peak request context", value: (r) => r.peakPrompt, format: num, ratio: true },
	{ label: "Long-context surcharge", value: (r) => r.surcharge, format: usd },
	{ label: "Requests above the tier", value: (r) => r.requestsAboveTier, format: num },
	{ label: "Commits (context_edit boundaries)", value: (r) => r.commits, format: num },
	{ label: "Compactions", value: (r) => r.compactions, format: num },
	{ label: "Rewrites", value: (r) => r.rewrites, format: num },
	{ label: "Unattributed rewrites", value: (r) => r.unattributedRewrites, format: num },
	{ label: "Stage re-reads", value: (r) => r.rereads, format: num, ratio: true },
	{ label: "Re-read bytes", value: (r) => r.rereadBytes, format: num },
	{ label: "Probes asked", value: (r) => r.probes, format: num },
	{ label: "… answered visible", value: (r) => r.probesVisible, format: num },
	{ label: "… answered by one search", value: (r) => r.probesSearch, format: num },
	{ label: "… answered by search + the peek it named", value: (r) => r.probesSearchPeek, format: num },
	{ label: "… answered by peeks and listings (no search)", value: (r) => r.probesNavigate, format: num },
	{ label: "… answered by re-read", value: (r) => r.probesReread, format: num },
	{ label: "… missed or unanswered", value: (r) => r.probesMissed + r.probesUnanswered, format: num },
	{ label: "Context calls for probes", value: (r) => r.contextCalls, format: num },
	{ label: "Context calls per lookup, most", value: (r) => r.maxContextCallsPerProbe, format: num },
	{ label: "Context calls per lookup, median", value: (r) => r.medianContextCallsPerProbe, format: num },
	{
		label: "Search lookups smaller than the re-read",
		value: (r) => (r.searchAnswered > 0 ? r.searchCheaper / r.searchAnswered : undefined),
		format: (v) => `${(100 * v).toFixed(0)}%`,
	},
	{
		label: "Search lookup chars / re-read chars",
		value: (r) => (r.searchRereadChars > 0 ? r.searchChars / r.searchRereadChars : undefined),
		format: (v) => v.toFixed(3),
	},
	{ label: "Fold calls (refused)", value: (r) => r.foldCalls, format: num },
	{ label: "Stages completed", value: (r) => r.stagesCompleted, format: num },
	{ label: "Rejected requests", value: (r) => r.rejected, format: num },
	{ label: "Summarization calls", value: (r) => r.summarizationCalls, format: num },
	{ label: "Wall clock", value: (r) => r.wallMs, format: seconds, ratio: true },
	{ label: "Floor cost", value: (r) => r.floor?.cost, format: usd },
	{ label: "Floor commits", value: (r) => r.floor?.commits.length, format: num },
	{
		label: "Cost / floor",
		value: (r) => (r.floor ? r.cost / r.floor.cost : undefined),
		format: (v) => `${v.toFixed(2)}×`,
	},
];

function values(runs: readonly RunMetrics[], row: Row): number[] {
	return runs.flatMap((run) => {
		const value = row.value(run);
		return value === undefined || !Number.isFinite(value) ? [] : [value];
	});
}

/** "median [min–max]" over seeds, the bare value for one seed, "—" for none. */
export function cell(samples: readonly number[], format: (value: number) => string): string {
	if (samples.length === 0) return "—";
	const mid = format(median(samples));
	if (samples.length === 1) return mid;
	const low = format(Math.min(...samples));
	const high = format(Math.max(...samples));
	return low === high ? mid : `${mid} [${low}–${high}]`;
}

function failureOf(runs: readonly RunMetrics[]): string | undefined {
	return runs.find((run) => run.failure !== undefined)?.failure;
}

function medianOf(runs: readonly RunMetrics[], row: Row): number | undefined {
	const samples = values(runs, row);
	return samples.length === 0 ? undefined : median(samples);
}

export interface ArmRuns {
	arm: ArmSpec;
	runs: RunMetrics[];
}

function table(header: string[], rows: string[][]): string[] {
	return [
		`| ${header.join(" | ")} |`,
		`| ${header.map((_, index) => (index === 0 ? "---" : "---:")).join(" | ")} |`,
		...rows.map((row) => `| ${row.join(" | ")} |`),
	];
}

function fold(foldCalls: readonly number[], refusals: readonly number[]): string {
	return `${cell(foldCalls, num)} (${cell(refusals, num)})`;
}

/** The side-by-side table and the ratio table. */
export function renderTables(arms: readonly ArmRuns[]): string[] {
	const header = ["measure", ...arms.map(({ arm }) => arm.name)];
	const failed = arms.map(({ runs }) => failureOf(runs));
	const rows = ROWS.map((row) => [
		row.label,
		...arms.map(({ runs }, index) => {
			if (failed[index] !== undefined) return "failed";
			if (row.label.startsWith("Fold calls"))
				return fold(
					runs.map((r) => r.foldCalls),
					runs.map((r) => r.foldRefusals),
				);
			return cell(values(runs, row), row.format);
		}),
	]);
	const lines = table(header, rows);
	const native = arms.find(({ arm }) => arm.name === "native");
	if (native && failureOf(native.runs) === undefined) {
		const ratioRows = ROWS.filter((row) => row.ratio).map((row) => {
			const base = medianOf(native.runs, row);
			return [
				row.label,
				...arms.map(({ runs }, index) => {
					const value = medianOf(runs, row);
					if (failed[index] !== undefined || value === undefined || !base) return "—";
					return `${(value / base).toFixed(2)}×`;
				}),
			];
		});
		lines.push("", "Ratios to native (median over median):", "", ...table(header, ratioRows));
	}
	const failures = arms.flatMap(({ arm }, index) => (failed[index] ? [`- ${arm.name}: failed: ${failed[index]}`] : []));
	if (failures.length > 0) lines.push("", ...failures);
	return lines;
}

type Verdict = "met" | "not met" | "n/a";

function verdict(ok: boolean | undefined): Verdict {
	return ok === undefined ? "n/a" : ok ? "met" : "not met";
}

function armMedian(
	arms: readonly ArmRuns[],
	name: string,
	pick: (r: RunMetrics) => number | undefined,
): number | undefined {
	const found = arms.find(({ arm }) => arm.name === name);
	if (!found || failureOf(found.runs) !== undefined) return undefined;
	const samples = found.runs.flatMap((run) => {
		const value = pick(run);
		return value === undefined ? [] : [value];
	});
	return samples.length === 0 ? undefined : median(samples);
}

/** The targets, each with the measured figure and whether it is met. */
export function renderTargets(arms: readonly ArmRuns[], preset: Preset): string[] {
	const m = (name: string, pick: (r: RunMetrics) => number | undefined) => armMedian(arms, name, pick);
	const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || !b ? undefined : a / b);
	const both = <T>(a: T | undefined, b: T | undefined, check: (a: T, b: T) => boolean) =>
		a === undefined || b === undefined ? undefined : check(a, b);
	const costRatio = ratio(
		m("defaults", (r) => r.cost),
		m("native", (r) => r.cost),
	);
	const peak = m("defaults", (r) => r.peakPrompt);
	const budget = preset.contextWindow;
	const uncachedRatio = ratio(
		m("epoch-marking", (r) => r.uncachedInput),
		m("immediate-marking", (r) => r.uncachedInput),
	);
	const epochCost = ratio(
		m("epoch-marking", (r) => r.cost),
		m("native", (r) => r.cost),
	);
	const fmt = (value: number | undefined, digits = 2) => (value === undefined ? "—" : value.toFixed(digits));
	const lines = [
		`- Defaults vs native cost ≤ ${DEFAULTS_COST_TARGET}×: ${fmt(costRatio)}× — ${verdict(costRatio === undefined ? undefined : costRatio <= DEFAULTS_COST_TARGET)}`,
		`- Defaults: 0 compactions: ${fmt(
			m("defaults", (r) => r.compactions),
			0,
		)} — ${verdict(
			both(
				m("defaults", (r) => r.compactions),
				0,
				(a, b) => a === b,
			),
		)}`,
		`- Defaults: 0 long-context surcharge: ${fmt(m("defaults", (r) => r.surcharge))} — ${verdict(
			both(
				m("defaults", (r) => r.surcharge),
				0,
				(a, b) => a === b,
			),
		)}`,
		`- Defaults: peak ≤ ${PEAK_BUDGET_SHARE * 100}% of the serving budget (${integer.format(budget)}): ${fmt(peak === undefined ? undefined : peak / budget)} — ${verdict(peak === undefined ? undefined : peak <= PEAK_BUDGET_SHARE * budget)}`,
		`- Defaults: ${preset.stages}/${preset.stages} stages, every probe answered: ${verdict(
			both(
				m("defaults", (r) => r.stagesCompleted),
				m("defaults", (r) => r.probesMissed + r.probesUnanswered),
				(s, missed) => s === preset.stages && missed === 0,
			),
		)}`,
		`- Defaults: re-reads ≤ one third of native's: ${fmt(
			m("defaults", (r) => r.rereads),
			0,
		)} vs ${fmt(
			m("native", (r) => r.rereads),
			0,
		)} — ${verdict(
			both(
				m("defaults", (r) => r.rereads),
				m("native", (r) => r.rereads),
				(a, b) => a <= b / 3,
			),
		)}`,
		`- Epoch vs immediate uncached input ≤ ${EPOCH_UNCACHED_TARGET}×: ${fmt(uncachedRatio)}× — ${verdict(uncachedRatio === undefined ? undefined : uncachedRatio <= EPOCH_UNCACHED_TARGET)}`,
		`- Epoch cost below native: ${fmt(epochCost)}× — ${verdict(epochCost === undefined ? undefined : epochCost < 1)}`,
	];
	for (const { arm } of arms) {
		const distance = m(arm.name, (r) => (r.floor ? r.cost / r.floor.cost : undefined));
		lines.push(
			`- ${arm.name} within ${FLOOR_TARGET}× of its floor: ${fmt(distance)}× — ${verdict(distance === undefined ? undefined : distance <= FLOOR_TARGET)}`,
		);
	}
	return lines;
}

/** Per-run problems worth a line: agent errors, ledger inconsistencies, non-zero exits. */
export function renderProblems(arms: readonly ArmRuns[]): string[] {
	const lines: string[] = [];
	for (const { runs } of arms) {
		for (const run of runs) {
			const where = `${run.arm} seed ${run.seed}`;
			if (run.failure !== undefined) continue;
			if (run.agentError) lines.push(`- ${where}: agent stopped: ${run.agentError}`);
			for (const problem of run.ledgerProblems) lines.push(`- ${where}: ledger: ${problem}`);
			if (run.exitCode !== 0) lines.push(`- ${where}: Pi exited with ${run.exitCode}`);
			if (run.sideCalls > 0)
				lines.push(`- ${where}: ${run.sideCalls} tool-less side requests (answered with a fixed text)`);
		}
	}
	return lines;
}

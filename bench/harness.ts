/**
 * Benchmark harness: the shape of a benchmark, the timing loop, statistics,
 * machine facts and the markdown result file.
 *
 * Cases of one benchmark are timed interleaved (run 1 of every case, then run
 * 2 of every case, …) after one untimed warm-up each, so cases compared by a
 * ratio share the same machine state. Machine facts and the date appear only
 * in result files; nothing here reaches the model's window.
 */

import { cpus, loadavg, platform, release, totalmem } from "node:os";
import { median as medianOrUndefined } from "../src/cost/out-of-view/summary.ts";

/** What a case works on, stated in the result file. */
export interface InputSize {
	bytes?: number;
	entries?: number;
	requests?: number;
	messages?: number;
}

export interface BenchCase {
	label: string;
	input: InputSize;
	/** The timed work (awaited when it returns a promise). Its result is kept so the work cannot be optimized away. */
	run: () => unknown;
}

/** A ratio of two cases' medians, with what it means. */
export interface BenchRatio {
	numerator: string;
	denominator: string;
	meaning: string;
}

export interface PreparedBench {
	cases: BenchCase[];
	ratios?: BenchRatio[];
	/** Markdown lines of non-timing results (model outputs, sizes, checks). */
	facts?: string[];
	/** Markdown lines on how inputs were built or what is measured. */
	notes?: string[];
}

export interface Benchmark {
	name: string;
	description: string;
	/** Build inputs (untimed). Throw `BenchUnavailable` to skip or fail with a clear message. */
	prepare: () => Promise<PreparedBench> | PreparedBench;
}

/**
 * A benchmark that writes its own report instead of timing cases (e.g. the
 * agent benchmark, which runs whole Pi sessions and reports what they cost).
 * `report` returns the result file's body and name; `log` prints progress.
 */
export interface ReportBenchmark {
	name: string;
	description: string;
	presets: readonly string[];
	defaultPreset: string;
	report: (
		preset: string,
		context: { command: string; date: string; machine: MachineFacts; log: (line: string) => void },
	) => Promise<{ body: string; file: string }>;
}

/** The value a report benchmark's preset names; an unknown name fails, naming the known ones. */
export function presetOf<T>(presets: Readonly<Record<string, T>>, name: string): T {
	const preset = presets[name];
	if (preset === undefined) throw new Error(`unknown preset ${name}; known: ${Object.keys(presets).join(", ")}`);
	return preset;
}

/** A benchmark that cannot run here: `skip` is not an error (missing optional data); otherwise it fails. */
export class BenchUnavailable extends Error {
	readonly skip: boolean;
	constructor(message: string, skip: boolean) {
		super(message);
		this.name = "BenchUnavailable";
		this.skip = skip;
	}
}

/** Repetitions per case unless `--runs` says otherwise; odd, so the median is one measured run. */
export const DEFAULT_RUNS = 7;

export interface CaseTiming {
	label: string;
	input: InputSize;
	samplesMs: number[];
	medianMs: number;
	minMs: number;
	maxMs: number;
}

/** Median of a non-empty sample (mean of the middle two for an even count); NaN for an empty one. */
export function median(values: readonly number[]): number {
	return medianOrUndefined(values) ?? Number.NaN;
}

let sink: unknown;

/** Run one case: a promise (an engine commit writes its sources through the async store) is awaited. */
async function runCase(benchCase: BenchCase): Promise<unknown> {
	const result = benchCase.run();
	return result instanceof Promise ? await result : result;
}

/** Time every case `runs` times, interleaved, after one warm-up run each. */
export async function timeCases(cases: readonly BenchCase[], runs: number): Promise<CaseTiming[]> {
	for (const benchCase of cases) sink = await runCase(benchCase);
	const samples = cases.map(() => [] as number[]);
	for (let run = 0; run < runs; run++) {
		for (const [index, benchCase] of cases.entries()) {
			const start = process.hrtime.bigint();
			sink = await runCase(benchCase);
			const elapsed = Number(process.hrtime.bigint() - start) / 1e6;
			samples[index]?.push(elapsed);
		}
	}
	void sink;
	return cases.map((benchCase, index) => {
		const ms = samples[index] ?? [];
		return {
			label: benchCase.label,
			input: benchCase.input,
			samplesMs: ms,
			medianMs: median(ms),
			minMs: Math.min(...ms),
			maxMs: Math.max(...ms),
		};
	});
}

export interface MachineFacts {
	node: string;
	cpu: string;
	cores: number;
	platform: string;
	memoryGiB: number;
	/** 1-minute load average when the run started: other work on the machine skews timings. */
	loadAverage: number;
}

/** The lines a report benchmark's results file opens with after its title and summary: command, date, machine, Node and load. */
export function reportContextLines(context: { command: string; date: string; machine: MachineFacts }): string[] {
	const { machine } = context;
	return [
		`- Command: \`${context.command}\``,
		`- Date: ${context.date}`,
		`- Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.platform}`,
		`- Node: ${machine.node}; 1-minute load average at start: ${machine.loadAverage}`,
	];
}

export function machineFacts(): MachineFacts {
	const list = cpus();
	return {
		node: process.version,
		cpu: list[0]?.model.trim() ?? "unknown",
		cores: list.length,
		platform: `${platform()} ${release()} ${process.arch}`,
		memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
		loadAverage: Math.round((loadavg()[0] ?? 0) * 100) / 100,
	};
}

const integer = new Intl.NumberFormat("en-US");

export function formatInput(input: InputSize): string {
	const parts: string[] = [];
	if (input.bytes !== undefined) parts.push(`${integer.format(input.bytes)} B`);
	if (input.entries !== undefined) parts.push(`${integer.format(input.entries)} entries`);
	if (input.requests !== undefined) parts.push(`${integer.format(input.requests)} requests`);
	if (input.messages !== undefined) parts.push(`${integer.format(input.messages)} messages`);
	return parts.join(", ") || "—";
}

function ms(value: number): string {
	if (value >= 100) return value.toFixed(0);
	if (value >= 10) return value.toFixed(1);
	return value.toFixed(2);
}

export interface BenchResult {
	bench: Benchmark;
	prepared: PreparedBench;
	timings: CaseTiming[];
	runs: number;
	command: string;
	date: string;
	machine: MachineFacts;
}

/** The result file body. */
export function renderResult(result: BenchResult): string {
	const { bench, prepared, timings, machine } = result;
	const lines = [
		`# Benchmark: ${bench.name}`,
		"",
		bench.description,
		"",
		`- Command: \`${result.command}\``,
		`- Date: ${result.date}`,
		`- Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.platform}`,
		// Load at the end too: a run that starts quiet can finish under other jobs, which inflates its times.
		`- Node: ${machine.node}; 1-minute load average at start: ${machine.loadAverage}, at end: ${Math.round((loadavg()[0] ?? 0) * 100) / 100}`,
		`- Runs per case: ${result.runs} (interleaved, after one warm-up run each); times in ms`,
		"",
		"| case | input | median | min | max |",
		"| --- | --- | ---: | ---: | ---: |",
		...timings.map(
			(t) => `| ${t.label} | ${formatInput(t.input)} | ${ms(t.medianMs)} | ${ms(t.minMs)} | ${ms(t.maxMs)} |`,
		),
	];
	if (prepared.ratios && prepared.ratios.length > 0) {
		lines.push("", "Ratios (medians, same run):", "");
		for (const ratio of prepared.ratios) {
			const a = timings.find((t) => t.label === ratio.numerator);
			const b = timings.find((t) => t.label === ratio.denominator);
			if (!a || !b) continue;
			lines.push(
				`- ${ratio.meaning}: ${(a.medianMs / b.medianMs).toFixed(2)}× (${ratio.numerator} / ${ratio.denominator})`,
			);
		}
	}
	if (prepared.facts && prepared.facts.length > 0) lines.push("", "## Results", "", ...prepared.facts);
	if (prepared.notes && prepared.notes.length > 0) lines.push("", "## Method", "", ...prepared.notes);
	return `${lines.join("\n")}\n`;
}

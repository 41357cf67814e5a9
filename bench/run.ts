/**
 * `npm run bench` / `node bench/run.ts [name...] [--runs N] [--preset P]`: run
 * named benchmarks (all when none are named), print a summary, and write each
 * result to bench/results/<name>.md with the command that reproduces it.
 * `--preset` picks the size of the report benchmarks (e.g. `agent`); timed
 * ones ignore it.
 *
 * Exit code: 0 when every selected benchmark ran or was skipped for missing
 * optional data; 1 when one failed; 2 on bad arguments.
 */

import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { writeBundle } from "../scripts/bundle.ts";
import { BENCHMARKS, REPORT_BENCHMARKS } from "./benchmarks.ts";
import type { MachineFacts, ReportBenchmark } from "./harness.ts";
import { BenchUnavailable, DEFAULT_RUNS, formatInput, machineFacts, renderResult, timeCases } from "./harness.ts";

const RESULTS_DIR = fileURLToPath(new URL("./results/", import.meta.url));

function fail(message: string): never {
	process.stderr.write(`bench: ${message}\n`);
	process.exit(2);
}

const USAGE = "usage: node bench/run.ts [name...] [--runs N] [--preset P]";

function parseArgs(argv: readonly string[]): { names: string[]; runs: number; preset: string | undefined } {
	const names: string[] = [];
	let runs = DEFAULT_RUNS;
	let preset: string | undefined;
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i] ?? "";
		if (arg === "--runs" || arg.startsWith("--runs=")) {
			const value = arg === "--runs" ? argv[++i] : arg.slice("--runs=".length);
			const parsed = Number(value);
			if (!Number.isInteger(parsed) || parsed < 1)
				fail(`--runs needs a positive integer, got ${JSON.stringify(value)}`);
			runs = parsed;
		} else if (arg === "--preset" || arg.startsWith("--preset=")) {
			preset = arg === "--preset" ? argv[++i] : arg.slice("--preset=".length);
			if (!preset) fail(`--preset needs a name; ${USAGE}`);
		} else if (arg.startsWith("-")) {
			fail(`unknown option "${arg}"; ${USAGE}`);
		} else {
			names.push(arg);
		}
	}
	const known = [...BENCHMARKS, ...REPORT_BENCHMARKS].map((bench) => bench.name);
	for (const name of names) if (!known.includes(name)) fail(`unknown benchmark "${name}"; known: ${known.join(", ")}`);
	const selected = names.length > 0 ? names : known;
	for (const bench of REPORT_BENCHMARKS) {
		if (preset !== undefined && selected.includes(bench.name) && !bench.presets.includes(preset))
			fail(`unknown preset "${preset}" for ${bench.name}; known: ${bench.presets.join(", ")}`);
	}
	return { names: selected, runs, preset };
}

/** Run a report benchmark and write its file; returns false when it failed. */
async function runReport(bench: ReportBenchmark, preset: string | undefined, machine: MachineFacts): Promise<boolean> {
	const chosen = preset ?? bench.defaultPreset;
	process.stdout.write(`\n== ${bench.name} (${chosen} preset): ${bench.description}\n`);
	const command = `npm run bench -- ${bench.name}${chosen === bench.defaultPreset ? "" : ` --preset ${chosen}`}`;
	try {
		const { body, file } = await bench.report(chosen, {
			command,
			date: new Date().toISOString(),
			machine,
			log: (line) => process.stdout.write(`${line}\n`),
		});
		process.stdout.write(`\n${body}`);
		mkdirSync(RESULTS_DIR, { recursive: true });
		writeFileSync(`${RESULTS_DIR}${file}`, body);
		process.stdout.write(`   wrote ${RESULTS_DIR}${file}\n`);
		return true;
	} catch (error) {
		process.stdout.write(`   FAILED: ${error instanceof Error ? error.message : String(error)}\n`);
		return false;
	}
}

async function main(): Promise<number> {
	const { names, runs, preset } = parseArgs(process.argv.slice(2));
	const machine = machineFacts();
	// Benchmarks that start Pi load this checkout through its bundle: written from the sources as they are now.
	await writeBundle();
	let failed = 0;
	for (const name of names) {
		const report = REPORT_BENCHMARKS.find((candidate) => candidate.name === name);
		if (report) {
			if (!(await runReport(report, preset, machine))) failed++;
			continue;
		}
		const bench = BENCHMARKS.find((candidate) => candidate.name === name);
		if (!bench) continue;
		process.stdout.write(`\n== ${bench.name}: ${bench.description}\n`);
		let prepared: Awaited<ReturnType<typeof bench.prepare>>;
		try {
			prepared = await bench.prepare();
		} catch (error) {
			if (error instanceof BenchUnavailable && error.skip) {
				process.stdout.write(`   skipped: ${error.message}\n`);
				continue;
			}
			failed++;
			process.stdout.write(`   FAILED: ${error instanceof Error ? error.message : String(error)}\n`);
			continue;
		}
		const timings = await timeCases(prepared.cases, runs);
		for (const timing of timings) {
			process.stdout.write(
				`   ${timing.label.padEnd(44)} median ${timing.medianMs.toFixed(2).padStart(9)} ms  ` +
					`[${timing.minMs.toFixed(2)} … ${timing.maxMs.toFixed(2)}]  ${formatInput(timing.input)}\n`,
			);
		}
		const command = `npm run bench -- ${bench.name}${runs === DEFAULT_RUNS ? "" : ` --runs ${runs}`}`;
		const body = renderResult({
			bench,
			prepared,
			timings,
			runs,
			command,
			date: new Date().toISOString(),
			machine,
		});
		mkdirSync(RESULTS_DIR, { recursive: true });
		const file = `${RESULTS_DIR}${bench.name}.md`;
		writeFileSync(file, body);
		process.stdout.write(`   wrote ${file}\n`);
	}
	return failed > 0 ? 1 : 0;
}

process.exitCode = await main();

/**
 * `npm run bench -- store [--preset full|small]`: how the fold store grows
 * with the session (issue 28). The agent benchmark's staged workload
 * (24–48 KB results) in real Pi, pi-fold's defaults, Pi's compaction on, at
 * a 64k window, run at two scales; after each run the session file and its
 * store are measured (bytes of every blob and part list), `pi-fold gc`
 * lists what nothing references and `pi-fold verify` reads every source.
 * The targets: the store at most 1.5× the session file at the larger scale,
 * and its ratio there at most 1.25× the ratio at the smaller (linear growth).
 */

import { lstatSync, readdirSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { runVerify } from "../../src/cli/verify.ts";
import { collectGarbage } from "../../src/fold/store/gc.ts";
import { FOLD_STORE_DIR_SUFFIX } from "../../src/fold/store/store-file.ts";
import { loadSessionFile } from "../../src/session/load.ts";
import { ARMS, PRESETS } from "../agent/presets.ts";
import { runArm } from "../agent/run-arm.ts";
import { type MachineFacts, presetOf, type ReportBenchmark, reportContextLines } from "../harness.ts";

/** The two scales of a preset, smaller first, and the window they run in. */
interface StorePreset {
	name: string;
	scales: readonly [number, number];
	seed: number;
	contextWindow: number;
	maxTokens: number;
}

/** The measurement: 120 and 480 stages (~700 and ~3,000 entries) at a 64k window. */
const STORE_PRESETS: Readonly<Record<string, StorePreset>> = {
	full: { name: "full", scales: [120, 480], seed: 1, contextWindow: 64_000, maxTokens: 8_192 },
	small: { name: "small", scales: [24, 96], seed: 1, contextWindow: 64_000, maxTokens: 8_192 },
};

/** Store at most this many times the session file at the larger scale (issue 28's target). */
export const STORE_SESSION_RATIO_MAX = 1.5;
/** Ratio at the larger scale at most this many times the ratio at the smaller: linear growth. */
export const STORE_RATIO_GROWTH_MAX = 1.25;

const PREFIX = "pi-fold-active-context";

interface StoreRun {
	stages: number;
	entries: number;
	sessionBytes: number;
	storeBytes: number;
	blobs: number;
	lists: number;
	unreferencedBytes: number;
	verifyClean: boolean;
	verifyChecked: string;
	verifySeconds: number;
	runSeconds: number;
	exitCode: number | null;
}

/** Bytes and files of a store directory (blobs and part lists; nothing else is in one). */
function storeSize(dir: string): { bytes: number; blobs: number; lists: number } {
	const size = { bytes: 0, blobs: 0, lists: 0 };
	const walk = (at: string) => {
		for (const name of readdirSync(at)) {
			const path = join(at, name);
			const info = lstatSync(path);
			if (info.isDirectory()) walk(path);
			else if (info.isFile()) {
				size.bytes += info.size;
				if (name.endsWith(".parts")) size.lists++;
				else size.blobs++;
			}
		}
	};
	try {
		walk(dir);
	} catch {
		// No store: nothing was folded.
	}
	return size;
}

async function measure(preset: StorePreset, stages: number, log: (line: string) => void): Promise<StoreRun> {
	const base = PRESETS.full;
	const arm = ARMS.find((candidate) => candidate.name === "defaults");
	if (!base || !arm) throw new Error("the agent benchmark's full preset and defaults arm are gone");
	const agentPreset = {
		...base,
		name: `store-${stages}`,
		stages,
		seeds: [preset.seed],
		heldOutSeeds: [],
		contextWindow: preset.contextWindow,
		maxTokens: preset.maxTokens,
		timeoutMs: 3 * 60 * 60_000,
	};
	let measured: Omit<StoreRun, "runSeconds" | "exitCode"> | undefined;
	const started = performance.now();
	const run = await runArm(agentPreset, arm, preset.seed, async (sessionFile) => {
		const session = loadSessionFile(sessionFile);
		const dir = dirname(sessionFile);
		const store = storeSize(join(dir, `${basename(session.header.id)}${FOLD_STORE_DIR_SUFFIX}`));
		const gc = await collectGarbage(session.entries, dir, session.header.id, PREFIX, { apply: false, graceMs: 0 });
		const verifyStart = performance.now();
		const verified = await runVerify(session, PREFIX);
		const checked = verified.counts.checked;
		measured = {
			stages,
			entries: session.entries.length,
			sessionBytes: statSync(sessionFile).size,
			storeBytes: store.bytes,
			blobs: store.blobs,
			lists: store.lists,
			unreferencedBytes: gc.unreferenced.reduce((sum, file) => sum + file.bytes, 0),
			verifyClean: verified.clean,
			verifyChecked: `${checked.folds} folds, ${checked.marks} marks, ${checked.parts} parts`,
			verifySeconds: (performance.now() - verifyStart) / 1000,
		};
		if (!verified.clean) log(`   verify: ${JSON.stringify(verified.defects.slice(0, 3))}`);
	});
	if (!measured) throw new Error(`the ${stages}-stage run left no session file (exit ${run.exitCode})`);
	return { ...measured, runSeconds: (performance.now() - started) / 1000, exitCode: run.exitCode };
}

const integer = new Intl.NumberFormat("en-US");
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

function render(
	preset: StorePreset,
	runs: readonly StoreRun[],
	context: { command: string; date: string; machine: MachineFacts },
): string {
	const [small, large] = runs;
	const ratio = (run: StoreRun) => run.storeBytes / run.sessionBytes;
	const lines = [
		"# Benchmark: store",
		"",
		"How the fold store grows with the session (issue 28): the agent benchmark's staged workload in real Pi, pi-fold's defaults, Pi's compaction on, at two scales; the session file and its store measured after each run.",
		"",
		...reportContextLines(context),
		`- Workload: ${preset.scales.join(" and ")} stages of 24–48 KB (the agent benchmark's full-preset stage sizes), seed ${preset.seed}, one user turn; contextWindow ${integer.format(preset.contextWindow)}, maxTokens ${integer.format(preset.maxTokens)}; Pi's compaction on with its defaults; arm \`defaults\` (the agent never folds; the ladder does).`,
		"",
		"| stages | entries | session file | store | store ÷ session | blobs | part lists | unreferenced (gc, no grace) | verify | verify time | run time |",
		"| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |",
		...runs.map(
			(run) =>
				`| ${run.stages} | ${integer.format(run.entries)} | ${mb(run.sessionBytes)} | ${mb(run.storeBytes)} | ${ratio(run).toFixed(2)}× | ${integer.format(run.blobs)} | ${integer.format(run.lists)} | ${mb(run.unreferencedBytes)} | ${run.verifyClean ? "clean" : "DEFECTS"} (${run.verifyChecked}) | ${run.verifySeconds.toFixed(1)} s | ${run.runSeconds.toFixed(0)} s |`,
		),
		"",
		"## Targets (issue 28)",
		"",
	];
	if (small && large) {
		const growth = ratio(large) / ratio(small);
		lines.push(
			`- Store ≤ ${STORE_SESSION_RATIO_MAX}× the session file at ${large.stages} stages: ${ratio(large).toFixed(2)}× (${ratio(large) <= STORE_SESSION_RATIO_MAX ? "met" : "not met"}).`,
			`- Ratio at ${large.stages} stages ≤ ${STORE_RATIO_GROWTH_MAX}× the ratio at ${small.stages}: ${ratio(large).toFixed(2)} ÷ ${ratio(small).toFixed(2)} = ${growth.toFixed(2)}× (${growth <= STORE_RATIO_GROWTH_MAX ? "met" : "not met"}).`,
		);
	}
	lines.push(
		"",
		"## Method",
		"",
		"- Each scale is one run of `bench/agent/run-arm.ts` (real Pi 1.6.0 in print mode against the loopback provider, the append-only tripwire on); after Pi exits, the session file's size, the bytes of every file in `<session id>.pi-fold/` (apparent sizes: blobs and part lists), `pi-fold gc` with no grace period (a dry run) and `pi-fold verify` (every committed fold, pending mark and consolidation part read and hashed).",
		"- Before part lists (issue 28, measured on main 139c964 with the same workload): 710 entries → session 4.9 MB, store 24.0 MB (4.9×); 3,057 entries → session 21.2 MB, store 427.9 MB (20.2×).",
	);
	return `${lines.join("\n")}\n`;
}

export const storeBench: ReportBenchmark = {
	name: "store",
	description: "fold store size against the session file at two scales of the staged workload in real Pi",
	presets: Object.keys(STORE_PRESETS),
	defaultPreset: "small",
	async report(presetName, context) {
		const preset = presetOf(STORE_PRESETS, presetName);
		const runs: StoreRun[] = [];
		for (const stages of preset.scales) {
			const run = await measure(preset, stages, context.log);
			context.log(
				`   ${stages} stages: ${integer.format(run.entries)} entries, session ${mb(run.sessionBytes)}, store ${mb(run.storeBytes)} (${(run.storeBytes / run.sessionBytes).toFixed(2)}×), ${run.runSeconds.toFixed(0)} s`,
			);
			runs.push(run);
		}
		return {
			body: render(preset, runs, context),
			file: preset.name === "full" ? "store.md" : `store-${preset.name}.md`,
		};
	},
};

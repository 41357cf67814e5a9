/**
 * `npm run bench -- commit-cost [--preset full|small]` (issue 28.4): what the
 * ladder's long-session commit costs as the session grows, the fold store
 * beside the session file, and the whole `pi --session <file> -p hi` run in
 * real Pi with and without pi-fold on one fixture. The fixtures are
 * the runtime benchmark's (bench/runtime/fixtures.ts); the consolidation is
 * timed by bench/runtime/commit-cost.ts and the resume by
 * bench/runtime/resume.ts. The full preset resumes the 20,000-entry fixture,
 * the size issue 28's target names, whatever the largest size measured.
 * Fixtures build in time and memory linear in their size (50,000 entries:
 * seconds and a few hundred MiB of heap), so the default heap holds them.
 */

import { resolveOptions } from "../../src/fold/options.ts";
import { presetOf, type ReportBenchmark, reportContextLines } from "../harness.ts";
import { timeCommitCost } from "../runtime/commit-cost.ts";
import { foldedFixture } from "../runtime/fixtures.ts";
import { resumeTable, timeResume } from "../runtime/resume.ts";

interface CommitCostPreset {
	sizes: readonly number[];
	/** The size (one of `sizes`) whose fixture `pi -p hi` resumes. */
	resumeSize: number;
	resumeRuns: number;
}

const COMMIT_COST_PRESETS: Readonly<Record<string, CommitCostPreset>> = {
	full: { sizes: [5_000, 20_000, 50_000], resumeSize: 20_000, resumeRuns: 3 },
	small: { sizes: [1_000, 5_000], resumeSize: 5_000, resumeRuns: 3 },
};

/** The target for the whole `-p hi` run on the 20,000-entry fixture: at most this many times Pi alone. */
export const RESUME_WHOLE_RUN_MAX = 1.5;

const HOST_CWD = "/project";
const integer = new Intl.NumberFormat("en-US");
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const ms = (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(1));

export const commitCostBench: ReportBenchmark = {
	name: "commit-cost",
	description:
		"the long-session consolidation's cost and the store beside the session file, and pi -p hi on the preset's resume fixture (20,000 entries in full)",
	presets: Object.keys(COMMIT_COST_PRESETS),
	defaultPreset: "full",
	async report(presetName, context) {
		const preset = presetOf(COMMIT_COST_PRESETS, presetName);
		const options = resolveOptions();
		const rows: string[] = [];
		let resumed: ReturnType<typeof foldedFixture> | undefined;
		for (const size of preset.sizes) {
			const built = performance.now();
			const fixture = foldedFixture(size, options, HOST_CWD);
			const buildSeconds = (performance.now() - built) / 1000;
			const cost = await timeCommitCost(fixture, options, HOST_CWD);
			context.log(`   ${integer.format(size)} entries: plan ${ms(cost.planMs)} ms, store wrote ${cost.writtenBytes} B`);
			rows.push(
				`| ${integer.format(cost.generatedEntries)} | ${integer.format(cost.branchEntries)} | ${mib(cost.sessionBytes)} | ${mib(cost.storeBytes)} | ${(cost.storeBytes / cost.sessionBytes).toFixed(2)}× | ${cost.joined} folds, ${integer.format(cost.leafEntries)} entries | ${integer.format(cost.sourceBytes)} | ${integer.format(cost.writtenBytes)} | ${ms(cost.planMs)} ms | ${ms(cost.storeMs)} ms | ${buildSeconds.toFixed(0)} s |`,
			);
			if (size === preset.resumeSize) resumed = fixture;
		}
		if (!resumed) throw new Error(`commit-cost: the resume size ${preset.resumeSize} is not among the preset's sizes`);
		const resume = await timeResume(resumed.branch, preset.resumeRuns, resumed.writeStore);
		const peakRss = process.resourceUsage().maxRSS * 1024;
		const { withPiFold: fold, piAlone: alone } = resume;
		const whole = fold.seconds / alone.seconds;
		const body = [
			"# Benchmark: commit cost",
			"",
			`What the ladder's long-session commit costs as the session grows, the fold store beside the session file, and the whole \`pi -p hi\` run on the ${integer.format(preset.resumeSize)}-entry fixture (issue 28.4).`,
			"",
			...reportContextLines(context),
			"",
			"On each fixture, with every fold's source stored as the runtime stores it, a consolidation of every visible fold outside the raw tail is planned (source bytes, SHA-256, deterministic brief) and its source stored. The store writes the runs between children and a part list; the plan still reads every entry it covers (canonical lines memoized per entry):",
			"",
			"| entries (generated) | branch entries | session file | fold store | store ÷ session | consolidation | source bytes | store wrote | plan | store put | fixture build |",
			"| ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |",
			...rows,
			"",
			`Fixture build: generating the session, folding it and persisting the fold state (\`foldedFixture\`), before the store is written. Peak RSS of the benchmark's own process (every fixture, every store written; not the Pi children): ${mib(peakRss)}, on Node's default heap.`,
			"",
			`### Resume in real Pi, ${integer.format(resumed.generatedEntries)} generated entries (${integer.format(resumed.branch.length)} on the branch)`,
			"",
			`\`pi --session <file> -p hi\`, loopback provider, medians of ${resume.runs} runs per arm, arms alternating (\`bench/runtime/resume.ts\`); the pi-fold arm opens a fresh copy of the fold store written for it:`,
			"",
			...resumeTable(resume),
			"",
			"## Target (issue 28)",
			"",
			`- Whole \`pi -p hi\` run at most ${RESUME_WHOLE_RUN_MAX}× Pi alone: ${whole.toFixed(2)}× (${whole <= RESUME_WHOLE_RUN_MAX ? "met" : "not met"}).`,
			"",
		].join("\n");
		return { body, file: presetName === "full" ? "commit-cost.md" : `commit-cost-${presetName}.md` };
	},
};

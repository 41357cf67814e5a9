/**
 * `npm run bench -- agent [--preset small|full]`: every arm on every seed of
 * a preset, interleaved by seed (seed 1 of every arm, then seed 2, …), and
 * the report of bench/results/agent*.md.
 *
 * Owns the order of runs and the result file's text around the tables; the
 * runs themselves are run-arm.ts, the figures metrics.ts, the tables report.ts.
 */

import { type MachineFacts, presetOf, type ReportBenchmark } from "../harness.ts";
import { renderLookupSection } from "./lookup-targets.ts";
import { FLOOR_BRIEF_CHARS, type RunMetrics, runMetrics } from "./metrics.ts";
import {
	type ArmSpec,
	DEFAULT_PRESET,
	PRESETS,
	type Preset,
	presetArms,
	presetCard,
	presetWorkload,
} from "./presets.ts";
import { type ArmRuns, renderProblems, renderTables, renderTargets } from "./report.ts";
import { runArm } from "./run-arm.ts";
import { PROBE_MAX_AGE, probeSchedule } from "./workload.ts";

/** Run the preset's arms (all by default), seed-major. `onRun` sees each run as it finishes. */
export async function runAgentBench(
	preset: Preset,
	arms: readonly ArmSpec[] = presetArms(preset),
	onRun: (run: RunMetrics) => void = () => {},
	seeds: readonly number[] = [...preset.seeds, ...preset.heldOutSeeds],
): Promise<ArmRuns[]> {
	const byArm: ArmRuns[] = arms.map((arm) => ({ arm, runs: [] }));
	for (const seed of seeds) {
		for (const entry of byArm) {
			const metrics = runMetrics(await runArm(preset, entry.arm, seed), preset);
			entry.runs.push(metrics);
			onRun(metrics);
		}
	}
	return byArm;
}

function workloadNote(preset: Preset): string {
	const kb = (bytes: number) => `${(bytes / 1024).toFixed(bytes < 10_240 ? 1 : 0)} KB`;
	const probes = probeSchedule(presetWorkload(preset, preset.seeds[0] ?? 1)).length;
	const bands = (preset.bands ?? []).map(
		(band) => `${Math.round(100 * band.share)}% ${kb(band.minBytes)}–${kb(band.maxBytes)}`,
	);
	const rest = 100 - Math.round(100 * (preset.bands ?? []).reduce((sum, band) => sum + band.share, 0));
	const sizes = [`${bands.length > 0 ? `${rest}% ` : ""}${kb(preset.minBytes)}–${kb(preset.maxBytes)}`, ...bands].join(
		", ",
	);
	const turns = preset.turns && preset.turns > 1 ? `, split over ${preset.turns} user turns` : ", one user turn";
	const held = preset.heldOutSeeds.length > 0 ? `; held-out seeds ${preset.heldOutSeeds.join(", ")}` : "";
	return `- Workload: ${preset.stages} stages (${sizes}) of deterministic text per (seed, stage)${turns}, one planted \`FACT S<k>\` line each; ${probes} stages ask for the fact of a stage 3 to ${PROBE_MAX_AGE} back. Seeds ${preset.seeds.join(", ")}${held}.`;
}

function methodNotes(preset: Preset): string[] {
	const card = presetCard(preset);
	const tier = card.tiers[0];
	return [
		`- Host: real Pi 1.6.0 CLI, print mode, one user message per turn, \`--no-extensions -e bench/agent/extension.ts\`, isolated agent dir, offline (\`PI_OFFLINE=1\`), \`PI_FOLD_STRICT_APPEND_ONLY=1\`; the model is the loopback OpenAI-compatible provider on 127.0.0.1 driven by the scripted agent (bench/agent/agent.ts).`,
		workloadNote(preset),
		`- Model: contextWindow ${preset.contextWindow.toLocaleString("en-US")}, maxTokens ${preset.maxTokens.toLocaleString("en-US")}, models.json cost = the \`${card.name}\` card (${card.source}): $${card.base.input}/$${card.base.cacheRead}/$${card.base.output} per M input/cache read/output${tier ? `, $${tier.input}/$${tier.cacheRead}/$${tier.output} on a request whose prompt exceeds ${tier.contextAbove.toLocaleString("en-US")} tokens` : ""}.`,
		`- Pi compaction: ${preset.compactionNote}.`,
		"- Tokens: the loopback's estimate, ceil(canonical prompt characters / 4) per request (tool declarations and messages, one canonical JSON line each); output = ceil((reply text + tool names + JSON arguments) / 4).",
		`- Cache: a request reads from cache the longest common prefix with ANY earlier answered request of the same run, floored to ${preset.cacheRules.granularityTokens}-token blocks and served only from ${preset.cacheRules.minCachedTokens} tokens up (OpenAI's documented rules); every arm has its own provider, so nothing is shared across arms.`,
		"- Billing: each request at the tier its own prompt selects (uncached prompt at the input rate, cached at the cache-read rate, output at the output rate), summarization calls included; the surcharge is tiered minus flat. Rejected requests are counted, not billed.",
		"- Rewrites: an agent request whose canonical prompt does not start with the previous agent request's prompt (summarization and tool-less side calls are left out). Unattributed rewrites: the fold runtime's strict tripwire lines on Pi's stderr. Commits: runs of consecutive `context_edit` entries in the session file; compactions: `compaction` entries.",
		"- Agent (bench/agent/agent.ts, reader.ts): uses only what the request shows. It answers a probe from the fact line if the request holds it (visible); else, when the context tool's declared schema offers a `search` action with a `query`, it searches for the fact line's key (`FACT Sj:`) and answers from the hits, or calls the `peek` the first hit spells out; else it looks for a fold id (the shape learned from the peek calls briefs spell out) whose nearby text names stage j (or a range holding it), peeks it, or lists the folds inside it when the schema offers `children`, and follows the calls results spell out; else it re-reads the stage (`repo_stage {stage, reread: true}`). A lookup is every probe not answered visible; its context calls are the search, peek and listing calls it made. The marking agent asks the context tool to fold stage k−2's tool call id in the same message as the call for stage k+1. Pi's summarization requests get a fixed 2,000-character summary with no facts.",
		`- Floor (bench/agent/floor.ts): the cheapest schedule, with perfect hindsight, of the same ${preset.stages}-stage request sequence (one request per stage plus the last; no probes, peeks, re-reads or summaries) under the same token estimate, cache rules, window and rate card. A schedule is a set of commit points; a commit before request i folds every stage result but the newest into a ${FLOOR_BRIEF_CHARS}-character brief and re-bills everything from the first stage it folds, every other request is a pure append; no request may exceed the window. Each arm's floor uses its own measured prefix (first request) and stage envelope. Found by dynamic programming over the last commit point.`,
		"- Wall clock: the Pi process, start to exit, on this machine; the bench process serves the provider in the same event loop.",
	];
}

/** The runs of the given seeds, arm by arm. */
function runsOf(arms: readonly ArmRuns[], seeds: readonly number[]): ArmRuns[] {
	return arms.map(({ arm, runs }) => ({ arm, runs: runs.filter((run) => seeds.includes(run.seed)) }));
}

/** The result file's body. */
export function renderAgentReport(
	preset: Preset,
	arms: readonly ArmRuns[],
	context: { command: string; date: string; machine: MachineFacts },
): string {
	const { machine } = context;
	const tuned = runsOf(arms, preset.seeds);
	const held = runsOf(arms, preset.heldOutSeeds);
	const problems = renderProblems(arms);
	const lines = [
		`# Benchmark: agent (${preset.name} preset)`,
		"",
		"Every arm on the same staged workload in real Pi, offline, side by side.",
		"",
		`- Command: \`${context.command}\``,
		`- Date: ${context.date}`,
		`- Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.platform}`,
		`- Node: ${machine.node}; 1-minute load average at start: ${machine.loadAverage}`,
		`- Cells: median over seeds, [min–max] when seeds differ.`,
		"",
		"Arms:",
		"",
		...arms.map(({ arm }) => `- ${arm.name}: ${arm.label}`),
		"",
		`## Results (seeds ${preset.seeds.join(", ")})`,
		"",
		...renderTables(tuned),
		"",
		"## Finding facts again (issue 16 targets, every run of the arm; reported, never tuned for)",
		"",
		...renderLookupSection(tuned),
		...(held.some(({ runs }) => runs.length > 0)
			? [
					"",
					`## Held-out seeds (${preset.heldOutSeeds.join(", ")}): run after the figures above, nothing tuned to them`,
					"",
					...renderTables(held),
					"",
					"Issue 16 targets on the held-out seeds:",
					"",
					...renderLookupSection(held),
				]
			: []),
		"",
		"## Targets (issue 8; reported, never tuned for)",
		"",
		...renderTargets(tuned, preset),
		...(problems.length > 0 ? ["", "## Run problems", "", ...problems] : []),
		"",
		"## Method",
		"",
		...methodNotes(preset),
	];
	return `${lines.join("\n")}\n`;
}

export const agentBench: ReportBenchmark = {
	name: "agent",
	description: "every arm on the staged workload in real Pi (offline, loopback provider, scripted agent)",
	presets: Object.keys(PRESETS),
	defaultPreset: DEFAULT_PRESET,
	async report(presetName, context) {
		const preset = presetOf(PRESETS, presetName);
		const arms = await runAgentBench(preset, presetArms(preset), (run) => {
			const status =
				run.failure !== undefined
					? `failed: ${run.failure}`
					: `$${run.cost.toFixed(2)}, ${run.stagesCompleted}/${run.stages} stages`;
			context.log(`   ${run.arm.padEnd(18)} seed ${run.seed}: ${status} (${(run.wallMs / 1000).toFixed(1)} s)`);
		});
		return {
			body: renderAgentReport(preset, arms, context),
			file: preset.name === "full" ? "agent.md" : `agent-${preset.name}.md`,
		};
	},
};

/**
 * The host replay's result file (pure over the results): issue 27's target
 * lines on the held-out real sessions, the sanity arm's check, cost ratios
 * per set and window (charged, with raw beside), what each arm's window hid,
 * one table per session and window with every arm's figures, the run
 * problems, and the method (report-method.ts).
 */

import { median } from "../../src/cost/out-of-view/summary.ts";
import type { MachineFacts } from "../harness.ts";
import type { RunMetrics, SessionResult } from "./metrics.ts";
import { outOfViewTable, type ScoredArm, type ScoredSession } from "./out-of-view-table.ts";
import { methodNotes } from "./report-method.ts";
import type { Preset, SessionSet } from "./sessions.ts";
import { type ArmOutcome, REPORT_AGREEMENT, type SessionOutcome, targetLines } from "./targets.ts";

const count = (value: number) => value.toLocaleString("en-US");
const dollars = (value: number) => `$${value.toFixed(2)}`;
const ratio = (value: number | undefined) =>
	value === undefined || !Number.isFinite(value) ? "—" : `${value.toFixed(2)}×`;

/** Sets in the order the file reports them: the judged one first. */
const SETS: readonly SessionSet[] = ["held-out", "tuned"];

function run(result: SessionResult, arm: string): RunMetrics | undefined {
	const found = result.runs.find((candidate) => candidate.arm === arm);
	return found && found.failure === undefined ? found : undefined;
}

/** An arm's figures with its out-of-view score (undefined when it failed or was not run). */
export function armOutcome(result: SessionResult, arm: string): ArmOutcome | undefined {
	const metrics = run(result, arm);
	const score = result.scores[arm];
	if (!metrics || !score) return undefined;
	return {
		rawCost: metrics.ledger.cost,
		chargedCost: metrics.ledger.cost + score.charge.cost,
		outOfView: score.summary,
		compactions: metrics.compactions,
		pastLine: metrics.pastLine,
	};
}

/** The native and defaults outcomes of a result, with the report's estimate (undefined when a run failed). */
export function sessionOutcome(result: SessionResult): SessionOutcome | undefined {
	const native = armOutcome(result, "native");
	const defaults = armOutcome(result, "defaults");
	if (!native || !defaults) return undefined;
	return { session: result.session.name, window: result.window, native, defaults, report: result.report };
}

/** `arm` over native, charged and raw. */
function ratios(result: SessionResult, arm: string): { charged?: number; raw?: number } {
	const base = armOutcome(result, "native");
	const mine = armOutcome(result, arm);
	if (!base || !mine) return {};
	return { charged: mine.chargedCost / base.chargedCost, raw: mine.rawCost / base.rawCost };
}

function gapText(gap: number | undefined): string {
	if (gap === undefined || !Number.isFinite(gap)) return "—";
	const text = `${gap >= 0 ? "+" : "−"}${Math.abs(gap).toFixed(3)}`;
	return Math.abs(gap) <= REPORT_AGREEMENT ? text : `**${text}**`;
}

const sessionLabel = (result: SessionResult) =>
	result.session.origin === "generated" ? `${result.session.name} (generated)` : result.session.name;

/** The cost-ratio table of one set and window: charged first, raw beside, the floor and the report's estimates. */
function summaryTable(results: readonly SessionResult[], arms: readonly string[]): string[] {
	const others = arms.filter((arm) => arm !== "native" && arm !== "sanity");
	const header = [
		"| session | native cost, raw / charged |",
		...others.map((arm) => ` ${arm} / native, charged | ${arm} / native, raw |`),
		" floor / native, raw | defaults / floor, raw | report estimate, raw | estimate − host, raw | report estimate, charged | estimate − host, charged |",
	].join("");
	const rule = `| --- | ---: |${others.map(() => " ---: | ---: |").join("")} ---: | ---: | ---: | ---: | ---: | ---: |`;
	const row = (result: SessionResult) => {
		const native = armOutcome(result, "native");
		const defaults = armOutcome(result, "defaults");
		const floor = result.floor?.cost;
		const host = ratios(result, "defaults");
		return [
			sessionLabel(result),
			native ? `${dollars(native.rawCost)} / ${dollars(native.chargedCost)}` : "—",
			...others.flatMap((arm) => {
				const { charged, raw } = ratios(result, arm);
				return [ratio(charged), ratio(raw)];
			}),
			ratio(floor !== undefined && native ? floor / native.rawCost : undefined),
			ratio(floor && defaults ? defaults.rawCost / floor : undefined),
			ratio(result.report.raw),
			gapText(host.raw === undefined ? undefined : result.report.raw - host.raw),
			ratio(result.report.charged),
			gapText(host.charged === undefined ? undefined : result.report.charged - host.charged),
		];
	};
	const medianRow = (label: string, chosen: readonly SessionResult[]) => {
		const pick = (value: (result: SessionResult) => number | undefined) =>
			median(chosen.map(value).filter((item): item is number => item !== undefined && Number.isFinite(item)));
		return [
			label,
			"",
			...others.flatMap((arm) => [
				ratio(pick((result) => ratios(result, arm).charged)),
				ratio(pick((result) => ratios(result, arm).raw)),
			]),
			ratio(
				pick((result) => (result.floor?.cost ?? Number.NaN) / (armOutcome(result, "native")?.rawCost ?? Number.NaN)),
			),
			ratio(
				pick((result) => (armOutcome(result, "defaults")?.rawCost ?? Number.NaN) / (result.floor?.cost ?? Number.NaN)),
			),
			ratio(pick((result) => result.report.raw)),
			"",
			ratio(pick((result) => result.report.charged)),
			"",
		];
	};
	const real = results.filter((result) => result.session.origin === "real");
	const lines = [header, rule, ...results.map((result) => `| ${row(result).join(" | ")} |`)];
	if (real.length > 0) lines.push(`| ${medianRow("**median, real sessions**", real).join(" | ")} |`);
	lines.push(`| ${medianRow("**median, all**", results).join(" | ")} |`);
	return lines;
}

/** The sanity arm's check per session: nothing compacted, so nothing may score out of view. */
function sanityLines(results: readonly SessionResult[]): string[] {
	const lines: string[] = [];
	for (const result of results) {
		const metrics = result.runs.find((candidate) => candidate.arm === "sanity");
		if (!metrics) continue;
		const score = result.scores.sanity;
		if (metrics.failure !== undefined || !score) {
			lines.push(`- FAIL ${result.session.name}: the sanity run failed (${metrics.failure ?? "no score"})`);
			continue;
		}
		const { summary } = score;
		const pass = summary.references.absent === 0 && summary.references.brief === 0 && metrics.compactions === 0;
		lines.push(
			`- ${pass ? "PASS" : "FAIL"} ${result.session.name}: ${count(summary.replies)} replies, ${count(summary.references.raw)} references raw, ${summary.references.brief} only in a brief or summary, ${summary.references.absent} absent, ${metrics.compactions} compactions`,
		);
	}
	return lines;
}

function armTable(result: SessionResult): string[] {
	const base = armOutcome(result, "native");
	const floor = result.floor?.cost;
	const lines = [
		"| arm | cost | charged | / native, charged | / native, raw | uncached | cached | output | requests (summaries, side) | compactions | commits / rewrites | unattributed | peak prompt | past line | cost / floor | wall clock |",
		"| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
	];
	for (const metrics of result.runs) {
		const name = metrics.arm === "sanity" ? "sanity (endless window)" : metrics.arm;
		if (metrics.failure !== undefined) {
			lines.push(`| ${name} | failed: ${metrics.failure.replaceAll("|", "\\|")} |${" |".repeat(14)}`);
			continue;
		}
		const { ledger } = metrics;
		const outcome = armOutcome(result, metrics.arm);
		lines.push(
			`| ${[
				name,
				dollars(ledger.cost),
				outcome ? dollars(outcome.chargedCost) : "—",
				ratio(base && outcome ? outcome.chargedCost / base.chargedCost : undefined),
				ratio(base ? ledger.cost / base.rawCost : undefined),
				count(ledger.uncached),
				count(ledger.cached),
				count(ledger.output),
				`${count(ledger.requests)} (${ledger.summarizations}, ${ledger.sideRequests})`,
				String(metrics.compactions),
				`${metrics.commits} / ${ledger.rewrites}`,
				String(metrics.unattributedRewrites),
				count(ledger.peakPrompt),
				String(metrics.pastLine),
				ratio(floor ? ledger.cost / floor : undefined),
				`${(metrics.wallMs / 1000).toFixed(1)} s`,
			].join(" | ")} |`,
		);
	}
	if (result.floor) {
		const f = result.floor;
		lines.push(
			`| floor | ${dollars(f.cost)} | | | ${ratio(base ? f.cost / base.rawCost : undefined)} | ${count(f.uncached)} | ${count(f.cached)} | | | 0 | ${f.commits.length} / ${f.commits.length} | | ${count(f.peakPrompt)} | 0 | 1.00× | |`,
		);
	} else lines.push(`| floor | no schedule keeps every request under the line |${" |".repeat(14)}`);
	return lines;
}

function problems(results: readonly SessionResult[]): string[] {
	const lines: string[] = [];
	for (const result of results) {
		for (const metrics of result.runs) {
			const where = `${result.session.name} @${result.window / 1000}k ${metrics.arm}`;
			if (metrics.failure !== undefined) lines.push(`- ${where}: failed: ${metrics.failure}`);
			if (metrics.exitCode !== 0) lines.push(`- ${where}: Pi exited with ${metrics.exitCode}`);
			if (metrics.invalidRequests > 0)
				lines.push(`- ${where}: ${metrics.invalidRequests} request(s) refused for tool pairing`);
			for (const desync of metrics.desyncs.slice(0, 5)) lines.push(`- ${where}: ${desync}`);
			if (metrics.desyncs.length > 5) lines.push(`- ${where}: … ${metrics.desyncs.length - 5} more desyncs`);
		}
	}
	return lines;
}

/** The out-of-view rows of a result: every scored arm (the sanity arm where it ran). */
function scoredSession(result: SessionResult): ScoredSession {
	const arms: ScoredArm[] = [];
	for (const metrics of result.runs) {
		const outcome = armOutcome(result, metrics.arm);
		const score = result.scores[metrics.arm];
		if (outcome && score) arms.push({ arm: metrics.arm, outcome, charge: score.charge });
	}
	return { session: result.session, window: result.window, arms };
}

/** The result file's body. */
export function renderHostReplayReport(
	preset: Preset,
	results: readonly SessionResult[],
	context: { command: string; date: string; machine: MachineFacts; missing?: readonly string[] },
): string {
	const arms = preset.arms.map((arm) => arm.name);
	const lines = [
		`# Benchmark: host replay (${preset.name} preset)`,
		"",
		"Recorded and generated coding sessions replayed message for message in real Pi, offline, every arm side by side; every arm scored for the references its window hid, and charged for getting them back.",
		"",
		`- Command: \`${context.command}\``,
		`- Date: ${context.date}`,
		`- Machine: ${context.machine.cpu}, ${context.machine.cores} cores, ${context.machine.memoryGiB} GiB, ${context.machine.platform}`,
		`- Node: ${context.machine.node}; 1-minute load average at start: ${context.machine.loadAverage}`,
		"",
		"Arms:",
		"",
		...preset.arms.map((arm) => `- ${arm.name}: ${arm.label}`),
		"- floor: the cheapest lossless schedule with hindsight (computed, not run; raw cost)",
	];
	if (context.missing && context.missing.length > 0)
		lines.push("", "Sessions left out (not on this machine):", "", ...context.missing.map((line) => `- ${line}`));
	for (const set of SETS) {
		const outcomes = results
			.filter((result) => result.session.set === set && result.session.origin === "real")
			.flatMap((result) => sessionOutcome(result) ?? []);
		if (outcomes.length === 0) continue;
		const judged = set === "held-out";
		lines.push(
			"",
			judged
				? "## Targets (held-out real sessions: defaults against native)"
				: "## Targets on the tuned real sessions (a guide: the targets are judged on the held-out set)",
			"",
			...targetLines(`${set} real sessions`, outcomes),
		);
	}
	const sanity = sanityLines(results);
	if (sanity.length > 0)
		lines.push("", "## Sanity (Pi alone, nothing compacted: must score 0 out of view)", "", ...sanity);
	lines.push("", "## Cost ratios (charged for what each window hid; raw beside)");
	for (const set of SETS) {
		for (const window of preset.windows) {
			const chosen = results.filter((result) => result.session.set === set && result.window === window);
			if (chosen.length === 0) continue;
			lines.push("", `### ${set} set, ${count(window)}-token window`, "", ...summaryTable(chosen, arms));
		}
	}
	lines.push("", "## Out of view (what each window hid)");
	for (const set of SETS) {
		for (const window of preset.windows) {
			const chosen = results.filter((result) => result.session.set === set && result.window === window);
			if (chosen.length === 0) continue;
			lines.push(
				"",
				`### Out of view: ${set} set, ${count(window)}-token window`,
				"",
				...outOfViewTable(chosen.map(scoredSession)),
			);
		}
	}
	lines.push("", "## Sessions");
	for (const result of results) {
		lines.push(
			"",
			`### ${result.session.name} (${result.session.set}; ${result.session.shape}), ${count(result.window)} window`,
			"",
			`Priced as \`${result.model}\` (${result.rules.card.source}; cache lifetime ${result.rules.ttlSeconds ?? "unlimited"} s); tokens: Pi's estimate × ${result.calibration.scale.toFixed(3)} (${result.calibration.method === "identity" ? "no recorded usage" : `fitted on ${count(result.calibration.points)} recorded requests`}); ${count(result.expectedRequests)} recorded agent requests.${result.deviations.length > 0 ? ` Replay deviations: ${result.deviations.length} (${result.deviations.slice(0, 3).join("; ")}${result.deviations.length > 3 ? "; …" : ""}).` : ""}`,
			"",
			...armTable(result),
		);
	}
	const found = problems(results);
	if (found.length > 0) lines.push("", "## Run problems", "", ...found);
	lines.push("", "## Method", "", ...methodNotes(preset));
	return `${lines.join("\n")}\n`;
}

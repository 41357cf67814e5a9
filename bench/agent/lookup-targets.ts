/**
 * Issue 16's targets for finding a fact again, checked per arm over every
 * run (not medians: "every probe answered" must hold on each seed): every
 * probe answered, no re-read, at most two context calls for any lookup with
 * a median of one, and a probe answered by search adding fewer characters to
 * the window than the re-read it replaces.
 */

import { median } from "../harness.ts";
import type { RunMetrics } from "./metrics.ts";
import type { ArmRuns } from "./report.ts";

/** Most context calls one lookup may take. */
export const MAX_CALLS_PER_LOOKUP = 2;
/** Median context calls per lookup. */
export const MEDIAN_CALLS_PER_LOOKUP = 1;
/** Arms the targets are stated for. */
export const LOOKUP_TARGET_ARMS = ["defaults"] as const;

type Verdict = "met" | "not met" | "n/a";
const verdict = (ok: boolean | undefined): Verdict => (ok === undefined ? "n/a" : ok ? "met" : "not met");

function lines(name: string, runs: readonly RunMetrics[]): string[] {
	const ok = runs.filter((run) => run.failure === undefined);
	if (ok.length === 0) return [`- ${name}: no run — n/a`];
	const sum = (pick: (run: RunMetrics) => number) => ok.reduce((total, run) => total + pick(run), 0);
	const unanswered = sum((run) => run.probesMissed + run.probesUnanswered);
	const probes = sum((run) => run.probes);
	const rereads = sum((run) => run.rereads);
	const most = Math.max(...ok.map((run) => run.maxContextCallsPerProbe));
	const medians = ok.map((run) => run.medianContextCallsPerProbe);
	const searched = sum((run) => run.searchAnswered);
	const cheaper = sum((run) => run.searchCheaper);
	const chars = sum((run) => run.searchChars);
	const rereadChars = sum((run) => run.searchRereadChars);
	return [
		`- ${name}: every probe answered: ${probes - unanswered} of ${probes} — ${verdict(unanswered === 0)}`,
		`- ${name}: 0 re-reads: ${rereads} — ${verdict(rereads === 0)}`,
		`- ${name}: at most ${MAX_CALLS_PER_LOOKUP} context calls per lookup: most ${most} — ${verdict(most <= MAX_CALLS_PER_LOOKUP)}`,
		`- ${name}: median ${MEDIAN_CALLS_PER_LOOKUP} context call per lookup: ${medians.join(", ")} by seed (median ${median(medians)}) — ${verdict(Math.max(...medians) <= MEDIAN_CALLS_PER_LOOKUP)}`,
		`- ${name}: a search lookup adds less than the re-read it replaces: ${cheaper} of ${searched} lookups; ${chars.toLocaleString("en-US")} chars against ${rereadChars.toLocaleString("en-US")} — ${verdict(searched === 0 ? undefined : cheaper === searched)}`,
	];
}

/** The targets, for each named arm (default: the arms they are stated for) that ran. */
export function renderLookupTargets(arms: readonly ArmRuns[], names: readonly string[] = LOOKUP_TARGET_ARMS): string[] {
	return names.flatMap((name) => {
		const found = arms.find(({ arm }) => arm.name === name);
		return found ? lines(name, found.runs) : [`- ${name}: not run — n/a`];
	});
}

/** The targets for defaults, then the same lines for the arm without search, as a reference. */
export function renderLookupSection(arms: readonly ArmRuns[]): string[] {
	return [
		...renderLookupTargets(arms),
		"",
		"Without the search action (a reference, not a target):",
		"",
		...renderLookupTargets(arms, ["defaults-no-search"]),
	];
}

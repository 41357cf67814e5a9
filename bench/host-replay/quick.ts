/**
 * `npm run bench -- host-replay-quick`: the policy's tuning loop. The host
 * replay's tuned sessions at both windows, played headless in seconds: Pi's
 * own compaction replayed for native and pi-fold's engine played through the
 * branch for the defaults (`projectSavings`, what `pi-fold report` says),
 * every arm scored for what its window hid (src/cost/out-of-view/) and
 * charged for it, with the targets' lines as a guide. Tuned sessions only:
 * the held-out set is for judging (the real-Pi run), never for tuning.
 *
 * Its figures are the report's estimate, which the real-Pi run checks against
 * the host per session ("estimate − host", raw and charged).
 */

import type { ReplyScore } from "../../src/cost/out-of-view/scorer.ts";
import { chargedCost, projectSavings, type SavingsPolicy } from "../../src/cost/projected-savings.ts";
import { presetOf, type ReportBenchmark } from "../harness.ts";
import { outOfViewTable, type ScoredArm } from "./out-of-view-table.ts";
import { availableSessions, PI_COMPACTION, type ReplaySession, SESSIONS, type SessionSet } from "./sessions.ts";
import { type ArmOutcome, type SessionOutcome, targetLines } from "./targets.ts";

/** The windows the host replay runs at. */
export const QUICK_WINDOWS: readonly number[] = [200_000, 128_000];

/** The quick loop's sets: the tuned one only (the held-out set judges; tuning must not see it). */
const QUICK_PRESETS: Readonly<Record<string, SessionSet>> = { tuned: "tuned" };

export interface QuickResult {
	session: ReplaySession;
	window: number;
	outcome: SessionOutcome;
	arms: ScoredArm[];
	/** Each arm's scored replies (what the front reads the ages of hidden anchors from). */
	replies: { native: readonly ReplyScore[]; defaults: readonly ReplyScore[] };
	wallMs: number;
}

/** One session at one window, headless: native and defaults (or the ladder at another working-set share), scored and charged. */
export async function quickSession(
	session: ReplaySession,
	window: number,
	policy: SavingsPolicy = {},
): Promise<QuickResult> {
	const started = Date.now();
	const savings = await projectSavings(session.branch(), "/", { contextWindow: window, ...PI_COMPACTION }, policy);
	const line = window - PI_COMPACTION.reserveTokens;
	const arm = (which: "native" | "projected"): ArmOutcome => ({
		rawCost: savings[which].cost,
		chargedCost: chargedCost(savings[which], savings.outOfView[which]),
		outOfView: savings.outOfView[which].summary,
		compactions: savings[which].compactions,
		pastLine: savings[which].requests.filter((request) => request.promptTokens > line).length,
	});
	const native = arm("native");
	const defaults = arm("projected");
	return {
		session,
		window,
		outcome: { session: session.name, window, native, defaults },
		arms: [
			{ arm: "native", outcome: native, charge: savings.outOfView.native.charge },
			{ arm: "defaults", outcome: defaults, charge: savings.outOfView.projected.charge },
		],
		replies: { native: savings.outOfView.native.score.replies, defaults: savings.outOfView.projected.score.replies },
		wallMs: Date.now() - started,
	};
}

export const hostReplayQuickBench: ReportBenchmark = {
	name: "host-replay-quick",
	description:
		"the host replay's tuned sessions played headless (Pi's compaction replayed, pi-fold's engine): cost raw and charged for what each window hid, in seconds",
	presets: Object.keys(QUICK_PRESETS),
	defaultPreset: "tuned",
	async report(presetName, context) {
		const set = presetOf(QUICK_PRESETS, presetName);
		const { sessions, missing } = availableSessions(SESSIONS.filter((session) => session.set === set));
		for (const line of missing) context.log(`   ${line}`);
		const results: QuickResult[] = [];
		for (const session of sessions) {
			for (const window of QUICK_WINDOWS) {
				const result = await quickSession(session, window);
				results.push(result);
				context.log(`   ${session.name} @${window / 1000}k (${(result.wallMs / 1000).toFixed(1)} s)`);
			}
		}
		const real = results.filter((result) => result.session.origin === "real").map((result) => result.outcome);
		const lines = [
			`# Benchmark: host replay, quick headless loop (${set} set)`,
			"",
			"The tuning loop: each session replayed without Pi (Pi's compaction replayed for native, pi-fold's engine for the defaults, as `pi-fold report` does), scored for references its window hid and charged for them. The real-Pi run (`npm run bench -- host-replay`) checks these estimates against the host.",
			"",
			`- Command: \`${context.command}\``,
			`- Date: ${context.date}`,
			...(missing.length > 0 ? ["", "Left out (not on this machine):", "", ...missing.map((line) => `- ${line}`)] : []),
			"",
			`## Targets on the ${set} real sessions (a guide: the held-out set is judged, in the real-Pi run)`,
			"",
			...targetLines(`${set} real sessions`, real),
			"",
			"## Out of view and charged cost",
			"",
			...outOfViewTable(
				results.map((result) => ({
					session: result.session,
					window: result.window,
					arms: result.arms,
				})),
			),
			"",
			'Method: docs/benchmarks.md, "What the window hid"; src/cost/out-of-view/ (the scorer and the charge).',
		];
		return { body: `${lines.join("\n")}\n`, file: `host-replay-quick-${set}.md` };
	},
};

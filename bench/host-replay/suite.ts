/**
 * `npm run bench -- host-replay [--preset full|smoke]`: every session of a
 * preset at every window, the arms interleaved (native, then defaults, then
 * the reference, for one session and window before the next), priced by the
 * ledger, with the session's hindsight floor, and the report of
 * bench/results/host-replay.md.
 *
 * Owns the order of runs and each session's pricing setup (its model's
 * catalog card and cache lifetime); the runs are run-arm.ts, the figures
 * metrics.ts, the floor floor.ts, the text report.ts.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { catalogCacheTtlSeconds, catalogModel, catalogRateCard } from "../../src/cost/catalog.ts";
import { chargedCost, projectSavings } from "../../src/cost/projected-savings.ts";
import { calibrateRequests, sessionRequests } from "../../src/cost/session-requests.ts";
import type { RateCard } from "../../src/pricing/rate-card.ts";
import type { LoopbackModelCost } from "../../test/harness/pi-cli.ts";
import { calibratedTokenizer } from "../../test/harness/provider-rules.ts";
import { type RecordedScript, recordedScript } from "../../test/harness/recorded-session.ts";
import { modelCostOf } from "../agent/run-arm.ts";
import { presetOf, type ReportBenchmark } from "../harness.ts";
import { type FloorResult, floorSchedule } from "./floor.ts";
import type { LedgerRules } from "./ledger.ts";
import { floorInput, type ReportEstimate, type RunMetrics, runMetrics, type SessionResult } from "./metrics.ts";
import { replayPlan } from "./plan.ts";
import { renderHostReplayReport } from "./report.ts";
import { runArm } from "./run-arm.ts";
import { type RunScore, scoreRun } from "./score.ts";
import {
	availableSessions,
	CACHE_RULES,
	DEFAULT_PRESET,
	FLOOR_BRIEF_CHARS,
	FLOOR_TAIL_CHARS,
	PRESETS,
	type Preset,
	type ReplaySession,
} from "./sessions.ts";

/** The first `turns` user turns of a script (and the notes within them). */
export function firstTurns(script: RecordedScript, turns: number | undefined): RecordedScript {
	if (turns === undefined) return script;
	return { ...script, turns: script.turns.slice(0, turns), notes: script.notes.filter((note) => note.turn < turns) };
}

/** The branch up to (not including) the user message after the first `turns` turns. */
export function branchThroughTurns(branch: readonly SessionEntry[], turns: number | undefined): SessionEntry[] {
	if (turns === undefined) return [...branch];
	let users = 0;
	const end = branch.findIndex((entry) => entry.type === "message" && entry.message.role === "user" && ++users > turns);
	return end < 0 ? [...branch] : branch.slice(0, end);
}

/** What `pi-fold report` says pi-fold costs over Pi alone on this branch, window and compaction. */
export async function reportEstimate(
	branch: readonly SessionEntry[],
	window: number,
	preset: Preset,
): Promise<ReportEstimate> {
	const savings = await projectSavings(branch, "/", { contextWindow: window, ...preset.piCompaction });
	return {
		raw: savings.projected.cost / savings.native.cost,
		charged:
			chargedCost(savings.projected, savings.outOfView.projected) /
			chargedCost(savings.native, savings.outOfView.native),
	};
}

/** The session model's card and the prices the loopback model declares to Pi. */
function sessionPricing(script: RecordedScript): { key: string; card: RateCard; ttl?: number; maxTokens: number } {
	const model = script.model;
	if (!model) throw new Error("host replay: the session has no successful reply to name its model");
	const card = catalogRateCard(model.provider, model.id);
	const entry = catalogModel(model.provider, model.id);
	if (!card || !entry) throw new Error(`host replay: ${model.provider}/${model.id} is not in Pi's model catalog`);
	const ttl = catalogCacheTtlSeconds(model.provider, model.id);
	return {
		key: `${model.provider}/${model.id}`,
		card,
		...(ttl === undefined ? {} : { ttl }),
		maxTokens: entry.maxTokens,
	};
}

/**
 * What the loopback model declares as its price: the card, with the input rate
 * set to what an uncached token costs under it (the cache-write rate where the
 * provider bills fresh prompt tokens as cache writes), so pi-fold prices a
 * rewrite as the ledger bills it.
 */
export function declaredCost(card: RateCard): LoopbackModelCost {
	const cost = modelCostOf(card);
	if (card.freshInputBilling !== "cacheWrite") return cost;
	return {
		...cost,
		input: cost.cacheWrite,
		tiers: cost.tiers?.map((tier) => ({ ...tier, input: tier.cacheWrite })),
	};
}

/** Run one session at one window, every arm of the preset. */
export async function runSession(
	session: ReplaySession,
	window: number,
	preset: Preset,
	onRun: (run: RunMetrics) => void = () => {},
): Promise<SessionResult> {
	const branch = session.branch();
	const script = firstTurns(recordedScript(branch), session.turns);
	const plan = replayPlan(branch, script);
	const pricing = sessionPricing(script);
	const replayed = branchThroughTurns(branch, session.turns);
	// One estimator for the provider, its ledger and the report: the log's own calibration.
	const calibration = calibrateRequests(sessionRequests(replayed));
	const tokenizer = calibratedTokenizer(calibration.scale);
	const rules: LedgerRules = { card: pricing.card, cacheRules: CACHE_RULES, ttlSeconds: pricing.ttl, tokenizer };
	const runs: RunMetrics[] = [];
	const scores: Record<string, RunScore> = {};
	let floor: FloorResult | undefined;
	for (const arm of preset.arms) {
		// An arm with a window of its own runs once per session, with the preset's first window.
		if (arm.window !== undefined && window !== preset.windows[0]) continue;
		const armWindow = arm.window ?? window;
		const line = armWindow - preset.piCompaction.reserveTokens;
		const raw = await runArm(plan, {
			arm,
			contextWindow: armWindow,
			maxTokens: pricing.maxTokens,
			modelCost: declaredCost(pricing.card),
			piCompaction: preset.piCompaction,
			cacheRules: CACHE_RULES,
			tokenizer,
			turnTimeoutMs: preset.turnTimeoutMs,
		});
		const metrics = runMetrics(raw, rules, line);
		if (metrics.failure === undefined)
			scores[arm.name] = scoreRun(raw, plan, replayed, metrics.ledger, {
				card: pricing.card,
				scale: calibration.scale,
			});
		runs.push(metrics);
		onRun(metrics);
		if (arm.setup.kind === "native")
			floor = floorSchedule(
				floorInput(raw, rules, line, {
					briefChars: Math.round(FLOOR_BRIEF_CHARS * calibration.scale),
					tailChars: Math.round(FLOOR_TAIL_CHARS * calibration.scale),
				}),
			);
	}
	return {
		session,
		window,
		model: pricing.key,
		rules,
		expectedRequests: plan.expected.length,
		expectedReplies: plan.expected.filter((request) => "reply" in request.answer).length,
		deviations: plan.deviations,
		runs,
		...(floor ? { floor } : {}),
		calibration,
		report: await reportEstimate(replayed, window, preset),
		scores,
	};
}

/** Every session of the preset this checkout can read at every window, in order; `missing` names the others. */
export async function runHostReplay(
	preset: Preset,
	log: (line: string) => void = () => {},
): Promise<{ results: SessionResult[]; missing: string[] }> {
	const results: SessionResult[] = [];
	const { sessions, missing } = availableSessions(preset.sessions);
	for (const line of missing) log(`   ${line}`);
	for (const session of sessions) {
		for (const window of preset.windows) {
			results.push(
				await runSession(session, window, preset, (run) => {
					const status =
						run.failure ??
						`$${run.ledger.cost.toFixed(2)}, ${run.ledger.agentRequests} requests, ${run.compactions} compactions, ${run.commits} commits, ${run.desyncs.length} desyncs`;
					log(
						`   ${session.name} @${window / 1000}k ${run.arm.padEnd(10)} ${status} (${(run.wallMs / 1000).toFixed(1)} s)`,
					);
				}),
			);
		}
	}
	return { results, missing };
}

export const hostReplayBench: ReportBenchmark = {
	name: "host-replay",
	description:
		"recorded and generated sessions replayed in real Pi (offline, loopback provider): native, pi-fold defaults, a price-blind reference, the hindsight floor",
	presets: Object.keys(PRESETS),
	defaultPreset: DEFAULT_PRESET,
	async report(presetName, context) {
		const preset = presetOf(PRESETS, presetName);
		const { results, missing } = await runHostReplay(preset, context.log);
		return {
			body: renderHostReplayReport(preset, results, { ...context, missing }),
			file: preset.name === DEFAULT_PRESET ? "host-replay.md" : `host-replay-${preset.name}.md`,
		};
	},
};

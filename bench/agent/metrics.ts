/**
 * One run's figures, computed from what the run left behind (RawRun) as pure
 * functions: the ledger totals, the session file's commits and compactions,
 * the agent's probe routes and re-reads, and the run's floor.
 */

import { replyCompletionTokens } from "../../test/harness/loopback-provider.ts";
import { CHARS_PER_TOKEN } from "../../test/harness/provider-rules.ts";
import { median } from "../harness.ts";
import { type ProbeAnswer, stageCallId } from "./agent.ts";
import { type FloorResult, floorSchedule } from "./floor.ts";
import { buildLedger, type Ledger, ledgerProblems } from "./ledger.ts";
import { type Preset, presetCard } from "./presets.ts";
import type { RawRun } from "./run-arm.ts";
import { probeSchedule, STAGE_TOOL_NAME, stageText, type Workload } from "./workload.ts";

/**
 * Window size of one folded stage's brief in the floor model, in characters:
 * a one-stage tool-batch brief of this workload (header line, counts, Steps,
 * Tools and the two recall calls) is about 480 characters; 600 leaves room.
 */
export const FLOOR_BRIEF_CHARS = 600;

export interface RunMetrics {
	arm: string;
	seed: number;
	failure?: string;
	totalTokens: number;
	uncachedInput: number;
	cacheRead: number;
	output: number;
	billedCalls: number;
	cost: number;
	flatCost: number;
	cacheShare: number;
	peakPrompt: number;
	surcharge: number;
	requestsAboveTier: number;
	commits: number;
	compactions: number;
	rewrites: number;
	unattributedRewrites: number;
	rereads: number;
	rereadBytes: number;
	probes: number;
	probesVisible: number;
	/** Answered by a search result alone. */
	probesSearch: number;
	/** Answered by a search and the peek(s) it spelled out. */
	probesSearchPeek: number;
	/** Answered by peeks and listings without search. */
	probesNavigate: number;
	probesReread: number;
	probesMissed: number;
	/** Probes asked by stages the run reached that got no answer at all. */
	probesUnanswered: number;
	/** Context-tool calls made for probes (search, peek, listing). */
	contextCalls: number;
	/** Over probes that needed a lookup (not visible): the most context calls one took, and the median. */
	maxContextCallsPerProbe: number;
	medianContextCallsPerProbe: number;
	/** Probes answered by search (alone or with its peek). */
	searchAnswered: number;
	/** …of which the lookup added fewer characters than a re-read of the stage would have. */
	searchCheaper: number;
	/** Characters the search lookups added, and what re-reading those stages would have added. */
	searchChars: number;
	searchRereadChars: number;
	foldCalls: number;
	foldRefusals: number;
	stagesCompleted: number;
	stages: number;
	rejected: number;
	summarizationCalls: number;
	sideCalls: number;
	wallMs: number;
	floor?: FloorResult;
	ledgerProblems: string[];
	agentError?: string;
	exitCode: number | null;
}

/** Commits: maximal runs of consecutive `context_edit` entries (one boundary persists them together). */
export function countCommits(entryTypes: readonly string[]): number {
	let commits = 0;
	let inRun = false;
	for (const type of entryTypes) {
		const edit = type === "context_edit";
		if (edit && !inRun) commits++;
		inRun = edit;
	}
	return commits;
}

/** Floor of a run: its own measured prefix and stage envelope, the workload's stage sizes. */
export function runFloor(ledger: Ledger, workload: Workload, preset: Preset): FloorResult | undefined {
	const agentRows = ledger.rows.filter((row) => row.kind === "agent" && !row.rejected);
	const first = agentRows[0];
	const second = agentRows[1];
	if (!first || !second) return undefined;
	const payloadTokens = (stage: number) =>
		Math.ceil(JSON.stringify(stageText(workload, stage)).length / CHARS_PER_TOKEN);
	const stageTokens = Array.from({ length: workload.stages }, (_, index) => payloadTokens(index + 1));
	const envelope = Math.max(0, second.promptTokens - first.promptTokens - (stageTokens[0] ?? 0));
	const stageCall = { toolCalls: [{ id: stageCallId(1), name: STAGE_TOOL_NAME, arguments: { stage: 1 } }] };
	return floorSchedule({
		prefixTokens: first.promptTokens,
		envelopeTokens: envelope,
		stageTokens,
		briefTokens: Math.ceil(FLOOR_BRIEF_CHARS / CHARS_PER_TOKEN),
		outputTokens: replyCompletionTokens(stageCall),
		windowTokens: preset.contextWindow,
		cacheRules: preset.cacheRules,
		card: presetCard(preset),
	});
}

/** Context calls per lookup and what search lookups cost against the re-reads they replace. */
export function lookupFigures(answers: readonly ProbeAnswer[]) {
	const lookups = answers.filter((answer) => answer.route !== "visible");
	const calls = lookups.map((answer) => answer.contextCalls);
	const searched = answers.filter((answer) => answer.route === "search" || answer.route === "search+peek");
	return {
		contextCalls: calls.reduce((sum, count) => sum + count, 0),
		maxContextCallsPerProbe: calls.length > 0 ? Math.max(...calls) : 0,
		medianContextCallsPerProbe: calls.length > 0 ? median(calls) : 0,
		searchAnswered: searched.length,
		searchCheaper: searched.filter((answer) => answer.contextChars < answer.rereadChars).length,
		searchChars: searched.reduce((sum, answer) => sum + answer.contextChars, 0),
		searchRereadChars: searched.reduce((sum, answer) => sum + answer.rereadChars, 0),
	};
}

export function runMetrics(raw: RawRun, preset: Preset): RunMetrics {
	const ledger = buildLedger(raw.requests, presetCard(preset));
	const { usage } = ledger.price;
	const agent = raw.agent;
	const workload = agent.workload;
	const reached = probeSchedule(workload).filter((probe) => probe.stage <= agent.stagesCompleted);
	const routes = (route: string) => agent.answers.filter((answer) => answer.route === route).length;
	const floor = raw.failure === undefined ? runFloor(ledger, workload, preset) : undefined;
	return {
		arm: raw.arm,
		seed: raw.seed,
		...(raw.failure !== undefined ? { failure: raw.failure } : {}),
		totalTokens: usage.input + usage.cacheRead + usage.output,
		uncachedInput: usage.input,
		cacheRead: usage.cacheRead,
		output: usage.output,
		billedCalls: ledger.billedCalls,
		cost: ledger.price.tiered.total,
		flatCost: ledger.price.flat.total,
		cacheShare: ledger.price.cacheShare,
		peakPrompt: ledger.peakPrompt,
		surcharge: ledger.price.surcharge,
		requestsAboveTier: ledger.price.requestsAboveTier,
		commits: countCommits(raw.entryTypes),
		compactions: raw.entryTypes.filter((type) => type === "compaction").length,
		rewrites: ledger.rewrites,
		unattributedRewrites: raw.unattributedRewrites,
		rereads: agent.rereads,
		rereadBytes: agent.rereadBytes,
		probes: reached.length,
		probesVisible: routes("visible"),
		probesSearch: routes("search"),
		probesSearchPeek: routes("search+peek"),
		probesNavigate: routes("navigate"),
		probesReread: routes("re-read"),
		probesMissed: routes("missed"),
		probesUnanswered: reached.length - agent.answers.length,
		...lookupFigures(agent.answers),
		foldCalls: agent.foldCalls,
		foldRefusals: agent.foldRefusals.length,
		stagesCompleted: agent.stagesCompleted,
		stages: workload.stages,
		rejected: ledger.rejected,
		summarizationCalls: ledger.summarizationCalls,
		sideCalls: ledger.sideCalls,
		wallMs: raw.wallMs,
		...(floor ? { floor } : {}),
		ledgerProblems: ledgerProblems(ledger),
		...(agent.error !== undefined ? { agentError: agent.error } : {}),
		exitCode: raw.exitCode,
	};
}

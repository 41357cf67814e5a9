import { describe, expect, it } from "vitest";
import { type AgentState, initialAgentState, type ProbeAnswer, stageCallId } from "../../../bench/agent/agent.ts";
import { floorSchedule } from "../../../bench/agent/floor.ts";
import { buildLedger } from "../../../bench/agent/ledger.ts";
import { countCommits, FLOOR_BRIEF_CHARS, lookupFigures, runFloor, runMetrics } from "../../../bench/agent/metrics.ts";
import { PRESETS, type Preset, presetCard } from "../../../bench/agent/presets.ts";
import type { RawRun } from "../../../bench/agent/run-arm.ts";
import { STAGE_TOOL_NAME, stageText, type Workload } from "../../../bench/agent/workload.ts";
import { type RecordedSpec, recordedRequests } from "../../fixtures/agent-bench.ts";
import { replyCompletionTokens } from "../../harness/loopback-provider.ts";

const PRESET: Preset = { ...PRESETS.small!, stages: 8 };
const WORKLOAD: Workload = { seed: 1, stages: 8, minBytes: PRESET.minBytes, maxBytes: PRESET.maxBytes };
const stageTokens = (stage: number) => Math.ceil(JSON.stringify(stageText(WORKLOAD, stage)).length / 4);

function rawRun(partial: Omit<Partial<RawRun>, "agent"> & { agent?: Partial<AgentState> } = {}): RawRun {
	const { agent, ...rest } = partial;
	return {
		arm: "defaults",
		seed: 1,
		requests: recordedRequests([
			{ promptTokens: 3_000, completionTokens: 10 },
			{ promptTokens: 3_000 + stageTokens(1) + 40, cachedTokens: 2_944, completionTokens: 10 },
		]),
		agent: { ...initialAgentState(WORKLOAD, false), stagesCompleted: 8, finished: true, ...agent },
		entryTypes: [],
		unattributedRewrites: 0,
		exitCode: 0,
		timedOut: false,
		stderrTail: "",
		wallMs: 1_234,
		...rest,
	};
}

describe("countCommits", () => {
	it("counts maximal runs of context_edit entries, one boundary each", () => {
		expect(countCommits([])).toBe(0);
		expect(countCommits(["message", "message"])).toBe(0);
		expect(countCommits(["context_edit"])).toBe(1);
		expect(
			countCommits([
				"message",
				"context_edit",
				"context_edit",
				"message",
				"context_edit",
				"compaction",
				"context_edit",
			]),
		).toBe(3);
		expect(countCommits(["context_edit", "context_edit", "context_edit"])).toBe(1);
	});
});

describe("runFloor", () => {
	const expected = (prefixTokens: number, envelopeTokens: number) =>
		floorSchedule({
			prefixTokens,
			envelopeTokens,
			stageTokens: Array.from({ length: WORKLOAD.stages }, (_, index) => stageTokens(index + 1)),
			briefTokens: Math.ceil(FLOOR_BRIEF_CHARS / 4),
			outputTokens: replyCompletionTokens({
				toolCalls: [{ id: stageCallId(1), name: STAGE_TOOL_NAME, arguments: { stage: 1 } }],
			}),
			windowTokens: PRESET.contextWindow,
			cacheRules: PRESET.cacheRules,
			card: presetCard(PRESET),
		});

	it("takes the prefix from the first billed agent request and the envelope from the second", () => {
		const specs: RecordedSpec[] = [
			{ kind: "side", promptTokens: 500 },
			{ promptTokens: 3_100, rejected: true },
			{ promptTokens: 3_000 },
			{ kind: "summarization", promptTokens: 9_000 },
			{ promptTokens: 3_000 + stageTokens(1) + 40 },
		];
		const floor = runFloor(buildLedger(recordedRequests(specs), presetCard(PRESET)), WORKLOAD, PRESET);
		expect(floor).toBeDefined();
		expect(floor).toEqual(expected(3_000, 40));
		expect(floor).not.toEqual(expected(500, 40));
		expect(floor?.requests).toBe(WORKLOAD.stages + 1);
	});

	it("never uses a negative envelope", () => {
		const specs: RecordedSpec[] = [{ promptTokens: 3_000 }, { promptTokens: 3_000 + stageTokens(1) - 25 }];
		expect(runFloor(buildLedger(recordedRequests(specs), presetCard(PRESET)), WORKLOAD, PRESET)).toEqual(
			expected(3_000, 0),
		);
	});

	it("has no floor without two agent requests to measure", () => {
		const specs: RecordedSpec[] = [{ promptTokens: 3_000 }, { kind: "summarization", promptTokens: 4_000 }];
		expect(runFloor(buildLedger(recordedRequests(specs), presetCard(PRESET)), WORKLOAD, PRESET)).toBeUndefined();
	});
});

describe("runMetrics", () => {
	it("adds the ledger's totals up", () => {
		const metrics = runMetrics(rawRun(), PRESET);
		expect(metrics.uncachedInput).toBe(3_000 + (3_000 + stageTokens(1) + 40 - 2_944));
		expect(metrics.cacheRead).toBe(2_944);
		expect(metrics.output).toBe(20);
		expect(metrics.totalTokens).toBe(metrics.uncachedInput + metrics.cacheRead + metrics.output);
		expect(metrics.billedCalls).toBe(2);
		expect(metrics.peakPrompt).toBe(3_000 + stageTokens(1) + 40);
		expect(metrics.cacheShare).toBeCloseTo(2_944 / (6_000 + stageTokens(1) + 40), 12);
		expect(metrics.ledgerProblems).toEqual([]);
		expect(metrics.floor).toBeDefined();
		expect(metrics.wallMs).toBe(1_234);
	});

	it("counts commits and compactions from the session's entry types", () => {
		const entryTypes = ["message", "context_edit", "context_edit", "message", "compaction", "context_edit", "message"];
		const metrics = runMetrics(rawRun({ entryTypes }), PRESET);
		expect(metrics.commits).toBe(2);
		expect(metrics.compactions).toBe(1);
	});

	it("splits the probes the run reached by route and counts the unanswered ones", () => {
		// Probes at stages 5 and 8; the run answered stage 5's by a search and its peek and never answered stage 8's.
		const agent: Partial<AgentState> = {
			stagesCompleted: 8,
			answers: [{ stage: 5, target: 2, route: "search+peek", contextCalls: 2, contextChars: 900, rereadChars: 1_000 }],
			rereads: 1,
			rereadBytes: 700,
			foldCalls: 5,
			foldRefusals: ["Error: no"],
		};
		const metrics = runMetrics(rawRun({ agent }), PRESET);
		expect(metrics.probes).toBe(2);
		expect(metrics.probesSearchPeek).toBe(1);
		expect(metrics.probesVisible + metrics.probesSearch + metrics.probesNavigate).toBe(0);
		expect(metrics.probesReread + metrics.probesMissed).toBe(0);
		expect(metrics.probesUnanswered).toBe(1);
		expect(metrics).toMatchObject({ contextCalls: 2, maxContextCallsPerProbe: 2, medianContextCallsPerProbe: 2 });
		expect(metrics).toMatchObject({ searchAnswered: 1, searchCheaper: 1, searchChars: 900, searchRereadChars: 1_000 });
		expect(metrics).toMatchObject({ rereads: 1, rereadBytes: 700, foldCalls: 5, foldRefusals: 1 });
		// A run that stopped at stage 6 never reached stage 8's probe.
		const stopped = runMetrics(rawRun({ agent: { ...agent, stagesCompleted: 6, error: "stuck" } }), PRESET);
		expect(stopped.probes).toBe(1);
		expect(stopped.probesUnanswered).toBe(0);
		expect(stopped.stagesCompleted).toBe(6);
		expect(stopped.stages).toBe(8);
		expect(stopped.agentError).toBe("stuck");
	});

	it("takes the most and the median context calls over lookups only, and compares each search lookup with its re-read", () => {
		const answer = (route: ProbeAnswer["route"], contextCalls: number, contextChars = 0): ProbeAnswer => ({
			stage: 9,
			target: 3,
			route,
			contextCalls,
			contextChars,
			rereadChars: 500,
		});
		const figures = lookupFigures([
			answer("visible", 0),
			answer("visible", 0),
			answer("search", 1, 400),
			answer("search", 1, 600),
			answer("navigate", 3, 9_000),
		]);
		expect(figures).toMatchObject({ contextCalls: 5, maxContextCallsPerProbe: 3, medianContextCallsPerProbe: 1 });
		expect(figures).toMatchObject({
			searchAnswered: 2,
			searchCheaper: 1,
			searchChars: 1_000,
			searchRereadChars: 1_000,
		});
	});

	it("computes no floor for an arm that failed to register", () => {
		const metrics = runMetrics(rawRun({ failure: "boom" }), PRESET);
		expect(metrics.failure).toBe("boom");
		expect(metrics.floor).toBeUndefined();
	});
});

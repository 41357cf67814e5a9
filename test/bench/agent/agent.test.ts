import { describe, expect, it } from "vitest";
import {
	agentStep,
	CONTEXT_TOOL_NAME,
	childNamingStage,
	classifyRequest,
	fixedSummary,
	foldNamingStage,
	HEADER_PEEK_BYTES,
	initialAgentState,
	MAX_PEEKS_PER_PROBE,
	nextPeekOffset,
	PI_SUMMARIZATION_PROMPT_START,
	SUMMARY_CHARS,
	stageCallId,
	stepsCover,
	visibleFact,
} from "../../../bench/agent/agent.ts";
import {
	factLine,
	factValue,
	probeLine,
	probeSchedule,
	probeTarget,
	STAGE_TOOL_NAME,
	stageText,
	type Workload,
} from "../../../bench/agent/workload.ts";
import {
	assistantMessage,
	briefBlock,
	type FakeTool,
	foldId,
	peekResult,
	play,
	replaceResult,
	requestBody,
	systemMessage,
	toolMessage,
	userMessage,
} from "../../fixtures/agent-bench.ts";
import type { ScriptedReply, ScriptedToolCall } from "../../harness/loopback-provider.ts";
import type { WireMessage } from "../../harness/provider-rules.ts";

const WORKLOAD: Workload = { seed: 1, stages: 8, minBytes: 400, maxBytes: 600 };
/** Stage 5 is the first to ask; its target is one of stages 1–2, fixed by the seed. */
const PROBE_STAGE = 5;
const TARGET = probeTarget(WORKLOAD.seed, PROBE_STAGE)!;
const TARGET_FACT = factValue(WORKLOAD.seed, TARGET);

const calls = (replies: readonly ScriptedReply[]) => replies.flatMap((reply) => reply.toolCalls ?? []);
const peeksOf = (replies: readonly ScriptedReply[]) =>
	calls(replies)
		.filter((call) => call.name === CONTEXT_TOOL_NAME && call.arguments.action === "peek")
		.map((call) => call.arguments);
const untilAnswered = (count: number) => (state: { answers: readonly unknown[] }) => state.answers.length >= count;

/** An active_context fake: peeks answered by id (and offset), folds "Folded.". */
function contextTool(peeks: Record<string, (call: ScriptedToolCall) => string>): FakeTool {
	return (call) => {
		if (call.arguments.action !== "peek") return "Folded.";
		const answer = peeks[String(call.arguments.id)];
		return answer ? answer(call) : `Error: unknown fold ${String(call.arguments.id)}`;
	};
}

/** A peek of a tool-batch fold holding the target stage: its source is the stage result as canonical JSON. */
const targetSource = (id: string) => () =>
	peekResult({ id, text: JSON.stringify({ content: stageText(WORKLOAD, TARGET) }) });

describe("stepsCover", () => {
	it("reads single labels and en-dash ranges, and nothing between them", () => {
		expect(stepsCover("stage 1–11, stage 13", 12)).toBe(false);
		expect(stepsCover("stage 1–11, stage 13", 11)).toBe(true);
		expect(stepsCover("stage 1–11, stage 13", 1)).toBe(true);
		expect(stepsCover("stage 1–11, stage 13", 13)).toBe(true);
		expect(stepsCover("stage 1–11, stage 13", 14)).toBe(false);
	});

	it("matches whole numbers, not digits of another label", () => {
		expect(stepsCover("stage 12", 12)).toBe(true);
		expect(stepsCover("stage 12", 1)).toBe(false);
		expect(stepsCover("stage 12", 2)).toBe(false);
	});

	it("ignores the (+n more) tail of a bounded list and labels of other words", () => {
		expect(stepsCover("stage 3, stage 5–9 (+4 more)", 7)).toBe(true);
		expect(stepsCover("stage 3, stage 5–9 (+4 more)", 4)).toBe(false);
		expect(stepsCover("step 4, phase 2–6", 4)).toBe(false);
	});
});

describe("visibleFact", () => {
	it("reads the fact value from any message, string or text parts", () => {
		const messages: WireMessage[] = [
			userMessage("go"),
			toolMessage("call_stage_1", "notes"),
			{ role: "tool", tool_call_id: "call_stage_2", content: [{ type: "text", text: `x\n${factLine(1, 2)}\ny` }] },
		];
		expect(visibleFact(messages, 2)).toBe(factValue(1, 2));
	});

	it("finds nothing when only the probe, an answer or another stage's fact is there", () => {
		const messages: WireMessage[] = [
			toolMessage("call_stage_5", probeLine(1)),
			assistantMessage({ text: `ANSWER S1: ${factValue(1, 1)}` }),
			toolMessage("call_stage_12", factLine(1, 12)),
		];
		expect(visibleFact(messages, 1)).toBeUndefined();
		expect(visibleFact(messages, 12)).toBe(factValue(1, 12));
	});
});

describe("foldNamingStage", () => {
	it("returns the tool-batch fold whose Steps line names the stage, by its peek call", () => {
		const messages = [toolMessage("call_stage_3", briefBlock({ id: foldId(3), steps: "stage 3" }))];
		expect(foldNamingStage(messages, 3)).toEqual({ id: foldId(3), consolidation: false });
		expect(foldNamingStage(messages, 4)).toBeUndefined();
	});

	it("marks a consolidation or chapter, whose source is read by its header first", () => {
		const consolidation = briefBlock({ id: foldId(9), kind: "consolidation", steps: "stage 1–6, stage 8" });
		const chapter = briefBlock({ id: foldId(10), kind: "chapter", steps: "stage 10–12" });
		const messages = [toolMessage("call_stage_1", consolidation), toolMessage("call_stage_10", chapter)];
		expect(foldNamingStage(messages, 4)).toEqual({ id: foldId(9), consolidation: true });
		expect(foldNamingStage(messages, 11)).toEqual({ id: foldId(10), consolidation: true });
		expect(foldNamingStage(messages, 7)).toBeUndefined();
	});

	it("tells several briefs in one message apart", () => {
		const text = [
			briefBlock({ id: foldId(1), steps: "stage 1" }),
			briefBlock({ id: foldId(2), steps: "stage 2" }),
		].join("\n");
		expect(foldNamingStage([toolMessage("call_stage_1", text)], 2)).toEqual({ id: foldId(2), consolidation: false });
	});

	it("ignores a brief whose recall call addresses another tool", () => {
		const text = briefBlock({ id: foldId(1), steps: "stage 1", toolName: "other_context" });
		expect(foldNamingStage([toolMessage("call_stage_1", text)], 1)).toBeUndefined();
	});
});

describe("childNamingStage", () => {
	const header = peekResult({
		id: foldId(9),
		kind: "consolidation",
		text: "{",
		nextOffset: 1,
		children: [
			{ id: foldId(1), steps: "stage 1–4" },
			{ id: foldId(5), steps: "stage 5" },
			{ id: foldId(6), steps: "stage 6, stage 8" },
			{ id: foldId(7) },
		],
	});

	it("names the child holding the stage; one covering several stages is itself a consolidation", () => {
		expect(childNamingStage(header, 5)).toEqual({ id: foldId(5), consolidation: false });
		expect(childNamingStage(header, 3)).toEqual({ id: foldId(1), consolidation: true });
		expect(childNamingStage(header, 8)).toEqual({ id: foldId(6), consolidation: true });
	});

	it("finds nothing for a stage no child lists, or without a child list", () => {
		expect(childNamingStage(header, 7)).toBeUndefined();
		expect(childNamingStage(peekResult({ id: foldId(5), text: "{}" }), 5)).toBeUndefined();
	});
});

describe("nextPeekOffset", () => {
	it("reads the offset of the More follows call, and nothing at the end of the source", () => {
		expect(nextPeekOffset(peekResult({ id: foldId(1), text: "{", nextOffset: 48_000 }))).toBe(48_000);
		expect(nextPeekOffset(peekResult({ id: foldId(1), text: "{" }))).toBeUndefined();
		expect(nextPeekOffset(peekResult({ id: foldId(1), text: "{", nextOffset: 10, toolName: "other" }))).toBeUndefined();
	});
});

describe("request kinds and the fixed summary", () => {
	it("tells Pi's summarizer from side requests and agent requests", () => {
		expect(classifyRequest(requestBody("summarization", "summarize"))).toBe("summarization");
		expect(classifyRequest(requestBody("side", "brief this"))).toBe("side");
		expect(classifyRequest(requestBody("agent", "go"))).toBe("agent");
		const developer = { role: "developer", content: [{ type: "text", text: `${PI_SUMMARIZATION_PROMPT_START} …` }] };
		expect(classifyRequest({ messages: [developer, userMessage("x")], tools: [{}] })).toBe("summarization");
		// The summarizer's prompt in a user message is not the summarizer.
		expect(classifyRequest({ messages: [userMessage(PI_SUMMARIZATION_PROMPT_START)], tools: [{}] })).toBe("agent");
		expect(classifyRequest({ messages: [systemMessage("You are a coding agent.")] })).toBe("side");
	});

	it("is a fixed 2,000-character summary that keeps no fact", () => {
		const summary = fixedSummary();
		expect(summary).toHaveLength(SUMMARY_CHARS);
		expect(summary).toBe(fixedSummary());
		expect(summary.startsWith("## Goal\n")).toBe(true);
		expect(summary).not.toMatch(/FACT S\d+:/);
	});
});

describe("agentStep: the stage loop", () => {
	it("calls every stage in order, answers every probe from what is visible, and finishes", () => {
		const { state, replies } = play(WORKLOAD, initialAgentState(WORKLOAD, false));
		const stageCalls = calls(replies).filter((call) => call.name === STAGE_TOOL_NAME);
		expect(stageCalls.map((call) => call.arguments)).toEqual(
			Array.from({ length: WORKLOAD.stages }, (_, index) => ({ stage: index + 1 })),
		);
		expect(stageCalls.map((call) => call.id)).toEqual(
			stageCalls.map((call) => stageCallId(Number(call.arguments.stage))),
		);
		expect(state.finished).toBe(true);
		expect(state.error).toBeUndefined();
		expect(state.stagesCompleted).toBe(WORKLOAD.stages);
		const schedule = probeSchedule(WORKLOAD);
		expect(state.answers).toEqual(schedule.map(({ stage, target }) => ({ stage, target, route: "visible", peeks: 0 })));
		for (const { target } of schedule)
			expect(
				replies.some((reply) => reply.text?.includes(`ANSWER S${target}: ${factValue(WORKLOAD.seed, target)}`)),
			).toBe(true);
		expect(replies.at(-1)?.text?.endsWith(`All ${WORKLOAD.stages} stages done.`)).toBe(true);
		expect(replies.at(-1)?.toolCalls).toBeUndefined();
		expect(state.foldCalls).toBe(0);
		expect(agentStep(state, []).reply).toEqual({ text: "Done." });
	});

	it("answers the probe in the same reply that calls the next stage", () => {
		const { replies } = play(WORKLOAD, initialAgentState(WORKLOAD, false), { until: untilAnswered(1) });
		const last = replies.at(-1);
		expect(last?.text).toBe(`ANSWER S${TARGET}: ${TARGET_FACT}`);
		expect(last?.toolCalls?.map((call) => call.arguments)).toEqual([{ stage: PROBE_STAGE + 1 }]);
	});

	it("stops with an error when the result of its last call is not in the request", () => {
		const first = agentStep(initialAgentState(WORKLOAD, false), [userMessage("go")]);
		const next = agentStep(first.state, [userMessage("go"), assistantMessage(first.reply)]);
		expect(next.state.finished).toBe(true);
		expect(next.state.error).toContain(stageCallId(1));
		expect(next.reply.text).toMatch(/^Stopping: /);
	});
});

describe("agentStep: a probe whose fact is not visible", () => {
	it("re-reads the stage when no brief names it", () => {
		const { state, replies } = play(WORKLOAD, initialAgentState(WORKLOAD, false), {
			window: replaceResult(stageCallId(TARGET), "[result omitted]"),
			until: untilAnswered(1),
		});
		const reread = replies.at(-2);
		expect(reread?.toolCalls?.map((call) => [call.name, call.arguments])).toEqual([
			[STAGE_TOOL_NAME, { stage: TARGET, reread: true }],
		]);
		expect(state.answers).toEqual([{ stage: PROBE_STAGE, target: TARGET, route: "re-read", peeks: 0 }]);
		expect(state.rereads).toBe(1);
		expect(state.rereadBytes).toBe(stageText(WORKLOAD, TARGET, true).length);
		expect(replies.at(-1)?.text).toBe(`ANSWER S${TARGET}: ${TARGET_FACT}`);
	});

	it("counts a probe missed, and says unknown, when not even the re-read shows the fact", () => {
		const hideFact = (messages: readonly WireMessage[]) =>
			messages.map((message) =>
				message.role === "tool" && String(message.content).includes(factLine(WORKLOAD.seed, TARGET))
					? { ...message, content: "[omitted]" }
					: message,
			);
		const { state, replies } = play(WORKLOAD, initialAgentState(WORKLOAD, false), {
			window: hideFact,
			until: untilAnswered(1),
		});
		expect(state.answers[0]?.route).toBe("missed");
		expect(replies.at(-1)?.text).toBe(`ANSWER S${TARGET}: unknown`);
		expect(replies.at(-1)?.toolCalls?.[0]?.arguments).toEqual({ stage: PROBE_STAGE + 1 });
	});

	it("peeks the tool-batch fold whose brief names the stage, whole, and answers from the peek", () => {
		const id = foldId(TARGET);
		const { state, replies } = play(WORKLOAD, initialAgentState(WORKLOAD, false), {
			window: replaceResult(stageCallId(TARGET), briefBlock({ id, steps: `stage ${TARGET}` })),
			context: contextTool({ [id]: targetSource(id) }),
			until: untilAnswered(1),
		});
		expect(peeksOf(replies)).toEqual([{ action: "peek", id }]);
		expect(state.answers).toEqual([{ stage: PROBE_STAGE, target: TARGET, route: "peek", peeks: 1 }]);
		expect(state.rereads).toBe(0);
		expect(state.peekBytes).toBe(targetSource(id)().length);
		expect(replies.at(-1)?.text).toBe(`ANSWER S${TARGET}: ${TARGET_FACT}`);
	});

	it("peeks a consolidation by its header first, then the child the header names", () => {
		const outer = foldId(100);
		const inner = foldId(101);
		const holder = foldId(TARGET);
		const header = (id: string, children: { id: string; steps: string }[]) => (call: ScriptedToolCall) => {
			expect(call.arguments).toMatchObject({ offset: 0, bytes: HEADER_PEEK_BYTES });
			return peekResult({ id, kind: "consolidation", text: "{", nextOffset: 1, children });
		};
		const { state, replies } = play(WORKLOAD, initialAgentState(WORKLOAD, false), {
			window: replaceResult(stageCallId(TARGET), briefBlock({ id: outer, kind: "consolidation", steps: "stage 1–4" })),
			context: contextTool({
				[outer]: header(outer, [
					{ id: foldId(102), steps: "stage 3–4" },
					{ id: inner, steps: "stage 1–2" },
				]),
				[inner]: header(inner, [
					{ id: holder, steps: `stage ${TARGET}` },
					{ id: foldId(103), steps: `stage ${3 - TARGET}` },
				]),
				[holder]: targetSource(holder),
			}),
			until: untilAnswered(1),
		});
		expect(peeksOf(replies)).toEqual([
			{ action: "peek", id: outer, offset: 0, bytes: HEADER_PEEK_BYTES },
			{ action: "peek", id: inner, offset: 0, bytes: HEADER_PEEK_BYTES },
			{ action: "peek", id: holder },
		]);
		expect(state.answers).toEqual([{ stage: PROBE_STAGE, target: TARGET, route: "peek", peeks: 3 }]);
	});

	it("pages on at the offset a peek names when the fact is not in the slice", () => {
		const id = foldId(TARGET);
		const { state, replies } = play(WORKLOAD, initialAgentState(WORKLOAD, false), {
			window: replaceResult(stageCallId(TARGET), briefBlock({ id, steps: `stage ${TARGET}` })),
			context: contextTool({
				[id]: (call) =>
					call.arguments.offset === undefined
						? peekResult({ id, text: '{"filler":true}', nextOffset: 48_000 })
						: targetSource(id)(),
			}),
			until: untilAnswered(1),
		});
		expect(peeksOf(replies)).toEqual([
			{ action: "peek", id },
			{ action: "peek", id, offset: 48_000 },
		]);
		expect(state.answers[0]).toMatchObject({ route: "peek", peeks: 2 });
	});

	it("re-reads the stage when the fold's source ends without the fact", () => {
		const id = foldId(TARGET);
		const { state, replies } = play(WORKLOAD, initialAgentState(WORKLOAD, false), {
			window: replaceResult(stageCallId(TARGET), briefBlock({ id, steps: `stage ${TARGET}` })),
			context: contextTool({ [id]: () => peekResult({ id, text: "{}" }) }),
			until: untilAnswered(1),
		});
		expect(replies.at(-2)?.toolCalls?.[0]?.arguments).toEqual({ stage: TARGET, reread: true });
		expect(state.answers).toEqual([{ stage: PROBE_STAGE, target: TARGET, route: "re-read", peeks: 1 }]);
	});

	it(`gives up on a fold after ${MAX_PEEKS_PER_PROBE} peeks and re-reads`, () => {
		const id = foldId(TARGET);
		const { state, replies } = play(WORKLOAD, initialAgentState(WORKLOAD, false), {
			window: replaceResult(stageCallId(TARGET), briefBlock({ id, steps: `stage ${TARGET}` })),
			context: contextTool({
				[id]: (call) => peekResult({ id, text: "{}", nextOffset: Number(call.arguments.offset ?? 0) + 100 }),
			}),
			until: untilAnswered(1),
		});
		expect(peeksOf(replies)).toHaveLength(MAX_PEEKS_PER_PROBE);
		expect(state.answers).toEqual([
			{ stage: PROBE_STAGE, target: TARGET, route: "re-read", peeks: MAX_PEEKS_PER_PROBE },
		]);
	});
});

describe("agentStep: the marking agent", () => {
	const isFold = (call: ScriptedToolCall) => call.name === CONTEXT_TOOL_NAME && call.arguments.action === "fold";

	it("folds stage k−2 by its call id in the reply that calls stage k+1", () => {
		const { state, replies } = play(WORKLOAD, initialAgentState(WORKLOAD, true));
		expect(state.finished).toBe(true);
		for (const reply of replies) {
			const stageCall = reply.toolCalls?.find((call) => call.name === STAGE_TOOL_NAME && !call.arguments.reread);
			const folds = (reply.toolCalls ?? []).filter(isFold);
			const next = Number(stageCall?.arguments.stage);
			if (!stageCall || next <= 3) {
				expect(folds).toEqual([]);
				continue;
			}
			expect(folds.map((call) => call.arguments)).toEqual([{ action: "fold", ids: [stageCallId(next - 3)] }]);
		}
		// After stages 3 … N−1: none after the last, which calls nothing.
		expect(state.foldCalls).toBe(WORKLOAD.stages - 3);
		expect(calls(replies).filter(isFold)).toHaveLength(WORKLOAD.stages - 3);
		expect(state.foldRefusals).toEqual([]);
	});

	it("does not fold a stage whose call is no longer in the request", () => {
		// Once stage 2 is in, stage 1's call and result are gone from the window (as after a compaction).
		const dropStageOne = (messages: readonly WireMessage[]) =>
			messages.some((message) => message.tool_call_id === stageCallId(2))
				? messages.filter(
						(message) =>
							message.tool_call_id !== stageCallId(1) &&
							!(message.tool_calls ?? []).some((call) => call.id === stageCallId(1)),
					)
				: [...messages];
		const { replies } = play(WORKLOAD, initialAgentState(WORKLOAD, true), {
			window: dropStageOne,
			until: (state) => state.stagesCompleted >= 4,
		});
		const folded = calls(replies)
			.filter(isFold)
			.map((call) => call.arguments.ids);
		expect(folded).toEqual([[stageCallId(2)]]);
	});

	it("records the first line of every fold the runtime refuses", () => {
		const refuse: FakeTool = (call) =>
			call.arguments.action === "fold" ? "Error: fold refused: the batch is still open\nDetails follow." : "ok";
		const { state } = play(WORKLOAD, initialAgentState(WORKLOAD, true), { context: refuse });
		expect(state.foldRefusals).toHaveLength(state.foldCalls);
		expect(state.foldRefusals[0]).toBe("Error: fold refused: the batch is still open");
	});

	it("never folds when it is not a marking agent", () => {
		const { state, replies } = play(WORKLOAD, initialAgentState(WORKLOAD, false));
		expect(calls(replies).filter(isFold)).toEqual([]);
		expect(state.foldCalls).toBe(0);
	});
});

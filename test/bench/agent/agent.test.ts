import { describe, expect, it } from "vitest";
import {
	agentStep,
	classifyRequest,
	fixedSummary,
	initialAgentState,
	MAX_CONTEXT_CALLS_PER_PROBE,
	PI_SUMMARIZATION_PROMPT_START,
	probeQuery,
	SUMMARY_CHARS,
	stageCallId,
} from "../../../bench/agent/agent.ts";
import {
	contextTool,
	findLead,
	foldIdShape,
	moreCall,
	readingTexts,
	spelledCalls,
	spelledPeekCall,
	visibleFact,
} from "../../../bench/agent/reader.ts";
import {
	factLine,
	factValue,
	probeLine,
	probeTarget,
	STAGE_TOOL_NAME,
	stageText,
	type Workload,
} from "../../../bench/agent/workload.ts";
import {
	assistantMessage,
	batchBrief,
	CONTEXT_TOOL,
	consolidationBrief,
	contextDeclaration,
	type FakeTool,
	foldId,
	play,
	replaceResult,
	STAGE_DECLARATION,
	systemMessage,
	toolMessage,
	userMessage,
} from "../../fixtures/agent-bench.ts";
import type { ScriptedReply, ScriptedToolCall } from "../../harness/loopback-provider.ts";

const WORKLOAD: Workload = { seed: 1, stages: 8, minBytes: 400, maxBytes: 600 };
/** Stage 5 is the first to ask; its target is one of stages 1–2, fixed by the seed. */
const PROBE_STAGE = 5;
const TARGET = probeTarget(WORKLOAD.seed, PROBE_STAGE) ?? 0;
const TARGET_FACT = factValue(WORKLOAD.seed, TARGET);
const NO_SEARCH = [STAGE_DECLARATION, contextDeclaration({ children: true })];

const calls = (replies: readonly ScriptedReply[]) => replies.flatMap((reply) => reply.toolCalls ?? []);
const contextCalls = (replies: readonly ScriptedReply[]) =>
	calls(replies)
		.filter((call) => call.name === CONTEXT_TOOL)
		.map((call) => call.arguments);
const untilAnswered = (count: number) => (state: { answers: readonly unknown[] }) => state.answers.length >= count;
/** Hide the target stage's raw result behind a brief, as a fold would. */
const foldedTarget = (text: string) => replaceResult(stageCallId(TARGET), text);

/** A context-tool fake: each action answered by its own function; anything else "Folded.". */
function contextFake(answers: Partial<Record<string, (call: ScriptedToolCall) => string>>): FakeTool {
	return (call) => answers[String(call.arguments.action)]?.(call) ?? "Folded.";
}

describe("reading a request", () => {
	it("reads a tool result together with the call that asked for it", () => {
		const call = { id: "c1", name: STAGE_TOOL_NAME, arguments: { stage: 3 } };
		const texts = readingTexts([assistantMessage({ toolCalls: [call] }), toolMessage("c1", "folded")]);
		expect(texts[1]).toBe('repo_stage {"stage":3}\nfolded');
	});

	it("learns the context tool, and whether it offers search and the children listing, from its declared schema", () => {
		const with_ = contextTool({ messages: [], tools: [STAGE_DECLARATION, contextDeclaration({ search: true })] });
		expect(with_).toEqual({ name: CONTEXT_TOOL, search: true, children: false });
		expect(contextTool({ messages: [], tools: [contextDeclaration({ children: true, name: "ctx" })] })).toEqual({
			name: "ctx",
			search: false,
			children: true,
		});
		expect(contextTool({ messages: [], tools: [STAGE_DECLARATION] })).toBeUndefined();
	});

	it("reads calls a text spells out, and learns the fold id shape from spelled peeks", () => {
		const whole = `1. entry e1, byte 3: ${CONTEXT_TOOL} {"action":"peek","id":"${foldId(6)}"}`;
		const text = `${whole}\n2. entry e2, byte 9: ${CONTEXT_TOOL} {"action":"peek","id":"${foldId(7)}","offset":10,"bytes":20}\nMore hits: ${CONTEXT_TOOL} {"action":"search","query":"a }","offset":10}`;
		expect(spelledCalls(text, CONTEXT_TOOL).map((call) => call.args.action)).toEqual(["peek", "peek", "search"]);
		// A search result's first hit is followed whatever it reads; elsewhere only a slice (a next page) is.
		expect(spelledPeekCall(text, CONTEXT_TOOL, true)).toEqual({ action: "peek", id: foldId(6) });
		expect(spelledPeekCall(text, CONTEXT_TOOL, false)).toEqual({
			action: "peek",
			id: foldId(7),
			offset: 10,
			bytes: 20,
		});
		expect(moreCall(text, CONTEXT_TOOL)).toEqual({ action: "search", query: "a }", offset: 10 });
		const shape = foldIdShape([text], CONTEXT_TOOL);
		expect([...`x ${foldId(1)} f-12 ${foldId(2)}`.matchAll(shape ?? /$^/g)].map((m) => m[0])).toEqual([
			foldId(1),
			foldId(2),
		]);
		expect(foldIdShape(['active_context {"action":"peek","id":"evidence:ab"}'], CONTEXT_TOOL)).toBeUndefined();
	});

	it("finds the fold whose nearby text names the stage, exact before a range, and skips ids already read", () => {
		const shape = /\bf-[0-9a-f]{12}\b/g;
		const texts = [
			consolidationBrief(foldId(1), 1, 9),
			`Inner folds: ${foldId(2)} repo_stage stage 4; ${foldId(3)} stage 5; ${foldId(4)} stage 50`,
		];
		expect(findLead(texts, 5, shape)).toEqual({ id: foldId(3), exact: true });
		expect(findLead(texts, 7, shape)).toEqual({ id: foldId(1), exact: false });
		expect(findLead(texts, 5, shape, new Set([foldId(3)]))).toEqual({ id: foldId(1), exact: false });
		expect(findLead([batchBrief(foldId(5), 12)], 12, shape)).toEqual({ id: foldId(5), exact: true });
		// "stage 50" is not stage 5, and neither text before an id nor the next line is about it.
		expect(findLead([`stage 5 ${foldId(6)} stage 50`], 5, shape)).toBeUndefined();
		expect(findLead([`Inner folds: ${foldId(7)} stage 23\nCalls: repo_stage stage 1–23`], 3, shape)).toBeUndefined();
	});

	it("reads the fact value from any message, and not from the probe or an answer", () => {
		const fact = factLine(1, 7);
		expect(visibleFact([userMessage("go"), toolMessage("c", `x\n${fact}\ny`)], 7)).toBe(factValue(1, 7));
		const noise = [toolMessage("c", probeLine(7)), userMessage(`ANSWER S7: ${factValue(1, 7)}`)];
		expect(visibleFact(noise, 7)).toBeUndefined();
	});
});

describe("request classification and the fixed summary", () => {
	it("tells Pi's summarizer from side requests and agent requests", () => {
		const developer = { role: "developer", content: `${PI_SUMMARIZATION_PROMPT_START} x` };
		expect(classifyRequest({ messages: [developer, userMessage("x")], tools: [{}] })).toBe("summarization");
		expect(classifyRequest({ messages: [systemMessage("other"), userMessage("x")] })).toBe("side");
		expect(classifyRequest({ messages: [userMessage(PI_SUMMARIZATION_PROMPT_START)], tools: [{}] })).toBe("agent");
	});

	it("is a fixed 2,000-character summary that keeps no fact", () => {
		expect(fixedSummary()).toHaveLength(SUMMARY_CHARS);
		expect(fixedSummary()).not.toMatch(/FACT S\d/);
	});
});

describe("scripted agent", () => {
	it("calls every stage in order, answers every probe from what is visible, and finishes", () => {
		const played = play(WORKLOAD, initialAgentState(WORKLOAD, false));
		const stages = calls(played.replies).filter((call) => call.name === STAGE_TOOL_NAME);
		expect(stages.map((call) => call.arguments.stage)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
		expect(played.state).toMatchObject({ finished: true, stagesCompleted: 8, rereads: 0 });
		expect(played.state.answers.map((answer) => answer.route)).toEqual(["visible", "visible"]);
		expect(played.replies.at(-1)?.text).toContain("All 8 stages done.");
	});

	it("works through several user turns, ending each with a reply, and answers probes across them", () => {
		const turns: Workload = { ...WORKLOAD, stages: 12, turns: 3 };
		const played = play(turns, initialAgentState(turns, false));
		const closing = played.replies.filter((reply) => (reply.toolCalls ?? []).length === 0).map((reply) => reply.text);
		expect(closing).toEqual([
			"Stages up to 4 done.",
			expect.stringContaining("Stages up to 8 done."),
			expect.stringContaining("All 12 stages done."),
		]);
		expect(played.state).toMatchObject({ finished: true, stagesCompleted: 12 });
		expect(played.state.answers.every((answer) => answer.route === "visible")).toBe(true);
	});

	it("answers from one search when the hits show the fact line", () => {
		const search = (call: ScriptedToolCall) =>
			`Search ${JSON.stringify(call.arguments.query)}: 1 hit.\n1. fold ${foldId(1)}:\n   ${factLine(WORKLOAD.seed, TARGET)}`;
		const played = play(WORKLOAD, initialAgentState(WORKLOAD, false), {
			window: foldedTarget(batchBrief(foldId(1), TARGET)),
			context: contextFake({ search }),
			until: untilAnswered(1),
		});
		expect(contextCalls(played.replies)).toEqual([{ action: "search", query: probeQuery(TARGET) }]);
		expect(played.state.answers[0]).toMatchObject({ route: "search", contextCalls: 1, target: TARGET });
		expect(played.replies.at(-1)?.text).toBe(`ANSWER S${TARGET}: ${TARGET_FACT}`);
	});

	it("calls the peek a search hit spells out, exactly, when the hit line does not show the fact", () => {
		// A slice around the hit, and a small source's call that reads it whole.
		for (const hitPeek of [
			{ action: "peek", id: foldId(1), offset: 100, bytes: 900 },
			{ action: "peek", id: foldId(1) },
		]) {
			const search = () =>
				`Search: 1 hit.\n1. entry e9, byte 400: ${CONTEXT_TOOL} ${JSON.stringify(hitPeek)}\n   FACT S${TARGET}:…`;
			const peek = () => `Fold ${foldId(1)} bytes 100–1000.\n\n${stageText(WORKLOAD, TARGET)}`;
			const played = play(WORKLOAD, initialAgentState(WORKLOAD, false), {
				window: foldedTarget(batchBrief(foldId(1), TARGET)),
				context: contextFake({ search, peek }),
				until: untilAnswered(1),
			});
			expect(contextCalls(played.replies)).toEqual([{ action: "search", query: probeQuery(TARGET) }, hitPeek]);
			expect(played.state.answers[0]).toMatchObject({ route: "search+peek", contextCalls: 2 });
			expect(played.state.answers[0]?.contextChars).toBe(search().length + peek().length);
		}
	});

	it("without search, peeks the fold whose brief names the stage", () => {
		const peek = () => `Fold ${foldId(1)}.\n\n${JSON.stringify({ content: stageText(WORKLOAD, TARGET) })}`;
		const played = play(WORKLOAD, initialAgentState(WORKLOAD, false), {
			tools: NO_SEARCH,
			window: foldedTarget(batchBrief(foldId(1), TARGET)),
			context: contextFake({ peek }),
			until: untilAnswered(1),
		});
		expect(contextCalls(played.replies)).toEqual([{ action: "peek", id: foldId(1) }]);
		expect(played.state.answers[0]).toMatchObject({ route: "navigate", contextCalls: 1 });
	});

	it("without search, lists the folds inside a consolidation whose range holds the stage, then peeks the one named", () => {
		const listing = () =>
			`Folds inside consolidation ${foldId(9)}:\n${foldId(1)} tool batch, 40 KB: repo_stage {"stage":${TARGET}} → 40 KB\n${foldId(2)} tool batch, 40 KB: repo_stage {"stage":${TARGET + 1}} → 40 KB`;
		const peek = (call: ScriptedToolCall) =>
			call.arguments.children ? listing() : `Fold ${String(call.arguments.id)}.\n\n${stageText(WORKLOAD, TARGET)}`;
		const played = play(WORKLOAD, initialAgentState(WORKLOAD, false), {
			tools: NO_SEARCH,
			window: foldedTarget(consolidationBrief(foldId(9), 1, 3)),
			context: contextFake({ peek }),
			until: untilAnswered(1),
		});
		expect(contextCalls(played.replies)).toEqual([
			{ action: "peek", id: foldId(9), children: true },
			{ action: "peek", id: foldId(1) },
		]);
		expect(played.state.answers[0]).toMatchObject({ route: "navigate", contextCalls: 2 });
	});

	it("follows a More call a result spells out when the fact is further on", () => {
		const first = `Fold ${foldId(1)}. More follows: ${CONTEXT_TOOL} {"action":"peek","id":"${foldId(1)}","offset":50}\n\nfiller`;
		const peek = (call: ScriptedToolCall) =>
			call.arguments.offset === 50 ? `Fold ${foldId(1)} from 50.\n\n${stageText(WORKLOAD, TARGET)}` : first;
		const played = play(WORKLOAD, initialAgentState(WORKLOAD, false), {
			tools: NO_SEARCH,
			window: foldedTarget(batchBrief(foldId(1), TARGET)),
			context: contextFake({ peek }),
			until: untilAnswered(1),
		});
		expect(contextCalls(played.replies)).toEqual([
			{ action: "peek", id: foldId(1) },
			{ action: "peek", id: foldId(1), offset: 50 },
		]);
	});

	it("re-reads the stage when no search is offered and no text names the stage near a fold id", () => {
		const played = play(WORKLOAD, initialAgentState(WORKLOAD, false), {
			tools: NO_SEARCH,
			window: foldedTarget("folded away"),
			until: untilAnswered(1),
		});
		expect(calls(played.replies).map((call) => call.arguments)).toContainEqual({ stage: TARGET, reread: true });
		expect(played.state.answers[0]).toMatchObject({ route: "re-read", contextCalls: 0 });
		expect(played.state.rereads).toBe(1);
	});

	it("re-reads after a search that finds nothing, and counts a probe missed when even the re-read lacks the fact", () => {
		const played = play(WORKLOAD, initialAgentState(WORKLOAD, false), {
			window: (messages) =>
				foldedTarget("folded away")(messages).map((message) =>
					message.role === "tool" && String(message.content).includes("(re-read)")
						? { ...message, content: "nothing here" }
						: message,
				),
			context: contextFake({ search: () => "Search: no hits." }),
			until: untilAnswered(1),
		});
		expect(played.state.answers[0]).toMatchObject({ route: "missed", contextCalls: 1 });
		expect(played.replies.at(-1)?.text).toBe(`ANSWER S${TARGET}: unknown`);
	});

	it(`gives up after ${MAX_CONTEXT_CALLS_PER_PROBE} context calls and re-reads`, () => {
		let page = 0;
		const peek = () =>
			`Fold ${foldId(1)}. More follows: ${CONTEXT_TOOL} {"action":"peek","id":"${foldId(1)}","offset":${++page}}`;
		const played = play(WORKLOAD, initialAgentState(WORKLOAD, false), {
			tools: NO_SEARCH,
			window: foldedTarget(batchBrief(foldId(1), TARGET)),
			context: contextFake({ peek }),
			until: untilAnswered(1),
		});
		expect(contextCalls(played.replies)).toHaveLength(MAX_CONTEXT_CALLS_PER_PROBE);
		expect(played.state.answers[0]).toMatchObject({ route: "re-read" });
	});

	it("stops with an error when the result of its last call is not in the request", () => {
		const body = (messages: ReturnType<typeof userMessage>[]) => ({ messages, tools: NO_SEARCH });
		const turn = userMessage("Work through it: call repo_stage for stages 1 to 8 in order.");
		const first = agentStep(initialAgentState(WORKLOAD, false), body([turn]));
		const next = agentStep(first.state, body([turn, assistantMessage(first.reply)]));
		expect(next.state.error).toContain("is not in the request");
		expect(next.state.finished).toBe(true);
	});

	it("folds stage k−2 by its call id, under the declared context tool's name, with the call for stage k+1", () => {
		const tools = [STAGE_DECLARATION, contextDeclaration({ name: "ctx" })];
		const played = play(WORKLOAD, initialAgentState(WORKLOAD, true), { tools });
		const folds = calls(played.replies).filter((call) => call.name === "ctx");
		expect(folds[0]?.arguments).toEqual({ action: "fold", ids: [stageCallId(1)] });
		// After stages 3 to 7 (stage 8 ends the turn with a reply, which calls nothing).
		expect(folds).toHaveLength(5);
		expect(played.state.foldCalls).toBe(5);
	});

	it("never folds when it is not a marking agent", () => {
		const played = play(WORKLOAD, initialAgentState(WORKLOAD, false));
		expect(contextCalls(played.replies)).toEqual([]);
	});
});

/**
 * The scripted agent of the agent benchmark: what the "model" answers to each
 * request Pi sends, computed only from that request and the agent's own
 * notes (what it asked for last), as a pure step function.
 *
 * One agentic turn: call `repo_stage` for stages 1..N in order. When a stage
 * result carries a probe for stage j, answer it from what is visible in the
 * request: the fact line itself ("visible"); else the fold whose brief names
 * `stage j` is peeked and the answer read from the peek ("peek", paging
 * with the offset the peek names); else the stage is re-read
 * (`repo_stage {stage:j, reread:true}`, "re-read"). A marking agent also
 * asks to fold stage k−2 (by its tool call id) in the same assistant message
 * as the call for stage k+1. Pi's summarization requests get a fixed-size
 * summary that keeps no facts; other tool-less side requests (e.g. a model
 * brief) a fixed short text. Nothing here depends on time or randomness.
 */

import type { ScriptedReply, ScriptedToolCall } from "../../test/harness/loopback-provider.ts";
import type { WireMessage, WireRequestBody } from "../../test/harness/provider-rules.ts";
import { factPattern, factValue, PROBE_PATTERN, STAGE_TOOL_NAME, type Workload } from "./workload.ts";

/** Name of pi-fold's context tool, as the briefs' recall calls address it. */
export const CONTEXT_TOOL_NAME = "active_context";

/**
 * Start of Pi 1.6.0's summarization system prompt (`SUMMARIZATION_SYSTEM_PROMPT`,
 * dist/core/compaction/utils.js; not exported): every compaction, turn-prefix and
 * branch summary request carries it.
 */
export const PI_SUMMARIZATION_PROMPT_START = "You are a context summarization assistant.";

/** Size of the fixed summary: about what a real summarizer writes, and it keeps no facts. */
export const SUMMARY_CHARS = 2000;
/** Peek slices one probe may read before the agent gives up on the fold and re-reads the stage. */
export const MAX_PEEKS_PER_PROBE = 64;

export type RequestKind = "agent" | "summarization" | "side";
export type ProbeRoute = "visible" | "peek" | "re-read" | "missed";

export interface ProbeAnswer {
	/** Stage whose result asked. */
	stage: number;
	target: number;
	route: ProbeRoute;
	/** Peek slices read for this probe (also counted when the peek failed and the stage was re-read). */
	peeks: number;
}

type MainCall =
	| { kind: "stage"; id: string; stage: number }
	| { kind: "peek"; id: string; foldId: string; probe: OpenProbe }
	| { kind: "reread"; id: string; probe: OpenProbe };

interface OpenProbe {
	stage: number;
	target: number;
	peeks: number;
}

export interface AgentState {
	workload: Workload;
	marking: boolean;
	/** What the last reply asked for; undefined before the first request. */
	main?: MainCall;
	/** Call id of the fold the last reply asked for, if any. */
	foldCallId?: string;
	stagesCompleted: number;
	answers: ProbeAnswer[];
	rereads: number;
	rereadBytes: number;
	peekBytes: number;
	foldCalls: number;
	/** First line of every fold call the runtime refused. */
	foldRefusals: string[];
	finished: boolean;
	/** Why the agent stopped early, if it did. */
	error?: string;
	callCounter: number;
}

export function initialAgentState(workload: Workload, marking: boolean): AgentState {
	return {
		workload,
		marking,
		stagesCompleted: 0,
		answers: [],
		rereads: 0,
		rereadBytes: 0,
		peekBytes: 0,
		foldCalls: 0,
		foldRefusals: [],
		finished: false,
		callCounter: 0,
	};
}

/** Text of a wire message's content (a string or text parts). */
export function messageText(message: WireMessage): string {
	const content = message.content;
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.map((part: unknown) =>
			typeof part === "object" && part !== null && typeof (part as { text?: unknown }).text === "string"
				? (part as { text: string }).text
				: "",
		)
		.join("\n");
}

/** Which of the three request kinds this is. */
export function classifyRequest(body: WireRequestBody): RequestKind {
	for (const message of body.messages) {
		if (message.role !== "system" && message.role !== "developer") continue;
		if (messageText(message).startsWith(PI_SUMMARIZATION_PROMPT_START)) return "summarization";
	}
	return (body.tools ?? []).length === 0 ? "side" : "agent";
}

/** The fixed summary: headings a summarizer writes, padded to SUMMARY_CHARS, no stage facts. */
export function fixedSummary(): string {
	const head = "## Goal\nWork through the staged repository assignment.\n## Progress\nEarlier stages were read.\n";
	const pad = "(details of earlier stages were not kept in this summary)\n";
	let text = head;
	while (text.length < SUMMARY_CHARS) text += pad;
	return text.slice(0, SUMMARY_CHARS);
}

/** Text a side request (a tool-less request that is not Pi's summarizer) gets. */
export const SIDE_REPLY_TEXT = "Stage notes were read; no details kept.";

function toolResultText(messages: readonly WireMessage[], callId: string): string | undefined {
	for (let index = messages.length - 1; index >= 0; index--) {
		const message = messages[index];
		if (message?.role === "tool" && message.tool_call_id === callId) return messageText(message);
	}
	return undefined;
}

/** The fact value for `target` anywhere in the request, if its line is there. */
export function visibleFact(messages: readonly WireMessage[], target: number): string | undefined {
	const pattern = factPattern(target);
	for (const message of messages) {
		const match = pattern.exec(messageText(message));
		if (match?.[1]) return match[1];
	}
	return undefined;
}

const BRIEF_HEADER = /(?=\[[a-z0-9-]+ fold f-)/;
const STEPS_LINE = /^Steps: (.*)$/m;
const RECALL_LINE = /^Read exact source: (\S+) (\{.*\})$/m;

/** True when a steps list ("stage 3, stage 5–9") names `stage <target>`, one label or inside a range. */
export function stepsCover(steps: string, target: number): boolean {
	for (const item of steps.replace(/ \(\+\d+ more\)$/, "").split(", ")) {
		const match = /^stage (\d+)(?:–(\d+))?$/.exec(item.trim());
		if (!match) continue;
		const first = Number(match[1]);
		const last = match[2] === undefined ? first : Number(match[2]);
		if (target >= first && target <= last) return true;
	}
	return false;
}

/** A fold the agent can peek for a stage; a consolidation is first read by its header only. */
export interface FoldLead {
	id: string;
	consolidation: boolean;
}

/** The fold whose visible brief names `stage <target>` in its Steps line, by its recall call. */
export function foldNamingStage(messages: readonly WireMessage[], target: number): FoldLead | undefined {
	for (const message of messages) {
		for (const block of messageText(message).split(BRIEF_HEADER)) {
			const steps = STEPS_LINE.exec(block)?.[1];
			const recall = RECALL_LINE.exec(block);
			if (!steps || !recall || recall[1] !== CONTEXT_TOOL_NAME || !stepsCover(steps, target)) continue;
			const call = JSON.parse(recall[2] ?? "{}") as { action?: unknown; id?: unknown };
			if (call.action === "peek" && typeof call.id === "string")
				return { id: call.id, consolidation: /\n(?:Consolidation|Chapter) f-/.test(block) };
		}
	}
	return undefined;
}

const CHILD_LIST = /^Child folds, each peekable: (.*)\.$/m;
const CHILD_ITEM = /(f-[0-9a-f]+)(?: \(([^)]*)\))?/g;

/** The child fold a peek header lists for `stage <target>`; one with a range is itself a consolidation. */
export function childNamingStage(peekText: string, target: number): FoldLead | undefined {
	const list = CHILD_LIST.exec(peekText)?.[1];
	if (!list) return undefined;
	for (const match of list.matchAll(CHILD_ITEM)) {
		const [, id, steps] = match;
		if (id && steps && stepsCover(steps, target)) return { id, consolidation: /–|, /.test(steps) };
	}
	return undefined;
}

/** Bytes of a header-only peek: enough for the header, none of the source. */
export const HEADER_PEEK_BYTES = 1;

const MORE_FOLLOWS = /More follows: (\S+) (\{[^\n]*\})/;

/** The offset a peek result says to continue at, if it says more follows. */
export function nextPeekOffset(text: string): number | undefined {
	const match = MORE_FOLLOWS.exec(text);
	if (!match || match[1] !== CONTEXT_TOOL_NAME) return undefined;
	const call = JSON.parse(match[2] ?? "{}") as { offset?: unknown };
	return typeof call.offset === "number" ? call.offset : undefined;
}

interface Step {
	state: AgentState;
	reply: ScriptedReply;
}

function nextId(state: AgentState, what: string): [string, AgentState] {
	const counter = state.callCounter + 1;
	return [`call_${what}_${counter}`, { ...state, callCounter: counter }];
}

function stop(state: AgentState, error: string): Step {
	return { state: { ...state, finished: true, error, main: undefined }, reply: { text: `Stopping: ${error}` } };
}

function answer(state: AgentState, probe: OpenProbe, route: ProbeRoute, value: string | undefined): AgentState {
	const correct = value !== undefined && value === factValue(state.workload.seed, probe.target);
	const entry: ProbeAnswer = {
		stage: probe.stage,
		target: probe.target,
		route: correct ? route : "missed",
		peeks: probe.peeks,
	};
	return { ...state, answers: [...state.answers, entry] };
}

/** Ask for the next stage (and, for a marking agent, fold stage k−2), or finish after the last one. */
function advance(state: AgentState, messages: readonly WireMessage[], text: string | undefined): Step {
	const done = state.stagesCompleted;
	if (done >= state.workload.stages) {
		const summary = `All ${done} stages done.`;
		return {
			state: { ...state, finished: true, main: undefined, foldCallId: undefined },
			reply: { text: text ? `${text}\n${summary}` : summary },
		};
	}
	const calls: ScriptedToolCall[] = [];
	let next = state;
	let foldCallId: string | undefined;
	const stale = done - 2;
	const staleCallId = stageCallId(stale);
	if (state.marking && stale >= 1 && messages.some((m) => (m.tool_calls ?? []).some((c) => c.id === staleCallId))) {
		[foldCallId, next] = nextId(next, "fold");
		calls.push({ id: foldCallId, name: CONTEXT_TOOL_NAME, arguments: { action: "fold", ids: [staleCallId] } });
		next = { ...next, foldCalls: next.foldCalls + 1 };
	}
	const stage = done + 1;
	const id = stageCallId(stage);
	calls.push({ id, name: STAGE_TOOL_NAME, arguments: { stage } });
	return {
		state: { ...next, main: { kind: "stage", id, stage }, foldCallId },
		reply: text ? { text, toolCalls: calls } : { toolCalls: calls },
	};
}

/** Tool call id of a stage's first read: fixed per stage, so a marking agent can name stage k−2. */
export function stageCallId(stage: number): string {
	return `call_stage_${stage}`;
}

function answerText(state: AgentState): string | undefined {
	const last = state.answers.at(-1);
	if (!last) return undefined;
	return `ANSWER S${last.target}: ${last.route === "missed" ? "unknown" : factValue(state.workload.seed, last.target)}`;
}

/** Route a probe: visible, else peek the fold naming the stage, else re-read. */
function resolveProbe(state: AgentState, messages: readonly WireMessage[], probe: OpenProbe): Step {
	const seen = visibleFact(messages, probe.target);
	if (seen !== undefined) {
		const answered = answer(state, probe, "visible", seen);
		return advance(answered, messages, answerText(answered));
	}
	const lead = foldNamingStage(messages, probe.target);
	if (lead !== undefined) return peekLead(state, lead, probe);
	return reread(state, probe);
}

/** Peek a fold: a consolidation by its header first (to find the child that holds the stage), else its source. */
function peekLead(state: AgentState, lead: FoldLead, probe: OpenProbe): Step {
	return lead.consolidation
		? peek(state, lead.id, probe, 0, HEADER_PEEK_BYTES)
		: peek(state, lead.id, probe, undefined);
}

function peek(state: AgentState, foldId: string, probe: OpenProbe, offset: number | undefined, bytes?: number): Step {
	const [id, next] = nextId(state, "peek");
	const open = { ...probe, peeks: probe.peeks + 1 };
	const args = {
		action: "peek",
		id: foldId,
		...(offset === undefined ? {} : { offset }),
		...(bytes === undefined ? {} : { bytes }),
	};
	return {
		state: { ...next, main: { kind: "peek", id, foldId, probe: open }, foldCallId: undefined },
		reply: { toolCalls: [{ id, name: CONTEXT_TOOL_NAME, arguments: args }] },
	};
}

function reread(state: AgentState, probe: OpenProbe): Step {
	const [id, next] = nextId(state, `reread_${probe.target}`);
	return {
		state: { ...next, main: { kind: "reread", id, probe }, foldCallId: undefined },
		reply: { toolCalls: [{ id, name: STAGE_TOOL_NAME, arguments: { stage: probe.target, reread: true } }] },
	};
}

/** One agent request: read the results of what the last reply asked for, decide the next reply. */
export function agentStep(state: AgentState, messages: readonly WireMessage[]): Step {
	if (state.finished) return { state, reply: { text: "Done." } };
	const main = state.main;
	if (main === undefined) return advance(state, messages, undefined);
	const result = toolResultText(messages, main.id);
	if (result === undefined) return stop(state, `the result of ${main.id} is not in the request`);
	let current = state;
	if (state.foldCallId !== undefined) {
		const folded = toolResultText(messages, state.foldCallId) ?? "";
		if (folded.startsWith("Error"))
			current = { ...current, foldRefusals: [...current.foldRefusals, folded.split("\n")[0] ?? ""] };
	}
	switch (main.kind) {
		case "stage": {
			current = { ...current, stagesCompleted: main.stage };
			const target = PROBE_PATTERN.exec(result)?.[1];
			if (target === undefined) return advance(current, messages, undefined);
			return resolveProbe(current, messages, { stage: main.stage, target: Number(target), peeks: 0 });
		}
		case "peek": {
			current = { ...current, peekBytes: current.peekBytes + result.length };
			const match = factPattern(main.probe.target).exec(result);
			if (match?.[1]) {
				const answered = answer(current, main.probe, "peek", match[1]);
				return advance(answered, messages, answerText(answered));
			}
			const child = childNamingStage(result, main.probe.target);
			if (child !== undefined && main.probe.peeks < MAX_PEEKS_PER_PROBE) return peekLead(current, child, main.probe);
			const offset = nextPeekOffset(result);
			if (offset !== undefined && main.probe.peeks < MAX_PEEKS_PER_PROBE)
				return peek(current, main.foldId, main.probe, offset);
			return reread(current, main.probe);
		}
		case "reread": {
			current = { ...current, rereads: current.rereads + 1, rereadBytes: current.rereadBytes + result.length };
			const answered = answer(current, main.probe, "re-read", factPattern(main.probe.target).exec(result)?.[1]);
			return advance(answered, messages, answerText(answered));
		}
	}
}

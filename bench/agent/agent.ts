/**
 * The scripted agent of the agent benchmark: what the "model" answers to each
 * request Pi sends, computed from that request (reader.ts: messages, tool
 * declarations, calls the text spells out) and the agent's own notes of what
 * it asked for last, as a pure step function.
 *
 * Each user turn asks for a range of stages; the agent calls `repo_stage` for
 * them in order and ends the turn with a short reply. When a stage result
 * carries a probe for stage j, the agent answers it from what the request
 * shows: the fact line itself ("visible"); else, when the context tool
 * declares a `search` action, it searches for the fact line's key and reads
 * the answer from the hits ("search"), or calls the peek the first hit
 * spells out ("search+peek"); else it looks for a fold id whose nearby text
 * names stage j (or a range holding it), peeks it or lists the folds inside
 * it when the tool declares `children`, and follows the calls results spell
 * out ("navigate"); failing all that it re-reads the stage
 * (`repo_stage {stage, reread: true}`, "re-read"). It knows nothing of
 * pi-fold's brief formats or argument names beyond what the request shows.
 * A marking agent also asks to fold stage k−2 (by its tool call id) with
 * the call for stage k+1. Pi's summarization requests get a fixed-size
 * summary that keeps no facts; other tool-less side requests a fixed short
 * text. Nothing here depends on time or randomness.
 */

import type { ScriptedReply, ScriptedToolCall } from "../../test/harness/loopback-provider.ts";
import type { WireMessage, WireRequestBody } from "../../test/harness/provider-rules.ts";
import {
	contextTool,
	factIn,
	findLead,
	foldIdShape,
	type Lead,
	messageText,
	moreCall,
	readingTexts,
	spelledPeekCall,
	visibleFact,
} from "./reader.ts";
import {
	factValue,
	PROBE_PATTERN,
	STAGE_TOOL_NAME,
	stageBytes,
	TURN_RANGE_PATTERN,
	type Workload,
} from "./workload.ts";

export { messageText, visibleFact } from "./reader.ts";

/**
 * Start of Pi 1.6.0's summarization system prompt (`SUMMARIZATION_SYSTEM_PROMPT`,
 * dist/core/compaction/utils.js; not exported): every compaction, turn-prefix and
 * branch summary request carries it.
 */
export const PI_SUMMARIZATION_PROMPT_START = "You are a context summarization assistant.";

/** Size of the fixed summary: about what a real summarizer writes, and it keeps no facts. */
export const SUMMARY_CHARS = 2000;
/** Context-tool calls one probe may make before the agent gives up and re-reads the stage. */
export const MAX_CONTEXT_CALLS_PER_PROBE = 64;

export type RequestKind = "agent" | "summarization" | "side";
export type ProbeRoute = "visible" | "search" | "search+peek" | "navigate" | "re-read" | "missed";

export interface ProbeAnswer {
	/** Stage whose result asked. */
	stage: number;
	target: number;
	route: ProbeRoute;
	/** Context-tool calls made for this probe (search, peek, listing). */
	contextCalls: number;
	/** Characters of those calls' results: what they added to the window. */
	contextChars: number;
	/** Characters a re-read of the target stage returns: what a lookup replaces. */
	rereadChars: number;
}

interface OpenProbe {
	stage: number;
	target: number;
	calls: number;
	chars: number;
	searched: boolean;
	/** Ids already peeked or listed for this probe. */
	read: string[];
}

type MainCall =
	| { kind: "stage"; id: string; stage: number }
	| { kind: "context"; id: string; probe: OpenProbe; readId?: string; searched?: boolean }
	| { kind: "reread"; id: string; probe: OpenProbe };

export interface AgentState {
	workload: Workload;
	marking: boolean;
	/** What the last reply asked for; undefined before the first request and after a turn's closing reply. */
	main?: MainCall;
	/** Call id of the fold the last reply asked for, if any. */
	foldCallId?: string;
	/** Last stage of the current user turn. */
	turnLast: number;
	stagesCompleted: number;
	answers: ProbeAnswer[];
	rereads: number;
	rereadBytes: number;
	contextChars: number;
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
		turnLast: 0,
		stagesCompleted: 0,
		answers: [],
		rereads: 0,
		rereadBytes: 0,
		contextChars: 0,
		foldCalls: 0,
		foldRefusals: [],
		finished: false,
		callCounter: 0,
	};
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

/** The stage range of the newest user message, when it is the request's last message (a new turn). */
function newTurn(messages: readonly WireMessage[]): [number, number] | undefined {
	const last = messages.at(-1);
	if (last?.role !== "user") return undefined;
	const match = TURN_RANGE_PATTERN.exec(messageText(last));
	return match ? [Number(match[1]), Number(match[2])] : undefined;
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
		contextCalls: probe.calls,
		contextChars: probe.chars,
		rereadChars: stageBytes(state.workload, probe.target),
	};
	return { ...state, answers: [...state.answers, entry] };
}

/** Ask for the next stage of the turn (and, for a marking agent, fold stage k−2), or end the turn. */
function advance(state: AgentState, body: WireRequestBody, text: string | undefined): Step {
	const messages = body.messages;
	const done = state.stagesCompleted;
	if (done >= state.turnLast) {
		const finished = done >= state.workload.stages;
		const summary = finished ? `All ${done} stages done.` : `Stages up to ${done} done.`;
		return {
			state: { ...state, finished, main: undefined, foldCallId: undefined },
			reply: { text: text ? `${text}\n${summary}` : summary },
		};
	}
	const calls: ScriptedToolCall[] = [];
	let next = state;
	let foldCallId: string | undefined;
	const stale = done - 2;
	const staleCallId = stageCallId(stale);
	const tool = contextTool(body)?.name;
	const visible = messages.some((m) => (m.tool_calls ?? []).some((c) => c.id === staleCallId));
	if (state.marking && tool && stale >= 1 && visible) {
		[foldCallId, next] = nextId(next, "fold");
		calls.push({ id: foldCallId, name: tool, arguments: { action: "fold", ids: [staleCallId] } });
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

function answered(
	state: AgentState,
	body: WireRequestBody,
	probe: OpenProbe,
	route: ProbeRoute,
	value: string | undefined,
): Step {
	const next = answer(state, probe, route, value);
	return advance(next, body, answerText(next));
}

/** The query a model would type for a probe: the key of the fact line it asks about. */
export function probeQuery(target: number): string {
	return `FACT S${target}:`;
}

/** Route a probe: visible, else search, else a fold whose nearby text names the stage, else re-read. */
function resolveProbe(state: AgentState, body: WireRequestBody, probe: OpenProbe): Step {
	const messages = body.messages;
	const seen = visibleFact(messages, probe.target);
	if (seen !== undefined) return answered(state, body, probe, "visible", seen);
	const tool = contextTool(body);
	if (tool?.search)
		return contextCall(
			state,
			tool.name,
			{ ...probe, searched: true },
			{ action: "search", query: probeQuery(probe.target) },
		);
	return navigate(state, body, probe, readingTexts(messages));
}

/** Read the fold the texts point at for the probe's stage, or re-read the stage. */
function navigate(state: AgentState, body: WireRequestBody, probe: OpenProbe, texts: readonly string[]): Step {
	const tool = contextTool(body);
	const shape = tool ? foldIdShape(readingTexts(body.messages), tool.name) : undefined;
	const lead: Lead | undefined = tool && shape ? findLead(texts, probe.target, shape, new Set(probe.read)) : undefined;
	if (!tool || !lead) return reread(state, probe);
	const args =
		!lead.exact && tool.children ? { action: "peek", id: lead.id, children: true } : { action: "peek", id: lead.id };
	return contextCall(state, tool.name, { ...probe, read: [...probe.read, lead.id] }, args, lead.id);
}

function contextCall(
	state: AgentState,
	tool: string,
	probe: OpenProbe,
	args: Record<string, unknown>,
	readId?: string,
): Step {
	if (probe.calls >= MAX_CONTEXT_CALLS_PER_PROBE) return reread(state, probe);
	const [id, next] = nextId(state, "context");
	const open = { ...probe, calls: probe.calls + 1 };
	return {
		state: {
			...next,
			main: {
				kind: "context",
				id,
				probe: open,
				...(readId ? { readId } : {}),
				...(args.action === "search" ? { searched: true } : {}),
			},
			foldCallId: undefined,
		},
		reply: { toolCalls: [{ id, name: tool, arguments: args }] },
	};
}

function reread(state: AgentState, probe: OpenProbe): Step {
	const [id, next] = nextId(state, `reread_${probe.target}`);
	return {
		state: { ...next, main: { kind: "reread", id, probe }, foldCallId: undefined },
		reply: { toolCalls: [{ id, name: STAGE_TOOL_NAME, arguments: { stage: probe.target, reread: true } }] },
	};
}

/** After a context call: answer from it, follow a call it spells out, or look elsewhere. */
function continueProbe(
	state: AgentState,
	body: WireRequestBody,
	probe: OpenProbe,
	result: string,
	fromSearch: boolean,
): Step {
	const messages = body.messages;
	const open = { ...probe, chars: probe.chars + result.length };
	const current = { ...state, contextChars: state.contextChars + result.length };
	const value = factIn(result, probe.target);
	if (value !== undefined) {
		const route: ProbeRoute = open.searched ? (open.calls === 1 ? "search" : "search+peek") : "navigate";
		return answered(current, body, open, route, value);
	}
	const tool = contextTool(body);
	if (!tool) return reread(current, open);
	// A fold this result names for exactly the stage; else the call it spells out (a hit's peek, the next
	// page); else a fold whose range holds the stage; else whatever the request names.
	const shape = foldIdShape(readingTexts(messages), tool.name);
	const lead = shape ? findLead([result], probe.target, shape, new Set(open.read)) : undefined;
	if (lead?.exact) return navigate(current, body, open, [result]);
	const spelled = spelledPeekCall(result, tool.name, fromSearch) ?? moreCall(result, tool.name);
	const key = spelled ? JSON.stringify(spelled) : "";
	if (spelled && !open.read.includes(key))
		return contextCall(current, tool.name, { ...open, read: [...open.read, key] }, spelled);
	if (lead) return navigate(current, body, open, [result]);
	return navigate(current, body, open, readingTexts(messages));
}

/** One agent request: read the results of what the last reply asked for, decide the next reply. */
export function agentStep(state: AgentState, body: WireRequestBody): Step {
	if (state.finished) return { state, reply: { text: "Done." } };
	const messages = body.messages;
	const turn = newTurn(messages);
	if (turn) return advance({ ...state, turnLast: turn[1], main: undefined }, body, undefined);
	const main = state.main;
	if (main === undefined) return stop(state, "no user turn asks for stages");
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
			if (target === undefined) return advance(current, body, undefined);
			const probe = { stage: main.stage, target: Number(target), calls: 0, chars: 0, searched: false, read: [] };
			return resolveProbe(current, body, probe);
		}
		case "context":
			return continueProbe(current, body, main.probe, result, main.searched === true);
		case "reread": {
			current = { ...current, rereads: current.rereads + 1, rereadBytes: current.rereadBytes + result.length };
			return answered(current, body, main.probe, "re-read", factIn(result, main.probe.target));
		}
	}
}

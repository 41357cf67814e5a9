/**
 * A recorded session as the host replay plays it (pure).
 *
 * Owns turning a replay script (test/harness/recorded-session.ts) into the
 * three things a run needs: the serve plan the extension inside Pi answers
 * tool calls and `!cmd` runs from, the sequence of agent requests the
 * loopback provider expects with the reply (or failure) for each, and the
 * driver's steps (which user turns to prompt, which `!cmd` runs go before
 * them). Rules, as Pi 1.6.0 makes requests:
 * - A reply is streamed as recorded (reasoning, text, tool calls with their
 *   ids, names and arguments) minus calls the log has no result for: Pi
 *   would run them, and there is nothing to answer them with.
 * - A failed reply, or a turn whose request left no reply, is answered with
 *   an HTTP error Pi does not retry; pi-ai leaves the failed message out of
 *   every later request, as it did when the session was recorded.
 * - A steered user message is injected by the extension when the last
 *   answered call of the request before it runs (`pi.sendUserMessage` with
 *   `deliverAs: "steer"`): Pi delivers it after that batch's results.
 */

import type { AssistantMessage } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { ScriptedReply } from "../../test/harness/loopback-provider.ts";
import type { RecordedRequest, RecordedScript } from "../../test/harness/recorded-session.ts";
import type { ServedBash, ServePlan } from "./config.ts";

/** One agent request the provider expects, in order. */
export interface ExpectedRequest {
	/** Index of the user turn it belongs to. */
	turn: number;
	/** Recorded time of the request (ms since epoch): the ledger's clock for cache expiry. */
	at: number;
	/** The reply to stream, or why the request is answered with a failure. */
	answer: { reply: ScriptedReply } | { failure: string };
	/** What the request must end with: the turn's user message, or the results of these calls. */
	after: { user: string } | { toolCallIds: string[] };
	/** Entry id of the recorded reply (none for a turn whose request left no reply). */
	entryId?: string;
}

/** One step of the driver: run the `!cmd`s, then prompt (a steered turn needs no prompt). */
export interface TurnStep {
	turn: number;
	text: string;
	delivery: "prompt" | "steer";
	bashBefore: ServedBash[];
}

export interface ReplayPlan {
	serve: ServePlan;
	expected: ExpectedRequest[];
	steps: TurnStep[];
	/** What the plan leaves out or changes, one line each (for the report). */
	deviations: string[];
}

/** The recorded reply as the loopback streams it: answered calls only. */
export function scriptedReply(request: RecordedRequest): ScriptedReply {
	const answered = new Set(request.answered);
	const thinking: string[] = [];
	const text: string[] = [];
	const toolCalls: NonNullable<ScriptedReply["toolCalls"]> = [];
	for (const part of request.reply.content) {
		if (part.type === "thinking" && part.thinking.trim().length > 0) thinking.push(part.thinking);
		else if (part.type === "text") text.push(part.text);
		else if (part.type === "toolCall" && answered.has(part.id))
			toolCalls.push({ id: part.id, name: part.name, arguments: part.arguments });
	}
	return {
		...(thinking.length > 0 ? { thinking: thinking.join("\n") } : {}),
		// pi-ai joins an assistant message's text parts with nothing between them when it sends them back.
		...(text.length > 0 ? { text: text.join("") } : {}),
		...(toolCalls.length > 0 ? { toolCalls } : {}),
		// The provider reports the output the log recorded (the report bills the same figure).
		...(request.reply.usage?.output ? { completionTokens: request.reply.usage.output } : {}),
	};
}

/** Failure text for a request whose recorded reply failed; worded so Pi neither retries nor compacts on it. */
export function failureText(reply: AssistantMessage | undefined): string {
	return reply === undefined
		? "host replay: the recorded session has no reply to this request"
		: `host replay: the recorded reply ended with stop reason ${reply.stopReason}`;
}

function bashOf(entry: SessionEntry | undefined): ServedBash | undefined {
	if (entry?.type !== "message" || entry.message.role !== "bashExecution") return undefined;
	const message = entry.message as unknown as Record<string, unknown>;
	return {
		command: String(message.command ?? ""),
		output: String(message.output ?? ""),
		exitCode: typeof message.exitCode === "number" ? message.exitCode : undefined,
		cancelled: message.cancelled === true,
		truncated: message.truncated === true,
	};
}

/** The plan of a recorded branch and its replay script. */
export function replayPlan(branch: readonly SessionEntry[], script: RecordedScript): ReplayPlan {
	const byId = new Map(branch.map((entry) => [entry.id, entry]));
	const serve: ServePlan = { toolNames: [], results: {}, steers: {}, bash: [] };
	const toolNames = new Set<string>();
	for (const [id, [first]] of script.results) {
		if (!first) continue;
		serve.results[id] = {
			content: first.content,
			isError: first.isError,
			...(first.details === undefined ? {} : { details: first.details }),
		};
	}
	const expected: ExpectedRequest[] = [];
	const deviations: string[] = [];
	const bashAfterTurn = new Map<number, ServedBash[]>();
	for (const note of script.notes) {
		if (note.kind !== "bash-execution") continue;
		const bash = bashOf(byId.get(note.entryId));
		if (!bash) continue;
		serve.bash.push(bash);
		bashAfterTurn.set(note.turn, [...(bashAfterTurn.get(note.turn) ?? []), bash]);
	}
	const steps: TurnStep[] = [];
	script.turns.forEach((turn, index) => {
		steps.push({
			turn: index,
			text: turn.text,
			delivery: turn.delivery,
			bashBefore: bashAfterTurn.get(index - 1) ?? [],
		});
		if (turn.delivery === "steer") {
			const previous = script.turns[index - 1]?.requests.at(-1);
			const lastCall = previous?.answered.at(-1);
			if (lastCall === undefined) throw new Error(`host replay: steered turn ${index} follows no tool call`);
			serve.steers[lastCall] = turn.text;
		}
		if (turn.requests.length === 0) {
			expected.push({
				turn: index,
				at: turn.at,
				answer: { failure: failureText(undefined) },
				after: { user: turn.text },
			});
			deviations.push(`turn ${index}: no recorded reply; answered with a failure`);
		}
		let after: ExpectedRequest["after"] = { user: turn.text };
		for (const request of turn.requests) {
			if (request.failed) {
				expected.push({
					turn: index,
					at: request.at,
					answer: { failure: failureText(request.reply) },
					after,
					entryId: request.entryId,
				});
				continue;
			}
			const reply = scriptedReply(request);
			for (const call of reply.toolCalls ?? []) toolNames.add(call.name);
			if (request.unanswered.length > 0)
				deviations.push(`turn ${index}: ${request.unanswered.length} call(s) with no recorded result left out`);
			expected.push({ turn: index, at: request.at, answer: { reply }, after, entryId: request.entryId });
			after = { toolCallIds: request.answered };
		}
	});
	serve.toolNames = [...toolNames].sort();
	for (const note of script.notes) {
		if (note.kind === "compaction") deviations.push(`recorded compaction left to each arm (${note.detail})`);
		if (note.kind === "unreachable") deviations.push(`reply ${note.entryId} has no request to answer; not played`);
	}
	return { serve, expected, steps, deviations };
}

/**
 * A recorded Pi session as a replay script (pure; no I/O).
 *
 * Owns reading a recorded linear branch (the `SessionEntry[]` of a real log,
 * e.g. `loadSessionFile(path).manager.getBranch()`) as what a replay has to
 * play back: the user turns in order, for each provider request the recorded
 * assistant message that answered it, every tool call's recorded result by
 * tool call id, and what the log holds that a replay does not play as a
 * request (compactions, model and thinking-level changes, `!cmd` runs,
 * replies no request can reach) as notes saying why.
 *
 * How the log maps to requests, as Pi 1.6.0 makes them:
 * - A user message starts a turn. One that follows a tool result was typed
 *   while the agent ran (steering): Pi delivered it after those results,
 *   inside the same run, so its `delivery` is "steer".
 * - Each assistant message answers one request: the first after the user
 *   message, then one after each batch of tool results.
 * - A failed reply (stopReason "error" or "aborted") answered a request, but
 *   pi-ai leaves it out of every later request (`transformMessages` skips
 *   it), so a replay answers that request with a failure. Its tool calls have
 *   no results: they are `unanswered`.
 * - A failed reply followed directly by another reply was retried: the retry
 *   answers the same context, so the failed one is a note ("retried").
 * - A reply after a reply that ended the run (no tool calls, not failed) has
 *   no request to answer in a replay: a note ("unreachable").
 * - A turn whose request left no reply in the log (a user message directly
 *   after a user message) has `requests: []`: its one request failed.
 */

import type { AssistantMessage, ToolResultMessage } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";

/** One recorded tool result, as the tool returned it. */
export interface RecordedToolResult {
	entryId: string;
	toolCallId: string;
	toolName: string;
	content: ToolResultMessage["content"];
	isError: boolean;
	details?: unknown;
}

/** One provider request and the recorded reply that answered it. */
export interface RecordedRequest {
	/** Entry id of the recorded reply. */
	entryId: string;
	/** When the request started (the reply's `timestamp`, ms since epoch). */
	at: number;
	/** The recorded assistant message, unchanged. */
	reply: AssistantMessage;
	/** The reply failed (stopReason "error" or "aborted"): a replay answers with a failure. */
	failed: boolean;
	/** Tool call ids of the reply that have a recorded result, in call order. */
	answered: string[];
	/** Tool call ids of the reply with no recorded result (failed or interrupted replies). */
	unanswered: string[];
}

/** One user message and the requests made for it, in order. */
export interface RecordedTurn {
	entryId: string;
	/** The user message's timestamp, ms since epoch. */
	at: number;
	/** The message's text parts, joined with blank lines. */
	text: string;
	/** "steer": typed while the previous turn ran; Pi delivered it after that turn's last tool results. */
	delivery: "prompt" | "steer";
	requests: RecordedRequest[];
}

export type ScriptNoteKind =
	| "compaction"
	| "branch-summary"
	| "model-change"
	| "thinking-level-change"
	| "bash-execution"
	| "custom-message"
	| "image"
	| "retried"
	| "unreachable"
	| "other";

/** Something in the log a replay does not play as a request, with where it stood. */
export interface ScriptNote {
	kind: ScriptNoteKind;
	entryId: string;
	/** Index of the turn it falls in (-1 before the first user message). */
	turn: number;
	/** Number of that turn's requests recorded before it. */
	afterRequests: number;
	/** One line saying what it is (a model id, a command, why a reply is not played). */
	detail: string;
}

export interface RecordedScript {
	turns: RecordedTurn[];
	/** Every recorded tool result by tool call id (several if the log has several). */
	results: ReadonlyMap<string, RecordedToolResult[]>;
	notes: ScriptNote[];
	/** Provider and model that answered the most successful requests (the earliest on a tie), if any. */
	model?: { provider: string; id: string };
}

/** Milliseconds of an entry: the message's own timestamp when it has one, else the entry's ISO stamp. */
function entryTime(entry: SessionEntry): number {
	if (entry.type === "message") {
		const stamp = (entry.message as { timestamp?: unknown }).timestamp;
		if (typeof stamp === "number" && Number.isFinite(stamp)) return stamp;
	}
	const parsed = Date.parse(entry.timestamp);
	return Number.isFinite(parsed) ? parsed : 0;
}

function isFailedReply(message: AssistantMessage): boolean {
	return message.stopReason === "error" || message.stopReason === "aborted";
}

function toolCallIds(message: AssistantMessage): string[] {
	return message.content.flatMap((part) => (part.type === "toolCall" ? [part.id] : []));
}

function userText(content: unknown): { text: string; images: number } {
	if (typeof content === "string") return { text: content, images: 0 };
	if (!Array.isArray(content)) return { text: "", images: 0 };
	const texts: string[] = [];
	let images = 0;
	for (const part of content as { type?: string; text?: unknown }[]) {
		if (part.type === "text" && typeof part.text === "string") texts.push(part.text);
		else if (part.type === "image") images++;
	}
	return { text: texts.join("\n\n"), images };
}

/** Every tool result of the branch by tool call id, in branch order. */
function collectResults(branch: readonly SessionEntry[]): Map<string, RecordedToolResult[]> {
	const results = new Map<string, RecordedToolResult[]>();
	for (const entry of branch) {
		if (entry.type !== "message" || entry.message.role !== "toolResult") continue;
		const message = entry.message as ToolResultMessage;
		const recorded: RecordedToolResult = {
			entryId: entry.id,
			toolCallId: message.toolCallId,
			toolName: message.toolName,
			content: message.content,
			isError: message.isError,
			...(message.details === undefined ? {} : { details: message.details }),
		};
		const list = results.get(message.toolCallId);
		if (list) list.push(recorded);
		else results.set(message.toolCallId, [recorded]);
	}
	return results;
}

/** What the last message of the branch so far was, as far as request order cares. */
type Previous = "none" | "user" | "tool-result" | "reply-ended" | "reply-calls" | "reply-failed";

/** The replay script of a recorded linear branch (oldest entry first). */
export function recordedScript(branch: readonly SessionEntry[]): RecordedScript {
	const results = collectResults(branch);
	const turns: RecordedTurn[] = [];
	const notes: ScriptNote[] = [];
	let previous: Previous = "none";

	const note = (kind: ScriptNoteKind, entryId: string, detail: string): void => {
		const turn = turns.at(-1);
		notes.push({ kind, entryId, turn: turns.length - 1, afterRequests: turn?.requests.length ?? 0, detail });
	};

	for (const entry of branch) {
		switch (entry.type) {
			case "message":
				break;
			case "compaction":
				note("compaction", entry.id, `compaction of ${entry.tokensBefore} tokens`);
				continue;
			case "branch_summary":
				note("branch-summary", entry.id, "branch summary");
				continue;
			case "model_change":
				note("model-change", entry.id, `${entry.provider}/${entry.modelId}`);
				continue;
			case "thinking_level_change":
				note("thinking-level-change", entry.id, entry.thinkingLevel);
				continue;
			case "custom_message":
				note("custom-message", entry.id, entry.customType);
				continue;
			default:
				// custom, label, session_info, usage, context_edit: not part of any request's messages as recorded.
				continue;
		}
		const message = entry.message;
		switch (message.role) {
			case "user": {
				const { text, images } = userText(message.content);
				turns.push({
					entryId: entry.id,
					at: entryTime(entry),
					text,
					delivery: previous === "tool-result" ? "steer" : "prompt",
					requests: [],
				});
				if (images > 0) note("image", entry.id, `${images} image(s) in the user message, not replayed`);
				previous = "user";
				break;
			}
			case "assistant": {
				const reply = message as AssistantMessage;
				const turn = turns.at(-1);
				if (turn === undefined || previous === "reply-ended" || previous === "reply-calls") {
					note("unreachable", entry.id, "a reply with no new input before it: no request reaches it");
					break;
				}
				if (previous === "reply-failed") {
					// The failed reply before this one was retried on the same context: this reply answers that request.
					const failed = turn.requests.pop();
					if (failed) {
						notes.push({
							kind: "retried",
							entryId: failed.entryId,
							turn: turns.length - 1,
							afterRequests: turn.requests.length,
							detail: `failed reply retried: ${failed.reply.errorMessage ?? failed.reply.stopReason}`,
						});
					}
				}
				const ids = toolCallIds(reply);
				const failed = isFailedReply(reply);
				turn.requests.push({
					entryId: entry.id,
					at: entryTime(entry),
					reply,
					failed,
					answered: ids.filter((id) => results.has(id)),
					unanswered: ids.filter((id) => !results.has(id)),
				});
				previous = failed ? "reply-failed" : ids.length > 0 ? "reply-calls" : "reply-ended";
				break;
			}
			case "toolResult":
				previous = "tool-result";
				break;
			case "bashExecution":
				note("bash-execution", entry.id, (message as { command?: string }).command ?? "");
				break;
			default:
				note("other", entry.id, `message role ${(message as { role: string }).role}`);
				break;
		}
	}
	const model = mainModel(turns);
	return { turns, results, notes, ...(model ? { model } : {}) };
}

/** The model of most successful replies; the earliest seen wins a tie (Map keeps insertion order). */
function mainModel(turns: readonly RecordedTurn[]): RecordedScript["model"] {
	const counts = new Map<string, { provider: string; id: string; count: number }>();
	for (const request of turns.flatMap((turn) => turn.requests)) {
		if (request.failed) continue;
		const key = `${request.reply.provider}\u0000${request.reply.model}`;
		const seen = counts.get(key) ?? { provider: request.reply.provider, id: request.reply.model, count: 0 };
		seen.count++;
		counts.set(key, seen);
	}
	let best: { provider: string; id: string; count: number } | undefined;
	for (const candidate of counts.values()) if (!best || candidate.count > best.count) best = candidate;
	return best && { provider: best.provider, id: best.id };
}

/**
 * Orphaned tool-result repair for the outgoing model context.
 *
 * A cut made by another compaction owner, a crashed turn or a hand-edited
 * session can leave a tool result without its call, or a call without its
 * result; providers refuse both. `repairToolPairing` fixes the message list a
 * `context` handler receives, never the session log:
 * - a `toolResult` stays only when the nearest preceding assistant message
 *   issued its `toolCallId` and no earlier result (real or synthetic) answered
 *   it; otherwise it is dropped;
 * - a non-final assistant message whose calls have no result before the next
 *   user-like message (or the end of the list) gets one synthetic error result
 *   per missing call, placed after the results that did arrive.
 * Assistant messages that ended in `error` or `aborted` get no synthetic
 * results and answer nothing: pi-ai drops them before the provider request, so
 * a result kept for one of their calls would reach the provider as an orphan.
 *
 * "User-like" follows Pi's `convertToLlm`: user, custom, branch and compaction
 * summaries and included bash executions become user messages on the wire and
 * end a result block; roles it drops (excluded bash executions, unknown roles)
 * and system messages are transparent. A list without defects is returned as
 * the same array, so prompt caching and later handlers see no change.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { AssistantMessage, ToolCall, ToolResultMessage } from "@earendil-works/pi-ai";
import { PRODUCT_NAME } from "../product.ts";
import { DROPPED_STOP_REASONS } from "./closure.ts";

/**
 * Text of a synthetic result for a call that was never answered. The spec
 * writes "(repaired by Fabric)"; it is prose the model reads, not a wire
 * identifier, so it names the one product (issue 19.5).
 */
export const MISSING_RESULT_TEXT = `Tool result missing (repaired by ${PRODUCT_NAME})`;

/** Roles Pi's `convertToLlm` turns into user messages (bash executions only when included). */
const USER_LIKE_ROLES: ReadonlySet<string> = new Set(["user", "custom", "branchSummary", "compactionSummary"]);

export interface RepairResult {
	/** The repaired list; the input array itself when nothing was wrong. */
	messages: AgentMessage[];
	/** Dropped results, by call id and input position. */
	dropped: { toolCallId: string; index: number }[];
	/** Synthetic results added, by call id and the input position of their assistant message. */
	synthesized: { toolCallId: string; assistantIndex: number }[];
}

function endsResultBlock(message: AgentMessage): boolean {
	if (message.role === "bashExecution")
		return (message as { excludeFromContext?: unknown }).excludeFromContext !== true;
	return USER_LIKE_ROLES.has(message.role);
}

function toolCallsOf(message: AssistantMessage): ToolCall[] {
	if (DROPPED_STOP_REASONS.has(message.stopReason) || !Array.isArray(message.content)) return [];
	return message.content.filter((part): part is ToolCall => part?.type === "toolCall" && typeof part.id === "string");
}

/** A deterministic error result for an unanswered call (timestamp from its assistant message, never the clock). */
export function missingResult(call: ToolCall, assistant: AssistantMessage): ToolResultMessage {
	return {
		role: "toolResult",
		toolCallId: call.id,
		toolName: call.name,
		content: [{ type: "text", text: MISSING_RESULT_TEXT }],
		isError: true,
		timestamp: assistant.timestamp,
	};
}

interface OpenAssistant {
	message: AssistantMessage;
	index: number;
	calls: ToolCall[];
	answered: Set<string>;
}

/** Repair tool call/result pairing; see the module comment. Pure; never mutates its input. */
export function repairToolPairing(messages: readonly AgentMessage[]): RepairResult {
	const out: AgentMessage[] = [];
	const dropped: RepairResult["dropped"] = [];
	const synthesized: RepairResult["synthesized"] = [];
	let open: OpenAssistant | undefined;
	const closeBlock = (): void => {
		if (!open) return;
		for (const call of open.calls) {
			if (open.answered.has(call.id)) continue;
			open.answered.add(call.id);
			out.push(missingResult(call, open.message));
			synthesized.push({ toolCallId: call.id, assistantIndex: open.index });
		}
	};
	messages.forEach((message, index) => {
		if (message.role === "assistant") {
			closeBlock();
			open = { message, index, calls: toolCallsOf(message), answered: new Set() };
			out.push(message);
			return;
		}
		if (message.role === "toolResult") {
			const id = message.toolCallId;
			if (open && !open.answered.has(id) && open.calls.some((call) => call.id === id)) {
				open.answered.add(id);
				out.push(message);
			} else {
				dropped.push({ toolCallId: typeof id === "string" ? id : "", index });
			}
			return;
		}
		if (endsResultBlock(message)) closeBlock();
		out.push(message);
	});
	// A final assistant message is still waiting for its results; any earlier one is not.
	if (open && open.index < messages.length - 1) closeBlock();
	if (dropped.length === 0 && synthesized.length === 0) {
		return { messages: messages as AgentMessage[], dropped, synthesized };
	}
	return { messages: out, dropped, synthesized };
}

/**
 * The price-blind reference policy of the host replay (pure; bench only,
 * independent of pi-fold's code).
 *
 * Issue 20 measured this crude policy at 0.55–0.66× native: at a turn's end,
 * once the window's estimate passes a trigger of T tokens, replace everything
 * older than a fresh tail of K tokens with ten-token stubs. It keeps no brief
 * and no recall, so it is lossy: it bounds what deep, rare commits can save,
 * it is not a policy to ship. Stubbed:
 * - tool results: one stub text part (the call id and tool name stay, so
 *   every call still has its result and the provider's pairing rule holds);
 * - assistant messages: thinking dropped, text longer than a stub replaced by
 *   a stub, every tool call's arguments replaced by a stub (id and name kept);
 * - user and custom messages longer than a stub: a stub.
 * An entry already stubbed is left alone, so a second pass only adds entries
 * that have aged out of the tail since.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { ContextEditEntryDraft, ProjectedSessionEntry } from "@earendil-works/pi-coding-agent";
import type { ReferenceSetup } from "./config.ts";

/** About ten tokens at Pi's chars/4 estimate. */
export const STUB_TEXT = "[elided by the reference policy]";
/** Characters per token of the policy's estimate (Pi's own rough ratio). */
const CHARS_PER_TOKEN = 4;

/** Issue 20's setting: trigger 40k, tail 8k. */
export const DEFAULT_REFERENCE: ReferenceSetup = { triggerTokens: 40_000, tailTokens: 8_000 };

type Content = NonNullable<ContextEditEntryDraft["replacement"]>["content"];

function estimateTokens(messages: readonly AgentMessage[]): number {
	let chars = 0;
	for (const message of messages) chars += JSON.stringify(message).length;
	return Math.ceil(chars / CHARS_PER_TOKEN);
}

function isStubText(part: { type: string; text?: string }): boolean {
	return part.type === "text" && part.text === STUB_TEXT;
}

/** The stubbed content of one message, or undefined when it cannot be edited or is stubbed already. */
export function stubbedContent(message: AgentMessage): Content | undefined {
	switch (message.role) {
		case "toolResult": {
			const content = message.content;
			if (content.length === 1 && content[0] && isStubText(content[0])) return undefined;
			return [{ type: "text", text: STUB_TEXT }];
		}
		case "assistant": {
			let changed = false;
			const parts = message.content.flatMap((part): (typeof message.content)[number][] => {
				if (part.type === "thinking") {
					changed = true;
					return [];
				}
				if (part.type === "text") {
					if (part.text.length <= STUB_TEXT.length) return [part];
					changed = true;
					return [{ type: "text", text: STUB_TEXT }];
				}
				if (part.type === "toolCall") {
					const args = part.arguments as Record<string, unknown>;
					if (Object.keys(args).length === 1 && args.stub === STUB_TEXT) return [part];
					changed = true;
					return [{ ...part, arguments: { stub: STUB_TEXT } }];
				}
				return [part];
			});
			return changed ? parts : undefined;
		}
		case "user":
		case "custom": {
			const content = message.content;
			const text = typeof content === "string" ? content : JSON.stringify(content);
			if (text.length <= STUB_TEXT.length || text === STUB_TEXT) return undefined;
			if (Array.isArray(content) && content.length === 1 && content[0] && isStubText(content[0])) return undefined;
			return [{ type: "text", text: STUB_TEXT }];
		}
		default:
			// bashExecution, compaction and branch summaries cannot take a context edit.
			return undefined;
	}
}

/** The drafts one turn end makes: none under the trigger, else a stub for every editable entry older than the tail. */
export function referenceDrafts(
	entries: readonly ProjectedSessionEntry[],
	setup: ReferenceSetup,
): ContextEditEntryDraft[] {
	const sizes = entries.map((entry) => estimateTokens(entry.messages));
	const total = sizes.reduce((sum, size) => sum + size, 0);
	if (total <= setup.triggerTokens) return [];
	// The fresh tail: newest entries back to at least tailTokens.
	let tail = 0;
	let firstKept = entries.length;
	while (firstKept > 0 && tail < setup.tailTokens) {
		firstKept--;
		tail += sizes[firstKept] ?? 0;
	}
	const drafts: ContextEditEntryDraft[] = [];
	for (const entry of entries.slice(0, firstKept)) {
		const [message, ...rest] = entry.messages;
		// An entry projects to one message when it can be edited (Pi edits message and custom-message entries).
		if (!message || rest.length > 0) continue;
		if (entry.sourceEntry.type !== "message" && entry.sourceEntry.type !== "custom_message") continue;
		const content = stubbedContent(message);
		if (content) drafts.push({ type: "context_edit", targetId: entry.sourceEntry.id, replacement: { content } });
	}
	return drafts;
}

/**
 * What a model sees of a request, as plain data the out-of-view scorer reads
 * (pure): each message as its role and its segments (a text, one tool call,
 * one tool result), each segment with a key that says whether two requests
 * sent the same thing and the text a reference can be found in.
 *
 * The rendering follows what a provider receives, not how a host stores it,
 * so a recorded log read through Pi's `convertToLlm` and a chat-completions
 * request body on the wire (bench/host-replay/view.ts) give the same keys for
 * the same message: user text parts joined with a blank line (as a replay
 * sends a recorded prompt), assistant text parts joined with nothing and
 * blank ones dropped (as pi-ai sends them back), tool-result text parts
 * joined with a newline (as pi-ai does), a call as its name and its
 * arguments' canonical JSON. Reasoning is left out: providers drop or
 * re-encode it on the way back, and a recording may hold it only redacted,
 * so it is neither a source nor a place a reference can be seen. Images are
 * left out (no text to find).
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { Message } from "@earendil-works/pi-ai";
import { convertToLlm } from "@earendil-works/pi-coding-agent";
import { canonicalJson } from "../../session/canonical.ts";

/** Who a message is from, as the provider sees it ("system": the system prompt or a mid-conversation system message). */
export type ViewRole = "system" | "user" | "assistant" | "tool";

/** One thing a request carries: a text, a tool call, or a tool result. */
export interface ViewSegment {
	kind: "text" | "call" | "result";
	/** Identity: two segments with one key sent the same thing. */
	key: string;
	/** Where references are found: the text, or a call's string argument values one per line. */
	text: string;
	/** A call's tool name and arguments (for recognising edits). */
	call?: { name: string; arguments: unknown };
}

export interface ViewMessage {
	role: ViewRole;
	segments: ViewSegment[];
}

/** How user text parts are joined: a replay sends a recorded prompt's parts as one text with blank lines between. */
export const USER_PART_SEPARATOR = "\n\n";
/** How assistant text parts are joined when sent back (pi-ai's chat-completions conversion joins them with nothing). */
export const ASSISTANT_PART_SEPARATOR = "";
/** How tool-result text parts are joined (pi-ai's conversion). */
export const RESULT_PART_SEPARATOR = "\n";

/** pi-ai's text for a tool result with neither text nor image. */
export const EMPTY_RESULT = "(no tool output)";
/** pi-ai's text for a tool result with only images. */
export const IMAGE_ONLY_RESULT = "(see attached image)";

/** Every string leaf of a value, depth first, in key order: where a call's references are. */
export function stringLeaves(value: unknown, out: string[] = []): string[] {
	if (typeof value === "string") out.push(value);
	else if (Array.isArray(value)) for (const item of value) stringLeaves(item, out);
	else if (typeof value === "object" && value !== null)
		for (const key of Object.keys(value).sort()) stringLeaves((value as Record<string, unknown>)[key], out);
	return out;
}

/** The text segment of `text` from `role`, or none when it is blank. */
export function textSegment(role: ViewRole, text: string): ViewSegment[] {
	return text.trim().length === 0 ? [] : [{ kind: "text", key: `${role}\u0000${text}`, text }];
}

/** A tool call's segment. */
export function callSegment(name: string, args: unknown): ViewSegment {
	return {
		kind: "call",
		key: `call\u0000${name}\u0000${canonicalJson(args ?? {})}`,
		text: stringLeaves(args).join("\n"),
		call: { name, arguments: args },
	};
}

/** A tool result's segment (empty results too: a call is always answered). */
export function resultSegment(text: string): ViewSegment {
	return { kind: "result", key: `result\u0000${text}`, text };
}

/** Which text parts a provider conversion drops: empty ones (user), blank ones (assistant), none (tool results). */
type Drop = "empty" | "blank" | "none";

/** The text parts of a content (a string, or parts of which the text ones count), joined. */
export function partsText(content: unknown, separator: string, drop: Drop): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	const texts: string[] = [];
	for (const part of content as { type?: unknown; text?: unknown }[]) {
		if (part?.type !== "text" || typeof part.text !== "string") continue;
		if (drop === "empty" && part.text.length === 0) continue;
		if (drop === "blank" && part.text.trim().length === 0) continue;
		texts.push(part.text);
	}
	return texts.join(separator);
}

/** What pi-ai sends for a result with no text: a placeholder (so a result's key is the same on both sides). */
export function resultText(content: unknown): string {
	const text = partsText(content, RESULT_PART_SEPARATOR, "none");
	if (text.trim().length > 0) return text;
	const images = Array.isArray(content) && content.some((part) => (part as { type?: unknown })?.type === "image");
	return images ? IMAGE_ONLY_RESULT : EMPTY_RESULT;
}

/** One provider message (pi-ai's `Message`) as the model sees it. */
export function viewOfMessage(message: Message): ViewMessage {
	switch (message.role) {
		case "user":
			return { role: "user", segments: textSegment("user", partsText(message.content, USER_PART_SEPARATOR, "empty")) };
		case "assistant": {
			const text = partsText(message.content, ASSISTANT_PART_SEPARATOR, "blank");
			const calls = message.content.flatMap((part) =>
				part.type === "toolCall" ? [callSegment(part.name, part.arguments)] : [],
			);
			return { role: "assistant", segments: [...textSegment("assistant", text), ...calls] };
		}
		case "toolResult":
			return { role: "tool", segments: [resultSegment(resultText(message.content))] };
		default: {
			const system = message as { content?: unknown };
			return { role: "system", segments: textSegment("system", partsText(system.content, "\n", "none")) };
		}
	}
}

/**
 * A view of host messages (Pi's `AgentMessage`s: custom, bash and summary
 * messages included), converted as Pi converts them for the provider and
 * memoized per message object (Pi reuses an entry's message object in every
 * request it builds). A message Pi does not send gives no view.
 */
export function agentMessageViewer(): (message: AgentMessage) => ViewMessage | undefined {
	const memo = new WeakMap<object, ViewMessage | null>();
	return (message) => {
		let view = memo.get(message);
		if (view === undefined) {
			const [converted] = convertToLlm([message]);
			view = converted ? viewOfMessage(converted) : null;
			memo.set(message, view);
		}
		return view ?? undefined;
	};
}

/**
 * A chat-completions request as the out-of-view scorer reads it (pure): each
 * wire message as a `ViewMessage` with the keys src/cost/out-of-view/view.ts
 * gives the same message read from a log (user text parts joined with a
 * blank line, assistant text as sent, each call's arguments parsed back,
 * tool results as sent), the system prompt as a system message, the tool
 * declarations as text. Views are memoized per canonical prompt line, so a
 * run's many requests convert each distinct message once.
 */

import type { SentRequest } from "../../src/cost/out-of-view/scorer.ts";
import {
	callSegment,
	partsText,
	resultSegment,
	textSegment,
	USER_PART_SEPARATOR,
	type ViewMessage,
} from "../../src/cost/out-of-view/view.ts";
import type { WireMessage } from "../../test/harness/provider-rules.ts";

function parsedArguments(raw: string | undefined): unknown {
	if (raw === undefined || raw.length === 0) return {};
	try {
		return JSON.parse(raw) as unknown;
	} catch {
		// Arguments that are not JSON reach the model as the text they are.
		return raw;
	}
}

/** One wire message as the model sees it. */
export function viewOfWireMessage(message: WireMessage): ViewMessage {
	switch (message.role) {
		case "system":
		case "developer":
			return { role: "system", segments: textSegment("system", partsText(message.content, "\n", "none")) };
		case "user":
			return { role: "user", segments: textSegment("user", partsText(message.content, USER_PART_SEPARATOR, "empty")) };
		case "assistant": {
			const calls = (message.tool_calls ?? []).map((call) =>
				callSegment(call.function?.name ?? "", parsedArguments(call.function?.arguments)),
			);
			return {
				role: "assistant",
				segments: [...textSegment("assistant", partsText(message.content, "", "blank")), ...calls],
			};
		}
		case "tool":
			return { role: "tool", segments: [resultSegment(partsText(message.content, "\n", "none"))] };
		default:
			return { role: "user", segments: textSegment("user", partsText(message.content, "\n", "none")) };
	}
}

/** A converter of whole requests (prompt lines in, `SentRequest` out), memoized per line for one run. */
export function wireRequestViewer(): (body: {
	messages: readonly WireMessage[];
	tools?: readonly unknown[];
}) => SentRequest {
	const memo = new Map<string, ViewMessage>();
	return (body) => {
		const messages = body.messages.map((message) => {
			const key = JSON.stringify(message);
			let view = memo.get(key);
			if (!view) {
				view = viewOfWireMessage(message);
				memo.set(key, view);
			}
			return view;
		});
		const declarations = (body.tools ?? []).map((tool) => JSON.stringify(tool));
		return { messages, declarations };
	};
}

/**
 * A message reads the same to the out-of-view scorer from a log (Pi's
 * messages through `convertToLlm`) and from the wire (the chat-completions
 * body pi-ai sent): the same segment keys, so a reference the log's message
 * holds is found raw in the request that carried it.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { describe, expect, it } from "vitest";
import { viewOfWireMessage, wireRequestViewer } from "../../../bench/host-replay/view.ts";
import { agentMessageViewer, EMPTY_RESULT } from "../../../src/cost/out-of-view/view.ts";

const keys = (view: { segments: { key: string }[] } | undefined) => view?.segments.map((segment) => segment.key);

describe("a message seen from the log and from the wire", () => {
	const fromLog = agentMessageViewer();

	it("gives the same keys to user text, assistant text and calls, and tool results", () => {
		const user = { role: "user", content: [{ type: "text", text: "fix it" }], timestamp: 1 } as AgentMessage;
		const assistant = {
			role: "assistant",
			content: [
				{ type: "thinking", thinking: "hmm" },
				{ type: "text", text: "Reading " },
				{ type: "text", text: "  " },
				{ type: "text", text: "src/a.ts" },
				{ type: "toolCall", id: "c1", name: "read", arguments: { path: "src/a.ts", limit: 20 } },
			],
			timestamp: 2,
		} as unknown as AgentMessage;
		const result = {
			role: "toolResult",
			toolCallId: "c1",
			toolName: "read",
			content: [
				{ type: "text", text: "line one" },
				{ type: "text", text: "line two" },
			],
			isError: false,
			timestamp: 3,
		} as AgentMessage;
		const empty = { ...result, content: [] } as AgentMessage;
		expect(keys(viewOfWireMessage({ role: "user", content: "fix it" }))).toEqual(keys(fromLog(user)));
		expect(
			keys(
				viewOfWireMessage({
					role: "assistant",
					content: "Reading src/a.ts",
					reasoning_content: "hmm",
					tool_calls: [{ id: "c1", function: { name: "read", arguments: '{"limit":20,"path":"src/a.ts"}' } }],
				}),
			),
		).toEqual(keys(fromLog(assistant)));
		expect(keys(viewOfWireMessage({ role: "tool", tool_call_id: "c1", content: "line one\nline two" }))).toEqual(
			keys(fromLog(result)),
		);
		expect(keys(viewOfWireMessage({ role: "tool", tool_call_id: "c1", content: EMPTY_RESULT }))).toEqual(
			keys(fromLog(empty)),
		);
	});

	it("reads the system prompt as the prefix and the declarations as text", () => {
		const sent = wireRequestViewer()({
			messages: [
				{ role: "system", content: "You are pi." },
				{ role: "user", content: [{ type: "text", text: "go" }] },
			],
			tools: [{ type: "function", function: { name: "read", description: "Read a file" } }],
		});
		expect(sent.messages.map((message) => message.role)).toEqual(["system", "user"]);
		expect(sent.declarations).toEqual(['{"type":"function","function":{"name":"read","description":"Read a file"}}']);
	});
});

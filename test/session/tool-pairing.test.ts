import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { ToolResultMessage } from "@earendil-works/pi-ai";
import { describe, expect, it } from "vitest";
import { MISSING_RESULT_TEXT, repairToolPairing } from "../../src/session/tool-pairing.ts";
import { msg } from "../fixtures/compaction-host.ts";

/** Compact shape of a list: role plus call ids or result id, so expectations read like the wire. */
function shape(messages: readonly AgentMessage[]): string[] {
	return messages.map((message) => {
		if (message.role === "assistant") {
			const ids = message.content.flatMap((part) => (part.type === "toolCall" ? [part.id] : []));
			return ids.length > 0 ? `assistant(${ids.join(",")})` : "assistant";
		}
		if (message.role === "toolResult") {
			const text = message.content[0]?.type === "text" ? message.content[0].text : "";
			return text === MISSING_RESULT_TEXT ? `missing(${message.toolCallId})` : `result(${message.toolCallId})`;
		}
		return message.role;
	});
}

describe("repairToolPairing", () => {
	it("returns the very same array when the pairing is sound", () => {
		const messages = [
			msg.user("go"),
			msg.assistant(["a", "b"]),
			msg.result("b"),
			msg.result("a"),
			msg.assistant(),
			msg.user("next"),
		];
		const repaired = repairToolPairing(messages);
		expect(repaired.messages).toBe(messages);
		expect(repaired.dropped).toEqual([]);
		expect(repaired.synthesized).toEqual([]);
	});

	it("drops a result whose call is not in the nearest preceding assistant message", () => {
		// The shape another owner's cut leaves: the kept tail starts with a result.
		const messages = [msg.custom("summary"), msg.result("lost"), msg.user("go"), msg.assistant(["a"]), msg.result("a")];
		const repaired = repairToolPairing(messages);
		expect(shape(repaired.messages)).toEqual(["custom", "user", "assistant(a)", "result(a)"]);
		expect(repaired.dropped).toEqual([{ toolCallId: "lost", index: 1 }]);
	});

	it("drops a result that answers a call of an earlier assistant message", () => {
		const messages = [msg.assistant(["a"]), msg.result("a"), msg.assistant(["b"]), msg.result("a"), msg.result("b")];
		expect(shape(repairToolPairing(messages).messages)).toEqual([
			"assistant(a)",
			"result(a)",
			"assistant(b)",
			"result(b)",
		]);
	});

	it("drops a second result for an already answered call", () => {
		const messages = [msg.assistant(["a"]), msg.result("a"), msg.result("a"), msg.user("next")];
		const repaired = repairToolPairing(messages);
		expect(shape(repaired.messages)).toEqual(["assistant(a)", "result(a)", "user"]);
		expect(repaired.dropped).toEqual([{ toolCallId: "a", index: 2 }]);
	});

	it("adds a synthetic error result after the results that arrived, before the next user message", () => {
		const messages = [msg.user("go"), msg.assistant(["a", "b", "c"]), msg.result("b"), msg.user("next")];
		const repaired = repairToolPairing(messages);
		expect(shape(repaired.messages)).toEqual([
			"user",
			"assistant(a,b,c)",
			"result(b)",
			"missing(a)",
			"missing(c)",
			"user",
		]);
		const synthetic = repaired.messages[3] as ToolResultMessage;
		expect(synthetic).toMatchObject({ role: "toolResult", toolCallId: "a", toolName: "read", isError: true });
		// Deterministic: the timestamp comes from the assistant message, not the clock.
		expect(synthetic.timestamp).toBe(2);
		expect(repaired.synthesized).toEqual([
			{ toolCallId: "a", assistantIndex: 1 },
			{ toolCallId: "c", assistantIndex: 1 },
		]);
	});

	it("closes a result block at the next assistant message and at custom messages (user-like on the wire)", () => {
		const messages = [msg.assistant(["a"]), msg.assistant(["b"]), msg.custom("note"), msg.result("b"), msg.user("x")];
		expect(shape(repairToolPairing(messages).messages)).toEqual([
			"assistant(a)",
			"missing(a)",
			"assistant(b)",
			"missing(b)",
			"custom",
			"user",
		]);
	});

	it("treats an excluded bash execution as transparent but an included one as a user message", () => {
		const transparent = [msg.assistant(["a"]), msg.bash(true), msg.result("a"), msg.user("x")];
		expect(repairToolPairing(transparent).messages).toBe(transparent);
		const included = [msg.assistant(["a"]), msg.bash(false), msg.result("a"), msg.user("x")];
		expect(shape(repairToolPairing(included).messages)).toEqual([
			"assistant(a)",
			"missing(a)",
			"bashExecution",
			"user",
		]);
	});

	it("leaves the final assistant message's calls alone: their results are still to come", () => {
		const messages = [msg.user("go"), msg.assistant(["a"])];
		expect(repairToolPairing(messages).messages).toBe(messages);
	});

	it("completes a partially answered batch at the end of the list", () => {
		const messages = [msg.user("go"), msg.assistant(["a", "b"]), msg.result("a")];
		expect(shape(repairToolPairing(messages).messages)).toEqual(["user", "assistant(a,b)", "result(a)", "missing(b)"]);
	});

	it("gives error and aborted assistant messages no synthetic results and drops results for their calls", () => {
		for (const stopReason of ["error", "aborted"] as const) {
			const messages = [msg.user("go"), msg.assistant(["a"], stopReason), msg.result("a"), msg.user("retry")];
			expect(shape(repairToolPairing(messages).messages)).toEqual(["user", "assistant(a)", "user"]);
			const unanswered = [msg.user("go"), msg.assistant(["a"], stopReason), msg.user("retry")];
			expect(repairToolPairing(unanswered).messages).toBe(unanswered);
		}
	});

	it("never mutates its input", () => {
		const messages = [msg.result("x"), msg.assistant(["a"]), msg.user("y")];
		const before = structuredClone(messages);
		repairToolPairing(messages);
		expect(messages).toEqual(before);
	});
});

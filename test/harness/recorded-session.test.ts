import type { AssistantMessage } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { loadSessionFile } from "../../src/session/load.ts";
import { appendLinked, assistantMessage } from "../fixtures/common.ts";
import { REAL_SESSION_NAMES, realSessionPath } from "../fixtures/real-sessions.ts";
import { BranchBuilder } from "../fixtures/session.ts";
import { recordedScript } from "./recorded-session.ts";

function roleCount(branch: readonly SessionEntry[], role: string): number {
	return branch.filter((entry) => entry.type === "message" && entry.message.role === role).length;
}

function failedReply(builder: BranchBuilder, stopReason: "error" | "aborted", calls: string[] = []): string {
	const content = calls.map((id) => ({ type: "toolCall", id, name: "read", arguments: {} }));
	return appendLinked(builder.entries, `f${builder.entries.length}`, {
		type: "message",
		message: { ...assistantMessage(content, stopReason), errorMessage: `${stopReason} on purpose` },
	});
}

describe("recordedScript on the real logs", () => {
	for (const name of REAL_SESSION_NAMES) {
		it(`${name}: every user message, reply and tool result is in the script or a note`, () => {
			const branch = loadSessionFile(realSessionPath(name)).manager.getBranch();
			const script = recordedScript(branch);
			const requests = script.turns.flatMap((turn) => turn.requests);
			const skippedReplies = script.notes.filter((note) => note.kind === "retried" || note.kind === "unreachable");

			expect(script.turns.length).toBe(roleCount(branch, "user"));
			expect(requests.length + skippedReplies.length).toBe(roleCount(branch, "assistant"));
			const resultCount = [...script.results.values()].reduce((sum, list) => sum + list.length, 0);
			expect(resultCount).toBe(roleCount(branch, "toolResult"));
			expect(script.notes.filter((note) => note.kind === "bash-execution").length).toBe(
				roleCount(branch, "bashExecution"),
			);
			expect(script.notes.filter((note) => note.kind === "compaction").length).toBe(
				branch.filter((entry) => entry.type === "compaction").length,
			);

			// Every tool call of every reply is answered by its recorded result, or marked unanswered.
			for (const request of requests) {
				const calls = request.reply.content.flatMap((part) => (part.type === "toolCall" ? [part] : []));
				expect([...request.answered, ...request.unanswered].sort()).toEqual(calls.map((call) => call.id).sort());
				for (const id of request.answered) {
					const [result] = script.results.get(id) ?? [];
					expect(result?.toolName).toBe(calls.find((call) => call.id === id)?.name);
				}
				for (const id of request.unanswered) expect(script.results.has(id)).toBe(false);
				expect(request.failed).toBe(request.reply.stopReason === "error" || request.reply.stopReason === "aborted");
			}
			// Time never runs backwards between requests the replay prices.
			const times = requests.map((request) => request.at);
			expect(times.every((at, index) => index === 0 || at >= (times[index - 1] ?? 0))).toBe(true);
			// Both sessions ran mostly on Anthropic models (the large one started on an OpenAI model).
			expect(script.model?.provider).toBe("anthropic");
		});
	}

	it("reads the large log's shape: turns, failed replies, steering, the one unreachable reply", () => {
		const script = recordedScript(loadSessionFile(realSessionPath("pi-mono-large-session")).manager.getBranch());
		const requests = script.turns.flatMap((turn) => turn.requests);
		expect(script.turns).toHaveLength(88);
		expect(requests).toHaveLength(452);
		expect(requests.filter((request) => request.failed)).toHaveLength(22);
		// Only failed replies left calls without results in this log.
		expect(requests.filter((request) => request.unanswered.length > 0).every((request) => request.failed)).toBe(true);
		expect(script.turns.filter((turn) => turn.delivery === "steer")).toHaveLength(2);
		expect(script.notes.filter((note) => note.kind === "unreachable")).toHaveLength(1);
		expect(script.model).toEqual({ provider: "anthropic", id: "claude-sonnet-4-5" });
	});
});

describe("recordedScript on built branches", () => {
	it("maps prompts, tool rounds and results in order", () => {
		const b = new BranchBuilder();
		b.user("read a");
		b.assistant("", [{ id: "c1", name: "read", args: { path: "a" } }]);
		b.result("c1", "A", "read");
		b.assistant("done");
		b.user("next");
		b.assistant("ok");
		const script = recordedScript(b.entries);
		expect(script.turns.map((turn) => [turn.text, turn.delivery, turn.requests.length])).toEqual([
			["read a", "prompt", 2],
			["next", "prompt", 1],
		]);
		expect(script.turns[0]?.requests[0]?.answered).toEqual(["c1"]);
		expect(script.results.get("c1")?.[0]).toMatchObject({ toolName: "read", isError: false });
		expect(script.notes).toEqual([]);
	});

	it("marks a user message after tool results as steering", () => {
		const b = new BranchBuilder();
		b.user("go");
		b.assistant("", [{ id: "c1", name: "bash" }]);
		b.result("c1", "out", "bash");
		b.user("also check b");
		b.assistant("checked");
		const script = recordedScript(b.entries);
		expect(script.turns.map((turn) => turn.delivery)).toEqual(["prompt", "steer"]);
	});

	it("keeps a failed reply as a request answered by a failure, with its calls unanswered", () => {
		const b = new BranchBuilder();
		b.user("go");
		failedReply(b, "aborted", ["c9"]);
		b.user("again");
		b.assistant("fine");
		const [first] = recordedScript(b.entries).turns;
		expect(first?.requests).toHaveLength(1);
		expect(first?.requests[0]).toMatchObject({ failed: true, answered: [], unanswered: ["c9"] });
	});

	it("notes a retried failure and an unreachable reply instead of playing them", () => {
		const b = new BranchBuilder();
		b.user("go");
		const failed = failedReply(b, "error");
		b.assistant("retried answer");
		const unreachable = b.assistant("a second answer with nothing before it");
		const script = recordedScript(b.entries);
		expect(script.turns[0]?.requests.map((request) => (request.reply as AssistantMessage).stopReason)).toEqual([
			"stop",
		]);
		expect(script.notes.map((note) => [note.kind, note.entryId])).toEqual([
			["retried", failed],
			["unreachable", unreachable],
		]);
	});

	it("leaves a turn whose request left no reply empty, and notes log events where they stood", () => {
		const b = new BranchBuilder();
		b.user("first");
		b.user("second");
		b.assistant("answer");
		appendLinked(b.entries, "m1", { type: "model_change", provider: "p", modelId: "m" });
		appendLinked(b.entries, "k1", {
			type: "compaction",
			summary: "s",
			firstKeptEntryId: "e1",
			tokensBefore: 1234,
		});
		const script = recordedScript(b.entries);
		expect(script.turns.map((turn) => turn.requests.length)).toEqual([0, 1]);
		expect(script.notes).toEqual([
			{ kind: "model-change", entryId: "m1", turn: 1, afterRequests: 1, detail: "p/m" },
			{ kind: "compaction", entryId: "k1", turn: 1, afterRequests: 1, detail: "compaction of 1234 tokens" },
		]);
	});
});

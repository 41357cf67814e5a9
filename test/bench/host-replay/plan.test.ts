import type { ProjectedSessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { buildLedger } from "../../../bench/host-replay/ledger.ts";
import { replayPlan, scriptedReply } from "../../../bench/host-replay/plan.ts";
import { referenceDrafts, STUB_TEXT } from "../../../bench/host-replay/reference.ts";
import { endMismatch, type RunRequest } from "../../../bench/host-replay/run-arm.ts";
import type { RateCard } from "../../../src/pricing/rate-card.ts";
import { appendLinked, assistantMessage } from "../../fixtures/common.ts";
import { BranchBuilder } from "../../fixtures/session.ts";
import type { RecordedRequest } from "../../harness/loopback-provider.ts";
import { recordedScript } from "../../harness/recorded-session.ts";

describe("replayPlan", () => {
	it("serves results by call id, steers after the call before a steered message, and fails a turn with no reply", () => {
		const b = new BranchBuilder();
		b.user("first");
		b.user("read a");
		b.assistant("", [{ id: "c1", name: "read", args: { path: "a" } }]);
		b.result("c1", "A", "read");
		b.user("also b");
		b.assistant("done");
		const plan = replayPlan(b.entries, recordedScript(b.entries));
		expect(plan.serve.toolNames).toEqual(["read"]);
		expect(plan.serve.results.c1).toEqual({ content: [{ type: "text", text: "A" }], isError: false });
		expect(plan.serve.steers).toEqual({ c1: "also b" });
		expect(plan.steps.map((step) => [step.text, step.delivery])).toEqual([
			["first", "prompt"],
			["read a", "prompt"],
			["also b", "steer"],
		]);
		expect(plan.expected.map((request) => ("failure" in request.answer ? "fail" : "reply"))).toEqual([
			"fail",
			"reply",
			"reply",
		]);
		// The steered message reaches the model after the results, so it ends that request.
		expect(plan.expected[2]?.after).toEqual({ user: "also b" });
	});

	it("streams a recorded reply with reasoning and without the calls the log has no result for", () => {
		const b = new BranchBuilder();
		b.user("go");
		appendLinked(b.entries, "a1", {
			type: "message",
			message: assistantMessage(
				[
					{ type: "thinking", thinking: "plan it" },
					{ type: "text", text: "one " },
					{ type: "text", text: "two" },
					{ type: "toolCall", id: "k1", name: "bash", arguments: { command: "ls" } },
					{ type: "toolCall", id: "k2", name: "bash", arguments: { command: "pwd" } },
				],
				"toolUse",
			),
		});
		b.result("k1", "file", "bash");
		const [request] = recordedScript(b.entries).turns[0]?.requests ?? [];
		if (!request) throw new Error("no request");
		expect(scriptedReply(request)).toEqual({
			thinking: "plan it",
			text: "one two",
			toolCalls: [{ id: "k1", name: "bash", arguments: { command: "ls" } }],
		});
	});
});

describe("endMismatch", () => {
	it("accepts a request ending with the expected results or user message, and names what is missing", () => {
		const after = { toolCallIds: ["x", "y"] };
		const expected = { turn: 0, at: 0, answer: { failure: "" }, after };
		const messages = [
			{ role: "user", content: "go" },
			{ role: "assistant", tool_calls: [] },
			{ role: "tool", tool_call_id: "x" },
			{ role: "tool", tool_call_id: "y" },
		];
		expect(endMismatch(messages, expected)).toBeUndefined();
		expect(endMismatch([...messages, { role: "user", content: "steer" }], expected)).toBeUndefined();
		expect(endMismatch(messages.slice(0, 3), expected)).toBe("misses the results of y");
		expect(endMismatch(messages.slice(0, 1), { ...expected, after: { user: "go" } })).toBeUndefined();
		expect(endMismatch(messages, { ...expected, after: { user: "go" } })).toMatch(/ends with tool/);
	});
});

describe("referenceDrafts", () => {
	const entry = (id: string, message: unknown): ProjectedSessionEntry =>
		({ sourceEntry: { type: "message", id }, messages: [message] }) as unknown as ProjectedSessionEntry;
	const big = "x".repeat(4_000);
	const entries = [
		entry("u1", { role: "user", content: [{ type: "text", text: big }] }),
		entry("a1", {
			role: "assistant",
			content: [
				{ type: "thinking", thinking: big },
				{ type: "toolCall", id: "t1", name: "write", arguments: { path: "p", content: big } },
			],
		}),
		entry("r1", { role: "toolResult", toolCallId: "t1", toolName: "write", content: [{ type: "text", text: big }] }),
		entry("u2", { role: "user", content: [{ type: "text", text: big }] }),
	];

	it("does nothing under the trigger", () => {
		expect(referenceDrafts(entries, { triggerTokens: 100_000, tailTokens: 100 })).toEqual([]);
	});

	it("stubs every entry older than the fresh tail, keeping call ids and names", () => {
		const drafts = referenceDrafts(entries, { triggerTokens: 1_000, tailTokens: 900 });
		expect(drafts.map((draft) => draft.targetId)).toEqual(["u1", "a1", "r1"]);
		expect(drafts[1]?.replacement?.content).toEqual([
			{ type: "toolCall", id: "t1", name: "write", arguments: { stub: STUB_TEXT } },
		]);
		expect(drafts[2]?.replacement?.content).toEqual([{ type: "text", text: STUB_TEXT }]);
		// Applied, the same entries need nothing more.
		const applied = entries.map((projected) => {
			const draft = drafts.find((candidate) => candidate.targetId === projected.sourceEntry.id);
			const [message] = projected.messages;
			return draft ? entry(projected.sourceEntry.id, { ...message, content: draft.replacement?.content }) : projected;
		});
		expect(referenceDrafts(applied, { triggerTokens: 100, tailTokens: 900 })).toEqual([]);
	});
});

describe("buildLedger", () => {
	const card: RateCard = {
		name: "t",
		source: "t",
		base: { input: 3, cacheRead: 0.3, cacheWrite: 3.75, output: 15 },
		tiers: [],
		freshInputBilling: "cacheWrite",
	};
	const request = (index: number, prompt: string, reply = true): RecordedRequest =>
		({
			index,
			prompt,
			completionTokens: 10,
			defects: [],
			...(reply ? { reply: { text: "ok" } } : {}),
			body: { messages: [] },
		}) as unknown as RecordedRequest;
	const line = `${"a".repeat(8_000)}\n`;

	it("reads the shared prefix while the cache lives and nothing after the lifetime passed", () => {
		const runs: RunRequest[] = [
			{ request: request(0, line), kind: "agent", at: 0 },
			{ request: request(1, line + line), kind: "agent", at: 300_000 },
			{ request: request(2, line + line + line), kind: "agent", at: 600_001 },
		];
		const ledger = buildLedger(runs, { card, cacheRules: { minCachedTokens: 1_024 }, ttlSeconds: 300 });
		expect(ledger.rows.map((row) => row.cachedTokens)).toEqual([0, 2_000, 0]);
		expect(ledger.uncached).toBe(2_001 + 2_001 + 6_001);
		expect(ledger.cost).toBeCloseTo((10_003 * 3.75 + 2_000 * 0.3 + 30 * 15) / 1e6, 12);
	});

	it("bills no failed request and counts a rewrite only between agent requests", () => {
		const runs: RunRequest[] = [
			{ request: request(0, line), kind: "agent", at: 0 },
			{ request: request(1, "other\n"), kind: "summarization", at: 0 },
			{ request: request(2, line + line, false), kind: "agent", at: 1 },
			{ request: request(3, `b${line}`), kind: "agent", at: 2 },
		];
		const ledger = buildLedger(runs, { card, cacheRules: {}, ttlSeconds: undefined });
		expect([ledger.requests, ledger.unbilled, ledger.rewrites, ledger.summarizations]).toEqual([3, 1, 1, 1]);
	});
});

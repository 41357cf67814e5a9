/**
 * The host replay's tokenizer (`calibratedTokenizer`): the loopback and its
 * ledger count a wire prompt as Pi's estimate of the same messages times the
 * log's scale, which is how `pi-fold report` counts them. Oracle: Pi's own
 * `estimateTokens` on the equivalent Pi messages.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { estimateTokens } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { buildLedger } from "../../bench/host-replay/ledger.ts";
import type { RunRequest } from "../../bench/host-replay/run-arm.ts";
import { namedRateCard } from "../../src/pricing/rate-card.ts";
import { replyCompletionTokens } from "./loopback-provider.ts";
import {
	CHARS_PER_TOKEN,
	calibratedTokenizer,
	canonicalPromptText,
	promptCacheUsage,
	type WireRequestBody,
} from "./provider-rules.ts";

const args = { path: "src/a.ts", content: 'export const a = "x";\n'.repeat(20) };
const result = "line of output\n".repeat(300);
const wire: WireRequestBody = {
	messages: [
		{ role: "user", content: "Add the constant and run the tests." },
		{
			role: "assistant",
			content: "Writing it.",
			reasoning_content: "The file does not exist yet, so write it whole.",
			tool_calls: [{ id: "c1", type: "function", function: { name: "write", arguments: JSON.stringify(args) } }],
		},
		{ role: "tool", tool_call_id: "c1", content: [{ type: "text", text: result }] },
	],
};
const pi = [
	{ role: "user", content: [{ type: "text", text: "Add the constant and run the tests." }], timestamp: 0 },
	{
		role: "assistant",
		content: [
			{ type: "thinking", thinking: "The file does not exist yet, so write it whole." },
			{ type: "text", text: "Writing it." },
			{ type: "toolCall", id: "c1", name: "write", arguments: args },
		],
	},
	{
		role: "toolResult",
		toolCallId: "c1",
		toolName: "write",
		content: [{ type: "text", text: result }],
		isError: false,
	},
] as unknown as AgentMessage[];

describe("calibratedTokenizer", () => {
	it("counts each message as Pi's estimate of it times the scale", () => {
		const scale = 1.3;
		const prompt = canonicalPromptText(wire);
		const usage = promptCacheUsage(prompt, 0, {}, calibratedTokenizer(scale));
		const oracle = pi.reduce((sum, message) => sum + Math.round(scale * estimateTokens(message)), 0);
		expect(usage.promptTokens).toBe(oracle);
		// Without a tokenizer the loopback keeps its characters / 4 of the wire text.
		expect(promptCacheUsage(prompt, 0).promptTokens).toBe(Math.ceil(prompt.length / CHARS_PER_TOKEN));
	});

	it("reads whole shared lines from cache and the line the prefix ends in pro rata", () => {
		const tokenizer = calibratedTokenizer(1);
		const prompt = canonicalPromptText(wire);
		const lines = prompt.split(/(?<=\n)/);
		const firstTwo = (lines[0] ?? "").length + (lines[1] ?? "").length;
		const upToTwo = tokenizer.lineTokens(lines[0] ?? "") + tokenizer.lineTokens(lines[1] ?? "");
		expect(promptCacheUsage(prompt, firstTwo, {}, tokenizer).cachedTokens).toBe(upToTwo);
		const third = lines[2] ?? "";
		const half = Math.floor(third.length / 2);
		expect(promptCacheUsage(prompt, firstTwo + half, {}, tokenizer).cachedTokens).toBe(
			upToTwo + Math.floor((tokenizer.lineTokens(third) * half) / third.length),
		);
		expect(promptCacheUsage(prompt, firstTwo, { minCachedTokens: upToTwo + 1 }, tokenizer).cachedTokens).toBe(0);
	});

	it("is what the ledger bills, and a recorded output wins over the reply's estimate", () => {
		const card = namedRateCard("claude-sonnet-4-5");
		if (!card) throw new Error("card missing");
		const tokenizer = calibratedTokenizer(1.5);
		const prompt = canonicalPromptText(wire);
		const reply = { text: "done" };
		const runs = [
			{
				request: { index: 0, prompt, reply, completionTokens: replyCompletionTokens(reply, tokenizer), defects: [] },
				kind: "agent",
				at: 0,
			},
		] as unknown as RunRequest[];
		const ledger = buildLedger(runs, { card, cacheRules: {}, ttlSeconds: undefined, tokenizer });
		expect(ledger.rows[0]?.promptTokens).toBe(promptCacheUsage(prompt, 0, {}, tokenizer).promptTokens);
		expect(ledger.output).toBe(Math.round(1.5 * Math.ceil("done".length / CHARS_PER_TOKEN)));
		expect(replyCompletionTokens({ ...reply, completionTokens: 77 }, tokenizer)).toBe(77);
	});
});

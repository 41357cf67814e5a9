import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { compactionFileLists, fileListsText } from "../../src/cost/compaction-file-lists.ts";
import { summarizationPromptTokens } from "../../src/cost/native-replay.ts";

const calls = (...list: [string, Record<string, unknown>][]): AgentMessage =>
	({
		role: "assistant",
		content: list.map(([name, args], index) => ({ type: "toolCall", id: `c${index}`, name, arguments: args })),
		timestamp: 0,
	}) as unknown as AgentMessage;

describe("the file lists Pi appends to a compaction summary", () => {
	it("lists files read and files changed, a changed file once, sorted, the previous compaction's carried", () => {
		const previous = {
			type: "compaction",
			details: { readFiles: ["old/read.ts"], modifiedFiles: ["old/changed.ts"] },
		} as unknown as SessionEntry;
		const lists = compactionFileLists(
			[
				calls(["read", { path: "src/b.ts" }], ["read", { path: "src/a.ts" }], ["bash", { command: "cat src/c.ts" }]),
				calls(["edit", { path: "src/b.ts", edits: [] }], ["write", { path: "src/new.ts" }], ["read", { file: "x" }]),
			],
			previous,
		);
		expect(lists).toEqual({
			readFiles: ["old/read.ts", "src/a.ts"],
			modifiedFiles: ["old/changed.ts", "src/b.ts", "src/new.ts"],
		});
		expect(fileListsText(lists)).toBe(
			"\n\n<read-files>\nold/read.ts\nsrc/a.ts\n</read-files>\n\n<modified-files>\nold/changed.ts\nsrc/b.ts\nsrc/new.ts\n</modified-files>",
		);
		expect(fileListsText(compactionFileLists([], undefined))).toBe("");
	});

	it("sizes a summarization request as Pi sends it: each tool result cut to 2,000 characters", () => {
		const result = (chars: number) =>
			({
				role: "toolResult",
				toolCallId: "c0",
				toolName: "read",
				content: [{ type: "text", text: "x".repeat(chars) }],
				isError: false,
				timestamp: 0,
			}) as AgentMessage;
		const small = summarizationPromptTokens([result(1_000)]);
		const large = summarizationPromptTokens([result(100_000)]);
		expect(small).toBeGreaterThan(1_000 / 4);
		expect(large - small).toBeLessThan(1_000 / 4 + 20);
	});
});

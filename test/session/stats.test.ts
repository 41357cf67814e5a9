import { describe, expect, it } from "vitest";
import { loadSessionText } from "../../src/session/load.ts";
import { latestEdits, projectedMessages } from "../../src/session/projection.ts";
import { sessionStats } from "../../src/session/stats.ts";
import { BranchBuilder, toJsonl } from "../fixtures/session.ts";

function load(branch: BranchBuilder) {
	return loadSessionText(toJsonl(branch.entries));
}

describe("projection mapping", () => {
	it("maps every model-visible message to its entry and applies context edits", () => {
		const branch = new BranchBuilder();
		const ask = branch.user("read a");
		const call = branch.assistant("", [{ id: "c1", name: "read" }]);
		const result = branch.result("c1", "contents of a");
		branch.custom("state", { x: 1 });
		branch.edit(result, { content: "brief of a" });
		branch.edit(ask, null);
		const session = load(branch);
		const rows = projectedMessages(session.manager.buildSessionProjection());
		expect(rows.map((row) => [row.index, row.entryId])).toEqual([
			[0, call],
			[1, result],
		]);
		// Pi normalizes a string replacement of a tool result into one text part.
		expect(rows[1]?.message).toMatchObject({ role: "toolResult", content: [{ type: "text", text: "brief of a" }] });
		const edits = latestEdits(session.manager.getBranch());
		expect(edits.get(ask)?.replacement).toBeNull();
		expect(edits.get(result)?.replacement).toEqual({ content: "brief of a" });
	});
});

describe("projection mapping of summaries and custom messages", () => {
	it("maps a compaction summary, a branch summary and a custom message to their own entries", () => {
		const branch = new BranchBuilder();
		const early = branch.user("early");
		branch.assistant("early reply");
		const kept = branch.user("kept");
		const text = { type: "text", text: "x" };
		const entries = [
			...branch.entries,
			{
				type: "compaction",
				id: "c1",
				parentId: "e3",
				timestamp: "t",
				summary: "S",
				firstKeptEntryId: kept,
				tokensBefore: 10,
			},
			{ type: "branch_summary", id: "b1", parentId: "c1", timestamp: "t", fromId: early, summary: "B" },
			{
				type: "custom_message",
				id: "m1",
				parentId: "b1",
				timestamp: "t",
				customType: "note",
				content: [text],
				display: true,
			},
		];
		const session = loadSessionText(toJsonl(entries));
		const rows = projectedMessages(session.manager.buildSessionProjection());
		expect(rows.map((row) => [row.entryId, row.entryType, row.message.role])).toEqual([
			["c1", "compaction", "compactionSummary"],
			[kept, "message", "user"],
			["b1", "branch_summary", "branchSummary"],
			["m1", "custom_message", "custom"],
		]);
	});
});

describe("sessionStats", () => {
	it("counts entries, roles, tool calls, closure defects and usage", () => {
		const branch = new BranchBuilder();
		branch.user("go");
		branch.assistant(
			"",
			[
				{ id: "a", name: "read" },
				{ id: "b", name: "bash" },
			],
			120,
		);
		branch.result("a", "A");
		branch.assistant("done", [], 200);
		const session = load(branch);
		const stats = sessionStats(session.entries, session.manager.buildSessionProjection());
		expect(stats.entriesByType).toEqual({ message: 4 });
		expect(stats.messagesByRole).toEqual({ user: 1, assistant: 2, toolResult: 1 });
		expect(stats.toolCallsByTool).toEqual({ read: 1, bash: 1 });
		expect(stats.closureDefects).toEqual({ missingResult: 1, missingCall: 0, duplicateResult: 0 });
		expect(stats.usage).toMatchObject({ requests: 2, input: 320 });
		expect(stats.contextTokens).toBeGreaterThan(0);
	});
});

import { describe, expect, it } from "vitest";
import {
	BRIEF_MAX_CHARS,
	boundedList,
	deterministicBrief,
	finishBrief,
	labelRanges,
	recallCalls,
	truncateText,
} from "../../../src/fold/briefs/brief.ts";
import { FoldBranch, threeTurns } from "../../fixtures/fold.ts";

const ID = "f-0123456789ab";

function hasLoneSurrogate(text: string): boolean {
	for (let i = 0; i < text.length; i++) {
		const code = text.charCodeAt(i);
		if (code >= 0xd800 && code <= 0xdbff) {
			const next = text.charCodeAt(i + 1);
			if (!(next >= 0xdc00 && next <= 0xdfff)) return true;
			i++;
		} else if (code >= 0xdc00 && code <= 0xdfff) return true;
	}
	return false;
}

describe("deterministic brief", () => {
	it("names the ask, how it ended, the changes, commands, errors and reads, and ends with the recall calls", () => {
		const { entries } = threeTurns();
		const brief = deterministicBrief({ id: ID, kind: "chapter", entries });
		expect(brief).toContain(`Chapter ${ID}: 13 entries, 3 user, 6 assistant, 3 tool calls, 1 failed.`);
		expect(brief).toContain("Ask: Read the config");
		// "Done." is a lead-in-sized sentence, but it is the whole reply.
		expect(brief).toContain("Ended: Done.");
		expect(brief).toContain("Changed: 1 edit in 1 file: src/config.ts");
		expect(brief).toContain("Commands: npm test → failed");
		expect(brief).toContain("Errors: bash npm test: 1 failing");
		expect(brief).toContain("Read: src/config.ts");
		expect(brief).toContain("Tools: read ×1, edit ×1, bash ×1");
		const { peek, expand } = recallCalls(ID);
		expect(peek).toBe(`active_context {"action":"peek","id":"${ID}"}`);
		expect(expand).toBe(`active_context {"action":"expand","id":"${ID}"}`);
		expect(brief.endsWith(expand)).toBe(true);
		expect(brief).toContain(peek);
	});

	it("counts only what a tool batch holds", () => {
		const b = new FoldBranch();
		b.tool({ id: "r", name: "read", args: { path: "a.ts" } });
		const brief = deterministicBrief({ id: ID, kind: "tool-batch", entries: b.entries });
		expect(brief.startsWith(`Tool batch ${ID}: 2 entries, 1 assistant, 1 tool call.\nRead: a.ts\n`)).toBe(true);
	});

	it("uses the configured tool name in the recall calls", () => {
		const { entries } = threeTurns();
		const brief = deterministicBrief({ id: ID, kind: "chapter", entries, toolName: "ctx" });
		expect(brief.endsWith(`ctx {"action":"expand","id":"${ID}"}`)).toBe(true);
		expect(brief).toContain(`ctx {"action":"peek","id":"${ID}"}`);
		expect(brief).not.toContain("active_context");
	});

	it("takes stage labels and search targets from typed arguments, and lists inner folds", () => {
		const b = new FoldBranch();
		b.tool({ id: "s", name: "repo_stage", args: { stage: 12, title: "Parse headers" } });
		b.tool({ id: "g", name: "grep", args: { pattern: "TODO", path: "/repo/src" } });
		b.bash("make", 2);
		b.assistant("broken", { stopReason: "error", errorMessage: "overloaded\nretry later" });
		const brief = deterministicBrief({
			id: ID,
			kind: "consolidation",
			entries: b.entries,
			childFoldIds: ["f-aaaaaaaaaaaa", "f-bbbbbbbbbbbb"],
			cwd: "/repo",
		});
		expect(brief).toContain("Steps: stage 12, title Parse headers");
		expect(brief).toContain("Searches: TODO in src");
		// A search scope is not a file the span read: briefs and summaries list the same files.
		expect(brief).not.toContain("Read:");
		expect(brief).toContain("Commands: !make → exit 2");
		expect(brief).toContain("!make exit 2");
		expect(brief).toContain("response failed: overloaded");
		expect(brief).toContain("Inner folds: f-aaaaaaaaaaaa, f-bbbbbbbbbbbb");
	});

	it("is byte-identical for identical input", () => {
		const first = deterministicBrief({ id: ID, kind: "chapter", entries: threeTurns().entries });
		const second = deterministicBrief({ id: ID, kind: "chapter", entries: threeTurns().entries });
		expect(second).toBe(first);
	});

	it("stays within the bound on a huge span and keeps both recall calls whole", () => {
		const b = new FoldBranch();
		b.user(`${"very long ask ".repeat(200)}`);
		for (let i = 0; i < 300; i++) {
			b.tool(
				{
					id: `c${i}`,
					name: `tool${i % 7}`,
					args: { path: `dir/${"deep/".repeat(10)}file${i}.ts`, command: `run ${i}` },
				},
				"boom",
				true,
			);
		}
		b.assistant("🙂".repeat(500));
		const brief = deterministicBrief({ id: ID, kind: "chapter", entries: b.entries });
		expect(brief.length).toBeLessThanOrEqual(BRIEF_MAX_CHARS);
		expect(brief.endsWith(recallCalls(ID).expand)).toBe(true);
		expect(brief).toContain(recallCalls(ID).peek);
		expect(brief).toContain("more)");
		expect(hasLoneSurrogate(brief)).toBe(false);
	});
});

describe("brief bounding", () => {
	it("cuts a supplied body at a surrogate-safe point and appends the recall calls", () => {
		for (let pad = 0; pad < 4; pad++) {
			const brief = finishBrief(`${"x".repeat(pad)}${"😀".repeat(1000)}`, ID, "active_context");
			expect(brief.length).toBeLessThanOrEqual(BRIEF_MAX_CHARS);
			expect(hasLoneSurrogate(brief)).toBe(false);
			expect(brief.endsWith(recallCalls(ID).expand)).toBe(true);
		}
	});

	it("keeps a short body as is", () => {
		expect(finishBrief("  Did a thing.  ", ID)).toBe(
			`Did a thing.\nRead exact source: ${recallCalls(ID).peek}\nRestore in place: ${recallCalls(ID).expand}`,
		);
	});

	it("truncates text with a mark and never splits a pair", () => {
		expect(truncateText("abcdef", 4)).toBe("abc…");
		expect(truncateText("abc", 4)).toBe("abc");
		expect(truncateText("a😀b", 3)).toBe("a…");
	});

	it("lists items until the bound and counts the rest", () => {
		expect(boundedList(["aa", "bb", "cc", "dd", "ee"], ", ", 16)).toBe("aa, bb (+3 more)");
		expect(boundedList(["aa", "bb", "cc", "dd"], ", ", 14)).toBe("aa, bb, cc, dd");
		expect(boundedList(["aa", "bb"], ", ", 20)).toBe("aa, bb");
		expect(boundedList([], ", ", 20)).toBeUndefined();
		expect(boundedList(["a".repeat(50), "b"], ", ", 20)?.length).toBeLessThanOrEqual(20);
	});

	it("joins consecutive numbered labels of one word into ranges, keeping everything else in order", () => {
		const stages = Array.from({ length: 60 }, (_, i) => `stage ${i + 1}`);
		expect(labelRanges(stages)).toEqual(["stage 1–60"]);
		expect(labelRanges(["stage 1", "stage 2", "step 3", "stage 4", "stage 5", "lint", "stage 7"])).toEqual([
			"stage 1–2",
			"step 3",
			"stage 4–5",
			"lint",
			"stage 7",
		]);
		expect(labelRanges(["stage 2", "stage 1"])).toEqual(["stage 2", "stage 1"]);
	});
});

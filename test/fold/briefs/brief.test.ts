import { describe, expect, it } from "vitest";
import {
	BRIEF_LINE_LIMITS,
	BRIEF_MAX_CHARS,
	boundedList,
	type ChildSpan,
	deterministicBrief,
	finishBrief,
	labelRanges,
	recallCalls,
	truncateText,
} from "../../../src/fold/briefs/brief.ts";
import { createFold } from "../../../src/fold/lattice/lattice.ts";
import { emptyLattice, isRefusal } from "../../../src/fold/lattice/records.ts";
import { analyzeBranch } from "../../../src/fold/lattice/units.ts";
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
		expect(brief.split("\n")[0]).toBe(
			`Chapter ${ID}: 13 entries, 3 user, 6 assistant, 3 tool calls, 1 failed; read src/config.ts, edit src/config.ts, bash npm test.`,
		);
		expect(brief).toContain("Ask: Read the config");
		// "Done." is a lead-in-sized sentence, but it is the whole reply.
		expect(brief).toContain("Ended: Done.");
		expect(brief).toContain("Changed: 1 edit in 1 file: src/config.ts");
		expect(brief).toContain("Commands: npm test → failed");
		expect(brief).toContain("Errors: bash npm test: 1 failing");
		expect(brief).toContain("Read: src/config.ts");
		const { peek, expand } = recallCalls(ID);
		expect(peek).toBe(`active_context {"action":"peek","id":"${ID}"}`);
		expect(expand).toBe(`active_context {"action":"expand","id":"${ID}"}`);
		expect(brief.endsWith(expand)).toBe(true);
		expect(brief).toContain(peek);
	});

	it("leads a tool batch with its call: arguments, result size and first meaningful line", () => {
		const b = new FoldBranch();
		b.calls([{ id: "s58", name: "repo_stage", args: { stage: 58 } }], { text: "Stage 57 noted." });
		b.result("s58", "repo_stage", `\n\nrepo_stage 58 of 64: notes follow.\n${"x".repeat(2048)}`);
		const brief = deterministicBrief({ id: ID, kind: "tool-batch", entries: b.entries });
		const lines = brief.split("\n");
		expect(lines[0]).toBe(`Tool batch ${ID}: repo_stage {"stage":58} → 2.0 KB: repo_stage 58 of 64: notes follow.`);
		// The text before the call is what was said, not how the span ended: a result ends a batch.
		expect(brief).toContain("Said: Stage 57 noted.");
		expect(brief).not.toContain("Ended:");
	});

	it("lists each call of a batch with its outcome; an error shows its own line and exit code", () => {
		const b = new FoldBranch();
		b.calls([
			{ id: "a", name: "read", args: { path: "/repo/src/a.ts", offset: 10 } },
			{ id: "b", name: "bash", args: { command: "npm test" } },
			{ id: "g", name: "grep", args: { pattern: "TODO", path: "/repo/src" } },
		]);
		b.result("a", "read", "/** Module doc */\nexport const a = 1;");
		b.result("b", "bash", "\n> x@1 test\nFAIL test/x.test.ts\nError: boom\nCommand exited with code 1", true);
		b.result("g", "grep", "src/a.ts:12: // TODO");
		const brief = deterministicBrief({ id: ID, kind: "tool-batch", entries: b.entries, cwd: "/repo" });
		expect(brief.split("\n").slice(0, 4)).toEqual([
			`Tool batch ${ID}: 3 calls, 1 failed: read src/a.ts {"offset":10}, bash npm test, grep TODO {"path":"src"}.`,
			'- read src/a.ts {"offset":10} → 37 B: /** Module doc */',
			"- bash npm test → 70 B, error (exit 1): Error: boom",
			'- grep TODO {"path":"src"} → 20 B: src/a.ts:12: // TODO',
		]);
	});

	it("gives two batches of one tool with different arguments different first lines, even past the argument bound", () => {
		const firstLine = (args: Record<string, unknown>) => {
			const b = new FoldBranch();
			b.tool({ id: "c", name: "mcp_query", args }, "same output");
			return deterministicBrief({ id: ID, kind: "tool-batch", entries: b.entries }).split("\n")[0];
		};
		const long = "q".repeat(300);
		const lines = [
			firstLine({ stage: 1 }),
			firstLine({ stage: 2 }),
			firstLine({ sql: `${long}a` }),
			firstLine({ sql: `${long}b` }),
		];
		expect(new Set(lines).size).toBe(lines.length);
		for (const line of lines) expect(line?.length).toBeLessThanOrEqual(BRIEF_LINE_LIMITS.header);
	});

	it("says how a span ended only when a reply ends it", () => {
		const b = new FoldBranch();
		b.user("Run the stages");
		b.calls([{ id: "s1", name: "repo_stage", args: { stage: 1 } }], { text: "Starting with stage one now." });
		b.result("s1", "repo_stage", "stage 1 notes");
		b.calls([{ id: "s2", name: "repo_stage", args: { stage: 2 } }]);
		b.result("s2", "repo_stage", "stage 2 notes");
		const open = deterministicBrief({ id: ID, kind: "chapter", entries: b.entries });
		expect(open).not.toContain("Ended:");
		expect(open.split("\n")[0]).toBe(`Chapter ${ID}: 5 entries, 1 user, 2 assistant, 2 tool calls; stage 1–2.`);
		b.assistant("Both stages are read.");
		expect(deterministicBrief({ id: ID, kind: "chapter", entries: b.entries })).toContain(
			"Ended: Both stages are read.",
		);
	});

	it("indexes a consolidation: each inner fold with a few words, calls by range, and the call that lists them", () => {
		const b = new FoldBranch();
		const children: ChildSpan[] = [];
		for (let stage = 1; stage <= 14; stage++) {
			const start = b.entries.length;
			b.tool({ id: `s${stage}`, name: "repo_stage", args: { stage } }, `stage ${stage} notes`);
			children.push({ id: `f-${String(stage).padStart(12, "0")}`, entries: b.entries.slice(start) });
		}
		b.tool({ id: "p", name: "active_context", args: { action: "peek", id: "f-000000000003" } });
		const brief = deterministicBrief({ id: ID, kind: "consolidation", entries: b.entries, children });
		const lines = brief.split("\n");
		expect(lines[0]).toBe(`Consolidation ${ID}: 30 entries, 14 folds, 15 assistant, 15 tool calls; stage 1–14.`);
		expect(brief).toContain(
			"Inner folds: f-000000000001 repo_stage stage 1; f-000000000002 stage 2; f-000000000003 stage 3;",
		);
		expect(brief).toContain("f-000000000014 stage 14\n");
		expect(brief).toContain("Calls: repo_stage stage 1–14; 1 active_context call");
		// A child's few words keep its whole range; the context tool's own calls never crowd it out.
		const mixed = new FoldBranch();
		for (let stage = 1; stage <= 17; stage++) {
			mixed.tool({ id: `m${stage}`, name: "repo_stage", args: { stage } });
			mixed.tool({ id: `p${stage}`, name: "active_context", args: { action: "peek", id: "f-000000000001" } });
		}
		const outer = deterministicBrief({
			id: ID,
			kind: "consolidation",
			entries: mixed.entries,
			children: [{ id: "f-00000000000a", entries: mixed.entries }],
		});
		expect(outer).toContain("Inner folds: f-00000000000a repo_stage stage 1–17\n");
		expect(brief).toContain(`List the folds inside: ${recallCalls(ID).children}`);
		expect(recallCalls(ID).children).toBe(`active_context {"action":"peek","id":"${ID}","children":true}`);
		expect(brief.length).toBeLessThanOrEqual(BRIEF_MAX_CHARS);
	});

	it("uses the configured tool name in the recall calls", () => {
		const { entries } = threeTurns();
		const brief = deterministicBrief({ id: ID, kind: "chapter", entries, toolName: "ctx" });
		expect(brief.endsWith(`ctx {"action":"expand","id":"${ID}"}`)).toBe(true);
		expect(brief).toContain(`ctx {"action":"peek","id":"${ID}"}`);
		expect(brief).not.toContain("active_context");
	});

	it("takes stage labels and search targets from typed arguments", () => {
		const b = new FoldBranch();
		b.user("Go");
		b.tool({ id: "s", name: "repo_stage", args: { stage: 12, title: "Parse headers" } });
		b.tool({ id: "g", name: "grep", args: { pattern: "TODO", path: "/repo/src" } });
		b.bash("make", 2);
		b.assistant("broken", { stopReason: "error", errorMessage: "overloaded\nretry later" });
		const brief = deterministicBrief({ id: ID, kind: "chapter", entries: b.entries, cwd: "/repo" });
		expect(brief).toContain("Steps: stage 12, title Parse headers");
		expect(brief).toContain('Calls: repo_stage stage 12, grep TODO {"path":"src"}');
		expect(brief).toContain("Searches: TODO in src");
		// A search scope is not a file the span read: briefs and summaries list the same files.
		expect(brief).not.toContain("Read:");
		expect(brief).toContain("Commands: !make → exit 2");
		expect(brief).toContain("!make exit 2");
		expect(brief).toContain("response failed: overloaded");
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

describe("briefs of reads name what was read", () => {
	/** Codex CLI's split shell call: `exec_command` starts it, `write_stdin` reads the rest of its output. */
	function codexSplit(b: FoldBranch) {
		b.tool(
			{ id: "x1", name: "exec_command", args: { cmd: "npm test -- theme", yield_time_ms: 1000 } },
			"Chunk ID: a4767e\nWall time: 1.0 seconds\nProcess running with session ID 7\nOriginal token count: 12\nOutput:\nrunning…",
		);
		return b.tool(
			{ id: "x2", name: "write_stdin", args: { session_id: 7, chars: "" } },
			"Chunk ID: b5878f\nWall time: 4.2 seconds\nProcess exited with code 0\nOriginal token count: 9000\nOutput:\nPASS test/theme.test.ts\n",
		);
	}

	it("names the command a continued host session runs, also when the call that started it sits before the fold", () => {
		const b = new FoldBranch();
		b.user("test the theme");
		const second = codexSplit(b);
		const start = b.entries.findIndex((entry) => entry.id === second);
		const entries = b.entries.slice(start);
		const brief = deterministicBrief({ id: ID, kind: "tool-batch", entries, before: b.entries.slice(0, start) });
		const first = brief.split("\n")[0] ?? "";
		expect(first).toContain("write_stdin npm test -- theme");
		expect(first).toContain("PASS test/theme.test.ts");
		expect(first).not.toContain("Chunk ID");
		// A fold the lattice makes of the second batch alone gets the entries before it.
		const made = createFold(
			emptyLattice(),
			analyzeBranch(b.entries),
			{ kind: "tool-batch", first: "x2" },
			{
				origin: "ladder",
			},
		);
		if (isRefusal(made)) throw new Error(made.message);
		expect(made.record.brief.split("\n")[0]).toContain("write_stdin npm test -- theme");
		// Without the entries before it the call names only its session; never a bare output header.
		const alone = deterministicBrief({ id: ID, kind: "tool-batch", entries }).split("\n")[0] ?? "";
		expect(alone).toContain('write_stdin {"chars":"","session_id":7}');
		expect(alone).not.toContain("Chunk ID");
	});

	it("lists the names a folded read declares and imports, and leaves out arguments every call shares", () => {
		const b = new FoldBranch();
		b.calls([
			{ id: "r1", name: "bash", args: { command: "cat src/theme.ts", timeout_ms: 10_000, workdir: "/repo" } },
			{ id: "r2", name: "bash", args: { command: "cat src/colors.ts", timeout_ms: 10_000, workdir: "/repo" } },
		]);
		b.result("r1", "bash", 'import { Chalk } from "chalk";\nexport function getMarkdownTheme() {}\n');
		b.result("r2", "bash", "export const ColorValueSchema = 1;\n");
		const brief = deterministicBrief({ id: ID, kind: "tool-batch", entries: b.entries });
		expect(brief).toContain("- bash cat src/theme.ts →");
		expect(brief).not.toContain("timeout_ms");
		expect(brief).toContain("Names: ColorValueSchema, getMarkdownTheme");
		expect(brief.length).toBeLessThanOrEqual(BRIEF_MAX_CHARS);
	});

	it("names a large file's code-shaped names first, so the distinctive ones fit", () => {
		const b = new FoldBranch();
		b.calls([{ id: "r", name: "read", args: { path: "src/renderer.ts" } }]);
		const locals = Array.from(
			{ length: 80 },
			(_, k) => `\tconst message${"x".repeat(k % 7)}${String.fromCharCode(97 + (k % 26))} = ${k};`,
		);
		b.result(
			"r",
			"read",
			["export class Renderer {", ...locals, "\tprivate showThemeSelector(): void {", "\t}", "}"].join("\n"),
		);
		const brief = deterministicBrief({ id: ID, kind: "tool-batch", entries: b.entries });
		const names = brief.split("\n").find((line) => line.startsWith("Names: ")) ?? "";
		// The method, declared last in a file of plain-word names, leads the line.
		expect(names).toMatch(/^Names: showThemeSelector, Renderer, message/);
		expect(names).toMatch(/\(\+\d+ more\)$/);
	});
});

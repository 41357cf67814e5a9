/**
 * Summaries that keep the plan (issue 16, item 4): the compactor's three
 * defects, each pinned by a regression test that failed before the fix.
 * (a) A long turn cut in the middle keeps the plan and decisions the agent
 *     stated in it, on generated sessions and on both real logs.
 * (b) Every open failure is listed before any resolved one; a resolved one is
 *     never listed while an open one is sampled out.
 * (c) Resolution by the same command or file is covered in
 *     test/session/facts.test.ts, next to the fact extractor.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { runQa } from "../../../src/compaction/qa/qa.ts";
import { compileSummary } from "../../../src/compaction/summary/compile.ts";
import { projectOutstanding } from "../../../src/compaction/summary/projections-files.ts";
import { fitBlock } from "../../../src/compaction/summary/render-fit.ts";
import { closureSafeBoundaries, toolCallSpans } from "../../../src/session/closure.ts";
import { loadSessionFile } from "../../../src/session/load.ts";
import { normalizeBranch } from "../../../src/session/normalize.ts";
import { REAL_SESSIONS, SessionBuilder } from "../../fixtures/compaction-events.ts";

/**
 * The audit's own reading of a plan line, kept independent of
 * src/session/plan.ts: a numbered step, or a line labelled Plan / Decision /
 * Next steps / Approach. Markdown markers and whitespace are set aside.
 */
const PLAN_LINE = /^(?:\d{1,2}[.)]\s+\S|(?:plan|decision|next steps?|approach)\b[^:\n]{0,40}:)/i;
const flat = (text: string) =>
	text
		.replace(/[*_`#>]/g, "")
		.replace(/\s+/g, " ")
		.trim();

function assistantText(entry: SessionEntry | undefined): string {
	if (entry?.type !== "message" || entry.message.role !== "assistant") return "";
	return entry.message.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n");
}

/** Plan lines stated in entries [from, to) and how many of them the summary carries (first 40 characters). */
function audit(entries: readonly SessionEntry[], from: number, to: number, summary: string) {
	const stated: string[] = [];
	for (let index = from; index < to; index++) {
		for (const line of assistantText(entries[index]).split("\n"))
			if (PLAN_LINE.test(flat(line))) stated.push(flat(line));
	}
	const shown = flat(summary);
	const missing = stated.filter((line) => !shown.includes(line.slice(0, 40)));
	return { stated: stated.length, kept: stated.length - missing.length, missing };
}

/** One long turn: a plan up front, a decision half way, 60 tool calls with short notes between them. */
function longTurn(): { b: SessionBuilder; cut: number } {
	const b = new SessionBuilder();
	b.user("Earlier: set up the repo.");
	b.assistant("Repo is set up.");
	b.user("Migrate the payments service to the v2 API.");
	b.assistant({
		text: "Plan:\n1. Port the schema to v2\n2. Move the handlers behind the v2 router\n3. Delete the v1 client once tests pass",
		calls: [{ id: "c0", name: "read", args: { path: "/repo/schema.sql" } }],
	});
	b.result("c0", "read", "create table payments (...)");
	for (let step = 1; step <= 60; step++) {
		const text =
			step === 30
				? "Decision: keep the v1 webhook endpoint until the partners move; only the client goes."
				: `Step ${step}: looking at file ${step}.`;
		b.tool(
			`c${step}`,
			step % 3 === 0 ? "edit" : "read",
			{ path: `/repo/src/p${step}.ts`, oldText: "a", newText: "b" },
			{
				text,
				output: "x".repeat(2_000),
			},
		);
	}
	// The cut falls inside the turn: the last 10 calls stay raw.
	const cut = b.entries.length - 20;
	for (let step = 61; step <= 70; step++) b.tool(`c${step}`, "read", { path: `/repo/src/q${step}.ts` });
	return { b, cut };
}

describe("(a) a long turn cut in the middle keeps its plan and decisions", () => {
	it("lists every plan line and the decision of a generated turn under [Current Turn Plan]", () => {
		const { b, cut } = longTurn();
		const entries = b.entries.slice(0, cut);
		const result = compileSummary({ entries, keptEntries: b.entries.slice(cut) });
		const found = audit(b.entries, 0, cut, result.text);
		expect(found.stated).toBe(5);
		expect(found.missing).toEqual([]);
		const block = result.text.split("[Current Turn Plan]")[1]?.split("\n\n")[0] ?? "";
		expect(block).toContain('plan: "1. Port the schema to v2"');
		expect(block).toContain('decision: "Decision: keep the v1 webhook endpoint');
		expect(runQa(result.text, result.qa).score).toBe(1);
	});

	it("adds no plan block when the cut falls between turns", () => {
		const { b } = longTurn();
		b.assistant("Migration done.");
		b.user("Thanks. Next: docs.");
		const userIndex = b.entries.length - 1;
		const result = compileSummary({ entries: b.entries.slice(0, userIndex), keptEntries: b.entries.slice(userIndex) });
		expect(result.text).not.toContain("[Current Turn Plan]");
	});

	it("keeps every plan line of the longest turns of both real logs when the cut falls two thirds in", () => {
		let stated = 0;
		let kept = 0;
		for (const path of [REAL_SESSIONS.beforeCompaction, REAL_SESSIONS.large]) {
			const branch = loadSessionFile(path).manager.getBranch();
			const safe = closureSafeBoundaries(branch.length, toolCallSpans(branch));
			const users = branch.flatMap((entry, index) =>
				entry.type === "message" && entry.message.role === "user" ? [index] : [],
			);
			users.push(branch.length);
			for (let turn = 0; turn + 1 < users.length; turn++) {
				const start = users[turn] ?? 0;
				const end = users[turn + 1] ?? 0;
				const replies = [];
				for (let index = start + 1; index < end; index++) if (assistantText(branch[index]).trim()) replies.push(index);
				if (replies.length < 8) continue;
				let cut = replies[Math.floor((replies.length * 2) / 3)] ?? end;
				while (cut < end && !safe[cut]) cut++;
				if (cut >= end) continue;
				const result = compileSummary({ entries: branch.slice(0, cut), keptEntries: branch.slice(cut) });
				const found = audit(branch, start + 1, cut, result.text);
				expect(found.missing, `turn at ${start}, cut at ${cut}`).toEqual([]);
				expect(runQa(result.text, result.qa).score).toBe(1);
				stated += found.stated;
				kept += found.kept;
			}
		}
		// Before the fix: 19 of 27 (0 of 4 in one turn of the first log).
		expect(stated).toBe(27);
		expect(kept).toBe(27);
	});
});

describe("(b) open failures come before resolved ones", () => {
	/** 25 resolved failures, the one open failure, 25 more resolved: the open one sits in the sampled-out middle. */
	function failures(): { b: SessionBuilder; open: string } {
		const b = new SessionBuilder();
		b.user("Fix everything.");
		let open = "";
		for (let index = 0; index < 51; index++) {
			if (index === 25) {
				[, open] = b.tool(
					"deploy",
					"bash",
					{ command: "python deploy.py --prod" },
					{ isError: true, output: "denied" },
				);
				continue;
			}
			const path = `/repo/src/f${index}.ts`;
			b.tool(`e${index}`, "edit", { path, oldText: "a", newText: "b" }, { isError: true, output: "no match" });
			b.tool(`f${index}`, "edit", { path, oldText: "c", newText: "d" });
		}
		b.assistant("All done but the deploy.");
		return { b, open };
	}

	it("lists the one open failure, first, while 50 resolved ones are sampled", () => {
		const { b, open } = failures();
		const result = compileSummary({ entries: b.entries });
		const section = result.text.split("[Outstanding Context]\n")[1]?.split("\n\n")[0] ?? "";
		const line = `- @${open} open bash: python deploy.py --prod → "denied"`;
		// Before the fix this line was sampled out while 32 resolved ones were listed.
		expect(section.split("\n")).toContain(line);
		const lines = section.split("\n");
		expect(lines[0]).toBe("Open:");
		expect(lines[1]).toBe(line);
		expect(lines[2]).toBe("Resolved:");
		expect(lines.slice(3).every((line) => line.includes("resolved by") || line.includes(" omitted: "))).toBe(true);
		expect(runQa(result.text, result.qa).score).toBe(1);
	});

	it("never lists a resolved failure while an open one is sampled out, at any budget", () => {
		const b = new SessionBuilder();
		b.user("go");
		for (let index = 0; index < 40; index++) {
			if (index % 4 === 0) b.tool(`o${index}`, "bash", { command: `make target-${index}` }, { isError: true });
			b.tool(`r${index}`, "read", { path: `/r/${index}` }, { isError: true });
			b.tool(`s${index}`, "read", { path: `/r/${index}` });
		}
		const block = projectOutstanding(normalizeBranch(b.entries).events);
		let sampled = 0;
		let listed = 0;
		for (let budget = 200; budget <= 8_000; budget += 50) {
			const fitted = fitBlock(block, budget);
			if (!fitted) continue;
			const [open = "", resolved = ""] = fitted.text.split("\nResolved:\n");
			const resolvedLines = resolved.split("\n").filter((line) => line.includes("resolved by"));
			if (!open.includes(" omitted: ")) {
				if (resolvedLines.length > 0) listed++;
				continue;
			}
			sampled++;
			// Open failures are sampled: resolved ones are only counted.
			expect(resolvedLines).toEqual([]);
		}
		// Both regimes were exercised: budgets that sample the 10 open failures, and budgets that list resolved ones too.
		expect(sampled).toBeGreaterThan(0);
		expect(listed).toBeGreaterThan(0);
	});
});

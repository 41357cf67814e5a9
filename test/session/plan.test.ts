/** What counts as a plan or decision line (src/session/plan.ts): deterministic, bounded, typed where it can be. */

import { describe, expect, it } from "vitest";
import { normalizeBranch } from "../../src/session/normalize.ts";
import { PLAN_LINE_MAX_BYTES, planLines, textPlanLines, typedPlanItems } from "../../src/session/plan.ts";
import { utf8ByteLength } from "../../src/text/utf8.ts";
import { SessionBuilder } from "../fixtures/compaction-events.ts";

describe("plan lines in assistant text", () => {
	it("takes numbered and task items, their introduction, and labelled plan and decision lines", () => {
		const text = [
			"Let me look at the file first.",
			"Now I need to:",
			"1. Create `AgentSession` before routing",
			"2) Update the mode calls",
			"- [ ] remove the old client",
			"- a plain bullet is not a step",
			"**Best solution**: add a helper to the Theme class",
			"## Plan: three phases",
			"Next steps: run the checks",
			"I looked at the plan file and it is fine.",
		].join("\n");
		expect(textPlanLines(text)).toEqual([
			{ kind: "plan", text: "Now I need to:" },
			{ kind: "plan", text: "1. Create `AgentSession` before routing" },
			{ kind: "plan", text: "2) Update the mode calls" },
			{ kind: "plan", text: "- [ ] remove the old client" },
			{ kind: "decision", text: "Best solution: add a helper to the Theme class" },
			{ kind: "plan", text: "Plan: three phases" },
			{ kind: "plan", text: "Next steps: run the checks" },
		]);
	});

	it("reads nothing from a line that only mentions a plan without a colon, or a colon line not followed by a step", () => {
		expect(textPlanLines("The plan works.\nHere is the output:\nsome text")).toEqual([]);
	});
});

describe("typed plan lists", () => {
	it("reads todo and plan tool arguments: strings, or items with a status", () => {
		expect(
			typedPlanItems({ todos: [{ content: "port schema", status: "done" }, { content: "move handlers" }] }),
		).toEqual(["[done] port schema", "move handlers"]);
		expect(typedPlanItems({ plan: ["a", "b"] })).toEqual(["a", "b"]);
		expect(typedPlanItems({ path: "x" })).toBeUndefined();
	});

	it("keeps only the latest typed plan of a span, in source order with the text lines, each line once and bounded", () => {
		const b = new SessionBuilder();
		b.user("go");
		b.tool("t1", "todo_write", { todos: [{ content: "old step", status: "pending" }] });
		b.assistant(`Plan: ${"x".repeat(1_000)}`);
		b.tool("t2", "todo_write", { todos: [{ content: "new step", status: "in_progress" }] });
		b.assistant("1. first\n1. first");
		const lines = planLines(normalizeBranch(b.entries).events);
		expect(lines.map((line) => [line.kind, line.text.slice(0, 20)])).toEqual([
			["plan", `Plan: ${"x".repeat(14)}`],
			["todo", "[in_progress] new st"],
			["plan", "1. first"],
		]);
		expect(lines.every((line) => utf8ByteLength(line.text) <= PLAN_LINE_MAX_BYTES)).toBe(true);
	});
});

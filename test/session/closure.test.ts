import { describe, expect, it } from "vitest";
import {
	closureDefects,
	closureSafeBoundaries,
	isClosedRange,
	isClosureSafeBoundary,
	toolCallSpans,
	toolSpanTable,
} from "../../src/session/closure.ts";
import { BranchBuilder } from "../fixtures/session.ts";

/** Boundaries 0..n marked safe, computed both ways; they must agree. */
function safeSet(branch: BranchBuilder): number[] {
	const spans = toolCallSpans(branch.entries);
	const fast = closureSafeBoundaries(branch.entries.length, spans);
	const safe: number[] = [];
	for (let b = 0; b <= branch.entries.length; b++) {
		expect(fast[b]).toBe(isClosureSafeBoundary(spans, b));
		if (fast[b]) safe.push(b);
	}
	return safe;
}

describe("tool call closure", () => {
	it("keeps a call with its result and allows cuts around the pair", () => {
		const branch = new BranchBuilder();
		branch.user("go"); // 0
		branch.assistant("", [{ id: "c1", name: "read" }]); // 1
		branch.result("c1", "file"); // 2
		branch.assistant("done"); // 3
		expect(safeSet(branch)).toEqual([0, 1, 3, 4]);
		const span = toolCallSpans(branch.entries).get("c1@1");
		expect(span).toMatchObject({ first: 1, last: 2, callIndex: 1, resultIndices: [2], toolName: "read" });
	});

	it("handles parallel calls answered in reverse order", () => {
		const branch = new BranchBuilder();
		branch.assistant("", [
			{ id: "a", name: "read" },
			{ id: "b", name: "grep" },
		]); // 0
		branch.result("b", "B", "grep"); // 1
		branch.result("a", "A"); // 2
		branch.user("next"); // 3
		expect(safeSet(branch)).toEqual([0, 3, 4]);
		expect(closureDefects(toolCallSpans(branch.entries))).toEqual([]);
	});

	it("spans a delayed result across unrelated entries", () => {
		const branch = new BranchBuilder();
		branch.assistant("", [{ id: "slow", name: "bash" }]); // 0
		branch.user("meanwhile"); // 1
		branch.assistant("waiting"); // 2
		branch.result("slow", "finally", "bash"); // 3
		expect(safeSet(branch)).toEqual([0, 4]);
		expect(isClosedRange(toolCallSpans(branch.entries), 1, 3)).toBe(false);
	});

	it("treats a result before its call (reverse order) as one span", () => {
		const branch = new BranchBuilder();
		branch.result("r", "early"); // 0
		branch.assistant("", [{ id: "r", name: "read" }]); // 1
		expect(safeSet(branch)).toEqual([0, 2]);
	});

	it("reports orphans and duplicates without letting them block cuts elsewhere", () => {
		const branch = new BranchBuilder();
		branch.result("ghost", "no call"); // 0
		branch.assistant("", [{ id: "lost", name: "read" }]); // 1
		branch.assistant("", [{ id: "twice", name: "read" }]); // 2
		branch.result("twice", "1"); // 3
		branch.result("twice", "2"); // 4
		const defects = closureDefects(toolCallSpans(branch.entries));
		expect(defects).toEqual([
			{ id: "ghost", kind: "missing-call" },
			{ id: "lost", kind: "missing-result" },
			{ id: "twice", kind: "duplicate-result" },
		]);
		expect(safeSet(branch)).toEqual([0, 1, 2, 5]);
	});

	it("pairs a repeated call id with its own batch: each reply's call_0 is a span of its own", () => {
		// A provider that numbers calls per response: every reply's first call is call_0.
		const branch = new BranchBuilder();
		branch.user("first"); // 0
		branch.assistant("", [{ id: "call_0", name: "read" }]); // 1
		branch.result("call_0", "one"); // 2
		branch.assistant("done"); // 3
		branch.user("second"); // 4
		branch.assistant("", [{ id: "call_0", name: "read" }]); // 5
		branch.result("call_0", "two"); // 6
		branch.assistant("done"); // 7
		const table = toolSpanTable(branch.entries);
		expect([...table.spans.values()].map((span) => [span.key, span.first, span.last, span.resultIndices])).toEqual([
			["call_0@1", 1, 2, [2]],
			["call_0@5", 5, 6, [6]],
		]);
		expect(table.callSpans.get("call_0")?.map((span) => span.key)).toEqual(["call_0@1", "call_0@5"]);
		// Each turn can be cut around its own pair: the repeat does not tie the turns together.
		expect(safeSet(branch)).toEqual([0, 1, 3, 4, 5, 7, 8]);
		expect(closureDefects(table.spans)).toEqual([]);
	});

	it("keeps a result before its call in its batch only: an early orphan never adopts a later call of its id", () => {
		const branch = new BranchBuilder();
		branch.result("call_0", "orphan"); // 0
		branch.assistant("", [{ id: "call_1", name: "read" }]); // 1
		branch.result("call_1", "r"); // 2
		branch.assistant("", [{ id: "call_0", name: "read" }]); // 3
		branch.result("call_0", "answer"); // 4
		const spans = [...toolCallSpans(branch.entries).values()];
		expect(spans.map((span) => [span.key, span.callIndex, span.resultIndices])).toEqual([
			["call_0@0", -1, [0]],
			["call_1@1", 1, [2]],
			["call_0@3", 3, [4]],
		]);
		expect(safeSet(branch)).toEqual([0, 1, 3, 5]);
	});
});

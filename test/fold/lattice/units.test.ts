import { describe, expect, it } from "vitest";
import {
	analyzeBranch,
	closedChapters,
	DEFAULT_READ_ONLY_TOOLS,
	type StructuralUnit,
} from "../../../src/fold/lattice/units.ts";
import { FoldBranch, REAL_SESSIONS, realBranch, threeTurns } from "../../fixtures/fold.ts";

const shape = (units: readonly StructuralUnit[]) => units.map((unit) => [unit.kind, unit.start, unit.end]);

describe("structural units", () => {
	it("classifies user, assistant, tool batches, riders, and barriers Pi cannot edit", () => {
		const b = new FoldBranch();
		b.user("hi");
		b.thinking();
		b.calls([{ id: "a", name: "read" }]);
		b.result("a", "read", "x");
		b.assistant("done");
		b.customMessage("injected");
		b.bash("ls", 0);
		b.bash("secret", 0, true);
		b.branchSummary("e1");
		b.label("e1");
		b.custom();
		const view = analyzeBranch(b.entries);
		expect(shape(view.units)).toEqual([
			["user", 0, 1],
			["rider", 1, 2],
			["tool-batch", 2, 4],
			["assistant", 4, 5],
			["user", 5, 6],
			["barrier", 6, 7],
			["rider", 7, 8],
			["barrier", 8, 9],
			["rider", 9, 10],
			["rider", 10, 11],
		]);
		expect(view.units.filter((unit) => unit.context).length).toBe(4);
	});

	it("keeps parallel calls and all their results in one batch", () => {
		const b = new FoldBranch();
		b.calls([
			{ id: "a", name: "read" },
			{ id: "b", name: "grep" },
		]);
		b.result("a", "read", "1");
		b.result("b", "grep", "2");
		b.assistant("ok");
		const [batch] = analyzeBranch(b.entries).units;
		expect(batch).toMatchObject({ kind: "tool-batch", start: 0, end: 3, completed: true, closed: true });
		expect(batch?.toolCallIds).toEqual(["a", "b"]);
		expect(batch?.toolNames).toEqual(["read", "grep"]);
	});

	it("absorbs whatever sits between a call and a delayed result", () => {
		const b = new FoldBranch();
		b.calls([{ id: "slow", name: "bash" }]);
		b.thinking();
		b.calls([{ id: "fast", name: "read" }]);
		b.result("fast", "read", "quick");
		b.result("slow", "bash", "late");
		b.user("next");
		expect(shape(analyzeBranch(b.entries).units)).toEqual([
			["tool-batch", 0, 5],
			["user", 5, 6],
		]);
	});

	it("pairs a result that precedes its call", () => {
		const b = new FoldBranch();
		b.user("go");
		b.result("r", "read", "early");
		b.calls([{ id: "r", name: "read" }]);
		b.assistant("ok");
		const units = analyzeBranch(b.entries).units;
		expect(shape(units)).toEqual([
			["user", 0, 1],
			["tool-batch", 1, 3],
			["assistant", 3, 4],
		]);
		expect(units[1]?.completed).toBe(true);
	});

	it("makes an orphan result its own closed context unit", () => {
		const b = new FoldBranch();
		b.user("go");
		b.result("ghost", "read", "no call");
		const unit = analyzeBranch(b.entries).units[1];
		expect(unit).toMatchObject({ kind: "orphan-result", context: true, closed: true, completed: false });
	});

	it("treats a batch waiting for a result as open, but an aborted one as closed", () => {
		const b = new FoldBranch();
		b.calls([{ id: "w", name: "bash" }]);
		b.calls([{ id: "x", name: "edit" }], { stopReason: "aborted" });
		const [waiting, aborted] = analyzeBranch(b.entries).units;
		expect(waiting).toMatchObject({ kind: "tool-batch", completed: false, closed: false });
		expect(aborted).toMatchObject({ kind: "tool-batch", completed: false, closed: true });
	});

	it("marks a compaction as a barrier and a pending response as open", () => {
		const b = new FoldBranch();
		b.user("a");
		b.compaction("e1");
		b.assistant("streaming", { stopReason: "pending" });
		const [, barrier, pending] = analyzeBranch(b.entries).units;
		expect(barrier).toMatchObject({ kind: "barrier", context: false });
		expect(pending).toMatchObject({ kind: "assistant", closed: false });
	});

	it("decides read-only from the configured tool set", () => {
		const b = new FoldBranch();
		b.tool({ id: "a", name: "read" });
		b.tool({ id: "b", name: "bash" });
		b.tool({ id: "c", name: "lookup" });
		const defaults = analyzeBranch(b.entries).units.map((unit) => unit.readOnly);
		expect(defaults).toEqual([true, false, false]);
		expect(DEFAULT_READ_ONLY_TOOLS).toEqual(new Set(["read", "grep", "find", "ls"]));
		const custom = analyzeBranch(b.entries, { readOnlyTools: new Set(["lookup"]) }).units.map((unit) => unit.readOnly);
		expect(custom).toEqual([false, false, true]);
	});
});

describe("closed chapters", () => {
	it("finds finished turns and leaves the running one open", () => {
		const { entries, ids } = threeTurns();
		const view = analyzeBranch(entries);
		const chapters = closedChapters(view, 2).map((chapter) => [
			entries[chapter.start]?.id,
			entries[chapter.end - 1]?.id,
		]);
		// The model_change rider after reply1 is trimmed from the first chapter; turn 3 has no successor.
		expect(chapters).toEqual([
			[ids.ask1, ids.reply1],
			[ids.ask2, ids.reply2],
		]);
	});

	it("skips turns holding an open batch, ends turns at a barrier, and honours the minimum", () => {
		const b = new FoldBranch();
		b.user("one");
		b.calls([{ id: "open", name: "bash" }]);
		b.user("two");
		b.assistant("reply");
		b.compaction("e3");
		b.user("three");
		b.user("four");
		const view = analyzeBranch(b.entries);
		expect(closedChapters(view, 2).map((chapter) => [chapter.start, chapter.end])).toEqual([[2, 4]]);
		expect(closedChapters(view, 1).map((chapter) => [chapter.start, chapter.end])).toEqual([
			[2, 4],
			[5, 6],
		]);
	});
});

describe("units on real sessions", () => {
	it.each(Object.entries(REAL_SESSIONS))("partition the %s branch without splitting a tool call", (_name, path) => {
		const entries = realBranch(path);
		const view = analyzeBranch(entries);
		let next = 0;
		for (const unit of view.units) {
			expect(unit.start).toBe(next);
			next = unit.end;
		}
		expect(next).toBe(entries.length);
		for (const span of view.tools.spans.values()) {
			expect(view.unitOf[span.first]).toBe(view.unitOf[span.last]);
		}
	});
});

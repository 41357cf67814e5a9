/**
 * Small untruths (issue 18, items 6, 7 and 14): a pending mark peeked by its
 * id, and a fold the ladder already made asked for again, are answered with
 * what they are rather than an error; a reboundary under epoch scheduling
 * leaves the real pending mark it announces; an expand of a span a compaction
 * removed says so and points to peek.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { expandFold, foldSpan, reboundary, unmarkFold } from "../../../src/fold/actions/actions.ts";
import { peekFold } from "../../../src/fold/actions/peek.ts";
import { FoldEngine } from "../../../src/fold/engine/engine.ts";
import { modelHostFacts } from "../../../src/fold/engine/host-facts.ts";
import { DEFAULT_BRAND_NOUN, resolveOptions } from "../../../src/fold/options.ts";
import { FoldBranch } from "../../fixtures/fold.ts";
import { foldWorkspace } from "../../fixtures/workspace.ts";

/** A read batch, then enough later work that an agent's fold of it is not "in the last few messages". */
function session(): SessionEntry[] {
	const b = new FoldBranch();
	b.user("go");
	b.tool({ id: "a", name: "read", args: { path: "a.txt" } }, "alpha output\n".repeat(40));
	b.assistant("read a");
	b.user("more");
	b.tool({ id: "b", name: "bash", args: { command: "make" } }, "bravo output\n".repeat(2_000));
	b.assistant("done");
	return b.entries;
}

describe("small untruths", () => {
	it("peek of a pending mark answers with the mark and its verified source", async () => {
		const { ws, apply } = foldWorkspace(session(), { options: { foldScheduling: "epoch" }, cwd: "/" });
		const marked = await foldSpan(ws(), ["a"]);
		expect(marked.text).toMatch(/^Marked tool-batch/);
		apply(marked);
		const peek = await peekFold(ws(), marked.foldId ?? "");
		expect(peek.ok, peek.text).toBe(true);
		expect(peek.text).toContain(`${marked.foldId} is a pending mark (tool-batch, 2 entries)`);
		expect(peek.text).toContain("alpha output");
		expect(peek.text).toContain('"action":"unmark"');
	});

	it("an agent fold of a span the ladder already folded names the existing fold", async () => {
		const entries = session();
		const { ws, apply } = foldWorkspace(entries, { options: { foldScheduling: "immediate" }, cwd: "/" });
		const byLadder = await foldSpan({ ...ws(), origin: "ladder" }, ["a"]);
		apply(byLadder);
		const again = await foldSpan(ws(), ["a"]);
		expect(again).toMatchObject({ ok: true, foldId: byLadder.foldId });
		expect(again.change).toBeUndefined();
		expect(again.text).toContain(
			`Already folded: that span is exactly tool-batch ${byLadder.foldId} (folded by the automatic ladder)`,
		);
	});

	it("an expand of a span a compaction removed says so, changes nothing, and peek still reads it", async () => {
		const b = new FoldBranch();
		b.user("go");
		b.tool({ id: "a", name: "read", args: { path: "a.txt" } }, "alpha output\n".repeat(40));
		b.assistant("read a");
		const more = b.user("more");
		b.tool({ id: "b", name: "bash", args: { command: "make" } }, "bravo output");
		b.assistant("done");
		b.compaction(more);
		const { ws, apply } = foldWorkspace(b.entries, { options: { foldScheduling: "immediate" }, cwd: "/" });
		const folded = await foldSpan(ws(), ["a"]);
		expect(folded.ok, folded.text).toBe(true);
		apply(folded);
		const id = folded.foldId ?? "";
		const expanded = await expandFold(ws(), id);
		expect(expanded).toMatchObject({ ok: false, code: "compacted" });
		expect(expanded.change).toBeUndefined();
		expect(expanded.text).toContain(`Fold ${id} was removed from the window by a compaction`);
		expect(expanded.text).toContain(`{"action":"peek","id":"${id}"}`);
		const peek = await peekFold(ws(), id);
		expect(peek.ok, peek.text).toBe(true);
		expect(peek.text).toContain("alpha output");
	});
});

describe("reboundary with ids under epoch scheduling", () => {
	/** A large read the ladder folded, its reply, and a later turn long enough to be the fresh tail. */
	function session(): { entries: SessionEntry[]; go: string; reply: string } {
		const b = new FoldBranch();
		const go = b.user("go");
		b.tool({ id: "a", name: "read", args: { path: "a.txt" } }, "alpha output\n".repeat(2_000));
		const reply = b.assistant("read a");
		b.user("more");
		b.tool({ id: "b", name: "bash", args: { command: "make" } }, "bravo output\n".repeat(4_000));
		b.assistant("done");
		return { entries: b.entries, go, reply };
	}

	it("leaves the pending mark it announces: unmark withdraws it, the next commit folds it", async () => {
		const { entries, go, reply } = session();
		const options = resolveOptions({ foldScheduling: "epoch" });
		const host = modelHostFacts(undefined, options, "", "/");
		const engine = new FoldEngine(options);
		engine.reset(entries);
		const byLadder = await foldSpan({ ...engine.workspace("agent", "/"), origin: "ladder" }, ["a"]);
		engine.apply(byLadder);
		const old = byLadder.foldId ?? "";

		const recut = await reboundary(engine.workspace("agent", "/"), old, [go, reply]);
		expect(recut.ok, recut.text).toBe(true);
		const id = recut.foldId ?? "";
		expect(recut.text).toContain(`Dissolved ${old}.`);
		expect(recut.text).toContain(`Marked chapter ${id}`);
		expect(recut.text).toContain("its entries show raw until then");
		expect(recut.text).not.toContain("the window is unchanged");
		engine.apply(recut);
		expect(engine.foldState.data.marks.map((mark) => mark.record.id)).toEqual([id]);

		// Withdrawn: the mark goes, the dissolve stays (the entries show raw, as the reply said).
		const withdrawn = new FoldEngine(options);
		withdrawn.reset(entries);
		withdrawn.apply(byLadder);
		withdrawn.apply(recut);
		const unmarked = unmarkFold(withdrawn.workspace("agent", "/"), id);
		expect(unmarked.ok, unmarked.text).toBe(true);
		withdrawn.apply(unmarked);
		expect(withdrawn.foldState.data.marks).toEqual([]);
		expect(JSON.stringify(withdrawn.request(host).sent ?? withdrawn.requestMessages())).toContain("alpha output");

		// Committed: the dissolve's rewrite makes the next boundary's commit free, and the mark folds in it.
		const commit = await engine.commit(host);
		expect(commit.kind).toBe("committed");
		if (commit.kind !== "committed") return;
		expect(commit.summary.folds).toContainEqual({ id, rung: "mark", origin: "agent" });
		expect(engine.foldState.data.marks).toEqual([]);
		const sent = JSON.stringify(engine.request(host).sent ?? engine.requestMessages());
		expect(sent).toContain(`[${DEFAULT_BRAND_NOUN} fold ${id}`);
		expect(sent).not.toContain("alpha output");
	});
});

/**
 * Small untruths (issue 18, item 14): a pending mark peeked by its id, and a
 * fold the ladder already made asked for again, are answered with what they
 * are rather than an error.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { foldSpan, peekFold } from "../../../src/fold/actions/actions.ts";
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
});

/** The compaction summary's line naming the folds inside its range. */

import { describe, expect, it } from "vitest";
import { foldSpan } from "../../../src/fold/actions/actions.ts";
import { foldsNote } from "../../../src/fold/state/fold-handles.ts";
import { persistChange, stateEntryTypes } from "../../../src/fold/state/state.ts";
import { appendLinked } from "../../fixtures/common.ts";
import { FoldBranch } from "../../fixtures/fold.ts";
import { foldWorkspace, WORKSPACE_PREFIX } from "../../fixtures/workspace.ts";

describe("folds note", () => {
	it("names the top-level folds of the summarized entries with a real peek call, or nothing when there are none", async () => {
		const b = new FoldBranch();
		b.user("go");
		b.tool({ id: "a", name: "bash", args: { command: "make a" } }, "alpha");
		b.tool({ id: "b", name: "bash", args: { command: "make b" } }, "bravo");
		b.assistant("done");
		expect(foldsNote(b.entries, WORKSPACE_PREFIX, "active_context")).toBeUndefined();
		const { ws } = foldWorkspace(b.entries, { options: { foldScheduling: "immediate" } });
		const folded = await foldSpan(ws(), ["a"]);
		if (!folded.change) throw new Error("no fold");
		const persisted = persistChange(
			{ records: [], data: ws().state.data, deltasSinceCheckpoint: 0, skipped: 0 },
			WORKSPACE_PREFIX,
			folded.change.records,
			[],
		);
		const entries = [...b.entries];
		for (const entry of persisted.entries) appendLinked(entries, `c${entries.length}`, { type: "custom", ...entry });
		expect(entries.some((e) => e.type === "custom" && e.customType === stateEntryTypes(WORKSPACE_PREFIX).fold)).toBe(
			true,
		);
		const note = foldsNote(entries, WORKSPACE_PREFIX, "active_context");
		expect(note).toBe(
			`Folds in this range keep their exact source one peek away (e.g. active_context {"action":"peek","id":"${folded.foldId}"}): ${folded.foldId}.`,
		);
	});
});

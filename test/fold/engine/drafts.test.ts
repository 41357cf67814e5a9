/**
 * The drafts kept between requests (drafts.ts) must always be the drafts a
 * full plan of the window gives: after folds are added (re-planned only
 * where they are), after drafts land as edits (re-checked only where they
 * land), after other entries arrive, after an expand or a refold (planned
 * again), whatever the order.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BranchTracker } from "../../../src/fold/engine/branch.ts";
import { type DraftsInput, DraftsMemo } from "../../../src/fold/engine/drafts.ts";
import { WindowModel } from "../../../src/fold/engine/window.ts";
import { createFold } from "../../../src/fold/lattice/lattice.ts";
import { closedChapters, DEFAULT_READ_ONLY_TOOLS } from "../../../src/fold/lattice/units.ts";
import {
	emptyFoldState,
	type FoldState,
	type LiveLattice,
	liveLatticeAfter,
	persistChange,
} from "../../../src/fold/state/state.ts";
import { FoldBranch } from "../../fixtures/fold.ts";

function turns(): SessionEntry[] {
	const b = new FoldBranch();
	for (let turn = 0; turn < 6; turn++) {
		b.user(`turn ${turn}`);
		for (let call = 0; call < 2; call++)
			b.tool({ id: `c${turn}-${call}`, name: "read" }, `x${turn}${call}`.repeat(400));
		b.assistant(`done ${turn}`);
	}
	return b.entries;
}

type Step =
	| { kind: "fold"; at: number; chapter: boolean }
	| { kind: "persist" | "note" | "expand" | "refold"; at: number };

const step: fc.Arbitrary<Step> = fc.oneof(
	{ weight: 4, arbitrary: fc.record({ kind: fc.constant("fold" as const), at: fc.nat(), chapter: fc.boolean() }) },
	{ weight: 3, arbitrary: fc.record({ kind: fc.constant("persist" as const), at: fc.nat() }) },
	{
		weight: 1,
		arbitrary: fc.record({
			kind: fc.constantFrom("note" as const, "expand" as const, "refold" as const),
			at: fc.nat(),
		}),
	},
);

describe("DraftsMemo", () => {
	it("equals a full plan of the window after every fold, persisted draft, new entry, expand and refold", () => {
		fc.assert(
			fc.property(fc.array(step, { maxLength: 24 }), (steps) => {
				const entries = turns();
				const tracker = new BranchTracker(DEFAULT_READ_ONLY_TOOLS);
				const window = new WindowModel();
				const push = (fresh: SessionEntry[]) => {
					tracker.append(fresh);
					for (const entry of fresh) window.append(entry, tracker.entries);
				};
				push(entries);
				let state: FoldState = emptyFoldState();
				let live: LiveLattice = liveLatticeAfter(undefined, state);
				const managed = new Set<string>();
				const memo = new DraftsMemo();
				const input = (): DraftsInput => ({
					state,
					lattice: live.lattice,
					parents: live.parents,
					brandNoun: "active-context",
					branch: tracker,
					window,
					managed,
				});
				for (const s of steps) {
					const view = tracker.view;
					if (s.kind === "fold") {
						const spans = s.chapter
							? closedChapters(view, 2)
							: view.units.filter((unit) => unit.kind === "tool-batch" && unit.completed);
						const span = spans[s.at % Math.max(1, spans.length)];
						if (!span) continue;
						const first = view.entries[span.start]?.id ?? "";
						const last = view.entries[span.end - 1]?.id ?? "";
						const made = createFold(
							live.lattice,
							view,
							{ kind: s.chapter ? "chapter" : "tool-batch", first, last },
							{ origin: "ladder" },
						);
						if (!made.ok) continue;
						state = persistChange(state, "p", [made.record], []).state;
						for (const part of made.record.parts) if (part.type === "entry") managed.add(part.entryId);
					} else if (s.kind === "persist") {
						const drafts = memo.drafts(input());
						const body = drafts.slice(0, 1 + (s.at % Math.max(1, drafts.length)));
						const at = tracker.entries.length;
						push(
							body.map((draft, i) => ({ ...draft, id: `d${at}-${i}`, parentId: null, timestamp: "t" }) as SessionEntry),
						);
					} else if (s.kind === "note") {
						push([
							{
								type: "custom",
								customType: "note",
								data: {},
								id: `n${tracker.entries.length}`,
								parentId: null,
								timestamp: "t",
							} as SessionEntry,
						]);
					} else {
						const ids = [...live.lattice.folds.keys()];
						const id = ids[s.at % Math.max(1, ids.length)];
						if (!id) continue;
						state = persistChange(state, "p", [], [{ op: s.kind, id }]).state;
					}
					live = liveLatticeAfter(live, state);
					expect(memo.drafts(input())).toEqual(new DraftsMemo().drafts(input()));
				}
			}),
			{ numRuns: 200 },
		);
	});
});

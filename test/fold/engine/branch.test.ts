/**
 * The engine's branch tracker grows its view in place as entries are
 * appended; at every size it must equal the view analyzed from scratch.
 */

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BranchTracker } from "../../../src/fold/engine/branch.ts";
import { analyzeBranch, type BranchView, DEFAULT_READ_ONLY_TOOLS } from "../../../src/fold/lattice/units.ts";
import { latestEdits } from "../../../src/session/projection.ts";
import { branchOf, grownBranch, step } from "../../fixtures/random-branch.ts";

const plain = (view: BranchView) => ({
	entries: [...view.entries],
	indexById: [...view.indexById],
	spans: [...view.tools.spans.values()].map((span) => ({ ...span, resultIndices: [...span.resultIndices] })),
	callSpans: [...view.tools.callSpans].map(([id, spans]) => [id, spans.map((span) => span.key)]),
	assistantAt: view.tools.assistantAt,
	units: view.units.map((unit) => ({ ...unit })),
	unitOf: [...view.unitOf],
	responsesBefore: [...view.responsesBefore],
	batchUnits: [...view.batchUnits],
});

describe("BranchTracker", () => {
	it("grown chunk by chunk, equals analyzeBranch of the same entries at every size", () => {
		fc.assert(
			fc.property(grownBranch, ({ entries, points }) => {
				const tracker = new BranchTracker(DEFAULT_READ_ONLY_TOOLS);
				let at = 0;
				for (const point of points) {
					tracker.append(entries.slice(at, point));
					at = point;
					const so = entries.slice(0, at);
					expect(plain(tracker.view)).toEqual(plain(analyzeBranch(so)));
					expect([...tracker.latestEdits]).toEqual([...latestEdits(so)]);
				}
			}),
			{ numRuns: 300 },
		);
	});

	it("keeps one view object while the branch grows, a new one after a reset", () => {
		const entries = branchOf([
			{ kind: "user", text: "a" },
			{ kind: "calls", ids: ["c1"], name: "read" },
			{ kind: "result", id: "c1", name: "read", text: "x" },
		]);
		const tracker = new BranchTracker(DEFAULT_READ_ONLY_TOOLS);
		const first = tracker.view;
		tracker.append(entries.slice(0, 2));
		tracker.append(entries.slice(2));
		expect(tracker.view).toBe(first);
		expect(tracker.view.units.map((unit) => [unit.kind, unit.completed])).toEqual([
			["user", false],
			["tool-batch", true],
		]);
		tracker.reset(entries);
		expect(tracker.view).not.toBe(first);
		expect(plain(tracker.view)).toEqual(plain(analyzeBranch(entries)));
	});

	it("recuts only from the unit a late result reopens", () => {
		fc.assert(
			fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
				const entries = branchOf([...steps, { kind: "result", id: "c1", name: "read", text: "late" }]);
				const tracker = new BranchTracker(DEFAULT_READ_ONLY_TOOLS);
				tracker.append(entries.slice(0, -1));
				tracker.append(entries.slice(-1));
				expect(plain(tracker.view)).toEqual(plain(analyzeBranch(entries)));
			}),
		);
	});
});

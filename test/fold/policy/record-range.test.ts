/**
 * Where a record lies on the branch: the span of its leaf entries through
 * nested folds, or nothing when any entry or child is gone. The ladder
 * (pending marks, dissolved folds) and the summarizer's spans read it.
 */

import { describe, expect, it } from "vitest";
import type { FoldLattice, FoldRecord } from "../../../src/fold/lattice/records.ts";
import type { BranchView } from "../../../src/fold/lattice/units.ts";
import { recordRange } from "../../../src/fold/policy/record-range.ts";

/** A view of a branch of these entry ids: recordRange reads only where each id sits. */
function view(ids: readonly string[]): BranchView {
	return { indexById: new Map(ids.map((id, index) => [id, index])) } as Partial<BranchView> as BranchView;
}

function record(id: string, parts: FoldRecord["parts"]): FoldRecord {
	return { id, parts } as FoldRecord;
}

const entries = (ids: readonly string[]): FoldRecord["parts"] => ids.map((entryId) => ({ type: "entry", entryId }));

describe("recordRange", () => {
	const branch = view(["a", "b", "c", "d", "e"]);
	const child = record("f-child", entries(["b", "c"]));
	const lattice: FoldLattice = { folds: new Map([[child.id, child]]) };

	it("spans the leaf entries through nested folds", () => {
		const parent = record("f-parent", [{ type: "fold", foldId: child.id }, ...entries(["d"])]);
		expect(recordRange(branch, lattice, parent)).toEqual({ start: 1, end: 4 });
	});

	it("is undefined when an entry is off the branch, a child is missing, or there are no leaves", () => {
		expect(recordRange(branch, lattice, record("f-x", entries(["c", "gone"])))).toBeUndefined();
		expect(recordRange(branch, lattice, record("f-y", [{ type: "fold", foldId: "f-missing" }]))).toBeUndefined();
		expect(recordRange(branch, lattice, record("f-z", []))).toBeUndefined();
	});

	it("spans a record of 300,000 entries (a dissolved consolidation of a long session)", () => {
		const ids = Array.from({ length: 300_000 }, (_, index) => `e${index}`);
		expect(recordRange(view(ids), { folds: new Map() }, record("f-big", entries(ids)))).toEqual({
			start: 0,
			end: 300_000,
		});
	});
});

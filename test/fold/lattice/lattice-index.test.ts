/**
 * The lattice index grown record by record (`withRecord` keeps the base
 * lattice, the index of the grown one is derived from the base's) must equal
 * the index built from scratch, whatever folds are made in whatever order;
 * and the live lattice grown as a state gains records must equal the one
 * rebuilt from the state.
 */

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { consolidateFolds, createFold } from "../../../src/fold/lattice/lattice.ts";
import { batchesOutsideRoots, indexLattice, type LatticeIndex } from "../../../src/fold/lattice/lattice-index.ts";
import { emptyLattice, type FoldLattice, isRefusal, withRecord } from "../../../src/fold/lattice/records.ts";
import { analyzeBranch, closedChapters } from "../../../src/fold/lattice/units.ts";
import { emptyFoldState, liveLattice, liveLatticeAfter, persistChange } from "../../../src/fold/state/state.ts";
import { FoldBranch } from "../../fixtures/fold.ts";
import { forgedRecord } from "../../fixtures/forge.ts";

/** Eight turns of two or three read batches and a reply. */
function turns() {
	const b = new FoldBranch();
	for (let turn = 0; turn < 8; turn++) {
		b.user(`turn ${turn}`);
		for (let call = 0; call < 2 + (turn % 2); call++)
			b.tool({ id: `c${turn}-${call}`, name: "read" }, "x".repeat(2000));
		b.assistant(`done ${turn}`);
	}
	return b.entries;
}

const plain = (index: LatticeIndex) => ({
	placed: [...index.placed].map(([id, fold]) => [id, { ...fold }]),
	detached: [...index.detached],
	ordered: index.ordered.map((fold) => fold.id),
	rootAt: [...index.rootAt].map(([start, fold]) => [start, fold.id]),
	roots: index.roots.map((fold) => fold.id),
});

type Op = { kind: "batch" | "chapter"; at: number } | { kind: "consolidate"; at: number; count: number };

const op: fc.Arbitrary<Op> = fc.oneof(
	fc.record({ kind: fc.constantFrom("batch" as const, "chapter" as const), at: fc.nat() }),
	fc.record({ kind: fc.constant("consolidate" as const), at: fc.nat(), count: fc.integer({ min: 2, max: 4 }) }),
);

/** Apply the operations (refused ones change nothing); returns every lattice made. */
function apply(ops: readonly Op[]) {
	const entries = turns();
	const view = analyzeBranch(entries);
	const batches = view.units.filter((unit) => unit.kind === "tool-batch");
	const chapters = closedChapters(view, 2);
	let lattice: FoldLattice = emptyLattice();
	const made: FoldLattice[] = [];
	for (const step of ops) {
		let result: ReturnType<typeof createFold>;
		if (step.kind === "consolidate") {
			const roots = indexLattice(lattice, view).roots;
			const run = roots.slice(step.at % Math.max(1, roots.length)).slice(0, step.count);
			result = consolidateFolds(
				lattice,
				view,
				run.map((fold) => fold.id),
				{ origin: "ladder" },
			);
		} else {
			const span = step.kind === "batch" ? batches[step.at % batches.length] : chapters[step.at % chapters.length];
			const first = view.entries[span?.start ?? 0]?.id ?? "";
			const last = view.entries[(span?.end ?? 1) - 1]?.id ?? "";
			result = createFold(
				lattice,
				view,
				{ kind: step.kind === "batch" ? "tool-batch" : "chapter", first, last },
				{ origin: "ladder" },
			);
		}
		if (isRefusal(result)) continue;
		// Index every intermediate lattice, as the ladder and the commit do, so each grows from the last.
		indexLattice(lattice, view);
		lattice = result.lattice;
		made.push(lattice);
	}
	return { view, made };
}

describe("a grown lattice index", () => {
	it("equals the index built from scratch after every fold, chapter and consolidation", () => {
		fc.assert(
			fc.property(fc.array(op, { maxLength: 14 }), (ops) => {
				const { view, made } = apply(ops);
				for (const lattice of made) {
					const fresh = indexLattice({ folds: new Map(lattice.folds) }, view);
					expect(plain(indexLattice(lattice, view))).toEqual(plain(fresh));
				}
			}),
			{ numRuns: 150 },
		);
	});

	it("does not keep the lattices it grew from once nothing else holds them", async () => {
		// Node exposes its collector to a context created after the flag is set.
		setFlagsFromString("--expose-gc");
		const gc = runInNewContext("gc") as () => void;
		const ops: Op[] = Array.from({ length: 12 }, (_, at) => ({ kind: "batch", at }));
		let { view, made } = apply(ops);
		expect(made.length).toBeGreaterThan(8);
		const first = new WeakRef(made[0] as FoldLattice);
		const last = made.at(-1) as FoldLattice;
		made = [];
		// A turn of the host ends between boundaries: objects a WeakRef handed out are kept only until then.
		await new Promise((resolve) => setImmediate(resolve));
		gc();
		expect(first.deref()).toBeUndefined();
		expect(indexLattice(last, view).placed.size).toBe(12);
		view = analyzeBranch(view.entries);
		expect(indexLattice(last, view).placed.size).toBe(12);
	});

	it("finds every tool batch outside the root folds, as a walk over all units does", () => {
		fc.assert(
			fc.property(fc.array(op, { maxLength: 14 }), (ops) => {
				const { view, made } = apply(ops);
				for (const lattice of made) {
					const index = indexLattice(lattice, view);
					const outside = (unit: { start: number; end: number }) =>
						!index.roots.some((root) => unit.start < root.end && root.start < unit.end);
					const found = batchesOutsideRoots(index, view).filter(outside);
					expect(found).toEqual(view.units.filter((unit) => unit.kind === "tool-batch" && outside(unit)));
				}
			}),
			{ numRuns: 150 },
		);
	});

	it("the live lattice grown as records are added equals the one rebuilt from the state", () => {
		fc.assert(
			fc.property(fc.array(op, { maxLength: 14 }), (ops) => {
				const { made } = apply(ops);
				let state = emptyFoldState();
				let live = liveLatticeAfter(undefined, state);
				let seen = 0;
				for (const lattice of made) {
					const records = [...lattice.folds.values()].slice(seen);
					seen = lattice.folds.size;
					state = persistChange(state, "p", records, []).state;
					live = liveLatticeAfter(live, state);
					expect([...live.lattice.folds]).toEqual([...liveLattice(state).folds]);
				}
			}),
			{ numRuns: 150 },
		);
	});

	it("detaches a forged record inside or across a placed fold, grown or built from scratch alike", () => {
		const entries = turns();
		const view = analyzeBranch(entries);
		const [chapter] = closedChapters(view, 2);
		if (!chapter) throw new Error("fixture has no closed chapter");
		const made = createFold(
			emptyLattice(),
			view,
			{ kind: "chapter", first: entries[chapter.start]?.id ?? "", last: entries[chapter.end - 1]?.id ?? "" },
			{ origin: "ladder" },
		);
		if (isRefusal(made)) throw new Error(made.message);
		const batch = view.units.find((unit) => unit.kind === "tool-batch" && unit.start > chapter.start);
		if (!batch) throw new Error("fixture has no batch inside the chapter");
		const inside = forgedRecord(entries, batch.start, batch.end, "tool-batch");
		const across = forgedRecord(entries, batch.start, chapter.end + 1, "consolidation");
		for (const [forged, code] of [
			[inside, "unparented"],
			[across, "partial-overlap"],
		] as const) {
			indexLattice(made.lattice, view);
			const grown = withRecord(made.lattice, forged);
			const index = indexLattice(grown, view);
			expect(plain(index)).toEqual(plain(indexLattice({ folds: new Map(grown.folds) }, view)));
			expect(index.placed.has(forged.id)).toBe(false);
			expect(index.misshapen.get(forged.id)?.code).toBe(code);
			expect(index.roots.map((fold) => fold.id)).toEqual([...made.lattice.folds.keys()]);
		}
	});
});

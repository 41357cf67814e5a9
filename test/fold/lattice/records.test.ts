import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createFold } from "../../../src/fold/lattice/lattice.ts";
import {
	deriveFoldId,
	emptyLattice,
	type FoldRecord,
	foldIdDigest,
	isFoldId,
	isRefusal,
	latticeFromRecords,
	latticeOfConsistent,
	leafEntryIds,
} from "../../../src/fold/lattice/records.ts";
import { analyzeBranch } from "../../../src/fold/lattice/units.ts";
import { sha256Hex } from "../../../src/session/canonical.ts";
import { threeTurns } from "../../fixtures/fold.ts";

const HASH = sha256Hex("source");

function record(kind: FoldRecord["kind"], sourceHash: string, parts: FoldRecord["parts"], id?: string): FoldRecord {
	return {
		id: id ?? `f-${foldIdDigest(kind, sourceHash).slice(0, 12)}`,
		kind,
		parts,
		brief: "brief",
		sourceHash,
		sizes: { sourceBytes: 1, briefBytes: 5, entryCount: 1 },
		provenance: { origin: "agent", briefGenerator: "deterministic" },
	};
}

/** A valid record set from real operations: tool batch inside a chapter. */
function madeRecords(): FoldRecord[] {
	const { entries, ids } = threeTurns();
	const view = analyzeBranch(entries);
	const batch = createFold(emptyLattice(), view, { kind: "tool-batch", first: "c1" }, { origin: "agent" });
	if (!batch.ok) throw new Error(batch.message);
	const chapter = createFold(
		batch.lattice,
		view,
		{ kind: "chapter", first: ids.ask1, last: ids.reply1 },
		{ origin: "agent" },
	);
	if (!chapter.ok) throw new Error(chapter.message);
	return [...chapter.lattice.folds.values()];
}

describe("fold ids", () => {
	it("derive f-<12 hex> from kind and source hash, deterministically", () => {
		const id = deriveFoldId("chapter", HASH, new Map());
		expect(id).toMatch(/^f-[0-9a-f]{12}$/);
		expect(deriveFoldId("chapter", HASH, new Map())).toBe(id);
		expect(deriveFoldId("consolidation", HASH, new Map())).not.toBe(id);
		expect(isFoldId(id)).toBe(true);
		expect(isFoldId("f-../../x")).toBe(false);
	});

	it("grow by four hex digits when a different fold holds the short id", () => {
		const short = deriveFoldId("chapter", HASH, new Map());
		const squatter = record("tool-batch", sha256Hex("other"), [{ type: "entry", entryId: "e1" }], short);
		const id = deriveFoldId("chapter", HASH, new Map([[short, squatter]]));
		expect(id).toBe(`f-${foldIdDigest("chapter", HASH).slice(0, 16)}`);
		const same = record("chapter", HASH, [{ type: "entry", entryId: "e1" }], short);
		expect(deriveFoldId("chapter", HASH, new Map([[short, same]]))).toBe(short);
	});
});

describe("rebuilding a lattice from records", () => {
	it("accepts records made by the lattice and resolves leaves through nesting", () => {
		const records = madeRecords();
		const lattice = latticeFromRecords(records);
		if (isRefusal(lattice)) throw new Error(lattice.message);
		const chapter = records[1];
		expect(chapter && leafEntryIds(lattice, chapter.id)).toEqual(["e1", "e2", "e3", "e4"]);
		expect(isRefusal(leafEntryIds(lattice, "f-000000000000"))).toBe(true);
	});

	it.each([
		["a malformed id", (r: FoldRecord[]) => [{ ...r[0], id: "f-../x" } as FoldRecord]],
		["an id not derived from its content", (r: FoldRecord[]) => [{ ...r[0], id: "f-000000000000" } as FoldRecord]],
		["a malformed source hash", (r: FoldRecord[]) => [{ ...r[0], sourceHash: "xyz" } as FoldRecord]],
		["a repeated record", (r: FoldRecord[]) => [r[0], r[0]] as FoldRecord[]],
		["a dangling fold part", (r: FoldRecord[]) => [r[1]] as FoldRecord[]],
	])("refuses %s", (_name, mutate) => {
		const result = latticeFromRecords(mutate(madeRecords()));
		expect(isRefusal(result) && result.code).toBe("invalid-record");
	});

	it("refuses a fold with two parents and a cycle", () => {
		const leaf = record("tool-batch", sha256Hex("leaf"), [{ type: "entry", entryId: "e1" }]);
		const p1 = record("chapter", sha256Hex("p1"), [{ type: "fold", foldId: leaf.id }]);
		const p2 = record("chapter", sha256Hex("p2"), [{ type: "fold", foldId: leaf.id }]);
		const shared = latticeFromRecords([leaf, p1, p2]);
		expect(isRefusal(shared) && shared.message).toContain("shares child");
		const x = record("chapter", sha256Hex("x"), []);
		const y = record("chapter", sha256Hex("y"), [{ type: "fold", foldId: x.id }]);
		x.parts = [{ type: "fold", foldId: y.id }];
		const cycle = latticeFromRecords([x, y]);
		expect(isRefusal(cycle) && cycle.message).toContain("its own ancestor");
	});
});

describe("latticeOfConsistent", () => {
	/** Record `n` of a pool: a valid fold whose parts name entries or earlier pool folds, or a defective one. */
	const pool = Array.from({ length: 8 }, (_, n) => sha256Hex(`pool ${n}`));
	const id = (n: number) => `f-${foldIdDigest("consolidation", pool[n] ?? "").slice(0, 12)}`;
	const made = fc
		.tuple(
			fc.integer({ min: 0, max: 7 }),
			fc.array(fc.integer({ min: 0, max: 7 }), { maxLength: 3 }),
			fc.constantFrom("ok", "bad-id", "bad-hash", "no-parts"),
		)
		.map(([n, children, defect]): FoldRecord => {
			const parts: FoldRecord["parts"] = [
				{ type: "entry", entryId: `e${n}` },
				...children.map((child) => ({ type: "fold" as const, foldId: id(child) })),
			];
			const base = record("consolidation", pool[n] ?? "", defect === "no-parts" ? [] : parts, id(n));
			if (defect === "bad-id") return { ...base, id: "f-000000000000" };
			if (defect === "bad-hash") return { ...base, sourceHash: "zz" };
			return base;
		});

	it("keeps exactly what adding the records one at a time through latticeFromRecords keeps", () => {
		fc.assert(
			fc.property(fc.array(made, { maxLength: 12 }), (records) => {
				let oracle = emptyLattice();
				for (const next of records) {
					const grown = latticeFromRecords([...oracle.folds.values(), next]);
					if (!isRefusal(grown)) oracle = grown;
				}
				expect([...latticeOfConsistent(records).folds.values()]).toEqual([...oracle.folds.values()]);
			}),
		);
	});

	it("takes linear time on a chain of 20,000 records behind one bad one (a quadratic fallback does not finish)", () => {
		const chain: FoldRecord[] = [{ ...record("chapter", HASH, []), id: "f-000000000000" }];
		for (let n = 0; n < 20_000; n++) {
			const hash = sha256Hex(`chain ${n}`);
			const previous = chain.at(-1)?.id ?? "";
			const parts: FoldRecord["parts"] =
				n === 0 ? [{ type: "entry", entryId: "e0" }] : [{ type: "fold", foldId: previous }];
			chain.push(record("consolidation", hash, parts));
		}
		expect(isRefusal(latticeFromRecords(chain))).toBe(true);
		expect(latticeOfConsistent(chain).folds.size).toBe(20_000);
		expect(isRefusal(latticeFromRecords(chain.slice(1)))).toBe(false);
	});
});

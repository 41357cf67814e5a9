import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { FoldRecord } from "../../../src/fold/lattice/records.ts";
import { foldIdDigest } from "../../../src/fold/lattice/records.ts";
import {
	CHECKPOINT_INTERVAL,
	currentBrief,
	EMPTY_STATE_DATA,
	emptyFoldState,
	type FoldState,
	liveLattice,
	persistChange,
	rebuildState,
	stateEntryTypes,
} from "../../../src/fold/state/state.ts";
import type { FoldOp, FoldStateData } from "../../../src/fold/state/state-schema.ts";
import { sha256Hex } from "../../../src/session/canonical.ts";

const PREFIX = "pi-fold-active-context";

function record(seed: string, parts: FoldRecord["parts"] = [{ type: "entry", entryId: seed }]): FoldRecord {
	const sourceHash = sha256Hex(seed);
	return {
		id: `f-${foldIdDigest("chapter", sourceHash).slice(0, 12)}`,
		kind: "chapter",
		parts,
		brief: `brief ${seed}`,
		sourceHash,
		sizes: { sourceBytes: 10, briefBytes: 7, entryCount: 1 },
		provenance: { origin: "agent", briefGenerator: "deterministic" },
	};
}

/** Turn persisted custom drafts into branch entries, as Pi would append them. */
function toEntries(drafts: { customType: string; data: unknown }[], start = 0): SessionEntry[] {
	return drafts.map((draft, index) => ({
		type: "custom",
		customType: draft.customType,
		data: draft.data,
		id: `c${start + index}`,
		parentId: null,
		timestamp: "2026-01-01T00:00:00.000Z",
	}));
}

describe("durable fold state", () => {
	it("round-trips records and deltas through the branch", () => {
		const a = record("a");
		const b = record("b");
		let state: FoldState = emptyFoldState();
		const branch: SessionEntry[] = [];
		const steps: [FoldRecord[], FoldOp[]][] = [
			[[a, b], []],
			[[], [{ op: "expand", id: a.id }]],
			[[], [{ op: "protect", ids: ["e1", "e2"] }]],
			[
				[],
				[
					{ op: "rebrief", id: b.id, brief: "better" },
					{ op: "unprotect", ids: ["e1"] },
				],
			],
		];
		for (const [records, ops] of steps) {
			const plan = persistChange(state, PREFIX, records, ops);
			branch.push(...toEntries(plan.entries, branch.length));
			state = plan.state;
		}
		const rebuilt = rebuildState(branch, PREFIX);
		expect(rebuilt.records.map((r) => r.id)).toEqual([a.id, b.id]);
		expect(rebuilt.data).toEqual(state.data);
		expect(rebuilt.data).toMatchObject({ expanded: [a.id], protected: ["e2"] });
		expect(currentBrief(rebuilt, b)).toBe("better");
	});

	it("checkpoints so replay never exceeds the interval", () => {
		let state = emptyFoldState();
		const branch: SessionEntry[] = [];
		for (let step = 0; step < CHECKPOINT_INTERVAL * 2 + 3; step++) {
			const plan = persistChange(state, PREFIX, [], [{ op: "protect", ids: [`e${step}`] }]);
			branch.push(...toEntries(plan.entries, branch.length));
			state = plan.state;
		}
		const types = stateEntryTypes(PREFIX);
		const checkpoints = branch.filter((entry) => entry.type === "custom" && entry.customType === types.checkpoint);
		expect(checkpoints).toHaveLength(2);
		const rebuilt = rebuildState(branch, PREFIX);
		expect(rebuilt.deltasSinceCheckpoint).toBeLessThan(CHECKPOINT_INTERVAL);
		expect(rebuilt.data.protected).toHaveLength(CHECKPOINT_INTERVAL * 2 + 3);
	});

	it("skips unknown versions and malformed payloads, and ignores other namespaces", () => {
		const types = stateEntryTypes(PREFIX);
		const branch = toEntries([
			{ customType: types.fold, data: { v: 99, record: record("x") } },
			{ customType: types.delta, data: { v: 1, ops: "nope" } },
			{ customType: "other-extension:fold", data: { v: 1, record: record("y") } },
			{ customType: types.fold, data: { v: 1, record: record("z") } },
		]);
		const rebuilt = rebuildState(branch, PREFIX);
		expect(rebuilt.skipped).toBe(2);
		expect(rebuilt.records.map((r) => r.brief)).toEqual(["brief z"]);
	});

	it("skips malformed ops and counts them, applying the valid ones beside them", () => {
		const types = stateEntryTypes(PREFIX);
		const branch = toEntries([
			{
				customType: types.delta,
				data: { v: 1, ops: [{ op: "bogus" }, { op: "protect" }, { op: "protect", ids: ["e1"] }] },
			},
			{
				customType: types.delta,
				data: { v: 1, ops: [{ op: "rebrief", id: "f-x" }, null, { op: "expand", id: "f-0123456789ab" }] },
			},
			{
				customType: types.checkpoint,
				data: { v: 1, state: { expanded: [1], protected: [], dissolved: [], marks: [], briefs: {} } },
			},
		]);
		const rebuilt = rebuildState(branch, PREFIX);
		expect(rebuilt.data).toMatchObject({ protected: ["e1"], expanded: ["f-0123456789ab"] });
		expect(rebuilt.skipped).toBe(5);
	});

	it("drops a dissolved fold and an inconsistent record from the live lattice only", () => {
		const child = record("child");
		const parent = record("parent", [{ type: "fold", foldId: child.id }]);
		const forged = { ...record("forged"), id: "f-000000000000" };
		let state = persistChange(emptyFoldState(), PREFIX, [child, parent, forged], []).state;
		expect([...liveLattice(state).folds.keys()]).toEqual([child.id, parent.id]);
		state = persistChange(state, PREFIX, [], [{ op: "dissolve", id: parent.id }]).state;
		expect([...liveLattice(state).folds.keys()]).toEqual([child.id]);
	});
});

/** The op semantics as arrays and spreads, one rebuilt value per op (quadratic): the oracle for the builder. */
function oracleApply(data: FoldStateData, op: FoldOp): FoldStateData {
	const without = (list: readonly string[], ids: readonly string[]) => list.filter((item) => !ids.includes(item));
	const withAll = (list: readonly string[], ids: readonly string[]) => [
		...list,
		...ids.filter((id) => !list.includes(id)),
	];
	switch (op.op) {
		case "expand":
			return { ...data, expanded: withAll(data.expanded, [op.id]) };
		case "refold":
			return { ...data, expanded: without(data.expanded, [op.id]) };
		case "protect":
			return { ...data, protected: withAll(data.protected, op.ids) };
		case "unprotect":
			return { ...data, protected: without(data.protected, op.ids) };
		case "rebrief":
			return { ...data, briefs: { ...data.briefs, [op.id]: op.brief } };
		case "dissolve":
			return { ...data, dissolved: withAll(data.dissolved, [op.id]), expanded: without(data.expanded, [op.id]) };
		case "restore":
			return { ...data, dissolved: without(data.dissolved, [op.id]) };
		case "mark":
			return { ...data, marks: [...data.marks.filter((mark) => mark.record.id !== op.mark.record.id), op.mark] };
		case "unmark":
			return { ...data, marks: data.marks.filter((mark) => mark.record.id !== op.id) };
		case "clear-marks":
			return { ...data, marks: data.marks.filter((mark) => !op.ids.includes(mark.record.id)) };
		case "baseline":
			return { ...data, baselines: { ...op.entries, ...data.baselines } };
	}
}

describe("state replay at scale", () => {
	const folds = ["a", "b", "c", "d"].map((seed) => record(seed));
	const foldId = fc.constantFrom(...folds.map((fold) => fold.id));
	const entryId = fc.constantFrom("e1", "e2", "e3", "e4", "e5");
	const ids = fc.uniqueArray(entryId, { maxLength: 3 });
	const replacement = fc.oneof(fc.constant(null), fc.record({ content: fc.string({ maxLength: 4 }) }));
	const op: fc.Arbitrary<FoldOp> = fc.oneof(
		fc.record({ op: fc.constant("expand" as const), id: foldId }),
		fc.record({ op: fc.constant("refold" as const), id: foldId }),
		fc.record({ op: fc.constant("protect" as const), ids }),
		fc.record({ op: fc.constant("unprotect" as const), ids }),
		fc.record({ op: fc.constant("rebrief" as const), id: foldId, brief: fc.string({ maxLength: 5 }) }),
		fc.record({ op: fc.constant("dissolve" as const), id: foldId }),
		fc.record({ op: fc.constant("restore" as const), id: foldId }),
		fc.record({
			op: fc.constant("mark" as const),
			mark: fc.record({
				record: fc.constantFrom(...folds),
				origin: fc.constantFrom("agent" as const, "ladder" as const),
			}),
		}),
		fc.record({ op: fc.constant("unmark" as const), id: foldId }),
		fc.record({ op: fc.constant("clear-marks" as const), ids: fc.uniqueArray(foldId, { maxLength: 2 }) }),
		fc.record({ op: fc.constant("baseline" as const), entries: fc.dictionary(entryId, replacement, { maxKeys: 3 }) }),
	);

	it("rebuilds the same data, key order included, as applying each op to arrays and objects", () => {
		fc.assert(
			fc.property(fc.array(fc.array(op, { minLength: 1, maxLength: 6 }), { maxLength: 30 }), (deltas) => {
				const types = stateEntryTypes(PREFIX);
				const branch = toEntries(deltas.map((ops) => ({ customType: types.delta, data: { v: 1, ops } })));
				const expected = deltas.flat().reduce(oracleApply, EMPTY_STATE_DATA);
				const rebuilt = rebuildState(branch, PREFIX).data;
				expect(JSON.stringify(rebuilt)).toBe(JSON.stringify(expected));
			}),
		);
	});

	it("replays one delta of 200,000 ops in linear time (a quadratic replay does not finish)", () => {
		const types = stateEntryTypes(PREFIX);
		const ops: FoldOp[] = [];
		for (let i = 0; i < 100_000; i++) ops.push({ op: "protect", ids: [`e${i}`] });
		for (let i = 0; i < 50_000; i++) ops.push({ op: "unprotect", ids: [`e${2 * i}`] });
		for (let i = 0; i < 25_000; i++) ops.push({ op: "rebrief", id: folds[i % 4]?.id ?? "", brief: `b${i}` });
		for (let i = 0; i < 25_000; i++) ops.push({ op: "baseline", entries: { [`e${i}`]: null } });
		const rebuilt = rebuildState(toEntries([{ customType: types.delta, data: { v: 1, ops } }]), PREFIX);
		expect(rebuilt.skipped).toBe(0);
		expect(rebuilt.data.protected).toHaveLength(50_000);
		expect(rebuilt.data.protected.slice(0, 2)).toEqual(["e1", "e3"]);
		expect(rebuilt.data.briefs[folds[3]?.id ?? ""]).toBe("b24999");
		// Baselines: the newest op's key first.
		expect(Object.keys(rebuilt.data.baselines).slice(0, 2)).toEqual(["e24999", "e24998"]);
	});

	it("keeps every record of 120,000 fold entries, a later record replacing an earlier one in place", () => {
		const types = stateEntryTypes(PREFIX);
		const made = Array.from({ length: 60_000 }, (_, i) => record(`r${i}`));
		const drafts = [...made, ...made.map((r) => ({ ...r, brief: "again" }))].map((r) => ({
			customType: types.fold,
			data: { v: 1, record: r },
		}));
		const rebuilt = rebuildState(toEntries(drafts), PREFIX);
		expect(rebuilt.records).toHaveLength(60_000);
		expect(rebuilt.records[59_999]).toMatchObject({ id: made[59_999]?.id, brief: "again" });
	});
});

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import type { FoldRecord } from "../../../src/fold/lattice/records.ts";
import { foldIdDigest } from "../../../src/fold/lattice/records.ts";
import {
	CHECKPOINT_INTERVAL,
	currentBrief,
	emptyFoldState,
	type FoldState,
	liveLattice,
	persistChange,
	rebuildState,
	stateEntryTypes,
} from "../../../src/fold/state/state.ts";
import type { FoldOp } from "../../../src/fold/state/state-schema.ts";
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

import { describe, expect, it } from "vitest";
import { BRIEF_MAX_CHARS, recallCalls } from "../../../src/fold/briefs/brief.ts";
import {
	consolidateFolds,
	createFold,
	dissolveFold,
	type FoldCreated,
	type FoldOptions,
	type FoldRequest,
	planFold,
	rebriefFold,
} from "../../../src/fold/lattice/lattice.ts";
import { checkLattice, foldTree, visibleLayout } from "../../../src/fold/lattice/lattice-view.ts";
import { emptyLattice, type FoldLattice, type FoldRefusal, leafEntryIds } from "../../../src/fold/lattice/records.ts";
import { analyzeBranch, type BranchView } from "../../../src/fold/lattice/units.ts";
import { canonicalSpanBytes, sha256Hex } from "../../../src/session/canonical.ts";
import { FoldBranch, threeTurns } from "../../fixtures/fold.ts";

const AGENT: FoldOptions = { origin: "agent" };

function created(result: FoldCreated | FoldRefusal): FoldCreated {
	if (!result.ok) throw new Error(`expected a fold, got ${result.code}: ${result.message}`);
	return result;
}

function refused(result: { ok: boolean } | FoldRefusal): FoldRefusal {
	if (result.ok) throw new Error("expected a refusal");
	return result as FoldRefusal;
}

/** threeTurns with: T = read batch, A = chapter ask1..reply1, B = chapter ask2..reply2. */
function folded() {
	const { entries, ids } = threeTurns();
	const view = analyzeBranch(entries);
	const t = created(createFold(emptyLattice(), view, { kind: "tool-batch", first: "c1" }, AGENT));
	const a = created(createFold(t.lattice, view, { kind: "chapter", first: ids.ask1, last: ids.reply1 }, AGENT));
	const b = created(createFold(a.lattice, view, { kind: "chapter", first: ids.ask2, last: ids.reply2 }, AGENT));
	return { entries, ids, view, t: t.record, a: a.record, b: b.record, lattice: b.lattice };
}

const layoutIds = (lattice: FoldLattice, view: BranchView, expanded: string[]) =>
	visibleLayout(lattice, view, new Set(expanded)).map((item) => (item.type === "fold" ? item.foldId : item.entryId));

describe("creating folds", () => {
	it("folds one completed tool batch named by its call id", () => {
		const { entries, ids } = threeTurns();
		const view = analyzeBranch(entries);
		const { record, plan } = created(createFold(emptyLattice(), view, { kind: "tool-batch", first: "c1" }, AGENT));
		expect(record.id).toMatch(/^f-[0-9a-f]{12}$/);
		expect(record.parts).toEqual([
			{ type: "entry", entryId: ids.read },
			{ type: "entry", entryId: ids.readResult },
		]);
		const source = canonicalSpanBytes(entries.slice(1, 3));
		expect(plan.source).toEqual(source);
		expect(record.sourceHash).toBe(sha256Hex(source));
		expect(record.sizes).toEqual({
			sourceBytes: source.length,
			briefBytes: new TextEncoder().encode(record.brief).length,
			entryCount: 2,
		});
		expect(record.provenance).toEqual({ origin: "agent", briefGenerator: "deterministic" });
		expect(record.brief.endsWith(recallCalls(record.id).expand)).toBe(true);
		expect(plan.correction).toBeUndefined();
	});

	it("snaps a span outward to whole units and reports the correction", () => {
		const { entries, ids } = threeTurns();
		const view = analyzeBranch(entries);
		const batch = created(createFold(emptyLattice(), view, { kind: "tool-batch", first: ids.readResult }, AGENT));
		expect(batch.plan.correction).toMatchObject({
			firstEntryId: ids.read,
			lastEntryId: ids.readResult,
			reasons: ["unit-boundary"],
		});
		const chapter = created(
			createFold(emptyLattice(), view, { kind: "chapter", first: ids.ask2, last: ids.edit }, AGENT),
		);
		expect([chapter.plan.firstEntryId, chapter.plan.lastEntryId]).toEqual([ids.ask2, ids.editResult]);
		expect(chapter.plan.correction?.message).toContain(
			`${ids.ask2}..${ids.edit} became ${ids.ask2}..${ids.editResult}`,
		);
	});

	it("leaves non-context entries at the span's edges out", () => {
		const { entries, ids } = threeTurns();
		const view = analyzeBranch(entries);
		const { plan } = created(
			createFold(emptyLattice(), view, { kind: "chapter", first: ids.reply1, last: ids.ask2 }, AGENT),
		);
		expect([plan.firstEntryId, plan.lastEntryId]).toEqual([ids.reply1, ids.ask2]);
		expect(plan.parts).toContainEqual({ type: "entry", entryId: ids.model });
		const edge = created(
			createFold(emptyLattice(), view, { kind: "chapter", first: ids.ask1, last: ids.model }, AGENT),
		);
		expect(edge.plan.lastEntryId).toBe(ids.reply1);
		expect(edge.plan.correction?.reasons).toEqual(["trimmed-riders"]);
	});

	it("nests an earlier fold as a part of a chapter that contains it", () => {
		const { t, a, view, lattice, ids } = folded();
		expect(a.parts).toEqual([
			{ type: "entry", entryId: ids.ask1 },
			{ type: "fold", foldId: t.id },
			{ type: "entry", entryId: ids.reply1 },
		]);
		const tree = foldTree(lattice, view).map((row) => [row.id, row.depth, row.parentId, row.firstEntryId]);
		expect(tree).toEqual([
			[a.id, 0, null, ids.ask1],
			[t.id, 1, a.id, ids.read],
			[expect.any(String), 0, null, ids.ask2],
		]);
		expect(a.brief).toContain(`Inner folds: ${t.id}`);
	});

	it("widens to whole existing folds instead of cutting one", () => {
		const { entries, ids } = threeTurns();
		const view = analyzeBranch(entries);
		const inner = created(
			createFold(emptyLattice(), view, { kind: "chapter", first: ids.ask2, last: ids.editResult }, AGENT),
		);
		const outer = created(
			createFold(inner.lattice, view, { kind: "chapter", first: ids.edit, last: ids.reply2 }, AGENT),
		);
		expect([outer.plan.firstEntryId, outer.plan.lastEntryId]).toEqual([ids.ask2, ids.reply2]);
		expect(outer.plan.correction?.reasons).toContain("fold-boundary");
		expect(outer.record.parts[0]).toEqual({ type: "fold", foldId: inner.record.id });
		expect(checkLattice(outer.lattice, view, { verifySources: true })).toEqual([]);
	});

	it("accepts fold ids and tool call ids as span ends, in either order", () => {
		const { view, a, ids } = folded();
		const byFold = planFold(emptyLattice(), view, { kind: "chapter", first: "c3", last: ids.ask1 });
		expect(byFold.ok).toBe(true);
		// ask2 lies inside fold B, so the span grows to all of B.
		const withFold = planFold(folded().lattice, view, { kind: "chapter", first: ids.ask2, last: a.id });
		if (!withFold.ok) throw new Error(withFold.message);
		expect([withFold.firstEntryId, withFold.lastEntryId]).toEqual([ids.ask1, ids.reply2]);
		expect(withFold.correction?.reasons).toEqual(["fold-boundary"]);
	});

	it("is deterministic: the same operations give the same records", () => {
		const first = folded();
		const second = folded();
		expect([...second.lattice.folds.values()]).toEqual([...first.lattice.folds.values()]);
	});

	it("records supplied briefs bounded, with recall calls, attribution and token estimate", () => {
		const { entries, ids } = threeTurns();
		const view = analyzeBranch(entries);
		const request: FoldRequest = { kind: "chapter", first: ids.ask1, last: ids.reply1 };
		const { record } = created(
			createFold(emptyLattice(), view, request, {
				origin: "ladder",
				brief: { text: "y".repeat(5000), generator: "model", model: { provider: "p", model: "m", effort: "low" } },
				toolName: "ctx",
				estimateTokens: (leaves) => leaves.length * 10,
			}),
		);
		expect(record.brief.length).toBeLessThanOrEqual(BRIEF_MAX_CHARS);
		expect(record.brief.endsWith(recallCalls(record.id, "ctx").expand)).toBe(true);
		expect(record.provenance).toEqual({
			origin: "ladder",
			briefGenerator: "model",
			model: { provider: "p", model: "m", effort: "low" },
		});
		expect(record.sizes.estimatedTokens).toBe(40);
	});
});

describe("refusals", () => {
	const setup = () => {
		const { entries, ids } = threeTurns();
		return { ids, view: analyzeBranch(entries) };
	};

	it("unknown-id: a span end that names nothing on the branch", () => {
		const { view } = setup();
		const result = refused(createFold(emptyLattice(), view, { kind: "chapter", first: "nope" }, AGENT));
		expect(result.code).toBe("unknown-id");
		expect(result.message).toContain('"nope"');
	});

	it("unknown-fold: dissolving or consolidating a fold that does not exist", () => {
		const { lattice, view, a } = folded();
		expect(refused(dissolveFold(lattice, "f-000000000000")).code).toBe("unknown-fold");
		expect(refused(consolidateFolds(lattice, view, [a.id, "f-000000000000"], AGENT)).code).toBe("unknown-fold");
	});

	it("span-too-small: one unit as a chapter, riders only, one fold to consolidate", () => {
		const { view, ids } = setup();
		expect(refused(createFold(emptyLattice(), view, { kind: "chapter", first: ids.ask3 }, AGENT)).code).toBe(
			"span-too-small",
		);
		expect(refused(createFold(emptyLattice(), view, { kind: "chapter", first: ids.model }, AGENT)).code).toBe(
			"span-too-small",
		);
		const { lattice, a } = folded();
		expect(refused(consolidateFolds(lattice, view, [a.id, a.id], AGENT)).code).toBe("span-too-small");
	});

	it("not-a-tool-batch: a tool-batch fold over anything but exactly one batch", () => {
		const { view, ids } = setup();
		const many = refused(
			createFold(emptyLattice(), view, { kind: "tool-batch", first: ids.ask2, last: ids.reply2 }, AGENT),
		);
		expect(many.code).toBe("not-a-tool-batch");
		expect(many.message).toContain("to fold a chapter");
		expect(refused(createFold(emptyLattice(), view, { kind: "tool-batch", first: ids.reply1 }, AGENT)).code).toBe(
			"not-a-tool-batch",
		);
	});

	it("open-unit: a batch still waiting for a result, or an abandoned one as a tool batch", () => {
		const b = new FoldBranch();
		b.user("go");
		b.calls([{ id: "stop", name: "edit" }], { stopReason: "aborted" });
		b.user("again");
		b.calls([{ id: "wait", name: "bash" }]);
		const view = analyzeBranch(b.entries);
		const waiting = refused(createFold(emptyLattice(), view, { kind: "chapter", first: "e3", last: "e4" }, AGENT));
		expect(waiting.code).toBe("open-unit");
		expect(waiting.message).toContain("wait");
		expect(refused(createFold(emptyLattice(), view, { kind: "tool-batch", first: "stop" }, AGENT)).code).toBe(
			"open-unit",
		);
		// The abandoned batch is closed, so a chapter may hold it.
		expect(createFold(emptyLattice(), view, { kind: "chapter", first: "e1", last: "e2" }, AGENT).ok).toBe(true);
	});

	it("barrier: a span across a compaction entry", () => {
		const b = new FoldBranch();
		b.user("a");
		b.assistant("b");
		b.compaction("e1");
		b.user("c");
		b.assistant("d");
		const view = analyzeBranch(b.entries);
		expect(refused(createFold(emptyLattice(), view, { kind: "chapter", first: "e1", last: "e5" }, AGENT)).code).toBe(
			"barrier",
		);
		expect(createFold(emptyLattice(), view, { kind: "chapter", first: "e4", last: "e5" }, AGENT).ok).toBe(true);
	});

	it("barrier: a span across an entry Pi cannot hide (user bash run, branch summary)", () => {
		const b = new FoldBranch();
		b.user("a"); // e1
		b.assistant("b"); // e2
		b.bash("ls", 0); // e3
		b.user("c"); // e4
		b.assistant("d"); // e5
		b.branchSummary("e1"); // e6
		b.user("e"); // e7
		b.assistant("f"); // e8
		const view = analyzeBranch(b.entries);
		const bash = refused(createFold(emptyLattice(), view, { kind: "chapter", first: "e1", last: "e5" }, AGENT));
		expect(bash.code).toBe("barrier");
		expect(bash.message).toContain("user bash run e3");
		const summary = refused(createFold(emptyLattice(), view, { kind: "chapter", first: "e4", last: "e8" }, AGENT));
		expect(summary.message).toContain("branch summary e6");
		expect(createFold(emptyLattice(), view, { kind: "chapter", first: "e4", last: "e5" }, AGENT).ok).toBe(true);
	});

	it("protected: a span holding a protected entry, also when snapping pulled it in", () => {
		const { view, ids } = setup();
		const guards = { protectedEntryIds: new Set([ids.readResult]) };
		const direct = refused(
			createFold(emptyLattice(), view, { kind: "chapter", first: ids.ask1, last: ids.reply1 }, { ...AGENT, guards }),
		);
		expect(direct.code).toBe("protected");
		expect(direct.message).toContain(ids.readResult);
		const snapped = refused(
			createFold(emptyLattice(), view, { kind: "chapter", first: ids.ask1, last: ids.read }, { ...AGENT, guards }),
		);
		expect(snapped.code).toBe("protected");
		expect(snapped.message).toContain("became");
	});

	it("fresh-tail: a span reaching into the fresh tail", () => {
		const { view, ids } = setup();
		const guards = { freshTailStart: 11 };
		const result = refused(
			createFold(emptyLattice(), view, { kind: "chapter", first: ids.ask2, last: ids.ask3 }, { ...AGENT, guards }),
		);
		expect(result.code).toBe("fresh-tail");
		expect(result.message).toContain(ids.ask3);
		expect(
			createFold(emptyLattice(), view, { kind: "chapter", first: ids.ask2, last: ids.reply2 }, { ...AGENT, guards }).ok,
		).toBe(true);
	});

	it("inside-fold and already-folded: nothing new inside or equal to an existing fold", () => {
		const { lattice, view, a, t, ids } = folded();
		const inside = refused(
			createFold(lattice, view, { kind: "chapter", first: ids.ask1, last: ids.readResult }, AGENT),
		);
		expect(inside.code).toBe("inside-fold");
		expect(inside.message).toContain(a.id);
		const nested = refused(createFold(lattice, view, { kind: "tool-batch", first: "c1" }, AGENT));
		expect(nested.code).toBe("already-folded");
		expect(nested.message).toContain(t.id);
		const again = refused(createFold(lattice, view, { kind: "chapter", first: ids.ask1, last: ids.reply1 }, AGENT));
		expect(again.code).toBe("already-folded");
		const lone = created(createFold(emptyLattice(), view, { kind: "tool-batch", first: "c1" }, AGENT));
		const twice = refused(createFold(lone.lattice, view, { kind: "tool-batch", first: "c1" }, AGENT));
		expect(twice.code).toBe("already-folded");
	});

	it("not-adjacent: consolidating folds with context between them", () => {
		const { view } = setup();
		const one = created(createFold(emptyLattice(), view, { kind: "tool-batch", first: "c1" }, AGENT));
		const three = created(createFold(one.lattice, view, { kind: "tool-batch", first: "c3" }, AGENT));
		const result = refused(consolidateFolds(three.lattice, view, [one.record.id, three.record.id], AGENT));
		expect(result.code).toBe("not-adjacent");
		expect(result.message).toContain("assistant entry e4");
	});

	it("inside-fold for consolidation: only top-level folds join", () => {
		const { lattice, view, t, b } = folded();
		expect(refused(consolidateFolds(lattice, view, [t.id, b.id], AGENT)).code).toBe("inside-fold");
	});

	it("has-parent: dissolving a nested fold before its parent", () => {
		const { lattice, t, a } = folded();
		const result = refused(dissolveFold(lattice, t.id));
		expect(result.code).toBe("has-parent");
		expect(result.message).toContain(`Dissolve ${a.id} first`);
	});

	it("stale-plan: recording a previewed span after the lattice changed under it", () => {
		const { view, ids } = setup();
		const request: FoldRequest = { kind: "chapter", first: ids.ask1, last: ids.read };
		const preview = planFold(emptyLattice(), view, request);
		if (!preview.ok) throw new Error(preview.message);
		const brief = { text: "model brief", generator: "model" as const };
		const options: FoldOptions = { origin: "agent", brief, expectedId: preview.id };
		expect(createFold(emptyLattice(), view, request, options).ok).toBe(true);
		// Meanwhile a chapter ask1..reply1 was folded elsewhere; the same request now snaps differently.
		const other = created(
			createFold(emptyLattice(), view, { kind: "chapter", first: ids.read, last: ids.reply1 }, AGENT),
		);
		const result = refused(createFold(other.lattice, view, request, options));
		expect(result.code).toBe("stale-plan");
		expect(result.message).toContain(preview.id);
	});

	it("empty-brief: a supplied brief with no text", () => {
		const { view, ids } = setup();
		const options: FoldOptions = { origin: "agent", brief: { text: "  \n", generator: "supplied" } };
		const request: FoldRequest = { kind: "chapter", first: ids.ask1, last: ids.reply1 };
		expect(refused(createFold(emptyLattice(), view, request, options)).code).toBe("empty-brief");
	});
});

describe("consolidation, visibility, dissolve, rebrief", () => {
	const consolidated = () => {
		const base = folded();
		const c = created(consolidateFolds(base.lattice, base.view, [base.b.id, base.a.id], { origin: "ladder" }));
		return { ...base, c: c.record, lattice: c.lattice };
	};

	it("joins adjacent folds with the riders between them", () => {
		const { c, a, b, ids, view, lattice } = consolidated();
		expect(c.kind).toBe("consolidation");
		expect(c.parts).toEqual([
			{ type: "fold", foldId: a.id },
			{ type: "entry", entryId: ids.model },
			{ type: "fold", foldId: b.id },
		]);
		expect(leafEntryIds(lattice, c.id)).toEqual(view.entries.slice(0, 11).map((entry) => entry.id));
		expect(checkLattice(lattice, view, { verifySources: true })).toEqual([]);
	});

	it("reveals one level per expansion, outside-in", () => {
		const { c, a, b, t, ids, view, lattice } = consolidated();
		const tail = [ids.ask3, ids.reply3];
		expect(layoutIds(lattice, view, [])).toEqual([c.id, ...tail]);
		expect(layoutIds(lattice, view, [c.id])).toEqual([a.id, ids.model, b.id, ...tail]);
		expect(layoutIds(lattice, view, [a.id])).toEqual([c.id, ...tail]);
		expect(layoutIds(lattice, view, [c.id, a.id])).toEqual([ids.ask1, t.id, ids.reply1, ids.model, b.id, ...tail]);
		expect(
			visibleLayout(lattice, view, new Set([c.id]))
				.flatMap((item) => (item.type === "fold" ? [item] : []))
				.map((item) => [item.foldId, item.depth]),
		).toEqual([
			[a.id, 1],
			[b.id, 1],
		]);
		const states = foldTree(lattice, view, new Set([c.id])).map((row) => [row.id, row.state]);
		expect(states).toEqual([
			[c.id, "expanded"],
			[a.id, "collapsed"],
			[t.id, "hidden"],
			[b.id, "collapsed"],
		]);
	});

	it("dissolves outside-in, releasing the parts as top-level folds", () => {
		const { c, a, b, view, lattice } = consolidated();
		const result = dissolveFold(lattice, c.id);
		if (!result.ok) throw new Error(result.message);
		expect(result.released).toEqual([a.id, b.id]);
		expect(result.lattice.folds.has(c.id)).toBe(false);
		expect(
			foldTree(result.lattice, view)
				.filter((row) => row.depth === 0)
				.map((row) => row.id),
		).toEqual([a.id, b.id]);
		expect(checkLattice(result.lattice, view)).toEqual([]);
	});

	it("rebriefs with supplied text or a fresh deterministic brief", () => {
		const { a, view, lattice } = consolidated();
		const supplied = rebriefFold(lattice, view, a.id, {
			brief: { text: "Read config; x = 1.", generator: "supplied" },
		});
		if (!supplied.ok) throw new Error(supplied.message);
		expect(supplied.record.brief.startsWith("Read config; x = 1.\n")).toBe(true);
		expect(supplied.record.provenance).toEqual({ origin: "agent", briefGenerator: "supplied" });
		expect(supplied.record.parts).toEqual(a.parts);
		const back = rebriefFold(supplied.lattice, view, a.id, {});
		if (!back.ok) throw new Error(back.message);
		expect(back.record).toEqual(a);
		expect(refused(rebriefFold(lattice, view, "f-000000000000", {})).code).toBe("unknown-fold");
	});
});

describe("lattice checks", () => {
	it("report a fold whose recorded hash does not match its entries", () => {
		const { lattice, view, a } = folded();
		const tampered = new Map(lattice.folds);
		tampered.set(a.id, { ...a, sourceHash: sha256Hex("something else") });
		const defects = checkLattice({ folds: tampered }, view, { verifySources: true });
		expect(defects.map((defect) => [defect.foldId, defect.code])).toEqual([[a.id, "source-mismatch"]]);
	});

	it("report folds whose entries are not on the branch", () => {
		const { lattice, a, b } = folded();
		const other = analyzeBranch(threeTurns().entries.slice(0, 6));
		const defects = checkLattice(lattice, other);
		expect(defects).toContainEqual(expect.objectContaining({ foldId: b.id, code: "detached" }));
		expect(defects.some((defect) => defect.foldId === a.id)).toBe(false);
	});
});

/**
 * The automatic ladder and the commit it plans: every constant pinned at its
 * edge, over small single-turn branches built like a long staged session.
 */

import { describe, expect, it } from "vitest";
import { planCommit } from "../../../src/fold/engine/commit.ts";
import { createFold, type FoldOptions } from "../../../src/fold/lattice/lattice.ts";
import { emptyLattice, type FoldLattice, isRefusal } from "../../../src/fold/lattice/records.ts";
import { analyzeBranch } from "../../../src/fold/lattice/units.ts";
import {
	BACKSTOP_OCCUPANCY,
	decideCommit,
	FRESH_TAIL_MIN_TOKENS,
	LONG_CONTEXT_GUARD,
	ladderCandidates,
	ladderFreshTailStart,
	MAX_VISIBLE_FOLDS,
	MIN_COMMIT_FREED_TOKENS,
} from "../../../src/fold/policy/ladder.ts";
import type { PendingMark } from "../../../src/fold/state/state-schema.ts";
import { FoldBranch } from "../../fixtures/fold.ts";
import { ladderInput as input, LADDER_PRICES, planFor } from "../../fixtures/ladder.ts";

const AGENT: FoldOptions = { origin: "agent" };

/** Text of about `tokens` estimated tokens (Pi counts four characters a token). */
const filler = (tokens: number, tag: string) => `${tag}\n${"x".repeat(tokens * 4)}`;

/** One user message, then one staged tool call per size, each answered by a result of that many tokens. */
function stages(sizes: readonly number[], tool = "repo_stage") {
	const b = new FoldBranch();
	b.user("Run every stage.");
	const calls: string[] = [];
	sizes.forEach((tokens, k) => {
		const id = `s${k + 1}`;
		calls.push(b.calls([{ id, name: tool, args: { stage: k + 1 } }]));
		b.result(id, tool, filler(tokens, `STAGE ${k + 1}`));
	});
	return { entries: b.entries, calls, builder: b };
}

/** Stages of these sizes, then `later` small steps that name none of them, then a 9,000-token tail. */
function staleStages(sizes: readonly number[], later: number, laterTokens = 300) {
	return stages([...sizes, ...new Array<number>(later).fill(laterTokens), 9_000]);
}

/** Ids of the tool results after the first `skip` ones: protect them and only those stay candidates. */
function resultsAfter(entries: FoldBranch["entries"], skip: number): Set<string> {
	const results = entries.filter((entry) => entry.type === "message" && entry.message.role === "toolResult");
	return new Set(results.slice(skip).map((entry) => entry.id));
}

/** A lattice with one tool-batch fold per named call id. */
function foldedLattice(entries: FoldBranch["entries"], callIds: readonly string[]): FoldLattice {
	const view = analyzeBranch(entries);
	let lattice = emptyLattice();
	for (const id of callIds) {
		const made = createFold(lattice, view, { kind: "tool-batch", first: id }, AGENT);
		if (isRefusal(made)) throw new Error(made.message);
		lattice = made.lattice;
	}
	return lattice;
}

describe("fresh tail", () => {
	it("keeps the newest unit raw when it alone holds the minimum tokens", () => {
		const { entries, calls } = stages([9_000, 9_000, 9_000]);
		const ladder = input(entries);
		const start = ladderFreshTailStart(ladder.view, ladder.reading);
		expect(entries[start]?.id).toBe(calls[2]);
	});

	it("extends back over whole units until it holds FRESH_TAIL_MIN_TOKENS, inside one long turn", () => {
		const small = Math.ceil(FRESH_TAIL_MIN_TOKENS / 4);
		const { entries, calls } = stages([9_000, small, small, small, small]);
		const ladder = input(entries);
		const start = ladderFreshTailStart(ladder.view, ladder.reading);
		// Four small units reach the minimum only together (their shells add a little), so the big stage is outside.
		expect(entries[start]?.id).toBe(calls[1]);
		const { candidates } = ladderCandidates(ladder, start, false);
		expect(candidates.map((c) => c.ids[0])).toEqual([calls[0]]);
	});
});

describe("commit pricing", () => {
	it("commits a large stale result once carrying it unused has cost more than the rewrite and the re-fetches", () => {
		const { entries, calls } = staleStages([9_000], 60);
		const decision = decideCommit(input(entries));
		expect(decision).toMatchObject({ commit: true, reason: "priced" });
		expect(decision.selected[0]?.ids[0]).toBe(calls[0]);
		expect(decision.carriedCost).toBeGreaterThanOrEqual(decision.rewriteCost + decision.refetchCost);
		// Just after it (and the small steps after it) left the working set, the rent paid unused is still short.
		const early = decideCommit(input(staleStages([9_000], 32).entries));
		expect(early.commit).toBe(false);
		expect(early.declined).toMatch(/have not yet paid, unused, for the re-fetches/);
	});

	it("keeps a stale result in play under a wider working-set share (the tuning front's lever)", () => {
		const { entries, calls } = staleStages([9_000], 60);
		expect(decideCommit(input(entries)).selected[0]?.ids[0]).toBe(calls[0]);
		// At the default share the stage left play long ago; at the whole budget (less the room used) it is still in play, so nothing is eligible.
		const wide = decideCommit(input(entries, { workingSetShare: 1 }));
		expect(wide.commit).toBe(false);
		expect(wide.declined).toBe("nothing eligible outside the fresh tail");
	});

	it("declines when the rewrite costs more than carrying the mass so far, and says why", () => {
		// A mid-sized stale result ahead of a large already-sent one: folding it re-reads the large one. What
		// follows is protected, so the stale result is the only candidate.
		const { entries, calls } = staleStages([2_000, 10_000], 20);
		const protectedIds = resultsAfter(entries, 1);
		const decision = decideCommit(input(entries, { protectedIds }));
		expect(decision.refetchCost).toBeLessThan(decision.carriedCost);
		expect(decision.commit).toBe(false);
		expect(decision.declined).toMatch(/rewrite would cost/);
		expect(decision.rewriteCost).toBeGreaterThan(decision.carriedCost);
		// The same span commits for free when the boundary rewrites anyway.
		const free = decideCommit(input(entries, { protectedIds, freeRewrite: true }));
		expect(free).toMatchObject({ commit: true, reason: "free-rewrite" });
		expect(free.selected.map((c) => c.ids[0])).toEqual([calls[0]]);
	});

	it("commits at 80% occupancy of the serving budget whatever the price, not at 79.9%", () => {
		const { entries } = stages([2_000, 10_000, 9_000]);
		const protectedIds = new Set([entries[4]?.id ?? ""]);
		const total = input(entries).reading.total;
		const below = decideCommit(input(entries, { protectedIds, budget: Math.ceil(total / 0.799) }));
		const at = decideCommit(input(entries, { protectedIds, budget: Math.floor(total / BACKSTOP_OCCUPANCY) }));
		expect(below.occupancy).toBeLessThan(BACKSTOP_OCCUPANCY);
		expect(below.commit).toBe(false);
		expect(at.occupancy).toBeGreaterThanOrEqual(BACKSTOP_OCCUPANCY);
		expect(at).toMatchObject({ commit: true, reason: "backstop" });
	});

	it("commits before a long-context price tier whatever the price", () => {
		const { entries } = stages([2_000, 10_000, 9_000]);
		const protectedIds = new Set([entries[4]?.id ?? ""]);
		const total = input(entries).reading.total;
		const tiered = { ...LADDER_PRICES, longContextAbove: Math.floor(total / LONG_CONTEXT_GUARD) };
		expect(decideCommit(input(entries, { protectedIds, prices: tiered }))).toMatchObject({
			commit: true,
			reason: "long-context",
		});
		const far = { ...LADDER_PRICES, longContextAbove: Math.ceil(total / LONG_CONTEXT_GUARD) + 10 };
		expect(decideCommit(input(entries, { protectedIds, prices: far })).commit).toBe(false);
	});

	it("never commits less than MIN_COMMIT_FREED_TOKENS outside pressure", () => {
		const { entries } = staleStages([MIN_COMMIT_FREED_TOKENS], 60);
		const decision = decideCommit(input(entries, { freeRewrite: true, protectedIds: resultsAfter(entries, 1) }));
		expect(decision.commit).toBe(false);
		expect(decision.declined).toMatch(/under 1024/);
	});

	it("never proposes protected or already-folded batches, nor anything in the fresh tail", () => {
		const { entries, calls } = staleStages([9_000, 9_000, 9_000], 60);
		const lattice = foldedLattice(entries, ["s1"]);
		const protectedIds = new Set([entries[4]?.id ?? ""]);
		const decision = decideCommit(input(entries, { lattice, protectedIds }));
		// The fold of s1 and the protected s2 stay as they are; s3 and the steps after it fold, the tail stays raw.
		expect(decision.selected.map((c) => c.ids[0])).toEqual([calls[2]]);
		expect(decision.selected[0]?.end).toBeLessThanOrEqual(decision.freshTailStart);
	});

	it("never folds a span the agent dissolved exactly as it was, even when the rewrite is free", () => {
		const { entries, calls } = staleStages([9_000, 9_000, 9_000], 60);
		const before = decideCommit(input(entries, { freeRewrite: true }));
		const [span] = before.selected;
		expect(before.selected).toMatchObject([{ rung: "span" }]);
		// The agent had that span folded and dissolved it with reboundary.
		const made = createFold(
			emptyLattice(),
			analyzeBranch(entries),
			{ kind: "chapter", first: span?.ids[0] ?? "", last: span?.ids[1] ?? "" },
			AGENT,
		);
		if (isRefusal(made)) throw new Error(made.message);
		const decision = decideCommit(input(entries, { dissolved: [made.record], freeRewrite: true }));
		expect(decision.commit).toBe(true);
		expect(decision.selected.some((c) => c.start === span?.start && c.end === span?.end)).toBe(false);
		// What the span held still folds, cut otherwise: here the batches outside the fresh tail.
		expect(decision.selected.map((c) => c.ids[0])).toEqual([calls[0], calls[1], calls[2]]);
		// At the boundary of the dissolve itself its entries were promised raw: nothing of the span folds there.
		const fresh = decideCommit(input(entries, { dissolved: [made.record], justDissolved: true, freeRewrite: true }));
		expect(fresh).toMatchObject({ commit: false, declined: "nothing eligible outside the fresh tail" });
	});
});

describe("rungs", () => {
	it("takes read-only batches before other tool batches", () => {
		const b = new FoldBranch();
		b.user("go");
		const bash = b.tool({ id: "b1", name: "bash", args: { command: "make" } }, filler(3_000, "make"));
		// Bookkeeping between them stays raw, so the two cannot join as one deep span.
		b.tool({ id: "st", name: "active_context", args: { action: "status" } }, "status");
		const read = b.tool({ id: "r1", name: "read", args: { path: "a.ts" } }, filler(3_000, "a.ts"));
		b.tool({ id: "t", name: "bash" }, filler(9_000, "tail"));
		const { candidates } = ladderCandidates(input(b.entries), b.entries.length - 2, false);
		expect(candidates.map((c) => [c.rung, c.ids[0]])).toEqual([
			["read-only", read],
			["tool", bash],
		]);
	});

	it("folds a peek batch only with foldPeekResults", () => {
		const b = new FoldBranch();
		b.user("go");
		const peek = b.tool(
			{ id: "p1", name: "active_context", args: { action: "peek", id: "f-0123456789ab" } },
			filler(3_000, "peeked"),
		);
		b.tool({ id: "f1", name: "active_context", args: { action: "status" } }, filler(3_000, "status"));
		b.tool({ id: "t", name: "bash" }, filler(9_000, "tail"));
		const tail = b.entries.length - 2;
		expect(ladderCandidates(input(b.entries), tail, false).candidates).toEqual([]);
		const withPeeks = ladderCandidates(input(b.entries, { foldPeekResults: true }), tail, false).candidates;
		expect(withPeeks.map((c) => [c.rung, c.ids[0]])).toEqual([["peek", peek]]);
	});

	it(`consolidates only past ${MAX_VISIBLE_FOLDS} visible folds`, () => {
		const sizes = new Array(MAX_VISIBLE_FOLDS + 2).fill(2_000);
		sizes.push(9_000);
		const { entries } = stages(sizes);
		const ids = sizes.slice(0, -1).map((_, k) => `s${k + 1}`);
		// A roomy window: the last stage outside the tail stays in play, so no span joins the folds.
		const budget = 300_000;
		const ten = ladderCandidates(
			input(entries, { budget, lattice: foldedLattice(entries, ids.slice(0, MAX_VISIBLE_FOLDS)) }),
			entries.length - 2,
			false,
		);
		expect(ten.candidates.some((c) => c.rung === "consolidation")).toBe(false);
		const eleven = ladderCandidates(
			input(entries, { budget, lattice: foldedLattice(entries, ids.slice(0, MAX_VISIBLE_FOLDS + 1)) }),
			entries.length - 2,
			false,
		);
		const consolidation = eleven.candidates.find((c) => c.rung === "consolidation");
		expect(consolidation?.ids).toHaveLength(MAX_VISIBLE_FOLDS + 1);
	});

	it("never consolidates a fold the agent expanded: it ends the run", () => {
		const sizes = new Array(MAX_VISIBLE_FOLDS + 2).fill(2_000);
		sizes.push(9_000);
		const { entries } = stages(sizes);
		const lattice = foldedLattice(
			entries,
			sizes.slice(0, MAX_VISIBLE_FOLDS + 1).map((_, k) => `s${k + 1}`),
		);
		const folds = [...lattice.folds.keys()];
		const expanded = new Set([folds[2] ?? ""]);
		const { candidates } = ladderCandidates(input(entries, { lattice, expanded }), entries.length - 2, true);
		const consolidation = candidates.find((c) => c.rung === "consolidation");
		expect(consolidation?.ids).toEqual(folds.slice(0, 2));
	});

	it("folds a closed chapter as a deep span once priced, keeping the newest ask raw", () => {
		const b = new FoldBranch();
		const first = b.user(filler(3_000, "first question"));
		const last = b.assistant(filler(3_000, "first answer"));
		const ask = b.user("second question");
		// Steps of the second question, small and protected: they stay raw while the first chapter leaves play.
		for (let k = 1; k <= 30; k++) b.tool({ id: `q${k}`, name: "bash" }, filler(400, `step ${k}`));
		b.tool({ id: "t", name: "bash" }, filler(9_000, "tail"));
		const tail = b.entries.length - 2;
		const protectedIds = new Set(b.entries.slice(b.entries.findIndex((e) => e.id === ask) + 1).map((e) => e.id));
		const candidates = ladderCandidates(input(b.entries, { protectedIds }), tail, false).candidates;
		expect(candidates.map((c) => [c.rung, c.kind, ...c.ids])).toEqual([["span", "chapter", first, last]]);
		// Under pressure the span still takes it: no second chapter candidate over the same entries.
		const pressed = ladderCandidates(input(b.entries, { protectedIds }), tail, true).candidates;
		expect(pressed.map((c) => [c.rung, c.kind, ...c.ids])).toEqual([["span", "chapter", first, last]]);
	});
});

describe("marks at commit", () => {
	function markOn(entries: FoldBranch["entries"], callId: string): PendingMark {
		const made = createFold(emptyLattice(), analyzeBranch(entries), { kind: "tool-batch", first: callId }, AGENT);
		if (isRefusal(made)) throw new Error(made.message);
		return { record: made.record, origin: "agent" };
	}

	it("holds a mark inside the fresh tail and commits the others with the top-up in one pass, the mark inside it", () => {
		const { entries, calls } = staleStages([9_000, 9_000], 60);
		const old = markOn(entries, "s1");
		const fresh = markOn(entries, `s${calls.length}`);
		const ladder = input(entries, { marks: [old, fresh] });
		const decision = decideCommit(ladder);
		expect(decision.held.map((m) => m.record.id)).toEqual([fresh.record.id]);
		const planned = planFor(decision, ladder);
		// The ladder's deep span takes the marked stage in as a fold inside it, rather than stopping at it.
		expect(planned?.summary.folds.map((f) => [f.rung, f.origin])).toEqual([
			["mark", "agent"],
			["span", "ladder"],
		]);
		expect(planned?.change.records[1]?.parts[0]).toEqual({ type: "fold", foldId: old.record.id });
		// A committed mark is the identical record an immediate fold of the span makes.
		expect(planned?.change.records[0]).toEqual(old.record);
		expect(planned?.change.ops).toEqual([{ op: "clear-marks", ids: [old.record.id] }]);
	});

	it("refuses a mark that became protected, naming it, and applies the rest", () => {
		const { entries } = staleStages([9_000, 9_000], 60);
		const mark = markOn(entries, "s1");
		const protectedIds = new Set([entries[2]?.id ?? ""]);
		const ladder = input(entries, { marks: [mark], protectedIds, freeRewrite: true });
		const decision = decideCommit(ladder);
		const planned = planCommit(decision, {
			view: ladder.view,
			lattice: ladder.lattice,
			protectedIds,
			freshTailStart: decision.freshTailStart,
			toolName: "active_context",
			cwd: "/",
		});
		expect(planned?.summary.refused).toEqual([
			expect.objectContaining({
				id: mark.record.id,
				code: "protected",
				message: expect.stringContaining(entries[2]?.id ?? "?"),
			}),
		]);
		expect(planned?.summary.folds.map((f) => f.origin)).toEqual(["ladder"]);
		expect(planned?.change.ops).toEqual([{ op: "clear-marks", ids: [mark.record.id] }]);
	});
});

describe("batches holding context-tool calls", () => {
	it("folds a stage result that shares its batch with a fold call, but never a batch of bookkeeping alone", () => {
		const b = new FoldBranch();
		b.user("go");
		const mixed = b.calls([
			{ id: "s1", name: "repo_stage", args: { stage: 1 } },
			{ id: "m1", name: "active_context", args: { action: "fold", ids: ["x"] } },
		]);
		b.result("s1", "repo_stage", filler(3_000, "stage 1"));
		b.result("m1", "active_context", "Marked f-0123456789ab");
		b.tool({ id: "st", name: "active_context", args: { action: "status" } }, filler(3_000, "status"));
		b.tool({ id: "t", name: "bash" }, filler(9_000, "tail"));
		const { candidates } = ladderCandidates(input(b.entries), b.entries.length - 2, false);
		expect(candidates.map((c) => [c.rung, c.ids[0]])).toEqual([["tool", mixed]]);
	});
});

/**
 * Deep spans: runs of small completed work fold together as one chapter-kind
 * fold, cut where no fold may reach, and the commit that takes them prices
 * the rent their tokens have paid.
 */

import { buildSessionProjection } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { planCommit } from "../../../src/fold/engine/commit.ts";
import { createFold } from "../../../src/fold/lattice/lattice.ts";
import { emptyLattice, isRefusal } from "../../../src/fold/lattice/records.ts";
import { analyzeBranch } from "../../../src/fold/lattice/units.ts";
import { readWindow } from "../../../src/fold/policy/budget.ts";
import {
	BRIEF_TOKENS_ESTIMATE,
	decideCommit,
	type LadderInput,
	ladderCandidates,
	MIN_CANDIDATE_FREED_TOKENS,
} from "../../../src/fold/policy/ladder.ts";
import { FoldBranch } from "../../fixtures/fold.ts";

const filler = (tokens: number, tag: string) => `${tag}\n${"x".repeat(tokens * 4)}`;

function input(entries: FoldBranch["entries"], overrides: Partial<LadderInput> = {}): LadderInput {
	return {
		view: analyzeBranch(entries),
		lattice: emptyLattice(),
		protectedIds: new Set(),
		reading: readWindow(buildSessionProjection(entries), ""),
		budget: 1_000_000,
		prices: { uncached: 1, cached: 0.1, longContextAbove: null },
		contextToolName: "active_context",
		foldPeekResults: false,
		marks: [],
		expanded: new Set(),
		freeRewrite: false,
		...overrides,
	};
}

/** A user ask, `count` small `write` calls (arguments carry the file) with small results, then a large tail result. */
function smallWork(count: number) {
	const b = new FoldBranch();
	const ask = b.user("Write the files.");
	const calls: string[] = [];
	for (let k = 1; k <= count; k++) {
		calls.push(
			b.calls([{ id: `w${k}`, name: "write", args: { path: `f${k}.ts`, content: filler(150, `file ${k}`) } }]),
		);
		b.result(`w${k}`, "write", `Wrote f${k}.ts`);
	}
	b.tool({ id: "tail", name: "bash" }, filler(9_000, "tail"));
	return { b, ask, calls, tailStart: b.entries.length - 2 };
}

describe("deep spans", () => {
	it("fold a run of small batches as one span, calls' arguments included, where no batch alone qualifies", () => {
		const { b, ask, calls, tailStart } = smallWork(30);
		const ladder = input(b.entries);
		const { candidates } = ladderCandidates(ladder, tailStart, false);
		// Each batch alone frees less than a brief is worth; together they are one candidate.
		expect(candidates.map((c) => [c.rung, c.kind, ...c.ids])).toEqual([
			["span", "chapter", calls[0], b.entries[tailStart - 1]?.id],
		]);
		const span = candidates[0];
		let spanTokens = 0;
		for (let i = span?.start ?? 0; i < (span?.end ?? 0); i++)
			spanTokens += ladder.reading.entryTokens.get(b.entries[i]?.id ?? "") ?? 0;
		// The arguments' mass is what it frees: 30 files of ~150 tokens, less one brief.
		expect(span?.freedTokens).toBe(spanTokens - BRIEF_TOKENS_ESTIMATE);
		expect(span?.freedTokens).toBeGreaterThan(30 * 150 - BRIEF_TOKENS_ESTIMATE);
		// The ask the agent works on stays raw.
		expect(candidates.some((c) => c.start <= b.entries.findIndex((e) => e.id === ask))).toBe(false);
		// …while a batch alone frees less than the batch rung's minimum.
		expect(ladder.reading.entryTokens.get(b.entries[2]?.id ?? "") ?? 0).toBeLessThan(
			MIN_CANDIDATE_FREED_TOKENS + BRIEF_TOKENS_ESTIMATE,
		);
	});

	it("commit as one chapter fold whose brief replaces the whole run", () => {
		const { b, calls, tailStart } = smallWork(30);
		const ladder = input(b.entries, { freeRewrite: true });
		const decision = decideCommit(ladder);
		expect(decision).toMatchObject({ commit: true, reason: "free-rewrite" });
		const planned = planCommit(decision, {
			view: ladder.view,
			lattice: ladder.lattice,
			protectedIds: new Set(),
			freshTailStart: decision.freshTailStart,
			toolName: "active_context",
			cwd: "/",
		});
		expect(planned?.change.records).toHaveLength(1);
		const record = planned?.change.records[0];
		expect(record?.kind).toBe("chapter");
		expect(planned?.summary.folds.map((f) => f.rung)).toEqual(["span"]);
		expect(decision.freshTailStart).toBe(tailStart);
		// The exact source is stored under its hash: expand restores it byte for byte.
		expect(planned?.sources.get(record?.sourceHash ?? "")?.source.byteLength).toBeGreaterThan(30 * 150 * 4);
		expect(calls).toHaveLength(30);
	});

	it("are cut at existing folds, protected entries and barriers", () => {
		const { b, calls, tailStart } = smallWork(12);
		const view = analyzeBranch(b.entries);
		const made = createFold(emptyLattice(), view, { kind: "tool-batch", first: "w4" }, { origin: "agent" });
		if (isRefusal(made)) throw new Error(made.message);
		const protectedIds = new Set([b.entries.find((e) => e.id === calls[8])?.id ?? ""]);
		const { candidates } = ladderCandidates(
			input(b.entries, { lattice: made.lattice, protectedIds }),
			tailStart,
			false,
		);
		// w1–w3 | fold of w4 | w5–w8 | protected w9 | w10–w12
		expect(candidates.filter((c) => c.rung === "span").map((c) => c.ids[0])).toEqual([calls[0], calls[4], calls[9]]);

		const barrier = new FoldBranch();
		barrier.user("go");
		const before = barrier.tool({ id: "a", name: "bash" }, filler(200, "a"));
		barrier.tool({ id: "b", name: "bash" }, filler(200, "b"));
		barrier.bash("ls", 0);
		const after = barrier.tool({ id: "c", name: "bash" }, filler(200, "c"));
		barrier.tool({ id: "d", name: "bash" }, filler(200, "d"));
		barrier.tool({ id: "tail", name: "bash" }, filler(9_000, "tail"));
		const cut = ladderCandidates(input(barrier.entries), barrier.entries.length - 2, false).candidates;
		expect(cut.filter((c) => c.rung === "span").map((c) => c.ids[0])).toEqual([before, after]);
	});

	it("price the rent each token paid: older tokens count for every request that carried them", () => {
		const { b, tailStart } = smallWork(30);
		const ladder = input(b.entries);
		const decision = decideCommit(ladder);
		const span = decision.selected[0] ?? ladderCandidates(ladder, tailStart, false).candidates[0];
		// 31 responses carried the oldest file, 1 the newest: the token-weighted age lies between.
		expect(span?.age).toBeGreaterThan(1);
		expect(span?.age).toBeLessThan(31);
		expect(decision.carriedCost).toBeCloseTo(0.1 * (span?.freedTokens ?? 0) * (span?.age ?? 0), 6);
	});
});

/**
 * Deep spans: runs of small completed work fold together as one chapter-kind
 * fold, cut where no fold may reach, and the commit that takes them prices
 * the rent their tokens have paid.
 */

import { describe, expect, it } from "vitest";
import { createFold } from "../../../src/fold/lattice/lattice.ts";
import { emptyLattice, isRefusal } from "../../../src/fold/lattice/records.ts";
import { analyzeBranch } from "../../../src/fold/lattice/units.ts";
import {
	BRIEF_TOKENS_ESTIMATE,
	decideCommit,
	type LadderInput,
	ladderCandidates,
	MIN_CANDIDATE_FREED_TOKENS,
} from "../../../src/fold/policy/ladder.ts";
import { FoldBranch } from "../../fixtures/fold.ts";
import { ladderInput as input, planFor } from "../../fixtures/ladder.ts";

const AGENT = { origin: "agent" } as const;
/** A window with room for these branches: nothing presses, so what commits is what the price allows. */
const ROOMY_BUDGET = 300_000;

const filler = (tokens: number, tag: string) => `${tag}\n${"x".repeat(tokens * 4)}`;

/**
 * A user ask, `count` small `write` calls (arguments carry the file) with
 * small results, then `later` steps of unrelated output that name none of
 * the files (so the writes leave the working set and pay rent unused), then
 * a large tail result.
 */
function smallWork(count: number, later = 6) {
	const b = new FoldBranch();
	const ask = b.user("Write the files.");
	const calls: string[] = [];
	for (let k = 1; k <= count; k++) {
		calls.push(
			b.calls([{ id: `w${k}`, name: "write", args: { path: `f${k}.ts`, content: filler(150, `file ${k}`) } }]),
		);
		b.result(`w${k}`, "write", `Wrote f${k}.ts`);
	}
	const laterCalls: string[] = [];
	for (let k = 1; k <= later; k++) laterCalls.push(b.tool({ id: `l${k}`, name: "bash" }, filler(4_000, `later ${k}`)));
	b.tool({ id: "tail", name: "bash" }, filler(9_000, "tail"));
	return { b, ask, calls, laterCalls, tailStart: b.entries.length - 2 };
}

/** Candidates of the deep-span rung only. */
function spanCandidates(ladder: LadderInput, tailStart: number) {
	return ladderCandidates(ladder, tailStart, false).candidates.filter((c) => c.rung === "span");
}

describe("deep spans", () => {
	it("fold a run of small batches as one span, calls' arguments included, where no batch alone qualifies", () => {
		const { b, ask, calls, tailStart } = smallWork(30);
		const ladder = input(b.entries);
		const [span, ...others] = spanCandidates(ladder, tailStart);
		// Each write alone frees less than a brief is worth; the run of them (and the older later steps) is one span.
		expect(others).toEqual([]);
		expect(span?.ids[0]).toBe(calls[0]);
		let spanTokens = 0;
		for (let i = span?.start ?? 0; i < (span?.end ?? 0); i++)
			spanTokens += ladder.reading.entryTokens.get(b.entries[i]?.id ?? "") ?? 0;
		expect(span?.freedTokens).toBe(spanTokens - BRIEF_TOKENS_ESTIMATE);
		// The arguments' mass is part of what it frees: 30 files of ~150 tokens.
		expect(span?.freedTokens).toBeGreaterThan(30 * 150 - BRIEF_TOKENS_ESTIMATE);
		// The ask the agent works on stays raw.
		expect(span?.start).toBeGreaterThan(b.entries.findIndex((e) => e.id === ask));
		// …while a batch alone frees less than the batch rung's minimum.
		expect(ladder.reading.entryTokens.get(b.entries[2]?.id ?? "") ?? 0).toBeLessThan(
			MIN_CANDIDATE_FREED_TOKENS + BRIEF_TOKENS_ESTIMATE,
		);
	});

	it("commit as one chapter fold whose brief replaces the whole run", () => {
		const { b, tailStart } = smallWork(30, 30);
		const ladder = input(b.entries, { freeRewrite: true, budget: ROOMY_BUDGET });
		const decision = decideCommit(ladder);
		expect(decision).toMatchObject({ commit: true, reason: "free-rewrite" });
		const planned = planFor(decision, ladder);
		const chapters = planned?.change.records.filter((record) => record.kind === "chapter") ?? [];
		expect(chapters).toHaveLength(1);
		expect(decision.freshTailStart).toBe(tailStart);
		// The exact source is stored under its hash: expand restores it byte for byte.
		expect(planned?.sources.get(chapters[0]?.sourceHash ?? "")?.source.byteLength).toBeGreaterThan(30 * 150 * 4);
	});

	it("join the agent's own folds and marks, and are cut at the ladder's folds, protected entries and barriers", () => {
		const { b, calls, tailStart } = smallWork(12);
		const view = analyzeBranch(b.entries);
		const fold = (origin: "agent" | "ladder") => {
			const made = createFold(emptyLattice(), view, { kind: "tool-batch", first: "w4" }, { origin });
			if (isRefusal(made)) throw new Error(made.message);
			return made;
		};
		const protectedIds = new Set([b.entries.find((e) => e.id === calls[8])?.id ?? ""]);
		const starts = (ladder: LadderInput) => spanCandidates(ladder, tailStart).map((c) => c.ids[0]);
		// The ladder's own fold of w4 cuts the run: w1–w3 | fold | w5–w8 | protected w9 | w10–…
		expect(starts(input(b.entries, { lattice: fold("ladder").lattice, protectedIds }))).toEqual([
			calls[0],
			calls[4],
			calls[9],
		]);
		// A fold the agent made joins the span as a fold inside it: w1–w8 | protected w9 | w10–…
		expect(starts(input(b.entries, { lattice: fold("agent").lattice, protectedIds }))).toEqual([calls[0], calls[9]]);
		// So does a pending mark: the span takes it in, and the mark still folds, inside it.
		const mark = { record: fold("agent").record, origin: "agent" as const };
		const marked = input(b.entries, { marks: [mark], protectedIds });
		expect(starts(marked)).toEqual([calls[0], calls[9]]);
		const candidates = ladderCandidates(marked, tailStart, false).candidates;
		expect(candidates.filter((c) => c.rung === "mark").map((c) => c.mark?.record.id)).toEqual([mark.record.id]);

		const barrier = new FoldBranch();
		barrier.user("go");
		const before = barrier.tool({ id: "a", name: "bash" }, filler(200, "a"));
		barrier.tool({ id: "b", name: "bash" }, filler(200, "b"));
		barrier.bash("ls", 0);
		const after = barrier.tool({ id: "c", name: "bash" }, filler(200, "c"));
		barrier.tool({ id: "d", name: "bash" }, filler(200, "d"));
		for (let k = 1; k <= 6; k++) barrier.tool({ id: `l${k}`, name: "bash" }, filler(4_000, `later ${k}`));
		barrier.tool({ id: "tail", name: "bash" }, filler(9_000, "tail"));
		const cut = spanCandidates(input(barrier.entries), barrier.entries.length - 2);
		expect(cut.map((c) => c.ids[0])).toEqual([before, after]);
	});

	it("commit a mark inside a span as a fold inside it, counting its tokens once", () => {
		const { b } = smallWork(12, 30);
		const made = createFold(emptyLattice(), analyzeBranch(b.entries), { kind: "tool-batch", first: "w4" }, AGENT);
		if (isRefusal(made)) throw new Error(made.message);
		const roomy = { freeRewrite: true, budget: ROOMY_BUDGET };
		const ladder = input(b.entries, { marks: [{ record: made.record, origin: "agent" }], ...roomy });
		const unmarked = decideCommit(input(b.entries, roomy));
		const decision = decideCommit(ladder);
		expect(decision.commit).toBe(true);
		// The marking agent frees what the one that never marks frees: the mark's tokens are the span's.
		expect(decision.freedTokens).toBe(unmarked.freedTokens);
		const planned = planFor(decision, ladder);
		const span = planned?.change.records.find((record) => record.kind === "chapter");
		// Planned innermost first: the mark's record, then the span holding it as a fold part.
		expect(planned?.change.records[0]).toEqual(made.record);
		expect(span?.parts).toContainEqual({ type: "fold", foldId: made.record.id });
		expect(planned?.summary.refused).toEqual([]);
	});

	it("price the rent each unit paid since it left the working set", () => {
		const { b, tailStart } = smallWork(30, 30);
		const ladder = input(b.entries, { budget: ROOMY_BUDGET, freeRewrite: true });
		const decision = decideCommit(ladder);
		const [span] = spanCandidates(ladder, tailStart);
		// The writes left the working set a few of the later steps in: fewer requests carried them unused than exist.
		expect(span?.age).toBeGreaterThan(1);
		expect(span?.age).toBeLessThan(30);
		expect(decision.selected).toContainEqual(span);
		const others = decision.selected.filter((c) => c.start !== span?.start);
		const rent = (c: { freedTokens: number; age: number }) => 0.1 * c.freedTokens * c.age;
		expect(decision.carriedCost).toBeCloseTo(
			rent(span ?? { freedTokens: 0, age: 0 }) + others.reduce((t, c) => t + rent(c), 0),
			6,
		);
	});
});

import { describe, expect, it } from "vitest";
import { createFold } from "../../src/fold/lattice/lattice.ts";
import { emptyLattice, isRefusal } from "../../src/fold/lattice/records.ts";
import { analyzeBranch } from "../../src/fold/lattice/units.ts";
import {
	PROJECTION_GENERATOR_VERSION,
	type ProjectionCandidate,
	projectionCandidates,
} from "../../src/fold/projection-candidates.ts";
import { FoldBranch } from "../fixtures/fold.ts";

describe("projection candidates", () => {
	it("emit one record per visible collapsed fold with exactly the spec's fields and values", () => {
		const b = new FoldBranch();
		const a1 = b.user("first question");
		const r1 = b.assistant(`first answer ${"long ".repeat(200)}`);
		const a2 = b.user("second question");
		const r2 = b.assistant("second answer");
		const a3 = b.user("third question");
		const r3 = b.assistant("third answer");
		b.user("live");
		const view = analyzeBranch(b.entries);
		let lattice = emptyLattice();
		const ids: string[] = [];
		for (const [first, last, brief] of [
			[a1, r1, undefined],
			[a2, r2, "a brief the agent wrote"],
			[a3, r3, undefined],
		] as const) {
			const made = createFold(
				lattice,
				view,
				{ kind: "chapter", first, last },
				{ origin: "agent", ...(brief ? { brief: { text: brief, generator: "supplied" as const } } : {}) },
			);
			if (isRefusal(made)) throw new Error(made.message);
			lattice = made.lattice;
			ids.push(made.record.id);
		}
		// The third fold is expanded: not a candidate.
		const candidates = projectionCandidates({
			lattice,
			view,
			expanded: new Set([ids[2] as string]),
			toolName: "active_context",
		});
		expect(candidates).toHaveLength(2);
		candidates.forEach((candidate, rank) => {
			const record = lattice.folds.get(ids[rank] as string);
			if (!record) throw new Error("missing record");
			const saved = record.sizes.sourceBytes - record.sizes.briefBytes;
			// The spec's table, field by field.
			const expected: ProjectionCandidate = {
				version: 1,
				key: `projection:${record.id}`,
				kind: "projection",
				domain: "system",
				horizon: "working",
				source_id: record.id,
				source_version: record.sourceHash,
				route: { tool: "active_context", arguments: { action: "expand", id: record.id } },
				token_cost: Math.max(1, Math.ceil(record.brief.length / 4)),
				expansion_cost: Math.max(1, Math.ceil(record.sizes.estimatedTokens ?? record.sizes.sourceBytes / 4)),
				rank,
				score: Math.min(1, saved / record.sizes.sourceBytes),
				raw_score: saved,
				confidence: "exact",
				freshness: "current",
				locked_owner: false,
				collapse_key: `projection:${record.id}`,
				generator: rank === 1 ? "projection-supplied" : "projection-deterministic",
				generator_version: "memory-slate-generators-v2",
				recency: null,
			};
			expect(Object.keys(candidate).sort()).toEqual(Object.keys(expected).sort());
			for (const field of Object.keys(expected) as (keyof ProjectionCandidate)[])
				expect({ field, value: candidate[field] }).toEqual({ field, value: expected[field] });
			expect(candidate.score).toBeLessThanOrEqual(1);
			expect(candidate.token_cost).toBeGreaterThanOrEqual(1);
		});
		expect(PROJECTION_GENERATOR_VERSION).toBe("memory-slate-generators-v2");
	});
});

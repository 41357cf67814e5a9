/**
 * The engine's window reading: its range sums by branch position (what the
 * ladder sums a consolidation's run or a rewrite with) equal the sum of the
 * per-entry tokens, as the branch grows chunk by chunk and after a fold
 * leaves drafts pending.
 */

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { foldSpan } from "../../../src/fold/actions/actions.ts";
import { FoldEngine } from "../../../src/fold/engine/engine.ts";
import { resolveOptions } from "../../../src/fold/options.ts";
import type { WindowReading } from "../../../src/fold/policy/budget.ts";
import { threeTurns } from "../../fixtures/fold.ts";
import { grownBranch } from "../../fixtures/random-branch.ts";

function loopSum(engine: FoldEngine, reading: WindowReading, start: number, end: number): number {
	let total = 0;
	for (let i = start; i < end; i++) total += reading.entryTokens.get(engine.entries[i]?.id ?? "") ?? 0;
	return total;
}

function expectRanges(engine: FoldEngine, reading: WindowReading): void {
	const n = engine.entries.length;
	for (let start = 0; start <= n; start += Math.max(1, Math.floor(n / 7)))
		for (let end = start; end <= n; end += Math.max(1, Math.floor(n / 5)))
			expect(reading.rangeTokens?.(start, end) ?? loopSum(engine, reading, start, end)).toBe(
				loopSum(engine, reading, start, end),
			);
}

describe("the engine's window reading", () => {
	it("sums branch ranges as the per-entry tokens do while the branch grows", () => {
		fc.assert(
			fc.property(grownBranch, ({ entries, points }) => {
				const engine = new FoldEngine(resolveOptions());
				engine.reset([]);
				let at = 0;
				for (const point of points) {
					engine.append(entries.slice(at, point));
					at = point;
					expectRanges(engine, engine.reading({ fixedTokens: 7 }));
				}
			}),
			{ numRuns: 200 },
		);
	});

	it("sums ranges of the window the pending drafts will make", async () => {
		const { entries } = threeTurns();
		const engine = new FoldEngine(resolveOptions());
		engine.reset(entries);
		const outcome = await foldSpan({ ...engine.workspace("command", "/"), freshTailStart: entries.length }, ["c1"]);
		expect(outcome.ok).toBe(true);
		engine.apply(outcome);
		expect(engine.pendingDrafts().length).toBeGreaterThan(0);
		expectRanges(engine, engine.reading({ fixedTokens: 0 }));
	});
});

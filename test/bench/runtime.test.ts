/**
 * The runtime benchmark's pure parts (bench/runtime/): the folded fixture has
 * the shape its module promises, a steady boundary declines and a forced one
 * commits, a growing session's request path sends what an engine rebuilt
 * from the same branch sends, and the store blob bytes are deterministic. No Pi process runs.
 */

import { describe, expect, it } from "vitest";
import { foldedFixture, RECENT_ROOTS } from "../../bench/runtime/fixtures.ts";
import { boundaryStep, contextStep, engineOn, requestPath } from "../../bench/runtime/request-path.ts";
import { blobBytes } from "../../bench/runtime/store-throughput.ts";
import { hostFacts } from "../../src/cost/fold-replay.ts";
import { resolveOptions } from "../../src/fold/options.ts";

const options = resolveOptions();
const host = hostFacts("anthropic/claude-opus-4-5", 5_000, "/project");

describe("foldedFixture", () => {
	const fixture = foldedFixture(400, options);

	it("folds into one consolidation plus the recent chapter folds, with no edit left to make", () => {
		expect(fixture.generatedEntries).toBe(400);
		expect(fixture.visibleFolds).toBe(RECENT_ROOTS + 1);
		expect(fixture.branch.length).toBeGreaterThan(400);
		expect(engineOn(fixture.branch, options, host).pendingDrafts()).toEqual([]);
	});

	it("is steady: the boundary declines and leaves nothing to persist", async () => {
		const engine = engineOn(fixture.branch, options, host);
		const run = await boundaryStep(engine, host);
		expect(run).toMatchObject({ committed: false, drafts: 0 });
		expect(engine.entries).toHaveLength(fixture.branch.length);
	});

	it("a forced boundary commits the raw tail's batches and persists their drafts", async () => {
		const engine = engineOn(fixture.branch, options, host);
		const run = await boundaryStep(engine, host, "threshold");
		expect(run.committed).toBe(true);
		expect(run.folds).toBeGreaterThan(0);
		expect(run.drafts).toBeGreaterThan(0);
		expect(engine.pendingDrafts()).toEqual([]);
	});

	it("a growing session's request path sends what an engine rebuilt from the same branch sends", async () => {
		// The ladder may commit at any of these boundaries (deep spans are priced per turn); whatever it does,
		// the engine kept up to date turn by turn must send what one rebuilt from the persisted branch sends.
		const grown = engineOn(fixture.branch, options, host);
		for (let turn = 0; turn < 3; turn++) {
			const sent = await requestPath(grown, host, turn);
			expect(sent).toBe(await contextStep(engineOn(grown.entries, options, host), host));
		}
	});
});

describe("blobBytes", () => {
	it("is deterministic per seed and differs across seeds", () => {
		expect(blobBytes(64)).toEqual(blobBytes(64));
		expect(blobBytes(64, 2)).not.toEqual(blobBytes(64));
	});
});

/**
 * The runtime benchmark's pure parts (bench/runtime/): the folded fixture has
 * the shape its module promises, a steady boundary declines and a forced one
 * commits, and the store blob bytes are deterministic. No Pi process runs.
 */

import { describe, expect, it } from "vitest";
import { foldedFixture, RECENT_ROOTS } from "../../bench/runtime/fixtures.ts";
import { boundaryStep, contextStep, requestPath } from "../../bench/runtime/request-path.ts";
import { blobBytes } from "../../bench/runtime/store-throughput.ts";
import { hostFacts } from "../../src/cost/fold-replay.ts";
import { resolveOptions } from "../../src/fold/options.ts";

const options = resolveOptions();
const host = hostFacts("anthropic/claude-opus-4-5", 5_000, "/project");

describe("foldedFixture", () => {
	const fixture = foldedFixture(400, options, host);

	it("folds into one consolidation plus the recent chapter folds", () => {
		expect(fixture.generatedEntries).toBe(400);
		expect(fixture.visibleFolds).toBe(RECENT_ROOTS + 1);
		expect([...fixture.shell.lattice.folds.values()].filter((fold) => fold.kind === "consolidation")).toHaveLength(1);
		expect(fixture.branch.length).toBeGreaterThan(400);
	});

	it("is steady: the boundary declines and leaves nothing to persist", () => {
		const run = boundaryStep(fixture.branch, fixture.shell, options, host);
		expect(run).toMatchObject({ committed: false, drafts: 0 });
		expect(run.branch).toHaveLength(fixture.branch.length);
	});

	it("a forced boundary commits the raw tail's batches and persists their drafts", () => {
		const run = boundaryStep(fixture.branch, fixture.shell, options, host, "threshold");
		expect(run.committed).toBe(true);
		expect(run.folds).toBeGreaterThan(0);
		expect(run.drafts).toBeGreaterThan(0);
	});

	it("the request path sends the same messages as the context hook alone in the steady state", () => {
		expect(requestPath(fixture.branch, fixture.shell, options, host)).toBe(
			contextStep(fixture.branch, fixture.shell, options, host),
		);
	});
});

describe("blobBytes", () => {
	it("is deterministic per seed and differs across seeds", () => {
		expect(blobBytes(64)).toEqual(blobBytes(64));
		expect(blobBytes(64, 2)).not.toEqual(blobBytes(64));
	});
});

/**
 * A branch summary that fails reconstruction QA is never written: the
 * navigation goes on with Pi's own summarizer. QA is forced to fail with a
 * module mock, since every input the renderer can receive now passes it.
 */

import { describe, expect, it, vi } from "vitest";
import { buildDeterministicBranchSummary } from "../../../src/compaction/branch.ts";
import { SessionBuilder } from "../../fixtures/compaction-events.ts";

vi.mock("../../../src/compaction/qa/qa.ts", async (importOriginal) => {
	const original = await importOriginal<typeof import("../../../src/compaction/qa/qa.ts")>();
	return {
		...original,
		runQa: (...args: Parameters<typeof original.runQa>) => {
			const report = original.runQa(...args);
			const probes = report.probes.map((probe, index) => (index === 0 ? { ...probe, passed: false } : probe));
			return { ...report, probes, passed: report.passed - 1, score: (report.passed - 1) / report.total };
		},
	};
});

describe("branch summary QA gate", () => {
	it("defers to Pi with a message naming the failed probe instead of writing the summary", () => {
		const b = new SessionBuilder();
		b.user("Try the refactor.");
		b.tool("r1", "read", { path: "/repo/a.ts" });
		b.assistant("Done.");
		const outcome = buildDeterministicBranchSummary({
			entriesToSummarize: b.entries,
			oldLeafId: null,
			userWantsSummary: true,
		});
		expect(outcome.kind).toBe("none");
		if (outcome.kind !== "none" || outcome.why !== "qa-failed") throw new Error("expected a QA deferral");
		expect(outcome.message).toMatch(/failed reconstruction QA \(\d+ of \d+ probes passed; failed: \S+/);
		expect(outcome.message).toMatch(/Pi summarizes this branch instead/);
	});
});

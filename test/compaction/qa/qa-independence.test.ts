/**
 * QA must not share the renderer's blind spots. A deliberate projection bug
 * (module mock) reaches both the rendered summary and the sample probes,
 * which recompute the same projection; only the source-derived probes can
 * notice it.
 */

import { describe, expect, it, vi } from "vitest";
import { runQa, splitSections } from "../../../src/compaction/qa/qa.ts";
import { compileSummary } from "../../../src/compaction/summary/compile.ts";
import { FILES_HEADER, OUTSTANDING_HEADER } from "../../../src/compaction/summary/projections-files.ts";
import { SessionBuilder } from "../../fixtures/compaction-events.ts";

vi.mock("../../../src/compaction/summary/projections-files.ts", async (importOriginal) => {
	const original = await importOriginal<typeof import("../../../src/compaction/summary/projections-files.ts")>();
	return {
		...original,
		// Bug: the latest failure is lost.
		projectOutstanding: (events: Parameters<typeof original.projectOutstanding>[0]) => {
			const block = original.projectOutstanding(events);
			block.groups[0]?.items.pop();
			return block;
		},
		// Bug: written files are lost.
		projectFiles: (events: Parameters<typeof original.projectFiles>[0]) => {
			const block = original.projectFiles(events);
			for (const group of block.groups) if (group.key === "filesWritten") group.items = [];
			return block;
		},
	};
});

describe("QA against a projection bug", () => {
	it("is caught by the source-derived probes while the sample probes agree with the bug", () => {
		const b = new SessionBuilder();
		b.user("Go.");
		b.tool("r1", "read", { path: "/repo/a.ts" });
		b.tool("w1", "write", { path: "/repo/b.ts", content: "x" });
		b.tool("b1", "bash", { command: "npm test" }, { isError: true, output: "failed" });
		b.tool("b2", "bash", { command: "npm run lint" }, { isError: true, output: "failed" });
		const result = compileSummary({ entries: b.entries });
		const sections = splitSections(result.text);
		expect(sections.get(FILES_HEADER)?.join("\n")).not.toContain("/repo/b.ts");
		expect(sections.get(OUTSTANDING_HEADER)?.join("\n")).not.toContain("npm run lint");
		const report = runQa(result.text, result.qa);
		const failing = report.probes.filter((probe) => !probe.passed).map((probe) => probe.id);
		expect(failing).toEqual(["files:paths", "failures:addresses"]);
	});
});

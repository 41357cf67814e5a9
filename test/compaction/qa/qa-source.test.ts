import { describe, expect, it } from "vitest";
import { type QaReport, runQa } from "../../../src/compaction/qa/qa.ts";
import { SPEC_BLOCK_CEILINGS } from "../../../src/compaction/qa/qa-source.ts";
import { compileSummary } from "../../../src/compaction/summary/compile.ts";
import { STATUS_HEADER, TRANSCRIPT_HEADER } from "../../../src/compaction/summary/projections-activity.ts";
import { BLOCK_CEILINGS, FOOTER_HEADER } from "../../../src/compaction/summary/render.ts";
import { SessionBuilder, traceV1 } from "../../fixtures/compaction-events.ts";

const LONG_DIR = "/repo/src/feature-alpha/components/widgets/";

/** Files (with long paths, and enough reads to force an omission), failures of every kind, a named run. */
function session() {
	const b = new SessionBuilder();
	b.user("Start.");
	b.tool("w1", "write", { path: `${LONG_DIR}very-long-widget-file-name.tsx`, content: "x" });
	b.tool("w2", "write", { path: "/etc/other.conf", content: "y" });
	for (let index = 0; index < 40; index++) b.tool(`r${index}`, "read", { path: `/repo/docs/page-${index}.md` });
	b.tool("e1", "edit", { path: "/repo/src/core.ts" }, { isError: true, output: "text not found" });
	b.tool("b1", "bash", { command: "npm test" }, { isError: true, output: "2 failed" });
	b.bash("make lint", { exitCode: 2, output: "lint failed" });
	b.fabric("f1", {
		display: { name: "Deploy" },
		details: {
			trace: traceV1([
				{ ref: "mcp.deploy", args: { env: "staging" }, outcome: "failed", error: "timeout" },
				{ ref: "pi.write", args: { path: "/repo/out.txt" } },
			]),
		},
	});
	b.assistant("Done for now.");
	return compileSummary({ entries: b.entries });
}

const failing = (report: QaReport) => report.probes.filter((probe) => !probe.passed).map((probe) => probe.id);

function replaceLine(text: string, predicate: (line: string) => boolean, replace: (line: string) => string | null) {
	const lines = text.split("\n");
	const index = lines.findIndex(predicate);
	if (index < 0) throw new Error("line not found");
	const next = replace(lines[index] ?? "");
	if (next === null) lines.splice(index, 1);
	else lines[index] = next;
	return lines.join("\n");
}

/** Move the block starting at `header` to the very end of the text. */
function moveBlockToEnd(text: string, header: string): string {
	const start = text.indexOf(`${header}\n`);
	const end = text.indexOf("\n\n", start);
	const block = text.slice(start, end);
	return `${text.slice(0, start)}${text.slice(end + 2).replace(/\n$/, "")}\n\n${block}\n`;
}

describe("source-derived QA probes", () => {
	it("keep the spec table of block ceilings, which every renderer ceiling respects", () => {
		expect(Object.values(SPEC_BLOCK_CEILINGS)).toEqual([
			12288, 3072, 4096, 4096, 3072, 3072, 8192, 3072, 2048, 4608, 2048, 2048, 1024, 3072, 1536,
		]);
		expect(Object.values(BLOCK_CEILINGS).every((ceiling) => Object.values(SPEC_BLOCK_CEILINGS).includes(ceiling))).toBe(
			true,
		);
	});

	it("pass on a faithful summary, one probe each", () => {
		const result = session();
		const report = runQa(result.text, result.qa);
		expect(failing(report)).toEqual([]);
		const ids = report.probes.map((probe) => probe.id);
		for (const id of ["bounds:blocks", "footer:last", "files:paths", "failures:addresses"]) {
			expect(ids.filter((candidate) => candidate === id)).toHaveLength(1);
		}
		expect(result.text).toMatch(/- \[\d+ omitted: @/);
	});

	it("bounds:blocks fails when a block outgrows its spec ceiling, even with the summary under 32 KiB", () => {
		const result = session();
		const inflated = replaceLine(
			result.text,
			(line) => line.startsWith("- Latest assistant "),
			(line) => `${line}${" padding".repeat(300)}`,
		);
		const report = runQa(inflated, result.qa);
		expect(failing(report)).toEqual(["bounds:blocks"]);
		expect(report.probes.find((probe) => probe.id === "bounds:blocks")?.detail).toContain(STATUS_HEADER);
	});

	it("footer:last fails when a block follows the footer or the text ends with a blank line", () => {
		const result = session();
		expect(failing(runQa(moveBlockToEnd(result.text, TRANSCRIPT_HEADER), result.qa))).toEqual(["footer:last"]);
		expect(failing(runQa(`${result.text}\n`, result.qa))).toEqual(["footer:last"]);
		expect(failing(runQa(result.text.slice(0, result.text.indexOf(FOOTER_HEADER)), result.qa))).toContain(
			"footer:last",
		);
	});

	it("files:paths fails when a rendered path no longer matches its source, where the sample check still passes", () => {
		const result = session();
		const wrongDir = replaceLine(
			result.text,
			(line) => line.includes("widgets/very-long-widget-file-name.tsx"),
			(line) => line.replace("feature-alpha", "feature-omega"),
		);
		expect(failing(runQa(wrongDir, result.qa))).toEqual(["files:paths"]);
	});

	it("files:paths fails when a path line is dropped or a marker misstates its count or range", () => {
		const result = session();
		const dropped = replaceLine(
			result.text,
			// The `[Files And Changes]` line (`[Current Work]` names the path too, after the tool: "write /etc/…").
			(line) => line.endsWith("/etc/other.conf") && !line.includes(" write "),
			() => null,
		);
		expect(failing(runQa(dropped, result.qa))).toContain("files:paths");
		const marker = result.text.split("\n").find((line) => /^- \[\d+ omitted: @/.test(line)) ?? "";
		const count = Number(/\[(\d+) omitted/.exec(marker)?.[1]);
		const recounted = result.text.replace(marker, marker.replace(`[${count} omitted`, `[${count + 1} omitted`));
		expect(failing(runQa(recounted, result.qa))).toContain("files:paths");
		const first = /omitted: (@\S+)/.exec(marker)?.[1] ?? "";
		const narrowed = result.text.replace(marker, marker.replace(`omitted: ${first}`, "omitted: @nowhere"));
		expect(failing(runQa(narrowed, result.qa))).toContain("files:paths");
	});

	it("failures:addresses fails when any tool, bash or nested failure loses its address", () => {
		const result = session();
		for (const needle of ['"text not found"', '"2 failed"', '"exit 2: lint failed"', '"failed: timeout"']) {
			const dropped = replaceLine(
				result.text,
				(line) => line.startsWith("- @") && line.includes(" open ") && line.includes(needle),
				() => null,
			);
			expect(failing(runQa(dropped, result.qa)), needle).toContain("failures:addresses");
		}
	});
});

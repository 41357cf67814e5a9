import { describe, expect, it } from "vitest";
import { type QaReport, runQa } from "../../../src/compaction/qa/qa.ts";
import { compileSummary } from "../../../src/compaction/summary/compile.ts";
import { FOOTER_HEADER } from "../../../src/compaction/summary/render.ts";
import { SessionBuilder, traceV1 } from "../../fixtures/compaction-events.ts";

/** A small session touching every probed projection, with enough turns to force omissions. */
function richSession() {
	const b = new SessionBuilder();
	for (let turn = 0; turn < 40; turn++) {
		b.user(`Request number ${turn}: adjust module ${turn}`);
		b.tool(`r${turn}`, "read", { path: `/repo/src/m${turn}.ts` });
		b.assistant(`Looked at module ${turn}.`);
	}
	b.tool(
		"e1",
		"edit",
		{ path: "/repo/src/core.ts", oldText: "a", newText: "b" },
		{ isError: true, output: "text not found" },
	);
	const [, fileFix] = b.tool("e2", "edit", { path: "/repo/src/core.ts", oldText: "c", newText: "d" });
	b.tool("b1", "bash", { command: "npm run check" }, { isError: true, output: "type error in core.ts" });
	const [runCall] = b.fabric("f1", {
		display: { name: "Regenerate fixtures", description: "Rebuilds every fixture" },
		details: { trace: traceV1([{ ref: "pi.bash", args: { command: "make fixtures" } }], { phases: ["build"] }) },
	});
	b.assistant("Architecture proposal:\n\nParagraph one explains the parser.\n\nParagraph two sets the 32 KiB budget.");
	b.user("Option B.\n\nConstraint: keep the old API.\n\nEstimate: two days.");
	return { b, fileFix, runCall };
}

function compiled() {
	const { b, runCall } = richSession();
	const result = compileSummary({ entries: b.entries });
	return { result, runCall, check: (text: string): QaReport => runQa(text, result.qa) };
}

const failing = (report: QaReport) => report.probes.filter((probe) => !probe.passed).map((probe) => probe.id);

function dropLine(text: string, predicate: (line: string) => boolean): string {
	const lines = text.split("\n");
	const index = lines.findIndex(predicate);
	if (index < 0) throw new Error("line to drop not found");
	lines.splice(index, 1);
	return lines.join("\n");
}

describe("runQa on a faithful summary", () => {
	it("scores 1.0 with probes for every projection, dialogue, footer and the latest run", () => {
		const { result, check } = compiled();
		const report = check(result.text);
		expect(failing(report)).toEqual([]);
		expect(report.score).toBe(1);
		const ids = report.probes.map((probe) => probe.id);
		for (const id of [
			"bounds",
			"footer",
			"dialogue:1",
			"dialogue:3",
			"historical:goal",
			"files:filesModified",
			"files:filesRead",
			"outstanding:operations:open",
			"outstanding:operations:resolved",
			"activity:activity",
			"turns:turns",
			"status:status",
			"transcript:transcript",
			"latest-run",
		]) {
			expect(ids).toContain(id);
		}
		expect(result.omittedCounts.filesRead).toBeGreaterThan(0);
	});
});

describe("runQa detects loss", () => {
	it("fails when a file address is deleted", () => {
		const { result, check } = compiled();
		const report = check(dropLine(result.text, (line) => line.endsWith(" core.ts") && line.startsWith("- @")));
		expect(failing(report)).toEqual(["files:filesModified", "files:paths"]);
		expect(report.score).toBeLessThan(1);
	});

	it("fails when an error record is deleted", () => {
		const { result, check } = compiled();
		const report = check(dropLine(result.text, (line) => line.includes('"type error in core.ts"')));
		expect(failing(report)).toContain("outstanding:operations:open");
	});

	it("fails when an earlier turn is deleted", () => {
		const { result, check } = compiled();
		const report = check(
			// Turn lines name user turns by address ("- @id user [read×1]"); the request is quoted elsewhere.
			dropLine(result.text, (line) => / user \[read×1\]$/.test(line)),
		);
		expect(failing(report)).toEqual(["turns:turns"]);
	});

	it("fails when the latest run's intent, outcome or address is lost", () => {
		const { result, runCall, check } = compiled();
		const statusLine = (text: string) => text.split("\n").find((line) => line.startsWith("- Latest Fabric run")) ?? "";
		const original = statusLine(result.text);
		for (const mutated of [
			original.replace('"Regenerate fixtures"', '"Something else"'),
			original.replace("→ succeeded", "→ failed"),
			original.replace(`@${runCall}`, "@unknown"),
		]) {
			const report = check(result.text.replace(original, mutated));
			expect(failing(report)).toContain("latest-run");
		}
		expect(failing(check(result.text.replace(`@${runCall} run "Regenerate fixtures"`, "")))).toContain(
			"activity:activity",
		);
	});

	it("fails when the footer or its source facts are lost", () => {
		const { result, check } = compiled();
		const withoutFooter = result.text.slice(0, result.text.indexOf(FOOTER_HEADER));
		expect(failing(check(withoutFooter))).toContain("footer");
		const timestamp = result.sourceTimestamp ?? "";
		expect(failing(check(result.text.replace(timestamp, "2000-01-01T00:00:00.000Z")))).toContain("footer");
		const range = `@${result.sourceRange?.firstEntryId}`;
		expect(failing(check(result.text.replace(`Source range: ${range}`, "Source range: @x")))).toContain("footer");
	});

	it("fails when a later dialogue paragraph, constraint, estimate or selection is lost", () => {
		const { result, check } = compiled();
		for (const fragment of [
			"> Paragraph two sets the 32 KiB budget.",
			"> Constraint: keep the old API.",
			"> Estimate: two days.",
			"> Option B.",
		]) {
			const report = check(result.text.replace(`${fragment}\n`, ""));
			expect(
				failing(report).some((id) => id.startsWith("dialogue:")),
				fragment,
			).toBe(true);
		}
	});

	it("fails when an omission marker misstates its count or range", () => {
		const { result, check } = compiled();
		const marker = result.text.split("\n").find((line) => line.startsWith("- [") && line.includes(" omitted: @")) ?? "";
		const count = Number(/\[(\d+) omitted/.exec(marker)?.[1]);
		expect(
			failing(check(result.text.replace(marker, marker.replace(`[${count} omitted`, `[${count - 1} omitted`)))),
		).not.toEqual([]);
		const rangeStart = /omitted: @(\S+)/.exec(marker)?.[1] ?? "";
		expect(failing(check(result.text.replace(marker, marker.replace(`@${rangeStart}`, "@nowhere"))))).not.toEqual([]);
	});

	it("fails a summary rendered from different source", () => {
		const { result } = compiled();
		const other = new SessionBuilder("z");
		other.user("unrelated");
		const otherResult = compileSummary({ entries: other.entries });
		expect(runQa(otherResult.text, result.qa).score).toBeLessThan(0.5);
	});
});

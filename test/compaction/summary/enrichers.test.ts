import { describe, expect, it } from "vitest";
import { runQa } from "../../../src/compaction/qa/qa.ts";
import { compileSummary } from "../../../src/compaction/summary/compile.ts";
import {
	ANNOTATIONS_HEADER,
	BUILT_IN_ENRICHERS,
	type CompactionEnricher,
	ENRICHER_ANNOTATION_LIMIT,
	ENRICHER_ANNOTATION_MAX_BYTES,
	runEnrichers,
} from "../../../src/compaction/summary/enrichers.ts";
import { normalizeBranch } from "../../../src/session/normalize.ts";
import { SessionBuilder } from "../../fixtures/compaction-events.ts";

function session() {
	const b = new SessionBuilder();
	const user = b.user("hello");
	const [, result] = b.tool("t", "read", { path: "/a.ts" });
	return { b, user, result };
}

describe("enrichers", () => {
	it("ships none, so summaries carry no annotation block by default", () => {
		expect(BUILT_IN_ENRICHERS).toEqual([]);
		expect(compileSummary({ entries: session().b.entries }).text).not.toContain(ANNOTATIONS_HEADER);
		expect(ENRICHER_ANNOTATION_LIMIT).toBe(16);
		expect(ENRICHER_ANNOTATION_MAX_BYTES).toBe(256);
	});

	it("renders annotations on known addresses ordered by enricher id, dropping unknown ones", () => {
		const { b, user, result } = session();
		const zeta: CompactionEnricher = { id: "zeta", annotate: () => [{ address: result, text: "read once" }] };
		const alpha: CompactionEnricher = {
			id: "alpha",
			annotate: ({ events }) => [
				{ address: user, text: `first of ${events.length} events` },
				{ address: "not-on-branch", text: "dropped" },
			],
		};
		const compiled = compileSummary({ entries: b.entries, enrichers: [zeta, alpha] });
		expect(compiled.text).toContain(
			`${ANNOTATIONS_HEADER}\n- @${user} alpha: first of 3 events\n- @${result} zeta: read once`,
		);
		expect(compiled.text).not.toContain("dropped");
		expect(compiled.enrichment).toEqual({ failed: 0, dropped: 1 });
		expect(runQa(compiled.text, compiled.qa).score).toBe(1);
	});

	it("counts an enricher that throws and keeps the rest", () => {
		const { b, user } = session();
		const events = normalizeBranch(b.entries).events;
		const broken: CompactionEnricher = {
			id: "broken",
			annotate: () => {
				throw new Error("boom");
			},
		};
		const fine: CompactionEnricher = { id: "fine", annotate: () => [{ address: user, text: "x".repeat(1000) }] };
		const enriched = runEnrichers([broken, fine], events);
		expect(enriched.failed).toBe(1);
		expect(enriched.block.groups[0]?.items).toHaveLength(1);
		expect(Buffer.byteLength(enriched.block.groups[0]?.items[0]?.text ?? "")).toBeLessThanOrEqual(
			ENRICHER_ANNOTATION_MAX_BYTES,
		);
	});
});

import { describe, expect, it } from "vitest";
import {
	BRANCH_FACT_BOUNDS,
	BRANCH_JSON_BOUNDS,
	BRANCH_SUMMARY_KIND,
	BRANCH_SUMMARY_VERSION,
	BRANCH_SUMMARY_VERSION_V1,
	type BranchFactDraft,
	type BranchSummaryInput,
	buildBranchSummaryDetails,
	FABRIC_EXECUTION_OUTCOMES,
	MAX_BRANCH_ENVELOPE_BYTES,
	MAX_BRANCH_FACTS,
	MAX_BRANCH_REQUEST_BYTES,
	MAX_BRANCH_RUN_DESCRIPTION_BYTES,
	MAX_BRANCH_RUN_NAME_BYTES,
	MAX_BRANCH_SECTIONS,
	parseBranchSummaryDetails,
} from "../../../src/session/records/branch-details.ts";
import { utf8ByteLength } from "../../../src/text/utf8.ts";

const user = (entryId: string, text = "please fix the build"): BranchFactDraft => ({
	kind: "user",
	entryId,
	subordinal: "user",
	text,
});

const operation = (entryId: string, sequence = 0): BranchFactDraft => ({
	kind: "operation",
	entryId,
	subordinal: String(sequence),
	ref: "pi.edit",
	provider: "pi",
	action: "edit",
	tool: "edit",
	args: { path: "src/a.ts", edits: [{ oldText: "a", newText: "b" }] },
	outcome: "failed",
	error: "no match",
	result: { ok: false },
});

const run = (entryId: string, name = "Fix build", description?: string): BranchFactDraft => ({
	kind: "fabricRun",
	entryId,
	subordinal: "call:tc1",
	name,
	outcome: "succeeded",
	...(description === undefined ? {} : { description }),
});

function input(facts: BranchFactDraft[], overrides: Partial<BranchSummaryInput> = {}): BranchSummaryInput {
	return {
		source: { firstEntryId: "e1", lastEntryId: "e9", entryCount: 9, oldLeafId: "e9" },
		facts,
		sections: ["[Fabric Activity]"],
		request: { text: "", sourceBytes: 0, truncated: false },
		...overrides,
	};
}

const ALL_KINDS: BranchFactDraft[] = [
	user("e1"),
	{
		kind: "customMessage",
		entryId: "e2",
		subordinal: "custom",
		customType: "note",
		text: "ctx",
		display: true,
		details: { a: [1] },
	},
	{ kind: "phase", entryId: "e3", subordinal: "phase:0", phase: "build" },
	operation("e3"),
	run("e4", "Fix build", "repair the failing tsc run"),
];

function persisted<T>(value: T): T {
	return JSON.parse(JSON.stringify(value)) as T;
}

describe("constants", () => {
	it("pins the envelope bounds", () => {
		expect(BRANCH_SUMMARY_KIND).toBe("pi-fabric.branch-summary");
		expect(BRANCH_SUMMARY_VERSION).toBe(2);
		expect(BRANCH_SUMMARY_VERSION_V1).toBe(1);
		expect(MAX_BRANCH_FACTS).toBe(256);
		expect(MAX_BRANCH_ENVELOPE_BYTES).toBe(131_072);
		expect(MAX_BRANCH_RUN_NAME_BYTES).toBe(256);
		expect(MAX_BRANCH_RUN_DESCRIPTION_BYTES).toBe(1024);
		expect(MAX_BRANCH_SECTIONS).toBe(32);
		expect(MAX_BRANCH_REQUEST_BYTES).toBe(3072);
		expect(BRANCH_JSON_BOUNDS).toEqual({ maxDepth: 12, maxNodes: 2048 });
		expect(BRANCH_FACT_BOUNDS).toEqual({
			identityBytes: 256,
			textBytes: 4096,
			errorBytes: 1024,
			jsonBytes: 16_384,
			nameBytes: 256,
			descriptionBytes: 1024,
			json: { maxDepth: 12, maxNodes: 2048 },
		});
		expect(FABRIC_EXECUTION_OUTCOMES).toEqual(["succeeded", "failed", "aborted", "timed_out"]);
	});
});

describe("buildBranchSummaryDetails", () => {
	it("builds a v2 envelope with derived addresses and oldLeafId", () => {
		const details = buildBranchSummaryDetails(input(ALL_KINDS));
		expect(details.kind).toBe("pi-fabric.branch-summary");
		expect(details.version).toBe(2);
		expect(details.source.oldLeafId).toBe("e9");
		expect(details.facts.map((fact) => fact.address)).toEqual([
			"e1/user",
			"e2/custom",
			"e3/phase:0",
			"e3/0",
			"e4/call:tc1",
		]);
		expect(details.facts[4]).toEqual({
			kind: "fabricRun",
			entryId: "e4",
			subordinal: "call:tc1",
			address: "e4/call:tc1",
			name: "Fix build",
			description: "repair the failing tsc run",
			outcome: "succeeded",
		});
		expect(details.omittedFacts).toBe(0);
		expect(parseBranchSummaryDetails(persisted(details))).toEqual({ ok: true, version: 2, details });
	});

	it("records a root oldLeafId as null", () => {
		const details = buildBranchSummaryDetails(
			input([user("e1")], { source: { firstEntryId: "e1", lastEntryId: "e1", entryCount: 1, oldLeafId: null } }),
		);
		expect(parseBranchSummaryDetails(details).ok).toBe(true);
		expect(details.source.oldLeafId).toBeNull();
	});

	it("clips run names and descriptions to their byte bounds", () => {
		const details = buildBranchSummaryDetails(input([run("e1", "é".repeat(200), "d".repeat(2000))]));
		const fact = details.facts[0];
		expect(fact?.kind === "fabricRun" && utf8ByteLength(fact.name)).toBe(256);
		expect(fact?.kind === "fabricRun" && fact.description).toBe("d".repeat(1024));
		expect(parseBranchSummaryDetails(details).ok).toBe(true);
	});

	it("leaves out facts it cannot bound and counts them", () => {
		const details = buildBranchSummaryDetails(
			input([
				user("e".repeat(300)),
				{ ...operation("e2"), args: { bad: Number.NaN } } as BranchFactDraft,
				{ ...operation("e3"), outcome: "unknown" } as unknown as BranchFactDraft,
				run("e4", ""),
				{ kind: "phase", entryId: "e5", subordinal: "phase:0", phase: "" },
				user("e6"),
			]),
		);
		expect(details.facts.map((fact) => fact.entryId)).toEqual(["e6"]);
		expect(details.omittedFacts).toBe(5);
	});

	it("drops optional JSON fields beyond the bounds but keeps the fact", () => {
		let deep: unknown = 1;
		for (let i = 0; i < 20; i++) deep = [deep];
		const details = buildBranchSummaryDetails(
			input([
				{
					kind: "customMessage",
					entryId: "e1",
					subordinal: "custom",
					customType: "note",
					text: "t",
					display: false,
					details: deep as never,
				},
				{ ...operation("e2"), result: "r".repeat(20_000) } as BranchFactDraft,
			]),
		);
		expect(details.facts).toHaveLength(2);
		expect("details" in (details.facts[0] ?? {})).toBe(false);
		expect("result" in (details.facts[1] ?? {})).toBe(false);
	});

	it("keeps the earliest and latest facts past the count bound", () => {
		const facts = Array.from({ length: 300 }, (_, i) => user(`e${i}`, "x"));
		const details = buildBranchSummaryDetails(input(facts));
		expect(details.facts).toHaveLength(256);
		expect(details.omittedFacts).toBe(44);
		expect(details.facts[0]?.entryId).toBe("e0");
		expect(details.facts[127]?.entryId).toBe("e127");
		expect(details.facts[128]?.entryId).toBe("e172");
		expect(details.facts.at(-1)?.entryId).toBe("e299");
		expect(parseBranchSummaryDetails(details).ok).toBe(true);
	});

	it("removes middle facts until the envelope fits 128 KiB", () => {
		const facts = Array.from({ length: 60 }, (_, i) => user(`e${i}`, "y".repeat(4_096)));
		const details = buildBranchSummaryDetails(input(facts));
		const bytes = utf8ByteLength(JSON.stringify(details));
		expect(bytes).toBeLessThanOrEqual(MAX_BRANCH_ENVELOPE_BYTES);
		expect(bytes).toBeGreaterThan(MAX_BRANCH_ENVELOPE_BYTES - 4_200);
		expect(details.facts.length + details.omittedFacts).toBe(60);
		expect(details.facts[0]?.entryId).toBe("e0");
		expect(details.facts.at(-1)?.entryId).toBe("e59");
		expect(parseBranchSummaryDetails(details).ok).toBe(true);
	});

	it("bounds the request text and sections", () => {
		const details = buildBranchSummaryDetails(
			input([], {
				request: { text: "q".repeat(5_000), sourceBytes: 5_000, truncated: false },
				sections: Array(40).fill("[x]"),
			}),
		);
		expect(details.request).toEqual({ text: "q".repeat(3072), sourceBytes: 5_000, truncated: true });
		expect(details.sections).toHaveLength(32);
	});
});

describe("parseBranchSummaryDetails", () => {
	function v1(): Record<string, unknown> {
		const { source, facts, ...rest } = persisted(buildBranchSummaryDetails(input(ALL_KINDS.slice(0, 4))));
		const { oldLeafId: _dropped, ...olderSource } = source;
		return { ...rest, version: 1, source: olderSource, facts };
	}

	it("reads a strict v1 envelope as version 1, without oldLeafId", () => {
		const parsed = parseBranchSummaryDetails(v1());
		expect(parsed.ok && parsed.version).toBe(1);
		expect(parsed.ok && "oldLeafId" in parsed.details.source).toBe(false);
	});

	it("never reinterprets v1 as v2: a v1 envelope with a fabricRun fact is invalid", () => {
		const record = v1();
		record.facts = [...(record.facts as unknown[]), persisted(buildBranchSummaryDetails(input([run("e9")]))).facts[0]];
		expect(parseBranchSummaryDetails(record).ok).toBe(false);
	});

	it("requires oldLeafId on v2", () => {
		const record = persisted(buildBranchSummaryDetails(input([user("e1")]))) as unknown as Record<
			string,
			Record<string, unknown>
		>;
		delete record.source?.oldLeafId;
		expect(parseBranchSummaryDetails(record).ok).toBe(false);
	});

	const corruptions: [string, (record: Record<string, unknown>, facts: Record<string, unknown>[]) => void][] = [
		["another kind", (r) => (r.kind = "pi-fabric.compaction")],
		["version 3", (r) => (r.version = 3)],
		["version as a string", (r) => (r.version = "2")],
		["a mismatched address", (_, f) => ((f[0] as Record<string, unknown>).address = "e1/other")],
		["an unknown fact kind", (_, f) => ((f[0] as Record<string, unknown>).kind = "assistant")],
		["an unknown outcome", (_, f) => ((f[3] as Record<string, unknown>).outcome = "ok")],
		["non-object args", (_, f) => ((f[3] as Record<string, unknown>).args = ["x"])],
		["a run name past its bound", (_, f) => ((f[4] as Record<string, unknown>).name = "n".repeat(257))],
		["a description past its bound", (_, f) => ((f[4] as Record<string, unknown>).description = "d".repeat(1025))],
		["a non-boolean display", (_, f) => ((f[1] as Record<string, unknown>).display = "yes")],
		["a negative omittedFacts", (r) => (r.omittedFacts = -1)],
		["a missing request", (r) => delete r.request],
		["too many facts", (r, f) => (r.facts = Array.from({ length: 257 }, () => f[0]))],
		[
			"an envelope past 128 KiB",
			(r, f) => (r.facts = Array.from({ length: 40 }, () => ({ ...f[0], text: "z".repeat(4_000) }))),
		],
	];
	for (const [name, corrupt] of corruptions) {
		it(`rejects ${name}`, () => {
			const record = persisted(buildBranchSummaryDetails(input(ALL_KINDS))) as unknown as Record<string, unknown>;
			expect(parseBranchSummaryDetails(record).ok).toBe(true);
			corrupt(record, record.facts as Record<string, unknown>[]);
			expect(parseBranchSummaryDetails(record).ok).toBe(false);
		});
	}

	it("rejects non-records without throwing and drops unknown members", () => {
		for (const value of [undefined, null, "x", [], 7]) expect(parseBranchSummaryDetails(value).ok).toBe(false);
		const record = persisted(buildBranchSummaryDetails(input([user("e1")]))) as unknown as Record<string, unknown>;
		record.summary = "prose that must never count";
		const [first] = record.facts as Record<string, unknown>[];
		if (first) first.note = "extra";
		const parsed = parseBranchSummaryDetails(record);
		expect(parsed.ok).toBe(true);
		if (!parsed.ok) return;
		expect("summary" in parsed.details).toBe(false);
		expect("note" in (parsed.details.facts[0] ?? {})).toBe(false);
	});
});

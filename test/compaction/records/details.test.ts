import { describe, expect, it } from "vitest";
import { planLiveCut } from "../../../src/compaction/cut/budget.ts";
import { budgetDetails } from "../../../src/compaction/cut/summary-fit.ts";
import {
	BINDING_CONSTRAINTS,
	buildCompactionDetails,
	countPriorCompactorMarkers,
	DETAILS_COMPACTOR_TAG,
	DETAILS_VERSION,
	DETAILS_VERSION_V1,
	type FabricCompactionDetailsV2,
	fabricDetailsVersion,
	MAX_DETAILS_SECTIONS,
	parseCompactionDetails,
	RECALL_POINTER,
} from "../../../src/compaction/records/details.ts";
import { CompactionBranch, detailsInput, detailsV1, uniformBranch } from "../../fixtures/compaction-budget.ts";

/** A deep copy as Pi persists and reloads it. */
function persisted<T>(value: T): T {
	return JSON.parse(JSON.stringify(value)) as T;
}

function built(): FabricCompactionDetailsV2 {
	return buildCompactionDetails(detailsInput());
}

type Json = Record<string, unknown>;

/** A mutable JSON copy of a valid v2 record, for corrupting one field. */
function mutable(): Json {
	return persisted(built()) as unknown as Json;
}

/** A nested object of a mutable record. */
function part(record: Json, key: string): Json {
	return record[key] as Json;
}

function budgetRecord() {
	const branch = uniformBranch(20, { user: 1_000, reply: 4_000 });
	const plan = planLiveCut(branch.entries, {
		tokensBefore: 110_000,
		contextWindow: 200_000,
		reserveTokens: 16_384,
		keepRecentTokens: 20_000,
		targetContextRatio: 0.65,
		reason: "threshold",
		estimate: branch.estimate,
		// The 10,000 tokens above the entries' estimate are known fixed context (scale 1).
		fixedContextEstimate: 10_000,
	});
	if (!plan.budget) throw new Error("expected a budget");
	return budgetDetails(plan.budget, 10_000);
}

describe("constants", () => {
	it("pins the record tags", () => {
		expect(DETAILS_COMPACTOR_TAG).toBe("fabric");
		expect(DETAILS_VERSION).toBe(2);
		expect(DETAILS_VERSION_V1).toBe(1);
		expect(RECALL_POINTER).toBe("session-entry-id-range");
		expect(MAX_DETAILS_SECTIONS).toBe(64);
		expect(BINDING_CONSTRAINTS).toEqual(["continuity", "occupancy", "reserve", "reduction"]);
	});
});

describe("buildCompactionDetails", () => {
	it("emits every v2 field", () => {
		expect(built()).toEqual({
			compactor: "fabric",
			version: 2,
			sections: ["[Recent user directions and discussion]", "[Compaction Request]", "[Files And Changes]"],
			coverage: { cumulativeSourceRange: { first: "b1", last: "b32" }, liveCutRange: { first: "b1", last: "b32" } },
			counts: {
				branchEntries: 40,
				cumulativeSourceEntries: 32,
				sourceEvents: 57,
				liveCutEntries: 32,
				priorFabricV1: 0,
				priorFabricV2: 1,
			},
			omittedCounts: {
				goal: 2,
				files: 0,
				activity: 1,
				outstanding: 0,
				earlierTurns: 3,
				transcript: 17,
				preserve: 0,
				thinking: 4,
				dialogueBytes: 120,
			},
			instructionPolicy: {
				mode: "typed-v1",
				canonicalized: true,
				sourceBytes: 96,
				truncated: false,
				decoderTruncated: false,
				preserveCount: 2,
				omittedPreserveCount: 0,
				renderedOmittedBytes: 0,
			},
			stableAddresses: {
				firstKeptEntryId: "b33",
				cumulativeSourceRange: { first: "b1", last: "b32" },
				recall: "session-entry-id-range",
			},
			timestamp: "2026-01-01T00:00:00.000Z",
		});
	});

	it("never writes the legacy commit counter", () => {
		expect("commits" in built().omittedCounts).toBe(false);
	});

	it("round-trips through persistence and the validator, with and without a budget", () => {
		const plain = built();
		expect(parseCompactionDetails(persisted(plain))).toEqual({ ok: true, version: 2, details: plain });
		const withBudget = buildCompactionDetails(
			detailsInput({ budget: budgetRecord(), carry: { count: 2, renderedOmittedBytes: 0 } }),
		);
		expect(withBudget.budget?.projectedTokensAfter).toBe(32_500);
		expect(parseCompactionDetails(persisted(withBudget))).toEqual({ ok: true, version: 2, details: withBudget });
	});

	it("records a compact-all kept id", () => {
		const details = buildCompactionDetails(detailsInput({ firstKeptEntryId: "" }));
		expect(parseCompactionDetails(details).ok).toBe(true);
	});
});

describe("parseCompactionDetails: accepted", () => {
	it("recognizes a v1 record as version 1", () => {
		const parsed = parseCompactionDetails(detailsV1());
		expect(parsed).toEqual({ ok: true, version: 1, details: detailsV1() });
		expect(fabricDetailsVersion(detailsV1())).toBe(1);
	});

	it("reads older v2 records without the additive fields", () => {
		const legacy = mutable();
		delete part(legacy, "omittedCounts").activity;
		delete part(legacy, "omittedCounts").thinking;
		delete part(legacy, "omittedCounts").dialogueBytes;
		delete part(legacy, "instructionPolicy").decoderTruncated;
		delete part(legacy, "instructionPolicy").renderedOmittedBytes;
		part(legacy, "omittedCounts").commits = 3;
		const parsed = parseCompactionDetails(legacy);
		expect(parsed.ok).toBe(true);
		expect(parsed.ok && parsed.version === 2 && parsed.details.omittedCounts).toEqual({
			goal: 2,
			files: 0,
			outstanding: 0,
			earlierTurns: 3,
			transcript: 17,
			preserve: 0,
			commits: 3,
		});
	});

	it('reads legacy v2 budgets with strategy "adaptive"', () => {
		const record = mutable();
		record.budget = {
			strategy: "adaptive",
			contextWindow: 200_000,
			targetContextRatio: 0.65,
			targetContextTokens: 130_000,
			reserveTokens: 16_384,
			keepRecentTokens: 20_000,
			rawTokensBefore: 150_000,
			tokenScale: 1.2,
			fixedOverheadTokens: 9_000,
			retainedRawTokens: 40_000,
			projectedTokensAfter: 70_000,
		};
		const parsed = parseCompactionDetails(record);
		expect(parsed.ok && parsed.version === 2 && parsed.details.budget?.strategy).toBe("adaptive");
	});

	it("returns only validated fields", () => {
		const record = mutable();
		record.extra = "ignored";
		part(record, "counts").unknown = 5;
		const parsed = parseCompactionDetails(record);
		expect(parsed.ok).toBe(true);
		if (!parsed.ok) return;
		expect("extra" in parsed.details).toBe(false);
		expect(parsed.details.version === 2 && "unknown" in parsed.details.counts).toBe(false);
	});
});

describe("parseCompactionDetails: rejected", () => {
	const corruptions: [string, (record: Json) => void][] = [
		["another compactor", (r) => (r.compactor = "pi")],
		["version 3", (r) => (r.version = 3)],
		["version as a string", (r) => (r.version = "2")],
		["missing counts", (r) => delete r.counts],
		["a negative count", (r) => (part(r, "counts").sourceEvents = -1)],
		["a fractional count", (r) => (part(r, "counts").liveCutEntries = 1.5)],
		["an empty range id", (r) => (part(r, "coverage").liveCutRange = { first: "", last: "b2" })],
		["negative dialogueBytes", (r) => (part(r, "omittedCounts").dialogueBytes = -1)],
		["a non-numeric renderedOmittedBytes", (r) => (part(r, "instructionPolicy").renderedOmittedBytes = "bad")],
		["an unknown instruction mode", (r) => (part(r, "instructionPolicy").mode = "pi-vcc")],
		["more preserve items than v1 allows", (r) => (part(r, "instructionPolicy").preserveCount = 17)],
		["rendering loss without truncated", (r) => (part(r, "instructionPolicy").renderedOmittedBytes = 10)],
		["decoder truncation without truncated", (r) => (part(r, "instructionPolicy").decoderTruncated = true)],
		["an unknown recall pointer", (r) => (part(r, "stableAddresses").recall = "prose")],
		["a missing timestamp", (r) => delete r.timestamp],
		["too many sections", (r) => (r.sections = Array(65).fill("[x]"))],
		["a non-string section", (r) => (r.sections = [1])],
		["a malformed carry", (r) => (r.carry = { count: -1, renderedOmittedBytes: 0 })],
	];
	for (const [name, corrupt] of corruptions) {
		it(`rejects ${name}`, () => {
			const record = mutable();
			corrupt(record);
			expect(parseCompactionDetails(record).ok).toBe(false);
		});
	}

	const budgetCorruptions: [string, (budget: Record<string, unknown>) => void][] = [
		["an unknown strategy", (b) => (b.strategy = "greedy")],
		["a continuity budget without its binding constraint", (b) => delete b.bindingConstraint],
		["a continuity budget without its raw-tail budget", (b) => delete b.rawTailTokenBudget],
		["an unknown binding constraint", (b) => (b.bindingConstraint = "window")],
		["a zero token scale", (b) => (b.tokenScale = 0)],
		["a ratio above 1", (b) => (b.targetContextRatio = 1.5)],
		["a negative projection", (b) => (b.projectedTokensAfter = -1)],
	];
	for (const [name, corrupt] of budgetCorruptions) {
		it(`rejects ${name}`, () => {
			const record = persisted(buildCompactionDetails(detailsInput({ budget: budgetRecord() }))) as unknown as Record<
				string,
				Record<string, unknown>
			>;
			expect(parseCompactionDetails(record).ok).toBe(true);
			corrupt(record.budget as Record<string, unknown>);
			expect(parseCompactionDetails(record).ok).toBe(false);
		});
	}

	it("rejects non-records and inherited fields without throwing", () => {
		for (const value of [undefined, null, "fabric", 2, [], [built()]])
			expect(parseCompactionDetails(value).ok).toBe(false);
		expect(parseCompactionDetails(Object.create(built())).ok).toBe(false);
		const throwing = { ...built() };
		Object.defineProperty(throwing, "counts", {
			enumerable: true,
			get() {
				throw new Error("boom");
			},
		});
		expect(parseCompactionDetails(throwing)).toEqual({ ok: false, reason: "details could not be read" });
	});

	it("rejects a v1 record missing its fields", () => {
		const broken = detailsV1();
		delete broken.summarizedEntryRange;
		expect(parseCompactionDetails(broken).ok).toBe(false);
	});
});

describe("countPriorCompactorMarkers", () => {
	it("counts recognized v1 and v2 markers only, never from summary prose", () => {
		const branch = new CompactionBranch();
		branch.turn();
		branch.compaction("", 100, detailsV1());
		branch.turn();
		branch.compaction("", 100, built());
		branch.compaction("", 100, persisted(built()));
		branch.compaction("", 100, { compactor: "fabric", version: 3 });
		branch.compaction("", 100, { readFiles: [], modifiedFiles: [] });
		branch.compaction("", 100);
		expect(countPriorCompactorMarkers(branch.entries)).toEqual({ priorFabricV1: 1, priorFabricV2: 2 });
	});
});

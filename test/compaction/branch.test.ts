import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import {
	type BranchSummaryPreparation,
	buildDeterministicBranchSummary,
	PI_TOOL_REFS,
} from "../../src/compaction/branch.ts";
import { COMPACT_REQUEST_PREFIX, PI_VCC_SENTINEL } from "../../src/compaction/records/instructions.ts";
import { compileSummary } from "../../src/compaction/summary/compile.ts";
import { REQUEST_BLOCK_HEADER } from "../../src/compaction/summary/request-render.ts";
import {
	BRANCH_SUMMARY_KIND,
	BRANCH_SUMMARY_VERSION,
	parseBranchSummaryDetails,
} from "../../src/session/records/branch-details.ts";
import { utf8ByteLength } from "../../src/text/utf8.ts";
import { activeBranch, branchEnvelope, fact, SessionBuilder, traceV1 } from "../fixtures/compaction-events.ts";

/** A shared prefix, an abandoned branch (the one to summarize) and a sibling that must not leak. */
function forkedSession() {
	const b = new SessionBuilder();
	b.user("Set up the project.");
	const ancestor = b.assistant("Project is set up.");
	b.user("Try the risky refactor in the parser.");
	b.tool("call-edit", "edit", { path: "/repo/parser.ts", oldText: "a", newText: "b" });
	b.tool("call-bash", "bash", { command: "npm test" }, { isError: true, output: "2 tests failed" });
	b.fabric("call-run", {
		display: { name: "Benchmark parser", description: "time the hot path" },
		details: { trace: traceV1([{ ref: "mcp.profile", args: { target: "parser" } }], { phases: ["measure"] }) },
	});
	const oldLeaf = b.assistant("The refactor broke two tests.");
	b.branchFrom(ancestor);
	b.user("SIBLING: write the docs instead.");
	const sibling = b.assistant("SIBLING: docs written.");
	const abandoned = activeBranch(b.entries, oldLeaf);
	const start = abandoned.findIndex((entry) => entry.id === ancestor) + 1;
	return { b, ancestor, oldLeaf, sibling, toSummarize: abandoned.slice(start) };
}

function preparation(
	entries: readonly SessionEntry[],
	overrides: Partial<BranchSummaryPreparation> = {},
): BranchSummaryPreparation {
	return { entriesToSummarize: entries, oldLeafId: entries.at(-1)?.id ?? null, userWantsSummary: true, ...overrides };
}

function summarized(outcome: ReturnType<typeof buildDeterministicBranchSummary>) {
	if (outcome.kind !== "summary") throw new Error(`expected a summary, got ${JSON.stringify(outcome)}`);
	return outcome;
}

describe("buildDeterministicBranchSummary", () => {
	const { oldLeaf, toSummarize } = forkedSession();

	it("makes no summary unless the user asked for one, and defers replacement prompts to Pi", () => {
		expect(buildDeterministicBranchSummary(preparation(toSummarize, { userWantsSummary: false }))).toEqual({
			kind: "none",
			why: "no-summary-wanted",
		});
		expect(buildDeterministicBranchSummary(preparation(toSummarize, { replaceInstructions: true }))).toEqual({
			kind: "none",
			why: "replace-instructions",
		});
		expect(buildDeterministicBranchSummary(preparation([]))).toEqual({ kind: "none", why: "no-entries" });
	});

	it("summarizes only the abandoned path, bounded, with a v2 envelope recording the old leaf", () => {
		const outcome = summarized(buildDeterministicBranchSummary(preparation(toSummarize, { oldLeafId: oldLeaf })));
		expect(outcome.summary).toContain("risky refactor");
		expect(outcome.summary).not.toContain("SIBLING");
		expect(utf8ByteLength(outcome.summary)).toBeLessThanOrEqual(32 * 1024);
		const parsed = parseBranchSummaryDetails(JSON.parse(JSON.stringify(outcome.details)));
		expect(parsed.ok && parsed.version).toBe(BRANCH_SUMMARY_VERSION);
		expect(outcome.details).toMatchObject({
			kind: BRANCH_SUMMARY_KIND,
			source: {
				firstEntryId: toSummarize[0]?.id,
				lastEntryId: oldLeaf,
				entryCount: toSummarize.length,
				oldLeafId: oldLeaf,
			},
			omittedFacts: 0,
		});
	});

	it("carries typed facts: the request, plain tool calls under their Fabric ref, and the named run", () => {
		const { details } = summarized(buildDeterministicBranchSummary(preparation(toSummarize)));
		const kinds = details.facts.map((item) => item.kind);
		expect(kinds).toEqual(["user", "operation", "operation", "fabricRun", "phase", "operation"]);
		expect(details.facts[0]).toMatchObject({ kind: "user", text: "Try the risky refactor in the parser." });
		expect(details.facts[1]).toMatchObject({
			kind: "operation",
			ref: PI_TOOL_REFS.edit,
			tool: "edit",
			args: { path: "/repo/parser.ts" },
			outcome: "succeeded",
		});
		expect(details.facts[2]).toMatchObject({ ref: "pi.bash", outcome: "failed", error: "2 tests failed" });
		expect(details.facts[3]).toMatchObject({ kind: "fabricRun", name: "Benchmark parser", outcome: "succeeded" });
		expect(details.facts[5]).toMatchObject({ kind: "operation", ref: "mcp.profile", args: { target: "parser" } });
	});

	it("lets a later compaction recover the abandoned file and failure from the envelope, never the prose", () => {
		const { b, sibling, toSummarize: abandoned } = forkedSession();
		const outcome = summarized(buildDeterministicBranchSummary(preparation(abandoned)));
		b.branchFrom(sibling);
		b.branchSummary("POISON-BRANCH-PROSE", sibling, JSON.parse(JSON.stringify(outcome.details)));
		const leaf = b.user("Continue with the docs.");
		const compiled = compileSummary({ entries: activeBranch(b.entries, leaf) });
		expect(compiled.text).toContain("/repo/parser.ts");
		expect(compiled.text).toContain("npm test");
		expect(compiled.text).not.toContain("POISON-BRANCH-PROSE");
	});

	it("resolves a powershell failure across a /tree rehydration in both directions", () => {
		for (const abandonedFails of [true, false]) {
			const b = new SessionBuilder();
			b.user("Build on Windows.");
			const ancestor = b.assistant("Ready.");
			b.user("Try the build script.");
			const attempt = b.tool(
				"ps-1",
				"powershell",
				{ command: "./build.ps1 -Release" },
				abandonedFails ? { isError: true, output: "MSBuild failed" } : {},
			)[1];
			const abandoned = activeBranch(b.entries, attempt);
			const start = abandoned.findIndex((entry) => entry.id === ancestor) + 1;
			const outcome = summarized(buildDeterministicBranchSummary(preparation(abandoned.slice(start))));
			expect(outcome.details.facts).toContainEqual(
				expect.objectContaining({ kind: "operation", ref: "pi.powershell", tool: "powershell" }),
			);
			b.branchFrom(ancestor);
			b.branchSummary("prose", ancestor, JSON.parse(JSON.stringify(outcome.details)));
			b.user("Run it again.");
			const leaf = b.tool(
				"ps-2",
				"powershell",
				{ command: "./build.ps1 -Release" },
				abandonedFails ? {} : { isError: true, output: "MSBuild failed" },
			)[1];
			if (!abandonedFails) {
				b.user("Once more.");
				b.tool("ps-3", "powershell", { command: "./build.ps1 -Release" });
			}
			const compiled = compileSummary({ entries: activeBranch(b.entries, abandonedFails ? leaf : b.lastId) });
			const outstanding = compiled.text.split("[Outstanding Context]\n")[1]?.split("\n\n")[0] ?? "";
			expect(outstanding).toContain("resolved by");
			expect(outstanding).not.toContain(" open ");
		}
	});

	it("re-emits the facts of a nested branch summary unchanged", () => {
		const b = new SessionBuilder();
		b.user("start");
		const nested = fact("old1", "user", { kind: "user", text: "older abandoned request" });
		b.branchSummary("prose", "x", branchEnvelope([nested]));
		b.user("newer request");
		const { details } = summarized(buildDeterministicBranchSummary(preparation(b.entries)));
		expect(details.facts.find((item) => item.entryId === "old1")).toEqual(nested);
	});

	it("treats __pi_vcc__ as ordinary request text on the tree surface", () => {
		const { summary, details } = summarized(
			buildDeterministicBranchSummary(preparation(toSummarize, { customInstructions: PI_VCC_SENTINEL })),
		);
		expect(summary).toContain(`${REQUEST_BLOCK_HEADER}\nInstructions: ${PI_VCC_SENTINEL}`);
		expect(details.request.text).toContain(PI_VCC_SENTINEL);
	});

	it("cancels a malformed typed request (fail closed) with the decoder's error code", () => {
		const outcome = buildDeterministicBranchSummary(
			preparation(toSummarize, { customInstructions: `${COMPACT_REQUEST_PREFIX}{"version":2}` }),
		);
		expect(outcome).toMatchObject({ kind: "cancel", instructionError: "unsupported-version" });
	});
});

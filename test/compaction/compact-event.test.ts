import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import {
	buildDeterministicCompaction,
	type CompactionInput,
	detailsOmittedCounts,
	internalErrorCancel,
	MAX_CANCEL_MESSAGE_BYTES,
	MAX_CANCEL_PROBES_NAMED,
	projectionEstimator,
	qaCancellation,
} from "../../src/compaction/compact-event.ts";
import { OVERFLOW_WINDOW_FRACTION } from "../../src/compaction/cut/budget.ts";
import { runQa } from "../../src/compaction/qa/qa.ts";
import { parseCompactionDetails } from "../../src/compaction/records/details.ts";
import {
	COMPACT_REQUEST_PREFIX,
	encodePreserveRequest,
	PI_VCC_SENTINEL,
} from "../../src/compaction/records/instructions.ts";
import { compileSummary } from "../../src/compaction/summary/compile.ts";
import { REQUEST_BLOCK_HEADER } from "../../src/compaction/summary/request-render.ts";
import { closureSafeBoundaries, toolCallSpans } from "../../src/session/closure.ts";
import { utf8ByteLength } from "../../src/text/utf8.ts";
import {
	generateSession,
	loadRealBranch,
	POISON,
	REAL_SESSIONS,
	SessionBuilder,
} from "../fixtures/compaction-events.ts";

const MAX_SUMMARY_BYTES = 32 * 1024;

function input(branchEntries: readonly SessionEntry[], overrides: Partial<CompactionInput> = {}) {
	return {
		branchEntries,
		tokensBefore: 150_000,
		reserveTokens: 16_384,
		keepRecentTokens: 20_000,
		contextWindow: 200_000,
		targetContextRatio: 0.65,
		reason: "manual" as const,
		...overrides,
	};
}

function compacted(outcome: ReturnType<typeof buildDeterministicCompaction>) {
	if (outcome.kind !== "compaction") throw new Error(`expected a compaction, got ${JSON.stringify(outcome)}`);
	return outcome;
}

/** Turns of tool work with bulky outputs (about 500 tokens each), which a summary compresses well. */
function toolSession(turns = 6): SessionBuilder {
	const b = new SessionBuilder();
	for (let turn = 1; turn <= turns; turn++) {
		b.user(`Turn ${turn}: please update module ${turn}.`);
		b.tool(`call-${turn}`, "read", { path: `/repo/m${turn}.ts` }, { output: `line ${turn}\n`.repeat(250) });
		b.assistant(`Updated module ${turn}.`);
	}
	return b;
}

/** Pi's structural estimate of the whole branch plus a small fixed overhead, as tokensBefore. */
function observedTokens(entries: readonly SessionEntry[], overhead = 500): number {
	const estimate = projectionEstimator(entries);
	return entries.reduce((sum, entry) => sum + estimate(entry), overhead);
}

describe("buildDeterministicCompaction on a real session log", () => {
	const branch = loadRealBranch(REAL_SESSIONS.beforeCompaction);
	const outcome = compacted(buildDeterministicCompaction(input(branch)));
	const { result, plan, compiled } = outcome;

	it("produces a bounded summary with valid Fabric v2 details", () => {
		expect(utf8ByteLength(result.summary)).toBeLessThanOrEqual(MAX_SUMMARY_BYTES);
		const parsed = parseCompactionDetails(result.details);
		expect(parsed.ok).toBe(true);
		expect(parsed.ok && parsed.version).toBe(2);
		expect(result.details).toMatchObject({ compactor: "fabric", version: 2 });
		expect(result.tokensBefore).toBe(150_000);
	});

	it("keeps a closure-safe tail after the previous marker and records the same id everywhere", () => {
		const keptIndex = branch.findIndex((entry) => entry.id === result.firstKeptEntryId);
		const lastMarker = branch.findLastIndex((entry) => entry.type === "compaction");
		expect(keptIndex).toBeGreaterThan(lastMarker);
		expect(closureSafeBoundaries(branch.length, toolCallSpans(branch))[keptIndex]).toBe(true);
		expect(result.details.stableAddresses.firstKeptEntryId).toBe(result.firstKeptEntryId);
		expect(plan.keptIndex).toBe(keptIndex);
	});

	it("summarizes the whole raw prefix cumulatively, while the live cut starts at the previous kept entry", () => {
		const details = result.details;
		expect(details.coverage.cumulativeSourceRange.first).toBe(branch[0]?.id);
		expect(details.coverage.cumulativeSourceRange.last).toBe(branch[plan.keptIndex - 1]?.id);
		expect(details.coverage.liveCutRange.first).toBe(branch[plan.window.start]?.id);
		expect(details.counts.branchEntries).toBe(branch.length);
		expect(details.counts.cumulativeSourceEntries).toBe(plan.keptIndex);
		expect(details.counts.liveCutEntries).toBe(plan.keptIndex - plan.window.start);
		// The log's compactions came from Pi's summarizer, not from Fabric.
		expect(details.counts).toMatchObject({ priorFabricV1: 0, priorFabricV2: 0 });
	});

	it("maps compile's omission counts onto the details schema", () => {
		const counts = compiled.omittedCounts;
		expect(result.details.omittedCounts).toEqual({
			goal: counts.goal,
			files: counts.filesCreated + counts.filesWritten + counts.filesModified + counts.filesRead,
			activity: counts.activity,
			outstanding: counts.operations,
			earlierTurns: counts.turns,
			transcript: counts.transcript,
			preserve: 0,
			thinking: compiled.erasedThinkingCount,
			dialogueBytes: counts.dialogueBytes,
		});
		expect(detailsOmittedCounts(counts).files).toBe(result.details.omittedCounts.files);
	});

	it("records the calibrated budget and is byte-identical when run again", () => {
		expect(result.details.budget).toMatchObject({ strategy: "continuity", contextWindow: 200_000 });
		const again = compacted(buildDeterministicCompaction(input(branch)));
		expect(again.result.summary).toBe(result.summary);
		expect(JSON.stringify(again.result.details)).toBe(JSON.stringify(result.details));
	});

	it("never renders the earlier compaction summaries' prose", () => {
		for (const entry of branch) {
			if (entry.type !== "compaction") continue;
			const distinctive = entry.summary.split("\n").find((line) => line.trim().length > 80);
			if (distinctive) expect(result.summary).not.toContain(distinctive);
		}
	});
});

describe("buildDeterministicCompaction cut and budget", () => {
	it('compacts everything with firstKeptEntryId "" when no boundary fits', () => {
		const b = toolSession();
		const outcome = compacted(
			// The newest entry alone is far larger than any raw tail the ceilings allow.
			buildDeterministicCompaction(
				input(b.entries, {
					tokensBefore: 20_000,
					keepRecentTokens: 0,
					estimate: (entry) => (entry.id === b.lastId ? 5_000_000 : 1000),
				}),
			),
		);
		expect(outcome.result.firstKeptEntryId).toBe("");
		expect(outcome.plan.compactAll).toBe(true);
		expect(outcome.result.details.stableAddresses.firstKeptEntryId).toBe("");
		expect(outcome.result.details.coverage.cumulativeSourceRange.last).toBe(b.lastId);
		// The summary says nothing stays raw, and why.
		expect(outcome.result.summary).toContain("Kept raw after this summary: nothing (compact-all)");
	});

	it("clamps the working window to the failed request on overflow", () => {
		const branch = loadRealBranch(REAL_SESSIONS.large);
		const outcome = compacted(
			buildDeterministicCompaction(input(branch, { reason: "overflow", tokensBefore: 150_000 })),
		);
		expect(outcome.result.details.budget?.contextWindow).toBe(Math.floor(150_000 * OVERFLOW_WINDOW_FRACTION));
	});

	it("falls back to the structural tail and records no budget without a model window", () => {
		const b = toolSession(30);
		const { contextWindow: _omit, ...withoutWindow } = input(b.entries, { keepRecentTokens: 50 });
		const outcome = compacted(buildDeterministicCompaction(withoutWindow));
		expect(outcome.result.details.budget).toBeUndefined();
		expect(outcome.plan.fallbackReason).toBe("no-context-window");
		expect(parseCompactionDetails(outcome.result.details).ok).toBe(true);
	});

	it("cancels with nothing-to-compact when the live window has nothing before a safe cut", () => {
		const b = toolSession(2);
		b.compaction("earlier summary", "");
		b.user("only this is live");
		// With model metadata the reduction ceiling always forces a cut; the structural fallback keeps a fitting tail.
		const { contextWindow: _omit, ...withoutWindow } = input(b.entries, { tokensBefore: 5_000 });
		const outcome = buildDeterministicCompaction(withoutWindow);
		expect(outcome).toMatchObject({ kind: "cancel", code: "nothing-to-compact" });
	});

	it("cancels with summary-does-not-fit when the summary would expand a small context", () => {
		const b = generateSession(300);
		const outcome = buildDeterministicCompaction(input(b.entries, { tokensBefore: 1_500, estimate: () => 5 }));
		expect(outcome).toMatchObject({ kind: "cancel", code: "summary-does-not-fit" });
		if (outcome.kind === "cancel")
			expect(utf8ByteLength(outcome.message)).toBeLessThanOrEqual(MAX_CANCEL_MESSAGE_BYTES);
	});

	it("moves the kept boundary past its own previous marker and counts it as a prior Fabric v2 marker", () => {
		const b = toolSession(40);
		const first = compacted(
			buildDeterministicCompaction(
				input(b.entries, { keepRecentTokens: 2_000, tokensBefore: observedTokens(b.entries) }),
			),
		);
		b.push({
			type: "compaction",
			summary: `${first.result.summary}\n${POISON.compaction}`,
			firstKeptEntryId: first.result.firstKeptEntryId,
			tokensBefore: 3_000,
			details: JSON.parse(JSON.stringify(first.result.details)),
			fromHook: true,
		});
		const marker = b.lastId;
		for (let turn = 41; turn <= 60; turn++) {
			b.user(`Turn ${turn}: more work.`);
			b.tool(`late-${turn}`, "read", { path: `/repo/late${turn}.ts` }, { output: "body\n".repeat(400) });
		}
		const second = compacted(
			buildDeterministicCompaction(
				input(b.entries, { keepRecentTokens: 2_000, tokensBefore: observedTokens(b.entries) }),
			),
		);
		const keptIndex = b.entries.findIndex((entry) => entry.id === second.result.firstKeptEntryId);
		expect(keptIndex).toBeGreaterThan(b.entries.findIndex((entry) => entry.id === marker));
		expect(second.result.details.counts.priorFabricV2).toBe(1);
		// The previous rendered summary is not semantic input.
		expect(second.result.summary).not.toContain(POISON.compaction);
	});
});

describe("buildDeterministicCompaction keeps the live work (issue 10)", () => {
	it("/compact of pi-mono-before-compaction with keepRecentTokens 4,000 keeps its 51 KB `!find` raw", () => {
		const branch = loadRealBranch(REAL_SESSIONS.beforeCompaction);
		const last = branch.findLast((entry) => entry.type === "message");
		expect(last?.type === "message" && last.message.role).toBe("bashExecution");
		const outcome = compacted(
			buildDeterministicCompaction(
				input(branch, { keepRecentTokens: 4_000, tokensBefore: observedTokens(branch, 4_000) }),
			),
		);
		// Before: no cut point at `!cmd`, keepRecentTokens as a ceiling: compact-all with firstKeptEntryId "".
		expect(outcome.result.firstKeptEntryId).toBe(last?.id);
		expect(outcome.plan.compactAll).toBe(false);
		expect(outcome.plan.retainedRawTokens).toBeGreaterThanOrEqual(4_000);
		expect(outcome.result.summary).toContain(`Kept raw after this summary: from @${last?.id}`);
	});

	it("keeps the last line of a 60 KB final answer in the summary", () => {
		const b = new SessionBuilder();
		b.user("Write the whole report.");
		const lines = Array.from({ length: 1_200 }, (_, i) => `Report line ${i}: ${"detail ".repeat(6)}`);
		lines.push("FINAL-LINE: the migration is complete and verified.");
		b.assistant(lines.join("\n"));
		expect(utf8ByteLength(lines.join("\n"))).toBeGreaterThan(60_000);
		b.user("Thanks.");
		b.assistant("You're welcome.");
		const compiledSummary = compileSummary({ entries: b.entries.slice(0, 2) }).text;
		expect(compiledSummary).toContain("FINAL-LINE: the migration is complete and verified.");
		expect(compiledSummary).toContain("**Final assistant response (not a verified outcome)**");
	});
});

describe("buildDeterministicCompaction on densely tokenized text", () => {
	/** 60 Chinese turns: real tokenizers count about one token per character, Pi's estimate one per four. */
	function denseSession(): { entries: SessionEntry[]; characters: number } {
		const b = new SessionBuilder();
		const text = "这是一个非常长的中文句子用于测试分词密度".repeat(100);
		for (let turn = 0; turn < 60; turn++) {
			b.user(`请修改模块${turn}${text}`);
			b.assistant(`好的${text}`);
		}
		return { entries: b.entries, characters: 60 * 2 * text.length };
	}

	for (const reason of ["manual", "overflow", "threshold"] as const) {
		it(`compacts on ${reason} with a closure-safe cut whose projection fits (tokensBefore ≈ 4 × estimate)`, () => {
			const { entries, characters } = denseSession();
			const outcome = compacted(
				buildDeterministicCompaction(
					input(entries, {
						reason,
						tokensBefore: characters + 5_000,
						fixedContextEstimate: 5_000,
						contextWindow: 272_000,
					}),
				),
			);
			const budget = outcome.result.details.budget;
			if (!budget) throw new Error("expected a budget");
			expect(budget.rawTokensBefore * 3.5).toBeLessThan(characters);
			expect(budget.tokenScale).toBeGreaterThan(3.5);
			expect(budget.fixedOverheadTokens).toBeLessThan(5_000 * budget.tokenScale + 1);
			expect(budget.projectedTokensAfter).toBeLessThanOrEqual(budget.targetContextTokens);
			expect(budget.projectedTokensAfter).toBeLessThan(0.95 * (characters + 5_000));
			const kept = outcome.plan.keptIndex;
			expect(outcome.result.firstKeptEntryId).toBe(entries[kept]?.id);
			expect(closureSafeBoundaries(entries.length, toolCallSpans(entries))[kept]).toBe(true);
			expect(outcome.qa.score).toBe(1);
			expect(parseCompactionDetails(outcome.result.details).ok).toBe(true);
		});
	}
});

describe("buildDeterministicCompaction QA gate", () => {
	it("cancels instead of persisting a summary QA scores below 1, naming a bounded list of failed probes", () => {
		const compiled = compileSummary({ entries: toolSession(20).entries });
		expect(qaCancellation(runQa(compiled.text, compiled.qa))).toBeUndefined();
		const footerless = compiled.text.slice(0, compiled.text.indexOf("[Source]"));
		const outcome = qaCancellation(runQa(footerless, compiled.qa));
		expect(outcome).toMatchObject({ kind: "cancel", code: "qa-failed" });
		if (outcome?.kind !== "cancel") return;
		expect(outcome.message).toContain("footer");
		expect(utf8ByteLength(outcome.message)).toBeLessThanOrEqual(MAX_CANCEL_MESSAGE_BYTES);
		const gutted = runQa("[Files And Changes]\n", compiled.qa);
		const many = qaCancellation(gutted);
		if (many?.kind !== "cancel") throw new Error("expected a cancellation");
		const failed = gutted.probes.filter((probe) => !probe.passed).length;
		expect(failed).toBeGreaterThan(MAX_CANCEL_PROBES_NAMED);
		expect(many.message).toContain(`+${failed - MAX_CANCEL_PROBES_NAMED} more`);
	});

	it("runs QA on every persisted summary", () => {
		const branch = toolSession(30).entries;
		const outcome = compacted(
			buildDeterministicCompaction(input(branch, { keepRecentTokens: 2_000, tokensBefore: observedTokens(branch) })),
		);
		expect(outcome.qa).toEqual(runQa(outcome.result.summary, outcome.compiled.qa));
		expect(outcome.qa.score).toBe(1);
	});

	it("turns an unexpected exception into a bounded internal-error cancellation", () => {
		const outcome = internalErrorCancel(new RangeError(`Maximum call stack size exceeded ${"x".repeat(5_000)}`));
		expect(outcome).toMatchObject({ kind: "cancel", code: "internal-error" });
		if (outcome.kind !== "cancel") return;
		expect(outcome.message).toMatch(
			/^Deterministic compaction cancelled: internal error \(RangeError: Maximum call stack/,
		);
		expect(utf8ByteLength(outcome.message)).toBeLessThanOrEqual(MAX_CANCEL_MESSAGE_BYTES);
	});
});

describe("buildDeterministicCompaction instructions", () => {
	const branch = toolSession(30).entries;
	const base = input(branch, { keepRecentTokens: 2_000, tokensBefore: observedTokens(branch) });

	it("defers on the exact pi-vcc sentinel and only on it", () => {
		expect(buildDeterministicCompaction({ ...base, customInstructions: PI_VCC_SENTINEL })).toEqual({
			kind: "defer",
			why: "pi-vcc-sentinel",
		});
		expect(buildDeterministicCompaction({ ...base, customInstructions: ` ${PI_VCC_SENTINEL}` }).kind).toBe(
			"compaction",
		);
	});

	it("renders plain instructions as the request block and records the plain policy", () => {
		const outcome = compacted(buildDeterministicCompaction({ ...base, customInstructions: "Keep   the API notes" }));
		expect(outcome.result.summary).toContain(`${REQUEST_BLOCK_HEADER}\nInstructions: Keep the API notes`);
		expect(outcome.result.details.instructionPolicy).toMatchObject({ mode: "plain", canonicalized: true });
	});

	it("renders a typed preserve request and counts its items", () => {
		const encoded = encodePreserveRequest({ instructions: "focus", preserve: ["commit abc123", "flag X"] });
		if (!encoded.ok) throw new Error("encoding failed");
		const outcome = compacted(buildDeterministicCompaction({ ...base, customInstructions: encoded.text }));
		expect(outcome.result.summary).toContain("- commit abc123");
		expect(outcome.result.details.instructionPolicy).toMatchObject({ mode: "typed-v1", preserveCount: 2 });
	});

	it("cancels a malformed typed request with a bounded message naming the error code", () => {
		const outcome = buildDeterministicCompaction({
			...base,
			customInstructions: `${COMPACT_REQUEST_PREFIX}{"version":1,`,
		});
		expect(outcome).toMatchObject({ kind: "cancel", code: "instruction-rejected" });
		if (outcome.kind !== "cancel") return;
		expect(outcome.instructionError).toBeDefined();
		expect(outcome.message).toContain(`(${outcome.instructionError})`);
		expect(outcome.message).not.toContain('{"version"');
		expect(utf8ByteLength(outcome.message)).toBeLessThanOrEqual(MAX_CANCEL_MESSAGE_BYTES);
	});
});

describe("projectionEstimator", () => {
	it("counts what the current context holds: the newest summary, nothing for omitted or pre-window entries", () => {
		const b = new SessionBuilder();
		const old = b.user("x".repeat(400));
		b.compaction("s".repeat(40), "");
		const omitted = b.assistant("y".repeat(400));
		b.contextEdit(omitted, null);
		const live = b.user("z".repeat(400));
		const estimate = projectionEstimator(b.entries);
		const byId = (id: string) => estimate(b.entries.find((entry) => entry.id === id) as SessionEntry);
		expect(byId(old)).toBe(0);
		expect(byId(omitted)).toBe(0);
		expect(byId(live)).toBe(100);
		expect(estimate(b.entries[1] as SessionEntry)).toBeGreaterThan(0);
	});
});

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import {
	calibrate,
	calibratedSummaryTokens,
	findLiveWindow,
	type LiveCutOptions,
	MAX_TOKEN_SCALE,
	OVERFLOW_WINDOW_FRACTION,
	planLiveCut,
	REDUCTION_FRACTION,
	SAFE_WINDOW_FRACTION,
	SUMMARY_BYTES_PER_TOKEN,
	SUMMARY_RESERVE_TOKENS,
	summaryReserveTokens,
	summaryTokensForBytes,
	TOKEN_SCALE_DENOMINATOR,
} from "../../../src/compaction/cut/budget.ts";
import { budgetDetails, fitsAfterSummary } from "../../../src/compaction/cut/summary-fit.ts";
import { SUMMARY_MAX_BYTES } from "../../../src/compaction/summary/render.ts";
import { closureSafeBoundaries, toolCallSpans } from "../../../src/session/closure.ts";
import { CompactionBranch, generatedBranch, uniformBranch } from "../../fixtures/compaction-budget.ts";

/**
 * Options for `planLiveCut`. Unless a test states `fixedContextEstimate`, the
 * tokens `tokensBefore` holds above the live entries' estimate are declared as
 * known fixed context (system prompt, tools), which calibrates to scale 1 with
 * that excess as fixed overhead; the calibration tests vary it explicitly.
 */
function options(branch: CompactionBranch, overrides: Partial<LiveCutOptions> = {}): LiveCutOptions {
	const base: LiveCutOptions = {
		tokensBefore: 110_000,
		contextWindow: 200_000,
		reserveTokens: 16_384,
		keepRecentTokens: 20_000,
		targetContextRatio: 0.65,
		reason: "threshold",
		estimate: branch.estimate,
		...overrides,
	};
	if ("fixedContextEstimate" in overrides) return base;
	const raw = planLiveCut(branch.entries, base).rawTokensBefore;
	return { ...base, fixedContextEstimate: Math.max(0, base.tokensBefore - raw) };
}

/** Independent oracle for the floor rule: the newest legal boundary holding `floor`, if within `ceiling`. */
function oracleFloorCut(
	entries: readonly SessionEntry[],
	estimate: (entry: SessionEntry) => number,
	floor: number,
	ceiling: number,
	after: number,
): number | undefined {
	const safe = closureSafeBoundaries(entries.length, toolCallSpans(entries));
	let sum = 0;
	const suffix: number[] = [];
	for (let i = entries.length - 1; i >= 0; i--) {
		sum += estimate(entries[i] as SessionEntry);
		suffix[i] = sum;
	}
	const legal: number[] = [];
	for (let b = Math.max(after + 1, 1); b < entries.length; b++) {
		const entry = entries[b];
		const role = entry?.type === "message" ? entry.message.role : undefined;
		const cut = entry?.type === "custom_message" || role === "user" || role === "assistant" || role === "bashExecution";
		if (cut && safe[b]) legal.push(b);
	}
	const holding = legal.filter((b) => (suffix[b] ?? 0) >= floor);
	const newest = holding.at(-1);
	if (newest !== undefined && (suffix[newest] ?? 0) <= ceiling) return newest;
	return legal.find((b) => (suffix[b] ?? 0) <= ceiling);
}

/** Independent oracle: the earliest legal boundary whose suffix fits `budget`. */
function oracleCut(
	entries: readonly SessionEntry[],
	estimate: (entry: SessionEntry) => number,
	budget: number,
	after: number,
	turnsOnly = false,
): number | undefined {
	const safe = closureSafeBoundaries(entries.length, toolCallSpans(entries));
	const suffix: number[] = [];
	let sum = 0;
	for (let i = entries.length - 1; i >= 0; i--) {
		sum += estimate(entries[i] as SessionEntry);
		suffix[i] = sum;
	}
	for (let b = Math.max(after + 1, 1); b < entries.length; b++) {
		const entry = entries[b];
		if (!entry || !safe[b]) continue;
		const isTurn = entry.type === "custom_message" || (entry.type === "message" && entry.message.role === "user");
		const isAssistant = entry.type === "message" && entry.message.role === "assistant";
		if (!isTurn && !(isAssistant && !turnsOnly)) continue;
		if ((suffix[b] ?? 0) <= budget) return b;
	}
	return undefined;
}

describe("constants", () => {
	it("pins the budget constants", () => {
		expect(SUMMARY_MAX_BYTES).toBe(32_768);
		expect(SUMMARY_BYTES_PER_TOKEN).toBe(4);
		expect(SUMMARY_RESERVE_TOKENS).toBe(8_192);
		expect(SAFE_WINDOW_FRACTION).toBe(0.9);
		expect(REDUCTION_FRACTION).toBe(0.95);
		expect(OVERFLOW_WINDOW_FRACTION).toBe(0.9);
		expect(TOKEN_SCALE_DENOMINATOR).toBe(1_000_000);
		expect(summaryTokensForBytes(32_768)).toBe(8_192);
		expect(summaryTokensForBytes(5)).toBe(2);
	});
});

describe("findLiveWindow", () => {
	it("makes the whole branch live without a marker", () => {
		expect(findLiveWindow(uniformBranch(2).entries)).toEqual({ start: 0, markerIndex: -1, marker: "none" });
	});

	it("starts at a valid kept entry", () => {
		const branch = uniformBranch(3);
		const kept = branch.idAt(2);
		branch.compaction(kept);
		branch.turn();
		expect(findLiveWindow(branch.entries)).toEqual({ start: 2, markerIndex: 6, marker: "kept" });
	});

	it("starts after the marker for compact-all, missing and orphan ids", () => {
		for (const [kept, marker] of [
			["", "compact-all"],
			[undefined, "missing"],
			["nowhere", "orphan"],
		] as const) {
			const branch = uniformBranch(2);
			branch.compaction(kept);
			branch.turn();
			expect(findLiveWindow(branch.entries)).toEqual({ start: 5, markerIndex: 4, marker });
		}
	});

	it("treats a kept id that only exists after the marker as an orphan", () => {
		const branch = uniformBranch(1);
		branch.compaction("b4");
		branch.turn();
		expect(findLiveWindow(branch.entries).marker).toBe("orphan");
	});

	it("uses the last marker", () => {
		const branch = uniformBranch(2);
		branch.compaction(branch.idAt(0));
		branch.turn();
		branch.compaction("");
		branch.turn();
		expect(findLiveWindow(branch.entries)).toEqual({ start: 8, markerIndex: 7, marker: "compact-all" });
	});
});

describe("calibrate", () => {
	it("fits tokensBefore = scale × (raw + fixed), with the known fixed estimate as scaled overhead", () => {
		expect(calibrate(10_000, 10_000)).toEqual({ tokenScale: 1, fixedOverheadTokens: 0 });
		expect(calibrate(8_000, 10_000, 2_000)).toEqual({ tokenScale: 1, fixedOverheadTokens: 2_000 });
		// Excess beyond the known fixed estimate is tokenizer density: it scales the raw estimate.
		expect(calibrate(8_000, 12_000, 2_000)).toEqual({ tokenScale: 1.2, fixedOverheadTokens: 2_400 });
		expect(calibrate(10_000, 15_000)).toEqual({ tokenScale: 1.5, fixedOverheadTokens: 0 });
	});

	it("lets dense tokenization (tokensBefore ≈ 4 × raw) shrink with the tail instead of posing as fixed context", () => {
		// 60 turns of Chinese text: Pi's chars/4 estimate is about a quarter of the real count.
		const { tokenScale, fixedOverheadTokens } = calibrate(60_180, 245_000, 5_000);
		expect(tokenScale).toBe(3.758822);
		expect(fixedOverheadTokens).toBe(18_795);
		expect(fixedOverheadTokens).toBe(Math.ceil(245_000 - tokenScale * 60_180));
		expect(Math.abs(fixedOverheadTokens - tokenScale * 5_000)).toBeLessThan(2);
		expect(calibrate(50_000, 200_000)).toEqual({ tokenScale: 4, fixedOverheadTokens: 0 });
		expect(calibrate(50_000, 220_000, 5_000)).toEqual({ tokenScale: 4, fixedOverheadTokens: 20_000 });
	});

	it("caps the scale at MAX_TOKEN_SCALE and books the rest as fixed overhead", () => {
		expect(MAX_TOKEN_SCALE).toBe(8);
		expect(calibrate(1_000, 100_000, 1_000)).toEqual({ tokenScale: 8, fixedOverheadTokens: 92_000 });
		expect(calibrate(1_000, 16_000, 1_000)).toEqual({ tokenScale: 8, fixedOverheadTokens: 8_000 });
	});

	it("books everything as fixed overhead when no raw estimate is left to scale", () => {
		expect(calibrate(0, 5_000)).toEqual({ tokenScale: 1, fixedOverheadTokens: 5_000 });
		expect(calibrate(0, 5_000, 2_000)).toEqual({ tokenScale: 1, fixedOverheadTokens: 5_000 });
	});

	it("scales an overshooting estimate down, rounding the scale up", () => {
		expect(calibrate(20_000, 10_000)).toEqual({ tokenScale: 0.5, fixedOverheadTokens: 0 });
		expect(calibrate(3, 1)).toEqual({ tokenScale: 0.333334, fixedOverheadTokens: 0 });
	});

	it("keeps a known fixed estimate as overhead at the same scale", () => {
		expect(calibrate(8_000, 5_000, 2_000)).toEqual({ tokenScale: 0.5, fixedOverheadTokens: 1_000 });
	});
});

describe("planLiveCut: calibrated budget", () => {
	it("keeps the newest cut holding at least keepRecentTokens when it fits under the ceilings (a floor, as in Pi)", () => {
		const branch = uniformBranch(20, { user: 1_000, reply: 4_000 });
		const plan = planLiveCut(branch.entries, options(branch));
		expect(plan.budget).toEqual({
			nominalContextWindow: 200_000,
			contextWindow: 200_000,
			overflowClamped: false,
			targetContextRatio: 0.65,
			occupancyCeilingTokens: 130_000,
			safeCeilingTokens: 165_254,
			reductionCeilingTokens: 104_500,
			continuityTargetTokens: 38_192,
			targetContextTokens: 104_500,
			// 90% of the window, capped by the reduction ceiling.
			floorCeilingTokens: 104_500,
			bindingConstraint: "continuity",
			reserveTokens: 16_384,
			keepRecentTokens: 20_000,
			tokensBefore: 110_000,
			rawTokensBefore: 100_000,
			fixedContextEstimateTokens: 10_000,
			tokenScale: 1,
			fixedOverheadTokens: 10_000,
			summaryReserveTokens: 8_192,
			rawTailTokenBudget: 86_308,
			retainedRawTokens: 20_000,
			projectedTokensAfter: 38_192,
		});
		expect(plan).toMatchObject({ keptIndex: 32, firstKeptEntryId: "b33", compactAll: false, rule: "budget" });
		expect(plan.liveCutEntries).toBe(32);
	});

	it("cuts at an assistant boundary when that keeps more", () => {
		const branch = uniformBranch(20, { user: 1_000, reply: 4_000 });
		const plan = planLiveCut(branch.entries, options(branch, { keepRecentTokens: 24_000 }));
		expect(plan.keptIndex).toBe(31);
		expect(branch.entries[31]?.type === "message" && branch.entries[31].message.role).toBe("assistant");
		expect(plan.retainedRawTokens).toBe(24_000);
	});

	it("cuts at a custom_message boundary", () => {
		const branch = uniformBranch(4, { user: 1_000, reply: 4_000 });
		const custom = branch.customMessage(2_000);
		branch.assistant(3_000);
		const plan = planLiveCut(branch.entries, options(branch, { tokensBefore: 25_000, keepRecentTokens: 5_000 }));
		expect(plan.firstKeptEntryId).toBe(custom);
	});

	it("names the occupancy ceiling when it binds", () => {
		const branch = uniformBranch(10, { user: 1_000, reply: 4_000 });
		const plan = planLiveCut(
			branch.entries,
			options(branch, { contextWindow: 60_000, targetContextRatio: 0.5, reserveTokens: 0, tokensBefore: 55_000 }),
		);
		expect(plan.budget).toMatchObject({
			occupancyCeilingTokens: 30_000,
			safeCeilingTokens: 54_000,
			reductionCeilingTokens: 52_250,
			continuityTargetTokens: 33_192,
			targetContextTokens: 30_000,
			bindingConstraint: "occupancy",
			rawTailTokenBudget: 16_808,
		});
		expect(plan.keptIndex).toBe(14);
	});

	it("names the reserve ceiling when it binds", () => {
		const branch = uniformBranch(10, { user: 1_000, reply: 4_000 });
		const plan = planLiveCut(
			branch.entries,
			options(branch, { contextWindow: 60_000, targetContextRatio: 0.85, reserveTokens: 30_000, tokensBefore: 55_000 }),
		);
		expect(plan.budget).toMatchObject({
			occupancyCeilingTokens: 51_000,
			safeCeilingTokens: 27_000,
			targetContextTokens: 27_000,
			bindingConstraint: "reserve",
			rawTailTokenBudget: 13_808,
		});
		expect(plan.keptIndex).toBe(16);
	});

	it("names the reduction ceiling so a low-usage manual compaction never expands context", () => {
		const branch = uniformBranch(5, { user: 1_000, reply: 4_000 });
		const plan = planLiveCut(
			branch.entries,
			options(branch, { contextWindow: 1_000_000, tokensBefore: 25_000, reason: "manual" }),
		);
		expect(plan.budget).toMatchObject({
			fixedOverheadTokens: 0,
			continuityTargetTokens: 28_192,
			reductionCeilingTokens: 23_750,
			targetContextTokens: 23_750,
			bindingConstraint: "reduction",
			rawTailTokenBudget: 15_558,
			projectedTokensAfter: 23_192,
		});
		expect(plan.keptIndex).toBe(4);
		expect(plan.budget?.projectedTokensAfter).toBeLessThan(25_000);
	});

	it("does not grow the raw tail with a larger advertised window", () => {
		const branch = uniformBranch(20, { user: 1_000, reply: 4_000 });
		const small = planLiveCut(branch.entries, options(branch));
		const huge = planLiveCut(branch.entries, options(branch, { contextWindow: 10_000_000, targetContextRatio: 0.85 }));
		expect(huge.keptIndex).toBe(small.keptIndex);
		expect(huge.retainedRawTokens).toBe(20_000);
	});

	it("clamps the window to 90% of the failed request on overflow", () => {
		const branch = uniformBranch(18, { user: 1_000, reply: 4_000 });
		const base = { tokensBefore: 100_000, keepRecentTokens: 60_000 };
		const threshold = planLiveCut(branch.entries, options(branch, base));
		expect(threshold.budget).toMatchObject({ targetContextTokens: 95_000, bindingConstraint: "continuity" });
		expect(threshold.retainedRawTokens).toBe(60_000);
		const overflow = planLiveCut(branch.entries, options(branch, { ...base, reason: "overflow" }));
		expect(overflow.budget).toMatchObject({
			nominalContextWindow: 200_000,
			contextWindow: 90_000,
			overflowClamped: true,
			occupancyCeilingTokens: 58_500,
			safeCeilingTokens: 66_254,
			targetContextTokens: 58_500,
			bindingConstraint: "occupancy",
		});
		expect(overflow.keptIndex).toBeGreaterThan(threshold.keptIndex);
		// A window already below the failed size is not clamped further.
		const small = planLiveCut(branch.entries, options(branch, { ...base, reason: "overflow", contextWindow: 80_000 }));
		expect(small.budget).toMatchObject({ contextWindow: 80_000, overflowClamped: false });
	});

	it("calibrates a scale below 1 and budgets the raw tail in structural tokens", () => {
		const branch = uniformBranch(20, { user: 1_000, reply: 4_000 });
		const plan = planLiveCut(branch.entries, options(branch, { tokensBefore: 50_000 }));
		expect(plan.budget).toMatchObject({
			tokenScale: 0.5,
			fixedOverheadTokens: 0,
			continuityTargetTokens: 28_192,
			reductionCeilingTokens: 47_500,
			targetContextTokens: 47_500,
			rawTailTokenBudget: 78_616,
			retainedRawTokens: 40_000,
			projectedTokensAfter: 28_192,
		});
	});

	it("compacts everything when no legal suffix fits", () => {
		const branch = new CompactionBranch();
		branch.user(1_000);
		branch.assistant(50_000);
		const plan = planLiveCut(branch.entries, options(branch, { tokensBefore: 60_000 }));
		expect(plan).toMatchObject({ compactAll: true, firstKeptEntryId: "", keptIndex: 2, rule: "compact-all" });
		expect(plan.retainedRawTokens).toBe(0);
		expect(plan.liveCutEntries).toBe(2);
	});

	it("reports nothing to cut on an empty live window", () => {
		const branch = uniformBranch(2);
		branch.compaction("");
		const plan = planLiveCut(branch.entries, options(branch, { tokensBefore: 5_000 }));
		expect(plan.compactAll).toBe(true);
		expect(plan.liveCutEntries).toBe(0);
	});
});

describe("planLiveCut: dense tokenization", () => {
	it("scales the summary reservation and the raw tail, so tokensBefore ≈ 4 × raw still compacts", () => {
		const branch = uniformBranch(60, { user: 500, reply: 500 });
		const plan = planLiveCut(
			branch.entries,
			options(branch, {
				tokensBefore: 245_000,
				fixedContextEstimate: 5_000,
				contextWindow: 272_000,
				reason: "manual",
			}),
		);
		expect(plan.budget).toMatchObject({
			rawTokensBefore: 60_000,
			fixedContextEstimateTokens: 5_000,
			tokenScale: 3.769231,
			fixedOverheadTokens: 18_847,
			summaryReserveTokens: 30_878,
			continuityTargetTokens: 69_725,
			targetContextTokens: 176_800,
			bindingConstraint: "continuity",
			rawTailTokenBudget: 33_713,
			retainedRawTokens: 5_500,
			projectedTokensAfter: 70_456,
		});
		// At least keepRecentTokens of real tokens (5,306 in Pi's estimate): the newest cut holding that much.
		expect(plan).toMatchObject({ keptIndex: 109, compactAll: false, rule: "budget" });
		expect(fitsAfterSummary(plan, SUMMARY_MAX_BYTES)).toMatchObject({ fits: true, summaryTokens: 30_878 });
		expect(fitsAfterSummary(plan, SUMMARY_MAX_BYTES + 1).fits).toBe(false);
	});

	it("counts a summary at the calibrated scale by characters, never below its byte estimate", () => {
		expect(summaryReserveTokens(1)).toBe(SUMMARY_RESERVE_TOKENS);
		expect(summaryReserveTokens(0.5)).toBe(SUMMARY_RESERVE_TOKENS);
		expect(summaryReserveTokens(3.769231)).toBe(30_878);
		// 1,000 CJK characters are 3,000 UTF-8 bytes.
		expect(calibratedSummaryTokens(3_000, 1_000, 4)).toBe(1_000);
		expect(calibratedSummaryTokens(3_000, 1_000, 0.5)).toBe(750);
		expect(calibratedSummaryTokens(4_000, 4_000, 1.5)).toBe(1_500);
	});
});

describe("planLiveCut: closure", () => {
	it("never separates parallel calls from results that arrive after the next user message", () => {
		const branch = new CompactionBranch();
		branch.turn({ user: 5_000, reply: 5_000 });
		const [c1, c2] = [branch.call(), branch.call()];
		branch.user(100);
		branch.assistant(100, [c1, c2]);
		branch.result(c2, 100);
		const late = branch.user(100);
		branch.result(c1, 100);
		branch.assistant(100);
		const plan = planLiveCut(branch.entries, options(branch, { tokensBefore: 20_000, keepRecentTokens: 300 }));
		// `late` holds exactly the floor but is unsafe: it would keep c1's result without its call.
		expect(branch.tokensBetween(branch.indexOf(late))).toBe(300);
		expect(plan.firstKeptEntryId).not.toBe(late);
		// The newest safe cut holding the floor is the assistant that issued both calls.
		expect(plan.keptIndex).toBe(branch.indexOf(late) - 2);
		expect(plan.retainedRawTokens).toBe(500);
	});

	it("rejects cuts between a delayed result and its call", () => {
		const branch = new CompactionBranch();
		branch.turn({ user: 5_000, reply: 5_000 });
		const call = branch.call();
		branch.user(100);
		branch.assistant(100, [call]);
		const between = branch.assistant(100);
		branch.result(call, 100);
		branch.assistant(100);
		const plan = planLiveCut(branch.entries, options(branch, { tokensBefore: 20_000, keepRecentTokens: 250 }));
		// `between` holds the floor but would keep the result without its call; the call's assistant is safe.
		expect(branch.tokensBetween(branch.indexOf(between))).toBeGreaterThanOrEqual(250);
		expect(plan.firstKeptEntryId).not.toBe(between);
		expect(plan.keptIndex).toBe(branch.indexOf(between) - 1);
	});

	it("handles results recorded before their call", () => {
		const branch = new CompactionBranch();
		branch.turn({ user: 5_000, reply: 5_000 });
		const call = branch.call();
		branch.result(call, 100);
		const between = branch.user(100);
		branch.assistant(100, [call]);
		branch.assistant(100);
		const plan = planLiveCut(branch.entries, options(branch, { tokensBefore: 20_000, keepRecentTokens: 350 }));
		expect(branch.tokensBetween(branch.indexOf(between))).toBeLessThanOrEqual(plan.rawTailTokenBudget);
		expect(plan.firstKeptEntryId).not.toBe(between);
		expect(plan.keptIndex).toBe(branch.entries.length - 1);
	});

	it("is not blocked by orphan calls or orphan results", () => {
		const branch = new CompactionBranch();
		branch.turn({ user: 5_000, reply: 5_000 });
		branch.result("ghost", 100);
		const first = branch.user(100);
		branch.assistant(100, ["never-answered"]);
		branch.assistant(100);
		const plan = planLiveCut(branch.entries, options(branch, { tokensBefore: 20_000, keepRecentTokens: 300 }));
		expect(plan.firstKeptEntryId).toBe(first);
	});

	it("keeps a pair that straddles a malformed prior boundary together", () => {
		const branch = new CompactionBranch();
		branch.turn({ user: 3_000, reply: 3_000 });
		const call = branch.call();
		branch.user(100);
		branch.assistant(100, [call]);
		const keptResult = branch.result(call, 30_000);
		// The prior marker kept a tool result, and a later call's result landed after the marker.
		const late = branch.call();
		branch.assistant(30_000, [late]);
		branch.compaction(keptResult, 500);
		const afterMarker = branch.user(100);
		const reply = branch.assistant(100);
		branch.result(late, 100);
		const safeUser = branch.user(100);
		branch.assistant(100);
		const window = findLiveWindow(branch.entries);
		expect(window).toMatchObject({ marker: "kept", start: branch.indexOf(keptResult) });
		const plan = planLiveCut(branch.entries, options(branch, { tokensBefore: 61_000, keepRecentTokens: 1_000 }));
		expect(plan.budget).toMatchObject({ rawTokensBefore: 61_000 });
		// `afterMarker` and `reply` fit the budget but would keep the late result without its call.
		expect([afterMarker, reply]).not.toContain(plan.firstKeptEntryId);
		expect(plan.firstKeptEntryId).toBe(safeUser);
	});
});

describe("planLiveCut: repeated compaction", () => {
	it("places the new boundary after the previous marker even when an earlier one would fit", () => {
		const branch = uniformBranch(6, { user: 2_000, reply: 2_000 });
		const kept = branch.idAt(4);
		const marker = branch.compaction(kept, 800);
		branch.turn({ user: 5_000, reply: 5_000 });
		branch.turn({ user: 100, reply: 100 });
		const plan = planLiveCut(branch.entries, options(branch, { tokensBefore: 27_000 }));
		expect(plan.rawTailTokenBudget).toBe(17_458);
		// Index 10 (suffix 15,000) would fit, but it lies before the previous marker.
		expect(branch.tokensBetween(10)).toBeLessThan(plan.rawTailTokenBudget);
		expect(plan.keptIndex).toBe(branch.indexOf(marker) + 1);
		// The kept range before the marker plus the marker's summary count once.
		expect(plan.rawTokensBefore).toBe(branch.tokensBetween(4));
		expect(plan.liveCutEntries).toBe(branch.indexOf(marker) + 1 - 4);
	});

	it("counts the previous summary once when the window starts after the marker", () => {
		const branch = uniformBranch(3, { user: 100, reply: 100 });
		branch.compaction("", 700);
		branch.turn({ user: 100, reply: 100 });
		const plan = planLiveCut(branch.entries, options(branch, { tokensBefore: 5_000 }));
		expect(plan.rawTokensBefore).toBe(700 + 200);
		expect(plan.budget?.fixedOverheadTokens).toBe(4_100);
	});

	it("compacts everything rather than cut before the previous marker", () => {
		const branch = uniformBranch(4, { user: 100, reply: 100 });
		branch.compaction(branch.idAt(2), 500);
		branch.turn({ user: 5_000, reply: 55_000 });
		const plan = planLiveCut(branch.entries, options(branch, { tokensBefore: 70_000 }));
		// The newest turn's reply alone exceeds the ceiling's raw-tail budget.
		expect(plan.rawTailTokenBudget).toBeLessThan(55_000);
		expect(plan.compactAll).toBe(true);
		expect(plan.firstKeptEntryId).toBe("");
	});
});

describe("fitsAfterSummary", () => {
	it("accepts the maximum summary whenever a suffix was budgeted", () => {
		const branch = uniformBranch(20, { user: 1_000, reply: 4_000 });
		const plan = planLiveCut(branch.entries, options(branch));
		expect(fitsAfterSummary(plan, SUMMARY_MAX_BYTES)).toEqual({
			fits: true,
			summaryTokens: 8_192,
			projectedTokensAfter: 38_192,
			limitTokens: 104_500,
		});
		expect(fitsAfterSummary(plan, SUMMARY_MAX_BYTES + 1).fits).toBe(false);
	});

	it("takes the smallest compaction that misses the target only within the floor (90% of the window, the reduction ceiling)", () => {
		const branch = uniformBranch(4, { user: 1_000, reply: 4_000 });
		const plan = planLiveCut(
			branch.entries,
			options(branch, { contextWindow: 60_000, targetContextRatio: 0.25, reserveTokens: 0, tokensBefore: 30_000 }),
		);
		expect(plan.budget).toMatchObject({
			targetContextTokens: 15_000,
			floorCeilingTokens: 28_500,
			fixedOverheadTokens: 10_000,
		});
		expect(plan.compactAll).toBe(true);
		expect(fitsAfterSummary(plan, 20_000)).toEqual({
			fits: true,
			summaryTokens: 5_000,
			projectedTokensAfter: 15_000,
			limitTokens: 15_000,
		});
		expect(fitsAfterSummary(plan, 20_001)).toEqual({
			fits: true,
			summaryTokens: 5_001,
			projectedTokensAfter: 15_001,
			limitTokens: 28_500,
			atFloor: { targetTokens: 15_000, binding: "occupancy", reserveTokens: 0, contextWindow: 60_000 },
		});
		// A summary the budget would only fit past the floor (here: past 32 KiB too) still cancels.
		expect(fitsAfterSummary(plan, 80_000)).toMatchObject({ fits: false, limitTokens: 15_000 });
	});

	it("keeps the reserve ceiling's trap from sticking a 20k window: Pi's default reserveTokens, threshold and overflow", () => {
		// Before: 20,000 − 16,384 left a 3,254-token target, and on overflow 90% of the failed size less
		// 16,384 left 0; a compact-all summary of a long session never fit, so every compaction cancelled.
		const branch = uniformBranch(6, { user: 1_000, reply: 2_000 });
		for (const reason of ["threshold", "manual", "overflow"] as const) {
			const tokensBefore = reason === "overflow" ? 16_000 : 21_000;
			const plan = planLiveCut(
				branch.entries,
				options(branch, {
					contextWindow: 20_000,
					reserveTokens: 16_384,
					tokensBefore,
					reason,
					fixedContextEstimate: 2_000,
				}),
			);
			expect(plan.compactAll || plan.retainedRawTokens === 0, reason).toBe(true);
			const fit = fitsAfterSummary(plan, 16_000);
			expect(fit, reason).toMatchObject({ fits: true, atFloor: { binding: "reserve", reserveTokens: 16_384 } });
			expect(fit.projectedTokensAfter).toBeLessThan(tokensBefore);
		}
	});

	it("records the actual projection in details", () => {
		const branch = uniformBranch(20, { user: 1_000, reply: 4_000 });
		const plan = planLiveCut(branch.entries, options(branch));
		if (!plan.budget) throw new Error("expected a budget");
		expect(budgetDetails(plan.budget, 4_000)).toEqual({
			strategy: "continuity",
			contextWindow: 200_000,
			targetContextRatio: 0.65,
			targetContextTokens: 104_500,
			reserveTokens: 16_384,
			keepRecentTokens: 20_000,
			rawTokensBefore: 100_000,
			fixedContextEstimateTokens: 10_000,
			tokenScale: 1,
			fixedOverheadTokens: 10_000,
			summaryReserveTokens: 8_192,
			retainedRawTokens: 20_000,
			projectedTokensAfter: 31_000,
			continuityTargetTokens: 38_192,
			occupancyCeilingTokens: 130_000,
			safeCeilingTokens: 165_254,
			reductionCeilingTokens: 104_500,
			rawTailTokenBudget: 86_308,
			bindingConstraint: "continuity",
		});
	});
});

describe("planLiveCut: fallback without model metadata", () => {
	it("keeps whole turns that fit keepRecentTokens and emits no window metadata", () => {
		const branch = uniformBranch(10, { user: 1_000, reply: 4_000 });
		const plan = planLiveCut(branch.entries, options(branch, { contextWindow: undefined }));
		expect(plan).toMatchObject({ rule: "whole-turn", keptIndex: 12, fallbackReason: "no-context-window" });
		expect(plan.budget).toBeUndefined();
		expect(plan.rawTailTokenBudget).toBe(20_000);
		expect(plan.retainedRawTokens).toBe(20_000);
	});

	it("prefers a whole-turn cut over a larger split-turn suffix", () => {
		const branch = uniformBranch(10, { user: 1_000, reply: 4_000 });
		const plan = planLiveCut(branch.entries, options(branch, { contextWindow: undefined, keepRecentTokens: 24_000 }));
		expect(plan.keptIndex).toBe(12);
	});

	it("splits an oversized turn at an assistant boundary", () => {
		const branch = new CompactionBranch();
		branch.turn({ user: 1_000, steps: 30, stepTokens: 500, resultTokens: 500, reply: 1_000 });
		const plan = planLiveCut(branch.entries, options(branch, { contextWindow: undefined, keepRecentTokens: 5_000 }));
		expect(plan.rule).toBe("suffix");
		const kept = branch.entries[plan.keptIndex];
		expect(kept?.type === "message" && kept.message.role).toBe("assistant");
		expect(plan.retainedRawTokens).toBe(5_000);
		expect(plan.keptIndex).toBe(oracleCut(branch.entries, branch.estimate, 5_000, -1));
	});

	it("compacts everything when no legal suffix fits", () => {
		const branch = new CompactionBranch();
		branch.user(100);
		branch.assistant(30_000);
		const plan = planLiveCut(branch.entries, options(branch, { contextWindow: undefined }));
		expect(plan).toMatchObject({ rule: "compact-all", compactAll: true, firstKeptEntryId: "" });
	});

	it("never keeps the first entry, so something is always summarized", () => {
		const branch = uniformBranch(1, { user: 10, reply: 10 });
		const plan = planLiveCut(branch.entries, options(branch, { contextWindow: undefined }));
		expect(plan).toMatchObject({ keptIndex: 1, rule: "suffix" });
	});

	it("falls back without a positive tokensBefore", () => {
		const branch = uniformBranch(10, { user: 1_000, reply: 4_000 });
		const plan = planLiveCut(branch.entries, options(branch, { tokensBefore: 0 }));
		expect(plan.fallbackReason).toBe("no-tokens-before");
		expect(plan.budget).toBeUndefined();
	});

	it("checks only the summary bound", () => {
		const branch = uniformBranch(10, { user: 1_000, reply: 4_000 });
		const plan = planLiveCut(branch.entries, options(branch, { contextWindow: undefined }));
		expect(fitsAfterSummary(plan, SUMMARY_MAX_BYTES)).toEqual({ fits: true, summaryTokens: 8_192 });
		expect(fitsAfterSummary(plan, SUMMARY_MAX_BYTES + 1).fits).toBe(false);
	});
});

describe("planLiveCut: generated sessions", () => {
	it("matches an independent oracle on 20,000 entries", () => {
		const branch = generatedBranch(20_000);
		expect(branch.entries.length).toBeGreaterThanOrEqual(20_000);
		const total = branch.tokensBetween(0);
		const plan = planLiveCut(
			branch.entries,
			options(branch, { tokensBefore: total + 12_000, contextWindow: 10_000_000 }),
		);
		expect(plan.budget?.bindingConstraint).toBe("continuity");
		expect(plan.keptIndex).toBeLessThan(branch.entries.length - 50);
		const floor = plan.budget?.keepRecentTokens ?? 0;
		expect(plan.keptIndex).toBe(oracleFloorCut(branch.entries, branch.estimate, floor, plan.rawTailTokenBudget, -1));
		expect(plan.retainedRawTokens).toBe(branch.tokensBetween(plan.keptIndex));
		expect(plan.retainedRawTokens).toBeGreaterThanOrEqual(floor);
		const safe = closureSafeBoundaries(branch.entries.length, toolCallSpans(branch.entries));
		expect(safe[plan.keptIndex]).toBe(true);
	});

	it("follows the previous marker on a generated session compacted twice", () => {
		const branch = generatedBranch(20_000);
		const first = planLiveCut(branch.entries, options(branch, { tokensBefore: 2_000_000, contextWindow: 10_000_000 }));
		branch.compaction(first.firstKeptEntryId, 6_000);
		const tail = generatedBranch(2_000);
		for (const entry of tail.entries) {
			if (entry.type !== "message") continue;
			if (entry.message.role === "user") branch.user(tail.estimate(entry));
			else if (entry.message.role === "assistant") branch.assistant(tail.estimate(entry));
		}
		const markerIndex = branch.entries.findLastIndex((entry) => entry.type === "compaction");
		const second = planLiveCut(branch.entries, options(branch, { tokensBefore: 500_000, contextWindow: 10_000_000 }));
		expect(second.window).toMatchObject({ marker: "kept", markerIndex, start: first.keptIndex });
		expect(second.keptIndex).toBeGreaterThan(markerIndex);
		expect(second.keptIndex).toBe(
			oracleFloorCut(branch.entries, branch.estimate, 20_000, second.rawTailTokenBudget, markerIndex),
		);
	});

	it("falls back identically to the oracle on 20,000 entries", () => {
		const branch = generatedBranch(20_000);
		const plan = planLiveCut(branch.entries, options(branch, { contextWindow: undefined, keepRecentTokens: 3_000 }));
		const wholeTurn = oracleCut(branch.entries, branch.estimate, 3_000, -1, true);
		expect(plan.keptIndex).toBe(wholeTurn ?? oracleCut(branch.entries, branch.estimate, 3_000, -1));
	});
});

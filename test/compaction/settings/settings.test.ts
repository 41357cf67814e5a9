import { describe, expect, it } from "vitest";
import {
	compactionModelKey,
	DEFAULT_ENGINE,
	DEFAULT_KEEP_RECENT_TOKENS,
	DEFAULT_OUTPUT_RESERVE_TOKENS,
	DEFAULT_PRESSURE_BANDS,
	DEFAULT_REPAIR_ORPHANS,
	DEFAULT_TARGET_CONTEXT_RATIO,
	defaultCompactionSettings,
	MAX_SETTINGS_TOKENS,
	MAX_TARGET_CONTEXT_RATIO,
	MAX_THRESHOLD_RATIO,
	MAX_THRESHOLD_TOKENS,
	MIN_TARGET_CONTEXT_RATIO,
	MIN_THRESHOLD_RATIO,
	MIN_THRESHOLD_TOKENS,
	resolveCompactionSettings,
	thresholdForModel,
} from "../../../src/compaction/settings/settings.ts";

function resolve(raw: unknown) {
	return resolveCompactionSettings(raw);
}

describe("defaults and bounds", () => {
	it("pins every default and bound", () => {
		expect(DEFAULT_ENGINE).toBe("fabric");
		expect(DEFAULT_TARGET_CONTEXT_RATIO).toBe(0.65);
		expect([MIN_TARGET_CONTEXT_RATIO, MAX_TARGET_CONTEXT_RATIO]).toEqual([0.25, 0.85]);
		expect([MIN_THRESHOLD_RATIO, MAX_THRESHOLD_RATIO]).toEqual([0.25, 0.95]);
		expect([MIN_THRESHOLD_TOKENS, MAX_THRESHOLD_TOKENS]).toEqual([1_000, 100_000_000]);
		expect(DEFAULT_OUTPUT_RESERVE_TOKENS).toBe(0);
		expect(MAX_SETTINGS_TOKENS).toBe(100_000_000);
		expect(DEFAULT_PRESSURE_BANDS).toEqual({ warn: 0.6, urgent: 0.8 });
		expect(DEFAULT_REPAIR_ORPHANS).toBe(true);
		expect(DEFAULT_KEEP_RECENT_TOKENS).toBe(20_000);
	});

	it("resolves missing settings to the defaults without adjustments", () => {
		for (const raw of [undefined, null, {}]) {
			expect(resolve(raw)).toEqual({ settings: defaultCompactionSettings(), adjustments: [] });
		}
		expect(defaultCompactionSettings()).toEqual({
			engine: "fabric",
			targetContextRatio: 0.65,
			thresholds: {},
			tokenThresholds: {},
			outputReserveTokens: 0,
			pressureBands: { warn: 0.6, urgent: 0.8 },
			repairOrphans: true,
			keepRecentTokens: 20_000,
		});
	});

	it("hands out independent copies of the defaults", () => {
		const first = resolve(undefined).settings;
		first.pressureBands.warn = 0.1;
		first.thresholds["a/b"] = 0.5;
		expect(resolve(undefined).settings.pressureBands.warn).toBe(0.6);
		expect(resolve(undefined).settings.thresholds).toEqual({});
	});
});

describe("resolveCompactionSettings", () => {
	it("keeps valid values", () => {
		const { settings, adjustments } = resolve({
			engine: "pi",
			targetContextRatio: 0.5,
			thresholds: { "anthropic/claude-sonnet-4-5": 0.8 },
			tokenThresholds: { "google/gemini-3-pro": 400_000 },
			outputReserveTokens: 16_000,
			pressureBands: { warn: 0.5, urgent: 0.9 },
			repairOrphans: false,
			keepRecentTokens: 30_000,
		});
		expect(adjustments).toEqual([]);
		expect(settings).toEqual({
			engine: "pi",
			targetContextRatio: 0.5,
			thresholds: { "anthropic/claude-sonnet-4-5": 0.8 },
			tokenThresholds: { "google/gemini-3-pro": 400_000 },
			outputReserveTokens: 16_000,
			pressureBands: { warn: 0.5, urgent: 0.9 },
			repairOrphans: false,
			keepRecentTokens: 30_000,
		});
	});

	it("accepts the ratio bounds exactly and clamps beyond them", () => {
		expect(resolve({ targetContextRatio: 0.25 }).settings.targetContextRatio).toBe(0.25);
		expect(resolve({ targetContextRatio: 0.85 }).settings.targetContextRatio).toBe(0.85);
		const low = resolve({ targetContextRatio: 0.2499 });
		expect(low.settings.targetContextRatio).toBe(0.25);
		expect(low.adjustments).toEqual([
			{ path: "targetContextRatio", action: "clamped", reason: "raised to the minimum 0.25" },
		]);
		expect(resolve({ targetContextRatio: 0.8501 }).settings.targetContextRatio).toBe(0.85);
		const wrong = resolve({ targetContextRatio: "0.7" });
		expect(wrong.settings.targetContextRatio).toBe(0.65);
		expect(wrong.adjustments[0]?.action).toBe("defaulted");
		expect(resolve({ targetContextRatio: Number.NaN }).settings.targetContextRatio).toBe(0.65);
	});

	it("bounds percent thresholds to 0.25–0.95", () => {
		const { settings, adjustments } = resolve({
			thresholds: { "a/low": 0.1, "a/min": 0.25, "a/max": 0.95, "a/high": 0.99 },
		});
		expect(settings.thresholds).toEqual({ "a/low": 0.25, "a/min": 0.25, "a/max": 0.95, "a/high": 0.95 });
		expect(adjustments.map((a) => [a.path, a.action])).toEqual([
			['thresholds["a/high"]', "clamped"],
			['thresholds["a/low"]', "clamped"],
		]);
	});

	it("rounds token thresholds and bounds them to 1,000–100,000,000", () => {
		const { settings, adjustments } = resolve({
			tokenThresholds: { "a/round": 1500.6, "a/min": 1000, "a/low": 999, "a/max": 100_000_000, "a/high": 100_000_001 },
		});
		expect(settings.tokenThresholds).toEqual({
			"a/round": 1501,
			"a/min": 1000,
			"a/low": 1000,
			"a/max": 100_000_000,
			"a/high": 100_000_000,
		});
		expect(adjustments.map((a) => [a.path, a.action])).toEqual([
			['tokenThresholds["a/high"]', "clamped"],
			['tokenThresholds["a/low"]', "clamped"],
			['tokenThresholds["a/round"]', "rounded"],
		]);
	});

	it("drops entries with malformed keys or values and reports them", () => {
		const { settings, adjustments } = resolve({
			thresholds: { nomodel: 0.5, "/model": 0.5, "provider/": 0.5, "ok/model": "0.5", "x/y": 0.5 },
			tokenThresholds: [1, 2],
		});
		expect(settings.thresholds).toEqual({ "x/y": 0.5 });
		expect(settings.tokenThresholds).toEqual({});
		expect(adjustments.filter((a) => a.action === "dropped")).toHaveLength(4);
		expect(adjustments).toContainEqual({
			path: "tokenThresholds",
			action: "defaulted",
			reason: "must be an object keyed by provider/model",
		});
	});

	it("lets a token threshold win over a percent threshold for the same model", () => {
		const { settings } = resolve({
			thresholds: { "openai/gpt-5.4": 0.9, "anthropic/claude": 0.8 },
			tokenThresholds: { "openai/gpt-5.4": 120_000 },
		});
		expect(thresholdForModel(settings, "openai/gpt-5.4")).toEqual({ kind: "tokens", tokens: 120_000 });
		expect(thresholdForModel(settings, compactionModelKey("anthropic", "claude"))).toEqual({
			kind: "ratio",
			ratio: 0.8,
		});
		expect(thresholdForModel(settings, "other/model")).toBeUndefined();
		expect(thresholdForModel(settings, "constructor")).toBeUndefined();
	});

	it("bounds outputReserveTokens and keepRecentTokens to non-negative integers", () => {
		expect(resolve({ outputReserveTokens: -5 }).settings.outputReserveTokens).toBe(0);
		expect(resolve({ outputReserveTokens: 16000.4 }).settings.outputReserveTokens).toBe(16000);
		expect(resolve({ outputReserveTokens: 1e12 }).settings.outputReserveTokens).toBe(100_000_000);
		expect(resolve({ outputReserveTokens: "16000" }).settings.outputReserveTokens).toBe(0);
		expect(resolve({ keepRecentTokens: 0 }).settings.keepRecentTokens).toBe(0);
		expect(resolve({ keepRecentTokens: null }).settings.keepRecentTokens).toBe(20_000);
	});

	it("uses default pressure bands unless 0 < warn < urgent < 1", () => {
		expect(resolve({ pressureBands: { warn: 0.01, urgent: 0.99 } }).settings.pressureBands).toEqual({
			warn: 0.01,
			urgent: 0.99,
		});
		for (const bands of [
			{ warn: 0, urgent: 0.8 },
			{ warn: 0.8, urgent: 0.8 },
			{ warn: 0.9, urgent: 0.8 },
			{ warn: 0.6, urgent: 1 },
			{ warn: 0.6 },
			"0.6,0.8",
		]) {
			const { settings, adjustments } = resolve({ pressureBands: bands });
			expect(settings.pressureBands, JSON.stringify(bands)).toEqual({ warn: 0.6, urgent: 0.8 });
			expect(adjustments).toEqual([
				{ path: "pressureBands", action: "defaulted", reason: "must satisfy 0 < warn < urgent < 1" },
			]);
		}
	});

	it("defaults a wrong engine or repairOrphans and reports it", () => {
		const { settings, adjustments } = resolve({ engine: "llm", repairOrphans: "yes" });
		expect(settings.engine).toBe("fabric");
		expect(settings.repairOrphans).toBe(true);
		expect(adjustments.map((a) => a.path)).toEqual(["engine", "repairOrphans"]);
	});

	it("never throws, even on hostile input", () => {
		const hostile = new Proxy(
			{},
			{
				get() {
					throw new Error("boom");
				},
			},
		);
		const result = resolve(hostile);
		expect(result.settings).toEqual(defaultCompactionSettings());
		expect(result.adjustments[0]?.reason).toBe("the compaction settings could not be read");
		expect(resolve("fabric").adjustments[0]?.path).toBe("compaction");
		expect(resolve([1]).settings).toEqual(defaultCompactionSettings());
	});
});

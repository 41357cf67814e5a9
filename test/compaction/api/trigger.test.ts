import { describe, expect, it } from "vitest";
import {
	autoTrigger,
	mayTrigger,
	modelThresholdTokens,
	type PressureInput,
	shouldDeferThreshold,
} from "../../../src/compaction/api/trigger.ts";
import { defaultCompactionSettings } from "../../../src/compaction/settings/settings.ts";

const MODEL = { provider: "test", id: "m" };

function pressure(tokens: number, configure: (s: PressureInput["settings"]) => void = () => {}): PressureInput {
	const settings = defaultCompactionSettings();
	configure(settings);
	return { tokens, contextWindow: 100_000, settings, model: MODEL };
}

describe("compaction triggers", () => {
	it("stays out of the way without configured thresholds or reserve", () => {
		expect(autoTrigger(pressure(99_000))).toBeUndefined();
		expect(shouldDeferThreshold(pressure(10_000))).toBe(false);
	});

	it("says no rule can fire exactly when none fires at any size (the settled check skips measuring then)", () => {
		const none = pressure(0);
		expect(mayTrigger(none.settings, MODEL)).toBe(false);
		for (const tokens of [1, 50_000, 99_999, 100_000, 1_000_000])
			expect(autoTrigger({ ...none, tokens })).toBeUndefined();
		const other = pressure(0, (s) => {
			s.tokenThresholds["other/m"] = 10;
		});
		expect(mayTrigger(other.settings, MODEL)).toBe(false);
		expect(autoTrigger({ ...other, tokens: 99_999 })).toBeUndefined();
		const reserve = pressure(0, (s) => {
			s.outputReserveTokens = 1;
		});
		expect(mayTrigger(reserve.settings, undefined)).toBe(true);
		const ratio = pressure(0, (s) => {
			s.thresholds["test/m"] = 0.5;
		});
		expect(mayTrigger(ratio.settings, MODEL)).toBe(true);
		expect(mayTrigger(ratio.settings, undefined)).toBe(false);
		expect(autoTrigger({ ...ratio, tokens: 50_000 })).toBe("ratio");
	});

	it("turns a percent threshold into a token limit of the model window, and a token threshold wins", () => {
		const ratio = pressure(0, (s) => {
			s.thresholds["test/m"] = 0.5;
		});
		expect(modelThresholdTokens(ratio)).toEqual({ kind: "ratio", limit: 50_000 });
		const both = pressure(0, (s) => {
			s.thresholds["test/m"] = 0.5;
			s.tokenThresholds["test/m"] = 30_000;
		});
		expect(modelThresholdTokens(both)).toEqual({ kind: "tokens", limit: 30_000 });
		expect(modelThresholdTokens({ ...both, model: { provider: "other", id: "m" } })).toBeUndefined();
	});

	it("triggers at a settled boundary once the model threshold is reached", () => {
		const configure = (s: PressureInput["settings"]) => {
			s.tokenThresholds["test/m"] = 30_000;
		};
		expect(autoTrigger(pressure(29_999, configure))).toBeUndefined();
		expect(autoTrigger(pressure(30_000, configure))).toBe("tokens");
	});

	it("triggers on headroom, independent of any threshold", () => {
		const configure = (s: PressureInput["settings"]) => {
			s.outputReserveTokens = 16_000;
		};
		expect(autoTrigger(pressure(84_000, configure))).toBeUndefined();
		expect(autoTrigger(pressure(84_001, configure))).toBe("headroom");
	});

	it("defers Pi's threshold compaction below the model threshold, unless the headroom is breached", () => {
		const configure = (s: PressureInput["settings"]) => {
			s.thresholds["test/m"] = 0.9;
			s.outputReserveTokens = 5_000;
		};
		expect(shouldDeferThreshold(pressure(80_000, configure))).toBe(true);
		expect(shouldDeferThreshold(pressure(90_000, configure))).toBe(false);
		expect(
			shouldDeferThreshold(
				pressure(89_000, (s) => {
					configure(s);
					s.outputReserveTokens = 12_000;
				}),
			),
		).toBe(false);
	});
});

import { describe, expect, it } from "vitest";
import { estimateAgreement } from "../../scripts/host-replay-figures.ts";

describe("the README's estimate agreement", () => {
	it("counts a session-window as within only when both its raw and charged gaps are, and names the largest gap", () => {
		const results = [
			"- PASS a-session @200k: the report's estimate − host +0.020 raw, −0.014 charged (each within ±0.05)",
			"- FAIL b-session @128k: the report's estimate − host −0.012 raw, −0.054 charged (each within ±0.05)",
			"- FAIL c-session @128k: the report's estimate − host +0.071 raw, +0.030 charged (each within ±0.05)",
		].join("\n");
		expect(estimateAgreement(results)).toEqual({
			within: 1,
			total: 3,
			worst: { session: "c-session", window: "128k", gap: 0.071 },
		});
	});

	it("refuses a results file without target lines rather than claim agreement", () => {
		expect(() => estimateAgreement("# host replay\n")).toThrow(/estimate − host/);
	});
});

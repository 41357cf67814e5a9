/**
 * The overflow line (issue 18, item 9): the retried request must get under
 * 90% of the refused one (or the model's window, if smaller) less Pi's
 * reserveTokens, and a line with no room left is 0, never negative.
 */

import { describe, expect, it } from "vitest";
import { overflowLine, overflowNotEnoughText } from "../../../src/fold/pi/overflow.ts";

describe("overflowLine", () => {
	it("takes 90% of the refused request, less reserveTokens", () => {
		expect(overflowLine(20_000, 64_000, 4_000)).toBe(14_000);
	});

	it("takes the model's window when it is the smaller bound", () => {
		expect(overflowLine(150_000, 128_000, 16_384)).toBe(128_000 - 16_384);
	});

	it("is 0 when reserveTokens leaves no room (a 20k window, Pi's default reserve)", () => {
		expect(overflowLine(12_000, 20_000, 16_384)).toBe(0);
	});
});

describe("overflowNotEnoughText", () => {
	it("names the reserve setting when the line leaves no room", () => {
		const text = overflowNotEnoughText({
			brand: "pi-fold",
			failedTokens: 12_000,
			freedTokens: 0,
			line: 0,
			reserveTokens: 16_384,
		});
		expect(text).toContain("leaves no room once compaction.reserveTokens (16,384) is kept free");
		expect(text).toContain("nothing outside the newest turns can fold");
		expect(text).toContain("Pi's recovery compaction goes ahead");
	});
});

/**
 * The harness's statistics and preset lookup: every report benchmark reads
 * its figures through `median` and its preset through `presetOf`.
 */

import { describe, expect, it } from "vitest";
import { median, presetOf } from "../../bench/harness.ts";

describe("median", () => {
	it("is the middle value of an odd sample and the mean of the middle two of an even one, whatever the order", () => {
		expect(median([5, 1, 3])).toBe(3);
		expect(median([4, 1, 3, 2])).toBe(2.5);
		expect(median([7])).toBe(7);
	});

	it("is NaN for an empty sample, so a figure with nothing measured cannot pass for a number", () => {
		expect(median([])).toBeNaN();
	});
});

describe("presetOf", () => {
	it("returns the named preset and refuses an unknown name, listing the known ones", () => {
		const presets = { smoke: 1, full: 2 };
		expect(presetOf(presets, "full")).toBe(2);
		expect(() => presetOf(presets, "fast")).toThrow("unknown preset fast; known: smoke, full");
	});
});

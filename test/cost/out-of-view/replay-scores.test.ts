/**
 * The scorer on a real log through the report's replays (`projectSavings`):
 * Pi alone on a window so large nothing compacts hides nothing, so every
 * reference scores raw; pi-fold's ladder, which folds, is charged for what it
 * hid by the same rule, and the figures are the same on a second run.
 */

import { describe, expect, it } from "vitest";
import { chargedCost, projectSavings } from "../../../src/cost/projected-savings.ts";
import { loadSessionFile } from "../../../src/session/load.ts";
import { realSessionPath } from "../../fixtures/real-sessions.ts";

/** The first six user turns of the larger real log (the host replay's smoke session). */
function smokeBranch() {
	const branch = loadSessionFile(realSessionPath("pi-mono-large-session")).manager.getBranch();
	let users = 0;
	const end = branch.findIndex((entry) => entry.type === "message" && entry.message.role === "user" && ++users > 6);
	return branch.slice(0, end);
}

describe("out-of-view scores of the report's replays", () => {
	const branch = smokeBranch();

	it("scores Pi alone on an endless window all raw, and charges pi-fold's folds by the same rule", async () => {
		const endless = await projectSavings(branch, "/", { contextWindow: 100_000_000 });
		const native = endless.outOfView.native;
		expect(endless.native.compactions).toBe(0);
		expect(native.summary.references.raw).toBeGreaterThan(200);
		expect(native.summary).toMatchObject({ repliesWithAbsent: 0, repliesWithBriefOnly: 0, editsWithAbsentAnchors: 0 });
		expect(native.summary.references).toMatchObject({ brief: 0, absent: 0 });
		expect(native.charge).toEqual({ requests: 0, cost: 0 });

		const folded = await projectSavings(branch, "/", { contextWindow: 40_000 });
		const defaults = folded.outOfView.projected;
		expect(folded.commits).toBeGreaterThan(0);
		expect(defaults.summary.repliesWithAbsent).toBeGreaterThan(0);
		expect(defaults.charge.requests).toBe(2 * defaults.summary.hiddenSources);
		expect(chargedCost(folded.projected, defaults)).toBeCloseTo(folded.projected.cost + defaults.charge.cost, 12);
		const again = (await projectSavings(branch, "/", { contextWindow: 40_000 })).outOfView.projected;
		expect(again.summary).toEqual(defaults.summary);
		expect(again.charge).toEqual(defaults.charge);
	});

	it("runs the ladder at another working-set share when asked (the tuning front), the constant otherwise", async () => {
		const window = { contextWindow: 128_000 };
		const defaults = await projectSavings(branch, "/", window);
		const whole = await projectSavings(branch, "/", window, { workingSetShare: 1 });
		// The default horizon lets the six turns' stale outputs go; one of the whole budget keeps them all in play.
		expect(defaults.commits).toBeGreaterThan(0);
		expect(whole.commits).toBe(0);
		// Pi alone does not move with the ladder's share.
		expect(whole.native.cost).toBe(defaults.native.cost);
	});
});

import { describe, expect, it } from "vitest";
import { formatWindowListing, WINDOW_LISTING_LIMIT } from "../../../src/fold/actions/window-listing.ts";
import { createFold } from "../../../src/fold/lattice/lattice.ts";
import { emptyLattice, isRefusal } from "../../../src/fold/lattice/records.ts";
import { analyzeBranch } from "../../../src/fold/lattice/units.ts";
import { FoldBranch, threeTurns } from "../../fixtures/fold.ts";

describe("status detail window", () => {
	it("lists raw entries with ids, roles and previews, and collapsed folds in their place", () => {
		const { entries, ids } = threeTurns();
		const view = analyzeBranch(entries);
		const made = createFold(
			emptyLattice(),
			view,
			{ kind: "chapter", first: ids.ask1, last: ids.reply1 },
			{ origin: "agent" },
		);
		if (isRefusal(made)) throw new Error(made.message);
		const listing = formatWindowListing(made.lattice, view, new Set());
		const lines = listing.split("\n").map((line) => line.trim());
		expect(lines[0]).toMatch(/oldest first/);
		expect(lines[1]).toBe(`${made.record.id} folded chapter ${ids.ask1}…${ids.reply1}`);
		expect(lines).toContain(`${ids.ask2} user "Now change it and test"`);
		expect(lines).toContain(`${ids.edit} assistant calls edit c2`);
		expect(lines).toContain(`${ids.testResult} result bash c3 error`);
		// Riders (a model change) never appear; expanding the fold lists its entries instead.
		expect(listing).not.toContain(ids.model);
		const expanded = formatWindowListing(made.lattice, view, new Set([made.record.id]));
		expect(expanded).toContain(`${ids.ask1} user "Read the config"`);
	});

	it("bounds the listing to the newest items and says how many are left out", () => {
		const b = new FoldBranch();
		for (let i = 0; i < WINDOW_LISTING_LIMIT + 5; i++) b.user(`message ${i}`);
		const listing = formatWindowListing(emptyLattice(), analyzeBranch(b.entries), new Set());
		expect(listing.split("\n")).toHaveLength(WINDOW_LISTING_LIMIT + 1);
		expect(listing).toMatch(/5 earlier not listed/);
		expect(listing).toContain(`"message ${WINDOW_LISTING_LIMIT + 4}"`);
	});
});

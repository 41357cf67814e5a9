import { describe, expect, it } from "vitest";
import {
	boundedDetails,
	STATUS_MAX_CHARS,
	STATUS_TOP_FOLDS,
	STATUS_TREE_MAX_LIMIT,
	statusText,
} from "../../../src/fold/actions/status.ts";
import { emptyInstrument } from "../../../src/fold/engine/instrument.ts";
import { type StatusDetails, statusDetails } from "../../../src/fold/engine/status-facts.ts";
import { createFold } from "../../../src/fold/lattice/lattice.ts";
import { emptyLattice, type FoldLattice, isRefusal } from "../../../src/fold/lattice/records.ts";
import { analyzeBranch, type BranchView } from "../../../src/fold/lattice/units.ts";
import { emptyFoldState } from "../../../src/fold/state/state.ts";
import { FoldBranch } from "../../fixtures/fold.ts";

const FOLDS = 10_000;

/** A session of FOLDS closed chapters, each folded: 10,000 visible collapsed folds. */
function tenThousandFolds(): { lattice: FoldLattice; view: BranchView; details: StatusDetails } {
	const b = new FoldBranch();
	const turns: [string, string][] = [];
	for (let i = 0; i < FOLDS; i++) {
		const ask = b.user(`question ${i} ${"x".repeat(i % 97)}`);
		turns.push([ask, b.assistant(`answer ${i}`)]);
	}
	b.user("the live turn");
	const view = analyzeBranch(b.entries);
	let lattice = emptyLattice();
	for (const [first, last] of turns) {
		const made = createFold(lattice, view, { kind: "chapter", first, last }, { origin: "ladder" });
		if (isRefusal(made)) throw new Error(made.message);
		lattice = made.lattice;
	}
	const details = statusDetails({
		lattice,
		view,
		state: emptyFoldState(),
		instrument: emptyInstrument(),
		budget: { tokens: 1000, descriptor: 128_000, providerTotalWindow: undefined, outputReservation: 16_000 },
		store: { kind: "file", location: "/s/x.pi-fold" },
		pendingEdits: 0,
		automatic: {
			scheduling: "epoch",
			marks: [],
			reading: undefined,
			view,
			lastCommit: undefined,
			lastCommitText: undefined,
			declined: undefined,
			commits: 0,
			cancelledCompactions: 0,
			fenceRefusals: 0,
		},
	});
	return { lattice, view, details };
}

describe("bounded status on a 10,000-fold session", () => {
	const { details } = tenThousandFolds();
	const toolName = "active_context";

	it("plain status stays under the bound with totals, the largest and the most recent folds", () => {
		expect(details.counts.collapsed).toBe(FOLDS);
		const { text, shown } = statusText(details, { tree: false, toolName });
		expect(text.length).toBeLessThanOrEqual(STATUS_MAX_CHARS);
		expect(text).toContain(`Folds: ${FOLDS} (${FOLDS} collapsed`);
		expect(text).toMatch(/Largest visible folds \(5 of 10000\)/);
		const largest = [...details.folds].sort((a, b) => b.sourceBytes - a.sourceBytes)[0];
		const newest = [...details.folds].sort((a, b) => b.created - a.created)[0];
		expect(text).toContain(largest?.id);
		expect(text).toContain(newest?.id);
		expect(shown.length).toBeLessThanOrEqual(2 * STATUS_TOP_FOLDS);
		// The structured details a tool result persists carry only the rows shown.
		const bounded = boundedDetails(details, shown, 0);
		expect(bounded.folds).toHaveLength(shown.length);
		expect(bounded.foldsShown).toEqual({ offset: 0, count: shown.length, total: FOLDS });
		expect(text).toContain('"detail":"tree","offset":0');
	});

	it("the tree pages under the bound and says how to get the rest, to the end", () => {
		const first = statusText(details, { tree: true, toolName });
		expect(first.text.length).toBeLessThanOrEqual(STATUS_MAX_CHARS);
		expect(first.shown.length).toBeGreaterThan(0);
		const next = /"offset":(\d+),"limit":(\d+)/.exec(first.text.split("more rows:")[1] ?? "");
		expect(Number(next?.[1])).toBe(first.shown.length);
		// The largest page a caller may ask for is still cut at the bound, and the next offset follows the cut.
		const big = statusText(details, { tree: true, toolName, offset: 5000, limit: STATUS_TREE_MAX_LIMIT });
		expect(big.text.length).toBeLessThanOrEqual(STATUS_MAX_CHARS);
		expect(big.shown[0]?.id).toBe(details.folds[5000]?.id);
		expect(big.text).toContain(`"offset":${5000 + big.shown.length}`);
		const last = statusText(details, { tree: true, toolName, offset: FOLDS - 3 });
		expect(last.shown).toHaveLength(3);
		expect(last.text).toContain("End of the fold tree.");
		expect(statusText(details, { tree: true, toolName, offset: FOLDS + 10 }).text.length).toBeLessThanOrEqual(
			STATUS_MAX_CHARS,
		);
	});
});

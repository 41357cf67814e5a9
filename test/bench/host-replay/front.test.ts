/**
 * The working-set front's verdict (bench/host-replay/front.ts): which share,
 * if any, meets both per-session reference targets, and whether the
 * cheapest such point meets the charged-cost line. Pure, over hand-made
 * outcomes.
 */

import { describe, expect, it } from "vitest";
import {
	anchorAgeLine,
	editAnchorAges,
	type FrontPoint,
	frontRows,
	frontTable,
	frontVerdicts,
	hiddenCounts,
	hiddenLine,
} from "../../../bench/host-replay/front.ts";
import type { ArmOutcome } from "../../../bench/host-replay/targets.ts";
import type { ReplyScore, ScoredReference } from "../../../src/cost/out-of-view/scorer.ts";

function arm(cost: number, hidden: number, editsHidden: number): ArmOutcome {
	return {
		rawCost: cost,
		chargedCost: cost,
		compactions: 0,
		pastLine: 0,
		outOfView: {
			replies: 100,
			repliesWithAbsent: hidden,
			repliesWithBriefOnly: 0,
			references: { raw: 0, brief: 0, absent: hidden },
			edits: 20,
			editsWithAbsentAnchors: editsHidden,
			medianAbsentAge: undefined,
			hiddenSources: hidden,
		},
	};
}

/** A point: `session` at `window` and `share`, costing `cost` of native's 1.0, hiding `hidden` replies and `edits` edits (native hides none). */
function point(
	session: string,
	share: number,
	cost: number,
	hidden: number,
	edits: number,
	window = 200_000,
): FrontPoint {
	return {
		share,
		outcome: { session, window, native: arm(1, 0, 0), defaults: arm(cost, hidden, edits) },
	};
}

describe("the working-set front", () => {
	it("names the cheapest share where every session meets both reference targets, and judges it against the line", () => {
		const rows = frontRows([
			point("a", 0.02, 0.5, 9, 0), // a misses the reply target (9 > 0 + 5 of 100)
			point("b", 0.02, 0.6, 0, 0),
			point("a", 0.2, 0.7, 4, 1), // both within: 4 ≤ 5, 1 ≤ 0 + 1
			point("b", 0.2, 0.8, 0, 0),
			point("a", 0.4, 0.9, 0, 0),
			point("b", 0.4, 0.95, 0, 0),
		]);
		expect(rows.map((row) => [row.share, row.charged, row.replyPasses, row.editPasses])).toEqual([
			[0.02, 0.55, 1, 2],
			[0.2, 0.75, 2, 2],
			[0.4, 0.925, 2, 2],
		]);
		const [verdict] = frontVerdicts(rows);
		expect(verdict).toContain("at share 0.2, 0.4; the cheapest of those (0.2)");
		expect(verdict).toContain("0.75× native charged");
		expect(verdict).toContain("which meets the 0.75× line");
		expect(frontTable(rows, ["a", "b"])[2]).toContain("0.50×, 9/100 ✗, 0/20");
	});

	it("judges each window on its own points, and names every meeting share when the front is not monotone", () => {
		const rows = frontRows([
			point("a", 0.08, 0.7, 0, 0, 128_000),
			point("a", 0.2, 0.8, 0, 3, 128_000), // a commit timing shift hides three edits here
			point("a", 0.4, 0.9, 0, 0, 128_000),
			point("a", 0.08, 0.5, 0, 4, 200_000),
			point("a", 0.4, 0.6, 0, 0, 200_000),
		]);
		expect(rows.map((row) => [row.window, row.share, row.editPasses])).toEqual([
			[128_000, 0.08, 1],
			[128_000, 0.2, 0],
			[128_000, 0.4, 1],
			[200_000, 0.08, 0],
			[200_000, 0.4, 1],
		]);
		expect(frontVerdicts(rows)).toEqual([
			"- @128k: every session meets both reference targets at share 0.08, 0.4; the cheapest of those (0.08) costs 0.70× native charged (raw 0.70×), which meets the 0.75× line",
			"- @200k: every session meets both reference targets at share 0.4; the cheapest of those (0.4) costs 0.60× native charged (raw 0.60×), which meets the 0.75× line",
		]);
	});

	it("says so when an edit target fails at every share, however cheap the reply target gets", () => {
		const rows = frontRows([point("a", 0.02, 0.5, 0, 2), point("a", 0.4, 0.9, 0, 2)]);
		expect(rows.every((row) => row.replyPasses === 1 && row.editPasses === 0)).toBe(true);
		expect(frontVerdicts(rows)).toEqual(["- @200k: at no share do all sessions meet both reference targets"]);
	});

	it("judges a point over the line as missing it", () => {
		const [verdict] = frontVerdicts(frontRows([point("a", 0.4, 0.9, 0, 0)]));
		expect(verdict).toContain("which misses the 0.75× line");
	});
});

describe("how old the lines edits quote are", () => {
	const reference = (kind: ScoredReference["kind"], age: number): ScoredReference => ({
		kind,
		value: `${kind}-${age}`,
		state: "raw",
		age,
		source: 0,
	});
	const reply = (step: number, references: ScoredReference[], edits: number): ReplyScore => ({
		step,
		references,
		edits: Array.from({ length: edits }, () => ({ tool: "edit", anchors: 1, absent: 0, brief: 0 })),
		hiddenSources: [],
	});

	it("takes each reply's oldest anchor line, ignoring other references and replies without edits", () => {
		const ages = editAnchorAges([
			reply(0, [reference("anchor", 3), reference("anchor", 120), reference("identifier", 400)], 1),
			reply(1, [reference("identifier", 60)], 0), // no edit
			reply(2, [reference("identifier", 90)], 1), // an edit quoting nothing seen before
			reply(3, [reference("anchor", 25), reference("anchor", 7)], 2), // two edits in one reply: one age, the oldest
		]);
		expect(ages).toEqual([120, 25]);
		expect(anchorAgeLine("s", ages)).toBe(
			"- s: 2 replies hold an edit quoting earlier lines; the oldest line such a reply quotes was last seen, replies before: ≥ 10 in 2, ≥ 25 in 2, ≥ 50 in 1, ≥ 100 in 1",
		);
	});

	it("counts the replies that hid something by how recently the youngest hidden one was last seen", () => {
		const hidden = (kind: ScoredReference["kind"], age: number): ScoredReference => ({
			...reference(kind, age),
			state: "absent",
		});
		const replies = [
			reply(0, [hidden("anchor", 120), hidden("anchor", 30)], 1), // youngest hidden: 30
			reply(1, [hidden("anchor", 4)], 1),
			reply(2, [reference("anchor", 2), hidden("anchor", 60)], 1), // a shown young anchor does not count
			reply(3, [hidden("identifier", 5)], 0), // no edit: the reply target's, not the edit target's
			reply(4, [reference("anchor", 1), hidden("path", 3)], 1), // an edit whose anchors all showed
		];
		const anchors = hiddenCounts(replies, "anchors");
		expect(anchors).toEqual({ all: 3, under: [1, 1, 2, 3] });
		expect(hiddenCounts(replies, "any")).toEqual({ all: 5, under: [3, 3, 4, 5] });
		expect(hiddenLine("s @200k", anchors, { all: 0, under: [0, 0, 0, 0] })).toBe(
			"- s @200k: pi-fold 3 (< 10: 1, < 25: 1, < 50: 2, < 100: 3); native 0 (< 10: 0, < 25: 0, < 50: 0, < 100: 0)",
		);
	});
});

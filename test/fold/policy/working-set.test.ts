/**
 * The working set: last references over the branch, the horizon the window
 * sets, the price of a miss, and the ladder keeping what the agent still
 * uses raw while it folds what it stopped using — by last reference, not age.
 */

import { describe, expect, it } from "vitest";
import { analyzeBranch } from "../../../src/fold/lattice/units.ts";
import { BACKSTOP_OCCUPANCY, type LadderInput, ladderCandidates } from "../../../src/fold/policy/ladder.ts";
import { referenceIndex, requestsSinceReference } from "../../../src/fold/policy/references.ts";
import {
	expectedRefetchCost,
	OWN_TEXT_HORIZON_FACTOR,
	REFERENCE_UNIT_TOKENS,
	referenceAgainChance,
	WORKING_SET_BUDGET_SHARE,
	WORKING_SET_MIN_TOKENS,
	workingSetOf,
	workingSetTokens,
} from "../../../src/fold/policy/working-set.ts";
import { loadRealBranch } from "../../fixtures/compaction-events.ts";
import { FoldBranch } from "../../fixtures/fold.ts";
import { ladderInput as input } from "../../fixtures/ladder.ts";
import { REAL_SESSIONS } from "../../fixtures/session.ts";

const filler = (tokens: number, tag: string) => `${tag}\n${"x".repeat(tokens * 4)}`;

/** Index of the unit an entry id sits in. */
function unitOf(entries: FoldBranch["entries"], id: string) {
	const view = analyzeBranch(entries);
	const unit = view.units[view.unitOf[view.indexById.get(id) ?? -1] ?? -1];
	if (!unit) throw new Error(`no unit for ${id}`);
	return { view, unit };
}

describe("last references", () => {
	it("a reply naming a path refreshes the newest read of that file, by any trailing part of its path", () => {
		const b = new FoldBranch();
		b.user("go");
		const old = b.tool({ id: "r1", name: "read", args: { path: "/repo/src/theme.ts" } }, "export const a = 1;");
		const read = b.tool({ id: "r2", name: "read", args: { path: "/repo/src/theme.ts" } }, "export const a = 2;");
		for (let k = 0; k < 5; k++) b.tool({ id: `s${k}`, name: "bash", args: { command: "make" } }, "ok");
		const before = unitOf(b.entries, read);
		expect(requestsSinceReference(before.view, referenceIndex(before.view), before.unit)).toBe(5);
		b.assistant("Next I change src/theme.ts to export b.");
		const after = unitOf(b.entries, read);
		const index = referenceIndex(after.view);
		expect(requestsSinceReference(after.view, index, after.unit)).toBe(0);
		// The older read of the same file is not the copy the model reads it from: it stays stale.
		// (Its last reference was the call that read the file again.)
		expect(requestsSinceReference(after.view, index, unitOf(b.entries, old).unit)).toBe(6);
	});

	it("an edit's result never stands in for the read: after an edit, naming the file still refreshes what was read", () => {
		const b = new FoldBranch();
		b.user("go");
		const read = b.tool({ id: "r", name: "read", args: { path: "src/theme.ts" } }, "export const accent = 1;");
		b.tool(
			{
				id: "e",
				name: "edit",
				args: { path: "src/theme.ts", edits: [{ oldText: "accent = 1", newText: "accent = 2" }] },
			},
			"Successfully replaced 1 block(s) in src/theme.ts.",
		);
		for (let k = 0; k < 5; k++) b.tool({ id: `s${k}`, name: "bash", args: { command: "make" } }, "ok");
		b.assistant("One more change to src/theme.ts.");
		// The next edit quotes the read's lines, not the edit's receipt: the read is the copy in use.
		const { view, unit } = unitOf(b.entries, read);
		expect(requestsSinceReference(view, referenceIndex(view), unit)).toBe(0);
	});

	it("a name refreshes the read of the file that declares it, even after replies repeated the name", () => {
		const b = new FoldBranch();
		b.user("go");
		const read = b.tool({ id: "r", name: "read", args: { path: "theme.ts" } }, "export function getMarkdownTheme() {}");
		for (let k = 0; k < 4; k++) b.assistant(`getMarkdownTheme is used by panel ${k}.`);
		const { view, unit } = unitOf(b.entries, read);
		expect(requestsSinceReference(view, referenceIndex(view), unit)).toBe(0);
	});

	it("a result is paired with its own call when providers reuse call ids across responses", () => {
		const b = new FoldBranch();
		b.user("go");
		// Some providers number calls per response: both reads are `call_0`.
		const first = b.tool({ id: "call_0", name: "read", args: { path: "src/alpha.ts" } }, "const a = 1;");
		const second = b.tool({ id: "call_0", name: "read", args: { path: "src/beta.ts" } }, "const b = 2;");
		for (let k = 0; k < 3; k++) b.tool({ id: `s${k}`, name: "bash", args: { command: "make" } }, "ok");
		b.assistant("Now src/alpha.ts needs the new export.");
		const view = analyzeBranch(b.entries);
		const index = referenceIndex(view);
		// Naming alpha refreshes alpha's read, not the later read that answered a call with the same id.
		expect(requestsSinceReference(view, index, unitOf(b.entries, first).unit)).toBe(0);
		expect(requestsSinceReference(view, index, unitOf(b.entries, second).unit)).toBe(4);
	});

	it("an identifier refreshes the newest entry holding it, and a grown branch reads only what was appended", () => {
		const b = new FoldBranch();
		b.user("go");
		const grep = b.tool({ id: "g", name: "grep", args: { pattern: "x" } }, "src/a.ts: function loadThemeColors() {}");
		b.tool({ id: "s", name: "bash" }, "unrelated");
		const view = analyzeBranch(b.entries);
		const grown = referenceIndex(view);
		b.assistant("loadThemeColors is where the colours come from.");
		// The engine's view grows its entries array in place; the index follows without a rebuild.
		(view.entries as FoldBranch["entries"]).push(...b.entries.slice(view.entries.length));
		const fresh = analyzeBranch(b.entries);
		const all = (index: ReturnType<typeof referenceIndex>) => b.entries.map((_, i) => index.lastReferenceOf(i));
		expect(all(referenceIndex(view))).toEqual(all(referenceIndex(fresh)));
		expect(grown).toBe(referenceIndex(view));
		const unit = unitOf(b.entries, grep).unit;
		expect(requestsSinceReference(fresh, referenceIndex(fresh), unit)).toBe(0);
	});
});

describe("the reference index reads only what it is asked about", () => {
	const entries = loadRealBranch(REAL_SESSIONS.large);
	// Oracle: an index asked about entry 0 first reads the whole branch from the start.
	const full = referenceIndex(analyzeBranch([...entries]));
	const expected = entries.map((_, i) => full.lastReferenceOf(i));

	it("answers a question about the tail from the tail, exactly as a read from the start", () => {
		const index = referenceIndex(analyzeBranch([...entries]));
		const tail = entries.length - 40;
		for (let i = tail; i < entries.length; i++) expect(index.lastReferenceOf(i)).toBe(expected[i]);
		expect(index.readFrom).toBe(tail);
		// References do point back into the tail from later entries: the check is not vacuous.
		expect(expected.slice(tail).some((last, k) => last > tail + k)).toBe(true);
	});

	it("refreshes the read of a path's longest known part even when that read is older than what it covers", () => {
		const b = new FoldBranch();
		b.user("go");
		b.tool({ id: "r1", name: "read", args: { path: "/repo/src/a.ts" } }, "one");
		for (let k = 0; k < 3; k++) b.tool({ id: `s${k}`, name: "bash", args: { command: "make" } }, "ok");
		const lib = b.tool({ id: "r2", name: "read", args: { path: "lib/a.ts" } }, "two");
		for (let k = 0; k < 3; k++) b.tool({ id: `t${k}`, name: "bash", args: { command: "make" } }, "ok");
		b.assistant("Now change src/a.ts.");
		const full = referenceIndex(analyzeBranch([...b.entries]));
		const answers = b.entries.map((_, i) => full.lastReferenceOf(i));
		const view = analyzeBranch([...b.entries]);
		// The result of the lib/a.ts read: "src/a.ts" names the older read, not this one.
		const at = (view.indexById.get(lib) ?? -2) + 1;
		const index = referenceIndex(view);
		const first = index.lastReferenceOf(at);
		expect(first).toBe(answers[at]);
		expect(first).toBe(at);
		index.lastReferenceOf(0);
		expect(index.lastReferenceOf(at)).toBe(first);
	});

	it("reads further back when asked about older entries, doubling what it covers, with the same answers", () => {
		const view = analyzeBranch([...entries]);
		const index = referenceIndex(view);
		const asked: number[] = [];
		for (let at = entries.length - 1; at >= 0; at -= 97) asked.push(at);
		for (const at of asked) expect(index.lastReferenceOf(at)).toBe(expected[at]);
		expect(entries.map((_, i) => index.lastReferenceOf(i))).toEqual(expected);
		expect(index.readFrom).toBe(0);
	});
});

describe("the horizon and the price of a miss", () => {
	it("is a share of the budget that shrinks as the window fills, never under the floor", () => {
		const budget = 200_000;
		expect(workingSetTokens(budget, 0, BACKSTOP_OCCUPANCY)).toBe(budget * WORKING_SET_BUDGET_SHARE);
		expect(workingSetTokens(budget, BACKSTOP_OCCUPANCY / 2, BACKSTOP_OCCUPANCY)).toBe(
			(budget * WORKING_SET_BUDGET_SHARE) / 2,
		);
		expect(workingSetTokens(budget, BACKSTOP_OCCUPANCY, BACKSTOP_OCCUPANCY)).toBe(WORKING_SET_MIN_TOKENS);
		// A larger window keeps more at the same occupancy: the window is room to use.
		expect(workingSetTokens(400_000, 0.3, BACKSTOP_OCCUPANCY)).toBeGreaterThan(workingSetTokens(100_000, 0.3, 0.8));
	});

	it("falls with the requests since the last reference, and with a unit's size below the reference size", () => {
		expect(referenceAgainChance(0)).toBeGreaterThan(referenceAgainChance(10));
		expect(referenceAgainChance(10)).toBeGreaterThan(referenceAgainChance(100));
		expect(referenceAgainChance(10, REFERENCE_UNIT_TOKENS / 4)).toBeCloseTo(referenceAgainChance(10) / 4, 10);
		// Re-fetches re-send the prompt (a peek per expected source and one search) and bring the source back fresh.
		const prices = { uncached: 1, cached: 0.1, longContextAbove: null };
		expect(expectedRefetchCost({ sources: 0.5, tokens: 0 }, 100_000, prices)).toBeCloseTo(
			(0.5 + 0.5) * 100_000 * 0.1,
			6,
		);
		expect(expectedRefetchCost({ sources: 3, tokens: 0 }, 100_000, prices)).toBeCloseTo((3 + 1) * 100_000 * 0.1, 6);
		expect(expectedRefetchCost({ sources: 0.5, tokens: 2_000 }, 100_000, prices)).toBeCloseTo(
			(0.5 + 0.5) * 100_000 * 0.1 + 2_000 * 1,
			6,
		);
	});
});

describe("the ladder keeps the working set raw", () => {
	/** Two large reads, `steps` small steps, and a small tail; `named`: a late reply names the first read's file. */
	function session(steps: number, named: boolean) {
		const b = new FoldBranch();
		b.user("go");
		const a = b.tool({ id: "ra", name: "read", args: { path: "src/a.ts" } }, filler(6_000, "a"));
		const c = b.tool({ id: "rc", name: "read", args: { path: "src/c.ts" } }, filler(6_000, "c"));
		for (let k = 1; k <= steps; k++) {
			if (named && k === steps) b.assistant("The fix goes into src/a.ts, at the top.");
			b.tool({ id: `s${k}`, name: "bash", args: { command: `step ${k}` } }, filler(500, `step ${k}`));
		}
		b.tool({ id: "t", name: "bash" }, filler(1_000, "tail"));
		return { b, a, c, tailStart: b.entries.length - 2 };
	}
	const folded = (ladder: LadderInput, tailStart: number) =>
		ladderCandidates(ladder, tailStart, false).candidates.flatMap((c) =>
			ladder.view.entries.slice(c.start, c.end).map((entry) => entry.id),
		);

	it("folds by last reference, not by age: the older read a reply named stays, the newer one goes", () => {
		const { b, a, c, tailStart } = session(40, true);
		const candidates = folded(input(b.entries), tailStart);
		expect(candidates).toContain(c);
		expect(candidates).not.toContain(a);
		// Unnamed, the older read leaves the working set as well.
		const unnamed = session(40, false);
		expect(folded(input(unnamed.b.entries), unnamed.tailStart)).toContain(unnamed.a);
	});

	it("keeps the agent's own text in play longer than tool output written as long ago", () => {
		const b = new FoldBranch();
		b.user("go");
		const output = b.tool({ id: "o", name: "bash", args: { command: "make" } }, filler(1_500, "out"));
		const said = b.assistant(`Plan: ${filler(1_500, "said")}`);
		// About 10,000 tokens of unrelated steps since: past a horizon of 8,000, within twice it.
		for (let k = 0; k < 20; k++)
			b.tool({ id: `s${k}`, name: "bash", args: { command: `step ${k}` } }, filler(500, `s${k}`));
		const ladder = input(b.entries);
		const play = workingSetOf({ view: ladder.view, reading: ladder.reading, horizon: 8_000 });
		expect(8_000 * OWN_TEXT_HORIZON_FACTOR).toBeGreaterThan(12_000);
		expect(play.inPlay(unitOf(b.entries, output).unit)).toBe(false);
		expect(play.inPlay(unitOf(b.entries, said).unit)).toBe(true);
	});

	it("keeps a read raw a few steps on, and keeps more in a larger window", () => {
		const few = session(4, false);
		expect(folded(input(few.b.entries), few.tailStart)).not.toContain(few.c);
		const { b, c, tailStart } = session(40, false);
		expect(folded(input(b.entries, { budget: 100_000 }), tailStart)).toContain(c);
		expect(folded(input(b.entries, { budget: 1_000_000 }), tailStart)).not.toContain(c);
	});
});

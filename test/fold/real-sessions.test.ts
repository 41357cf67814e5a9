import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { buildSessionProjection } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { BRIEF_MAX_CHARS, recallCalls } from "../../src/fold/briefs/brief.ts";
import { editDrafts, planWindow } from "../../src/fold/engine/materialize.ts";
import { consolidateFolds, createFold, MIN_CHAPTER_UNITS } from "../../src/fold/lattice/lattice.ts";
import { checkLattice, foldTree, visibleLayout } from "../../src/fold/lattice/lattice-view.ts";
import {
	emptyLattice,
	type FoldLattice,
	isRefusal,
	latticeFromRecords,
	leafEntryIds,
} from "../../src/fold/lattice/records.ts";
import { analyzeBranch, type BranchView, closedChapters } from "../../src/fold/lattice/units.ts";
import { openFileFoldStore } from "../../src/fold/store/store-file.ts";
import { canonicalJson, canonicalSpanBytes } from "../../src/session/canonical.ts";
import { persistDrafts, REAL_SESSIONS, realBranch } from "../fixtures/fold.ts";

/** Fold every completed tool batch, then every closed chapter, then consolidate neighbouring top-level folds. */
function foldEverything(view: BranchView) {
	let lattice: FoldLattice = emptyLattice();
	let batches = 0;
	let chapters = 0;
	let consolidations = 0;
	for (const unit of view.units) {
		if (unit.kind !== "tool-batch" || !unit.completed) continue;
		const first = view.entries[unit.start]?.id ?? "";
		const last = view.entries[unit.end - 1]?.id ?? "";
		const result = createFold(lattice, view, { kind: "tool-batch", first, last }, { origin: "ladder" });
		if (!result.ok) throw new Error(`tool batch at ${unit.start}: ${result.code}: ${result.message}`);
		expect(result.plan.correction).toBeUndefined();
		lattice = result.lattice;
		batches++;
	}
	for (const chapter of closedChapters(view, MIN_CHAPTER_UNITS)) {
		const first = view.entries[chapter.start]?.id ?? "";
		const last = view.entries[chapter.end - 1]?.id ?? "";
		const result = createFold(lattice, view, { kind: "chapter", first, last }, { origin: "ladder" });
		if (!result.ok) throw new Error(`chapter ${first}..${last}: ${result.code}: ${result.message}`);
		expect(result.plan.correction).toBeUndefined();
		lattice = result.lattice;
		chapters++;
	}
	const roots = foldTree(lattice, view).filter((row) => row.depth === 0);
	for (let i = 0; i + 1 < roots.length; i++) {
		const pair = [roots[i]?.id ?? "", roots[i + 1]?.id ?? ""];
		const result = consolidateFolds(lattice, view, pair, { origin: "ladder" });
		if (result.ok) {
			lattice = result.lattice;
			consolidations++;
			i++;
		} else expect(result.code).toBe("not-adjacent");
	}
	return { lattice, batches, chapters, consolidations };
}

/** Leaf entries of the window's items, in order. */
function flatten(lattice: FoldLattice, view: BranchView, expanded: ReadonlySet<string>): string[] {
	return visibleLayout(lattice, view, expanded).flatMap((item) => {
		if (item.type === "entry") return [item.entryId];
		const leaves = leafEntryIds(lattice, item.foldId);
		if (isRefusal(leaves)) throw new Error(leaves.message);
		return leaves;
	});
}

describe.each(Object.entries(REAL_SESSIONS))("folding the real %s session", (name, path) => {
	const view = analyzeBranch(realBranch(path));
	const { lattice, batches, chapters, consolidations } = foldEverything(view);
	const branchIds = view.entries.map((entry) => entry.id);

	it("folds every completed tool batch and every closed chapter, and some neighbours", () => {
		const completed = view.units.filter((unit) => unit.kind === "tool-batch" && unit.completed).length;
		expect(batches).toBe(completed);
		expect(chapters).toBeGreaterThan(10);
		expect(consolidations).toBeGreaterThan(0);
		expect(lattice.folds.size).toBe(batches + chapters + consolidations);
	});

	it("loses and duplicates nothing: folds plus raw entries are the branch, in order", () => {
		expect(flatten(lattice, view, new Set())).toEqual(branchIds);
		const everyOther = new Set([...lattice.folds.keys()].filter((_, i) => i % 2 === 0));
		expect(flatten(lattice, view, everyOther)).toEqual(branchIds);
		const all = new Set(lattice.folds.keys());
		const raw = visibleLayout(lattice, view, all);
		expect(raw.every((item) => item.type === "entry")).toBe(true);
		expect(raw.map((item) => (item.type === "entry" ? item.entryId : ""))).toEqual(branchIds);
	});

	it("keeps every nesting rule and every recorded source hash", () => {
		expect(checkLattice(lattice, view, { verifySources: true })).toEqual([]);
		const rows = new Map(foldTree(lattice, view).map((row) => [row.id, row]));
		for (const row of rows.values()) {
			if (row.parentId === null) continue;
			const parent = rows.get(row.parentId);
			expect(parent && parent.start <= row.start && row.end <= parent.end).toBe(true);
			expect(parent && row.depth).toBe((parent?.depth ?? 0) + 1);
		}
		const rebuilt = latticeFromRecords([...lattice.folds.values()]);
		expect(isRefusal(rebuilt)).toBe(false);
	});

	it("bounds every brief and ends it with its recall calls", () => {
		for (const record of lattice.folds.values()) {
			expect(record.brief.length).toBeLessThanOrEqual(BRIEF_MAX_CHARS);
			expect(record.brief.endsWith(recallCalls(record.id).expand)).toBe(true);
			expect(record.brief).toContain(recallCalls(record.id).peek);
		}
	});

	it("stores every fold's exact source as a blob that verifies", async () => {
		const dir = await mkdtemp(join(tmpdir(), "pi-fold-real-"));
		try {
			const store = openFileFoldStore({ sessionDir: dir, sessionId: name });
			const byId = new Map(view.entries.map((entry) => [entry.id, entry]));
			for (const record of lattice.folds.values()) {
				const leaves = leafEntryIds(lattice, record.id);
				if (isRefusal(leaves)) throw new Error(leaves.message);
				const source = canonicalSpanBytes(leaves.map((id) => byId.get(id)));
				await store.put(source, { expectedHash: record.sourceHash });
			}
			for (const record of lattice.folds.values()) {
				const read = await store.read(record.sourceHash);
				expect(read.totalBytes).toBe(record.sizes.sourceBytes);
			}
		} finally {
			await rm(dir, { recursive: true, force: true });
		}
	});

	it("never folds into a fresh tail", () => {
		const freshTailStart = view.entries.length - 40;
		let guarded: FoldLattice = emptyLattice();
		let refusedTail = 0;
		for (const chapter of closedChapters(view, MIN_CHAPTER_UNITS)) {
			const request = {
				kind: "chapter" as const,
				first: view.entries[chapter.start]?.id ?? "",
				last: view.entries[chapter.end - 1]?.id ?? "",
			};
			const result = createFold(guarded, view, request, { origin: "ladder", guards: { freshTailStart } });
			if (result.ok) guarded = result.lattice;
			else {
				expect(result.code).toBe("fresh-tail");
				refusedTail++;
			}
		}
		expect(refusedTail).toBeGreaterThan(0);
		expect(foldTree(guarded, view).every((row) => row.end <= freshTailStart)).toBe(true);
	});
});

describe.each(Object.entries(REAL_SESSIONS))("the model window of the real %s session", (_name, path) => {
	const view = analyzeBranch(realBranch(path));
	const { lattice } = foldEverything(view);
	const branch = [...view.entries];
	const originalWindow = canonicalJson(buildSessionProjection(branch, branch.at(-1)?.id).messages);
	const inWindow = new Set(buildSessionProjection(branch, branch.at(-1)?.id).entries.map((e) => e.sourceEntry.id));
	const planFor = (on: SessionEntry[], expanded: ReadonlySet<string>) =>
		planWindow(on, { lattice, expanded, briefOf: (record) => record.brief, brandNoun: "active-context" });

	/** Persist drafts through Pi's SessionManager, whose checks refuse an edit Pi could not apply. */
	const persist = persistDrafts;
	const windowOf = (on: SessionEntry[]) => buildSessionProjection(on, on.at(-1)?.id).messages;

	it("folded: the window shrinks, every call keeps its result, and expanding everything restores it byte for byte", () => {
		const folded = persist(
			branch,
			editDrafts(branch, planFor(branch, new Set()), { inWindow: (id) => inWindow.has(id) }),
		);
		const foldedWindow = windowOf(folded);
		expect(canonicalJson(foldedWindow).length).toBeLessThan(originalWindow.length / 2);
		// Tool calls and results still pair one to one in the folded window.
		const calls = foldedWindow.flatMap((m) =>
			m.role === "assistant" ? m.content.filter((c) => c.type === "toolCall").map((c) => c.id) : [],
		);
		const results = foldedWindow.flatMap((m) => (m.role === "toolResult" ? [m.toolCallId] : []));
		expect(new Set(results).size).toBe(results.length);
		for (const id of results) expect(calls).toContain(id);

		const all = new Set(lattice.folds.keys());
		const restored = persist(folded, editDrafts(folded, planFor(folded, all), { inWindow: (id) => inWindow.has(id) }));
		expect(canonicalJson(windowOf(restored))).toBe(originalWindow);
		// Refold everything again and expand once more: still exact.
		const refolded = persist(
			restored,
			editDrafts(restored, planFor(restored, new Set()), { inWindow: (id) => inWindow.has(id) }),
		);
		expect(canonicalJson(windowOf(refolded))).toBe(canonicalJson(foldedWindow));
	});
});

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { buildSessionProjection } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import {
	editDrafts,
	planWindow,
	projectWithDrafts,
	visibleCollapsedFolds,
} from "../../../src/fold/engine/materialize.ts";
import { type FoldKind, type FoldLattice, type FoldRecord, foldIdDigest } from "../../../src/fold/lattice/records.ts";
import { canonicalJson, sha256Hex } from "../../../src/session/canonical.ts";
import { persistDrafts } from "../../fixtures/fold.ts";
import { BranchBuilder } from "../../fixtures/session.ts";

function fold(kind: FoldKind, parts: FoldRecord["parts"], seed = canonicalJson(parts)): FoldRecord {
	const sourceHash = sha256Hex(seed);
	return {
		id: `f-${foldIdDigest(kind, sourceHash).slice(0, 12)}`,
		kind,
		parts,
		brief: `brief of ${kind}`,
		sourceHash,
		sizes: { sourceBytes: 100, briefBytes: 10, entryCount: parts.length },
		provenance: { origin: "agent", briefGenerator: "deterministic" },
	};
}

const entries = (...ids: string[]): FoldRecord["parts"] => ids.map((entryId) => ({ type: "entry", entryId }));
const lattice = (...records: FoldRecord[]): FoldLattice => ({ folds: new Map(records.map((r) => [r.id, r])) });

/** Append drafts to a branch the way Pi persists them (Pi's own checks run). */
const persist = persistDrafts;

function messagesOf(branch: SessionEntry[]) {
	return canonicalJson(buildSessionProjection(branch, branch.at(-1)?.id).messages);
}

function sampleBranch() {
	const b = new BranchBuilder();
	b.user("read the config"); // e1
	b.assistant("", [
		{ id: "c1", name: "read", args: { path: "a.ts" } },
		{ id: "c2", name: "read", args: { path: "b.ts" } },
	]); // e2
	b.result("c1", "SECRET-A contents"); // e3
	b.result("c2", "SECRET-B contents"); // e4
	b.assistant("both files read"); // e5
	b.user("now something else"); // e6
	b.assistant("ok"); // e7
	return b.entries;
}

describe("planWindow and editDrafts", () => {
	it("folds a chapter to a brief on its first entry and omits the rest; expanding restores exact bytes", () => {
		const branch = sampleBranch();
		const chapter = fold("chapter", entries("e1", "e2", "e3", "e4", "e5"));
		const folded = {
			lattice: lattice(chapter),
			expanded: new Set<string>(),
			briefOf: (r: FoldRecord) => r.brief,
			brandNoun: "active-context",
		};
		const drafts = editDrafts(branch, planWindow(branch, folded));
		expect(drafts.map((d) => [d.targetId, d.replacement === null ? "omit" : "replace"])).toEqual([
			["e1", "replace"],
			["e2", "omit"],
			["e3", "omit"],
			["e4", "omit"],
			["e5", "omit"],
		]);
		const afterFold = persist(branch, drafts);
		const window = messagesOf(afterFold);
		expect(window).toContain("brief of chapter");
		expect(window).not.toContain("SECRET-A");
		// The preview of unpersisted drafts is byte-identical to what Pi projects once they are persisted.
		expect(canonicalJson(projectWithDrafts(branch, drafts))).toBe(window);
		// Nothing more to do once persisted.
		expect(editDrafts(afterFold, planWindow(afterFold, folded))).toEqual([]);

		const expandedInput = { ...folded, expanded: new Set([chapter.id]) };
		const restore = editDrafts(afterFold, planWindow(afterFold, expandedInput));
		// Every edited entry gets its exact original content back (latest edit per target wins).
		expect(restore.map((d) => d.targetId)).toEqual(["e1", "e2", "e3", "e4", "e5"]);
		expect(restore.every((d) => d.replacement !== null)).toBe(true);
		const afterExpand = persist(afterFold, restore);
		expect(messagesOf(afterExpand)).toBe(messagesOf(branch));
	});

	it("keeps call/result shells of a folded tool batch and puts the brief on the first result", () => {
		const branch = sampleBranch();
		const batch = fold("tool-batch", entries("e2", "e3", "e4"));
		const input = { lattice: lattice(batch), expanded: new Set<string>(), briefOf: () => "two reads", brandNoun: "ac" };
		const after = persist(branch, editDrafts(branch, planWindow(branch, input)));
		const messages = buildSessionProjection(after, after.at(-1)?.id).messages;
		expect(messages.map((m) => m.role)).toEqual([
			"user",
			"assistant",
			"toolResult",
			"toolResult",
			"assistant",
			"user",
			"assistant",
		]);
		const text = canonicalJson(messages);
		expect(text).toContain("two reads");
		expect(text).toContain('"name":"read"');
		expect(text).not.toContain("SECRET");
	});

	it("shows nested folds outside-in", () => {
		const batch = fold("tool-batch", entries("e2", "e3", "e4"));
		const chapter = fold("chapter", [...entries("e1"), { type: "fold", foldId: batch.id }, ...entries("e5")]);
		const l = lattice(batch, chapter);
		expect(visibleCollapsedFolds(l, new Set())).toEqual([chapter.id]);
		expect(visibleCollapsedFolds(l, new Set([chapter.id]))).toEqual([batch.id]);
		expect(visibleCollapsedFolds(l, new Set([chapter.id, batch.id]))).toEqual([]);
	});

	it("leaves a fold raw when its entries are not on this branch", () => {
		const branch = sampleBranch();
		const elsewhere = fold("chapter", entries("e1", "zz"));
		const plan = planWindow(branch, {
			lattice: lattice(elsewhere),
			expanded: new Set(),
			briefOf: (r) => r.brief,
			brandNoun: "ac",
		});
		expect(plan.visible).toEqual([]);
		expect(editDrafts(branch, plan)).toEqual([]);
	});

	it("never restores an edit it did not make (Pi omits a failed reply before overflow recovery)", () => {
		const branch = sampleBranch();
		const hostEdited = persist(branch, [{ type: "context_edit", targetId: "e7", replacement: null }]);
		const plan = planWindow(hostEdited, {
			lattice: lattice(),
			expanded: new Set(),
			briefOf: (r) => r.brief,
			brandNoun: "ac",
		});
		expect(editDrafts(hostEdited, plan, { managed: (id) => ["e1", "e2"].includes(id) })).toEqual([]);
		// Without the scope every edited entry counts as ours, which is what the runtime must never do.
		expect(editDrafts(hostEdited, plan).map((d) => d.targetId)).toEqual(["e7"]);
	});

	it("moves the brief to the first entry a compaction kept, so the kept part of a fold keeps its brief", () => {
		const branch = sampleBranch();
		const chapter = fold("chapter", entries("e1", "e2", "e3", "e4", "e5"));
		const input = {
			lattice: lattice(chapter),
			expanded: new Set<string>(),
			briefOf: (r: FoldRecord) => r.brief,
			brandNoun: "ac",
		};
		const folded = persist(branch, editDrafts(branch, planWindow(branch, input)));
		// A compaction that keeps the window from e5 on (a closure-safe cut): e1, which carried the brief, is gone.
		const compacted = [
			...folded,
			{
				type: "compaction",
				summary: "S",
				firstKeptEntryId: "e5",
				tokensBefore: 1,
				id: "c1",
				parentId: folded.at(-1)?.id ?? null,
				timestamp: "t",
			} as SessionEntry,
		];
		const shown = new Set(buildSessionProjection(compacted, "c1").entries.map((e) => e.sourceEntry.id));
		const inWindow = (id: string) => shown.has(id);
		const drafts = editDrafts(compacted, planWindow(compacted, { ...input, inWindow }), { inWindow });
		expect(drafts.map((d) => [d.targetId, d.replacement === null ? "omit" : "replace"])).toEqual([["e5", "replace"]]);
		const after = persist(compacted, drafts);
		const text = canonicalJson(buildSessionProjection(after, after.at(-1)?.id).messages);
		expect(text.split("brief of chapter").length - 1).toBe(1);
		expect(text).not.toContain("SECRET");
	});
});

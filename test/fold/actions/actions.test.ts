import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import {
	expandFold,
	foldSpan,
	protectEntries,
	reboundary,
	rebrief,
	refoldFold,
	unmarkFold,
} from "../../../src/fold/actions/actions.ts";
import { peekFold } from "../../../src/fold/actions/peek.ts";
import type { FoldWorkspace } from "../../../src/fold/engine/workspace.ts";
import { analyzeBranch } from "../../../src/fold/lattice/units.ts";
import { resolveOptions } from "../../../src/fold/options.ts";
import { emptyFoldState, liveLattice } from "../../../src/fold/state/state.ts";
import { createMemoryFoldStore, type FoldStore } from "../../../src/fold/store/store.ts";
import { canonicalBytes, canonicalSpanBytes, sha256Hex } from "../../../src/session/canonical.ts";
import { FoldBranch, threeTurns } from "../../fixtures/fold.ts";
import { foldWorkspace } from "../../fixtures/workspace.ts";

/** A workspace over a branch; `apply` folds outcomes into the state the way the runtime does. */
function workspace(entries: SessionEntry[], store: FoldStore = createMemoryFoldStore()) {
	return foldWorkspace(entries, { store });
}

describe("fold action", () => {
	it("folds a single tool batch named by its call id, and falls back to a chapter for a wider span", async () => {
		const { entries, ids } = threeTurns();
		const { ws, apply } = workspace(entries);
		const batch = await foldSpan(ws(), ["c1"]);
		expect(batch).toMatchObject({ ok: true, change: { causes: ["commit"] } });
		expect(batch.change?.records[0]).toMatchObject({
			kind: "tool-batch",
			parts: [{ entryId: ids.read }, { entryId: ids.readResult }],
		});
		apply(batch);
		const chapter = await foldSpan(ws(), [ids.ask1, ids.reply1]);
		expect(chapter.ok).toBe(true);
		const record = chapter.change?.records[0];
		expect(record?.kind).toBe("chapter");
		// The earlier batch fold nests inside the chapter.
		expect(record?.parts).toContainEqual({ type: "fold", foldId: batch.foldId });
	});

	it("consolidates two adjacent folds named by fold id", async () => {
		const { entries, ids } = threeTurns();
		const { ws, apply } = workspace(entries);
		const first = await foldSpan(ws(), [ids.ask1, ids.reply1]);
		apply(first);
		const second = await foldSpan(ws(), [ids.ask2, ids.reply2]);
		apply(second);
		const joined = await foldSpan(ws(), [first.foldId ?? "", second.foldId ?? ""]);
		expect(joined.change?.records[0]?.kind).toBe("consolidation");
	});

	it("refuses protected entries, the fresh tail and unknown ids, naming the next step", async () => {
		const { entries, ids } = threeTurns();
		const { ws, apply } = workspace(entries);
		const guarded = protectEntries(ws(), ["c1"], true);
		expect(guarded.change?.causes).toEqual([]);
		expect(guarded.text).toMatch(/changes nothing already in the window/);
		apply(guarded);
		const refused = await foldSpan(ws(), [ids.ask1, ids.reply1]);
		expect(refused).toMatchObject({ ok: false, code: "protected" });
		expect(refused.change).toBeUndefined();
		expect(refused.text).toMatch(/Unprotect/);
		const tail = await foldSpan(
			{ ...ws(), freshTailStart: entries.indexOf(entries.find((e) => e.id === ids.ask2) as SessionEntry) },
			[ids.ask2, ids.reply2],
		);
		expect(tail).toMatchObject({ ok: false, code: "fresh-tail" });
		expect(await foldSpan(ws(), ["nope"])).toMatchObject({ ok: false, code: "unknown-id" });
		expect(protectEntries(ws(), ["f-000000000000"], true)).toMatchObject({ ok: false, code: "unknown-id" });
	});
});

describe("peek, expand and refold", () => {
	it("peeks slices of the exact source and rebuilds a missing blob from the session log", async () => {
		const { entries, ids } = threeTurns();
		const store = createMemoryFoldStore();
		const { ws, apply } = workspace(entries, store);
		const folded = await foldSpan(ws(), [ids.ask2, ids.reply2]);
		apply(folded);
		const id = folded.foldId ?? "";
		const source = new TextDecoder().decode(canonicalSpanBytes(entries.slice(5, 11)));
		const whole = await peekFold(ws(), id);
		expect(whole.text.endsWith(source)).toBe(true);
		expect(whole.text).toMatch(/This is the end of the source/);
		const slice = await peekFold(ws(), id, 10, 20);
		expect(slice.text.endsWith(source.slice(10, 30))).toBe(true);
		expect(slice.text).toContain('"offset":30');
		expect(slice.change).toBeUndefined();

		// A fresh store (blob gone): the log still hashes to the record, so peek rebuilds it.
		const { ws: ws2 } = workspace(entries, createMemoryFoldStore());
		const again = await peekFold({ ...ws2(), state: ws().state, lattice: ws().lattice }, id);
		expect(again.ok).toBe(true);
	});

	it("refuses to expand when the session log no longer matches the fold", async () => {
		const { entries, ids } = threeTurns();
		const { ws, apply } = workspace(entries);
		const folded = await foldSpan(ws(), [ids.ask2, ids.reply2]);
		apply(folded);
		const edited = entries.map((entry) =>
			entry.id === ids.testResult && entry.type === "message"
				? { ...entry, message: { ...entry.message, content: [{ type: "text" as const, text: "tampered" }] } }
				: entry,
		) as SessionEntry[];
		const result = await expandFold({ ...ws(), branch: edited, view: analyzeBranch(edited) }, folded.foldId ?? "");
		expect(result).toMatchObject({ ok: false, code: "integrity" });
		expect(result.text).toMatch(/stays folded/);
	});

	it("expands outside-in, refolds, and refuses what makes no sense", async () => {
		const { entries, ids } = threeTurns();
		const { ws, apply } = workspace(entries);
		const batch = await foldSpan(ws(), ["c1"]);
		apply(batch);
		const chapter = await foldSpan(ws(), [ids.ask1, ids.reply1]);
		apply(chapter);
		const inner = batch.foldId ?? "";
		const outer = chapter.foldId ?? "";
		expect(await expandFold(ws(), inner)).toMatchObject({ ok: false, code: "inside-fold" });
		const opened = await expandFold(ws(), outer);
		expect(opened).toMatchObject({ ok: true, change: { ops: [{ op: "expand", id: outer }], causes: ["expand"] } });
		expect(opened.text).toContain(`Nested folds stay collapsed: ${inner}`);
		apply(opened);
		expect(await expandFold(ws(), outer)).toMatchObject({ ok: false, code: "already-expanded" });
		expect(refoldFold(ws(), inner)).toMatchObject({ ok: false, code: "not-expanded" });
		expect(refoldFold(ws(), outer)).toMatchObject({ ok: true, change: { causes: ["refold"] } });
	});
});

describe("rebrief and reboundary", () => {
	it("rebriefs with the agent's text and keeps the recall calls", async () => {
		const { entries, ids } = threeTurns();
		const { ws, apply } = workspace(entries);
		const folded = await foldSpan(ws(), [ids.ask1, ids.reply1]);
		apply(folded);
		const id = folded.foldId ?? "";
		const result = rebrief(ws(), id, "Read src/config.ts: x = 1.");
		expect(result.change?.causes).toEqual(["rebrief"]);
		const op = result.change?.ops[0];
		expect(op?.op === "rebrief" && op.brief.startsWith("Read src/config.ts: x = 1.")).toBe(true);
		expect(op?.op === "rebrief" && op.brief.includes(`{"action":"expand","id":"${id}"}`)).toBe(true);
	});

	it("dissolves a mis-cut fold and folds the span meant; refuses an identical re-cut", async () => {
		const { entries, ids } = threeTurns();
		const { ws, apply } = workspace(entries);
		const folded = await foldSpan(ws(), [ids.ask1, ids.reply1]);
		apply(folded);
		const id = folded.foldId ?? "";
		expect(await reboundary(ws(), id, [ids.ask1, ids.reply1])).toMatchObject({ ok: false, code: "same-span" });
		const recut = await reboundary(ws(), id, [ids.ask1, ids.reply2]);
		expect(recut).toMatchObject({ ok: true, change: { ops: [{ op: "dissolve", id }], causes: ["reboundary"] } });
		apply(recut);
		expect([...liveLattice(recut.ok ? ws().state : emptyFoldState()).folds.keys()]).toEqual([recut.foldId]);
		const onlyDissolve = await reboundary(ws(), recut.foldId ?? "");
		expect(onlyDissolve.text).toMatch(/show raw/);
	});
});

describe("peek by entry address", () => {
	it("reads one session entry's canonical bytes by id or @id, and refuses an operation it does not have", async () => {
		const { entries, ids } = threeTurns();
		const { ws } = workspace(entries);
		const entry = entries.find((e) => e.id === ids.testResult) as SessionEntry;
		const exact = new TextDecoder().decode(canonicalBytes(entry));
		for (const id of [ids.testResult, `@${ids.testResult}`, `${ids.testResult}/call:c3`]) {
			const result = await peekFold(ws(), id);
			expect(result.ok).toBe(true);
			expect(result.text.endsWith(exact)).toBe(true);
			expect(result.text).toContain(`sha256 ${sha256Hex(exact)}`);
			expect(result.change).toBeUndefined();
		}
		expect(await peekFold(ws(), "@nothere")).toMatchObject({ ok: false, code: "unknown-id" });
		// An operation address names one nested fabric_exec operation; a plain tool result has none.
		expect(await peekFold(ws(), `${ids.testResult}/0`)).toMatchObject({ ok: false, code: "unknown-operation" });
		expect(await peekFold(ws(), `${ids.testResult}/phase:1`)).toMatchObject({ ok: false, code: "unknown-operation" });
	});
});

describe("epoch scheduling", () => {
	/** A branch whose first batch is followed by more than the immediate tail. */
	function longBranch() {
		const b = new FoldBranch();
		b.user("go");
		b.tool({ id: "old", name: "bash" }, "o".repeat(8_000));
		b.tool({ id: "next", name: "bash" }, "n".repeat(12_000));
		b.tool({ id: "tail", name: "bash" }, "t".repeat(400));
		return b.entries;
	}

	function epochWorkspace(entries: SessionEntry[]) {
		const base = workspace(entries);
		const ws = (): FoldWorkspace => ({ ...base.ws(), options: resolveOptions({ foldScheduling: "epoch" }) });
		return { ...base, ws };
	}

	it("records a pending mark that changes nothing in the window, stores the source, and unmark withdraws it", async () => {
		const { ws, apply, state, store } = epochWorkspace(longBranch());
		const marked = await foldSpan(ws(), ["old"]);
		expect(marked).toMatchObject({ ok: true, change: { records: [], causes: [] } });
		expect(marked.text).toMatch(/^Marked tool-batch f-[0-9a-f]{12} .*next commit.*unmark/);
		apply(marked);
		expect(state().data.marks.map((mark) => [mark.record.id, mark.origin])).toEqual([[marked.foldId, "agent"]]);
		expect(state().records).toEqual([]);
		expect(await store.has(state().data.marks[0]?.record.sourceHash ?? "")).toBe(true);
		expect((await foldSpan(ws(), ["old"])).text).toMatch(/^Already marked/);
		const withdrawn = unmarkFold(ws(), marked.foldId ?? "");
		apply(withdrawn);
		expect(state().data.marks).toEqual([]);
		expect(unmarkFold(ws(), marked.foldId ?? "")).toMatchObject({ ok: false, code: "not-marked" });
	});

	it("applies a fold in the last few messages at once, as immediate mode would", async () => {
		const { ws } = epochWorkspace(longBranch());
		const near = await foldSpan(ws(), ["next"]);
		expect(near).toMatchObject({ ok: true, change: { causes: ["commit"] } });
		expect(near.change?.records).toHaveLength(1);
	});
});

describe("peek of a consolidation", () => {
	it("names each child fold with the steps it covers, so the agent can peek the one it needs", async () => {
		const b = new FoldBranch();
		b.user("go");
		b.tool({ id: "s1", name: "repo_stage", args: { stage: 1 } }, "one");
		b.tool({ id: "s2", name: "repo_stage", args: { stage: 2 } }, "two");
		b.assistant("done");
		const { ws, apply } = workspace(b.entries);
		const first = await foldSpan(ws(), ["s1"]);
		apply(first);
		const second = await foldSpan(ws(), ["s2"]);
		apply(second);
		const joined = await foldSpan(ws(), [first.foldId ?? "", second.foldId ?? ""]);
		apply(joined);
		const peek = await peekFold(ws(), joined.foldId ?? "", 0, 10);
		expect(peek.text).toContain(`Child folds, each peekable: ${first.foldId} (stage 1), ${second.foldId} (stage 2).`);
	});
});

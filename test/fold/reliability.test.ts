/**
 * Regression tests for state that must not poison a session and a store
 * that must not lie: each case is a break found by attacking the runtime.
 */

import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { expandFold, foldSpan } from "../../src/fold/actions/actions.ts";
import { peekFold } from "../../src/fold/actions/peek.ts";
import { BRIEF_MAX_CHARS } from "../../src/fold/briefs/brief.ts";
import { type FoldRecord, foldIdDigest } from "../../src/fold/lattice/records.ts";
import { rebuildState, stateEntryTypes } from "../../src/fold/state/state.ts";
import { createMemoryFoldStore, type FoldStore } from "../../src/fold/store/store.ts";
import { blobRelativePath, foldStoreDir, openFileFoldStore } from "../../src/fold/store/store-file.ts";
import { sha256Hex } from "../../src/session/canonical.ts";
import { FoldBranch } from "../fixtures/fold.ts";
import { foldWorkspace } from "../fixtures/workspace.ts";

const PREFIX = "pi-fold-active-context";
const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
	const dir = mkdtempSync(join(tmpdir(), "pi-fold-reliability-"));
	dirs.push(dir);
	return dir;
};

/** Two finished batches with distinct sources. */
function twoBatches(): SessionEntry[] {
	const b = new FoldBranch();
	b.user("go");
	b.tool({ id: "a", name: "bash", args: { command: "make a" } }, "alpha output");
	b.tool({ id: "b", name: "bash", args: { command: "make b" } }, "bravo output");
	b.assistant("done");
	return b.entries;
}

function workspace(entries: SessionEntry[], store: FoldStore) {
	return foldWorkspace(entries, { store, options: { foldScheduling: "immediate" }, cwd: "/" });
}

/** Persisted custom entries as Pi would append them after `entries`. */
function asEntries(drafts: { customType: string; data: unknown }[]): SessionEntry[] {
	return drafts.map((draft, index) => ({
		type: "custom",
		customType: draft.customType,
		data: draft.data,
		id: `x${index}`,
		parentId: null,
		timestamp: "2026-01-01T00:00:00.000Z",
	}));
}

function goodRecord(seed: string): FoldRecord {
	const sourceHash = foldIdDigest("chapter", seed);
	return {
		id: `f-${foldIdDigest("chapter", sourceHash).slice(0, 12)}`,
		kind: "chapter",
		parts: [{ type: "entry", entryId: seed }],
		brief: "ok",
		sourceHash,
		sizes: { sourceBytes: 1, briefBytes: 2, entryCount: 1 },
		provenance: { origin: "agent", briefGenerator: "deterministic" },
	};
}

describe("persisted state is checked all the way down", () => {
	const types = stateEntryTypes(PREFIX);

	it("skips a record with a null part, names it, and keeps the good record beside it", () => {
		const good = goodRecord("e1");
		const bad = { ...goodRecord("e2"), parts: [null] };
		const state = rebuildState(
			asEntries([
				{ customType: types.fold, data: { v: 1, record: bad } },
				{ customType: types.fold, data: { v: 1, record: good } },
			]),
			PREFIX,
		);
		expect(state.records.map((r) => r.id)).toEqual([good.id]);
		expect(state.skipped).toBe(1);
		expect(state.skippedDetails).toEqual([{ entryId: "x0", reason: "malformed fold record" }]);
	});

	it("drops only the baselines of a checkpoint whose baselines are null, keeping its protections", () => {
		const state = rebuildState(
			asEntries([
				{
					customType: types.checkpoint,
					data: {
						v: 1,
						state: { expanded: [], protected: ["e1"], briefs: {}, dissolved: [], marks: [], baselines: null },
					},
				},
			]),
			PREFIX,
		);
		expect(state.data.protected).toEqual(["e1"]);
		expect(state.data.baselines).toEqual({});
		expect(state.skipped).toBe(1);
	});

	it("skips a baseline op whose content is not editable content", () => {
		const state = rebuildState(
			asEntries([
				{ customType: types.delta, data: { v: 1, ops: [{ op: "baseline", entries: { e1: { content: 5 } } }] } },
			]),
			PREFIX,
		);
		expect(state.data.baselines).toEqual({});
		expect(state.skippedDetails?.[0]?.reason).toBe("malformed op 0");
	});

	it("caps a persisted 5 MB brief like a fresh one, recall calls intact", () => {
		const huge = { ...goodRecord("e1"), brief: "x".repeat(5_000_000) };
		const state = rebuildState(asEntries([{ customType: types.fold, data: { v: 1, record: huge } }]), PREFIX);
		const brief = state.records[0]?.brief ?? "";
		expect(brief.length).toBeLessThanOrEqual(BRIEF_MAX_CHARS);
		expect(brief).toContain(`{"action":"peek","id":"${huge.id}"}`);
	});
});

describe("the store cannot lie", () => {
	it("refuses to serve another fold's blob under a forged record, naming the mismatch", async () => {
		const entries = twoBatches();
		const { ws, apply, state, setState } = workspace(entries, createMemoryFoldStore());
		const a = await foldSpan(ws(), ["a"]);
		apply(a);
		const b = await foldSpan(ws(), ["b"]);
		apply(b);
		const recordA = state().records.find((r) => r.id === a.foldId);
		const recordB = state().records.find((r) => r.id === b.foldId);
		if (!recordA || !recordB) throw new Error("folds missing");
		// Forge: fold a's span, pointing at fold b's (intact) blob, its id re-derived so it looks consistent.
		const id = `f-${foldIdDigest("chapter", recordB.sourceHash).slice(0, 12)}`;
		const forged: FoldRecord = { ...recordA, id, kind: "chapter", sourceHash: recordB.sourceHash };
		setState({ ...state(), records: [...state().records.filter((r) => r.id !== recordA.id), forged] });
		const peek = await peekFold(ws(), id);
		expect(peek).toMatchObject({ ok: false, code: "integrity" });
		expect(peek.text).toMatch(/hashes correctly but .* not this fold's source/);
		const expand = await expandFold(ws(), id);
		expect(expand).toMatchObject({ ok: false, code: "integrity" });
	});

	it("refuses a forged blob of the same entry ids and length under a re-pointed record: peek and expand alike", async () => {
		const entries = twoBatches();
		const store = createMemoryFoldStore();
		const { ws, apply, state, setState } = workspace(entries, store);
		const a = await foldSpan(ws(), ["a"]);
		apply(a);
		const record = state().records.find((r) => r.id === a.foldId);
		if (!record) throw new Error("fold missing");
		const blob = (await store.read(record.sourceHash)).text;
		const forgedBlob = blob.replace("alpha output", "omega output");
		expect(forgedBlob.length).toBe(blob.length);
		const forgedBytes = new TextEncoder().encode(forgedBlob);
		const forgedHash = sha256Hex(forgedBytes);
		await store.put(forgedBytes, { expectedHash: forgedHash });
		const id = `f-${foldIdDigest("tool-batch", forgedHash).slice(0, 12)}`;
		const forged: FoldRecord = { ...record, id, sourceHash: forgedHash };
		setState({ ...state(), records: [forged] });
		const peek = await peekFold(ws(), id);
		expect(peek).toMatchObject({ ok: false, code: "integrity" });
		expect(peek.text).not.toContain("omega output");
		expect(peek.text).toMatch(
			/stored source and the log disagree: the log was edited after folding, or the record was re-pointed/,
		);
		expect(await expandFold(ws(), id)).toMatchObject({ ok: false, code: "integrity" });
	});

	it("serves a missing blob from the verified log bytes when the store is read-only", async () => {
		const entries = twoBatches();
		const writable = workspace(entries, createMemoryFoldStore());
		const folded = await foldSpan(writable.ws(), ["a"]);
		writable.apply(folded);
		const readOnly = workspace(entries, createMemoryFoldStore({ readOnly: true }));
		readOnly.setState(writable.state());
		const peek = await peekFold(readOnly.ws(), folded.foldId ?? "");
		expect(peek.ok).toBe(true);
		expect(peek.text).toContain("alpha output");
	});

	it("never blocks on a FIFO at a blob path: the read fails with an io error", async () => {
		const sessionDir = tempDir();
		const store = openFileFoldStore({ sessionDir, sessionId: "s1" });
		const hash = "a".repeat(64);
		const path = join(foldStoreDir(sessionDir, "s1"), blobRelativePath(hash));
		mkdirSync(join(path, ".."), { recursive: true });
		execFileSync("mkfifo", [path]);
		await expect(store.read(hash)).rejects.toMatchObject({ code: "io" });
		await expect(store.has(hash)).rejects.toMatchObject({ code: "io" });
	});

	it("removes a temp blob a killed writer left behind, and keeps a live writer's", async () => {
		const sessionDir = tempDir();
		const shard = join(foldStoreDir(sessionDir, "s1"), "sha256", "ab");
		mkdirSync(shard, { recursive: true });
		const dead = `.${"a".repeat(64)}.999999999.1.tmp`;
		const live = `.${"b".repeat(64)}.${process.pid}.1.tmp`;
		writeFileSync(join(shard, dead), "partial");
		writeFileSync(join(shard, live), "in flight");
		chmodSync(join(shard, dead), 0o600);
		const store = openFileFoldStore({ sessionDir, sessionId: "s1" });
		await store.has("c".repeat(64));
		await store.read("c".repeat(64)).catch(() => undefined);
		expect(readdirSync(shard).sort()).toEqual([live]);
	});

	it("says plainly when a fold's source is held in memory only because the session id cannot name a store", async () => {
		expect(() => foldStoreDir("/tmp", "a..b")).toThrow(/not a valid session id/);
		const store = createMemoryFoldStore({ noDurableStore: "session id a..b cannot name a store" });
		const { ws } = workspace(twoBatches(), store);
		const folded = await foldSpan(ws(), ["a"]);
		expect(folded.text).toMatch(
			/held in memory \(no durable store: session id a\.\.b cannot name a store\); it is lost when Pi exits/,
		);
	});
});

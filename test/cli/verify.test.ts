/**
 * `pi-fold verify` and `pi-fold gc` on a session file real Pi wrote (SDK
 * harness, faux model, `persist: true`, pi-fold registered): clean as
 * written, then one copy per tamper class, each detected and named.
 */

import {
	chmodSync,
	cpSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	symlinkSync,
	utimesSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.ts";
import type { VerifyOutcome } from "../../src/cli/verify.ts";
import { foldIdDigest } from "../../src/fold/lattice/records.ts";
import { registerPiFold } from "../../src/index.ts";
import { sha256Hex } from "../../src/session/canonical.ts";
import { callTools, createSdkHarness, reply, type SdkHarness, toolCall } from "../harness/sdk.ts";

const PREFIX = "pi-fold-active-context";
const SECRET = "VERIFY-CONTENT-7c3d";

type Line = Record<string, unknown> & { id?: string; type: string; customType?: string; data?: unknown };
interface FoldLine {
	index: number;
	record: { id: string; kind: string; sourceHash: string; parts: unknown[] };
}

let harness: SdkHarness;
/** The session file and its store as Pi and pi-fold wrote them. */
let original: { dir: string; file: string; storeDir: string };

beforeAll(async () => {
	harness = await createSdkHarness({
		extensions: [
			(pi: ExtensionAPI) => {
				registerPiFold(pi);
			},
		],
		tools: ["read", "active_context"],
		persist: true,
	});
	writeFileSync(join(harness.cwd, "d.txt"), `${SECRET}\n`);
	writeFileSync(join(harness.cwd, "e.txt"), "second file\n");
	harness.enqueue(callTools([toolCall("read", { path: "d.txt" }, "call_d")]), reply("Read d."));
	await harness.run("Read d.txt.");
	harness.enqueue(
		callTools([toolCall("active_context", { action: "fold", ids: ["call_d"] }, "call_fold")]),
		reply("Folded."),
	);
	await harness.run("Fold that read.");
	harness.enqueue(callTools([toolCall("read", { path: "e.txt" }, "call_e")]), reply("Read e."));
	await harness.run("Read e.txt.");
	harness.enqueue(reply("Welcome."));
	await harness.run("Thanks.");
	await harness.run("/fold-context");
	harness.enqueue(reply("Noted."));
	await harness.run("Go on.");
	const file = readdirSync(harness.sessionDir).find((name) => name.endsWith(".jsonl"));
	const storeDir = readdirSync(harness.sessionDir).find((name) => name.endsWith(".pi-fold"));
	if (!file || !storeDir) throw new Error("Pi wrote no session file or no fold store");
	original = { dir: harness.sessionDir, file, storeDir };
}, 60_000);

/** Temp copies made by the tests, removed at the end. */
const copies: string[] = [];

afterAll(async () => {
	await harness?.dispose();
	for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

/** A fresh copy of the session file and its store, for one tamper. */
function copy(): { path: string; storeDir: string; lines: Line[]; write: (lines: Line[]) => void } {
	const dir = mkdtempSync(join(tmpdir(), "pi-fold-verify-"));
	copies.push(dir);
	cpSync(join(original.dir, original.file), join(dir, original.file));
	cpSync(join(original.dir, original.storeDir), join(dir, original.storeDir), { recursive: true });
	const path = join(dir, original.file);
	const lines = readFileSync(path, "utf8")
		.trimEnd()
		.split("\n")
		.map((line) => JSON.parse(line) as Line);
	const write = (next: Line[]) => writeFileSync(path, `${next.map((line) => JSON.stringify(line)).join("\n")}\n`);
	return { path, storeDir: join(dir, original.storeDir), lines, write };
}

function foldLines(lines: readonly Line[]): FoldLine[] {
	return lines.flatMap((line, index) =>
		line.customType === `${PREFIX}:fold`
			? [{ index, record: (line.data as { record: FoldLine["record"] }).record }]
			: [],
	);
}

function blobPath(storeDir: string, hash: string): string {
	return join(storeDir, "sha256", hash.slice(0, 2), hash);
}

/** Blob files of a store (not part lists), as paths under `sha256/`. */
const blobsIn = (storeDir: string) =>
	(readdirSync(join(storeDir, "sha256"), { recursive: true }) as string[]).filter((name) => /[0-9a-f]{64}$/.test(name));

/** Append an entry at the end of the branch. */
function append(lines: Line[], body: Record<string, unknown> & { type: string }): Line[] {
	const last = lines.at(-1);
	return [
		...lines,
		{ id: `t${lines.length}`, parentId: last?.id ?? null, timestamp: "2026-01-01T00:00:00.000Z", ...body },
	];
}

async function verify(path: string): Promise<{ code: number; text: string; json: VerifyOutcome }> {
	const human = await runCli(["verify", path]);
	const machine = await runCli(["verify", "--json", path]);
	expect(machine.code).toBe(human.code);
	return { code: human.code, text: human.stdout, json: JSON.parse(machine.stdout) as VerifyOutcome };
}

const kinds = (outcome: VerifyOutcome) => outcome.defects.map((defect) => defect.kind);

describe("pi-fold verify", () => {
	it("passes the session as Pi and pi-fold wrote it", async () => {
		const { path, lines } = copy();
		expect(foldLines(lines).map((fold) => fold.record.kind)).toEqual(["tool-batch", "chapter"]);
		const { code, text, json } = await verify(path);
		expect(json.defects).toEqual([]);
		expect(code).toBe(0);
		// The chapter holds the batch: its source is stored by reference (its runs and the batch's blob).
		expect(json.counts).toMatchObject({ folds: 2, blobsChecked: 4, rebuildable: 0, stateEntries: 2, branches: 1 });
		expect(json.counts.checked).toEqual({ folds: 2, marks: 0, parts: 2, named: 0, evidence: 0 });
		expect(text).toMatch(/folds\s+2 \(0 rebuildable from the log\)/);
		expect(text).toMatch(
			/checked\s+4 blobs: 2 folds, 0 pending marks, 2 consolidation parts, 0 named by unreadable lines; 0 evidence artifacts/,
		);
		expect(text).toMatch(/Result: clean, no defects\.\n$/);
	});

	it("the chapter's source is a part list naming the batch's blob: the batch's bytes are stored once", async () => {
		const { storeDir, lines } = copy();
		const [batch, chapter] = foldLines(lines);
		if (!batch || !chapter) throw new Error("two folds expected");
		expect(() => readFileSync(blobPath(storeDir, chapter.record.sourceHash))).toThrow(/ENOENT/);
		const list = readFileSync(`${blobPath(storeDir, chapter.record.sourceHash)}.parts`, "utf8");
		const parts = [...list.matchAll(/^part ([0-9a-f]{64}) (\d+)$/gm)].map((match) => match[1]);
		expect(parts).toHaveLength(3);
		expect(parts[1]).toBe(batch.record.sourceHash);
		const stored = blobsIn(storeDir).map((name) => readFileSync(join(storeDir, "sha256", name)));
		const secretCopies = stored.filter((bytes) => bytes.includes(SECRET)).length;
		expect(secretCopies).toBe(1);
	});

	it("an edited blob byte: blob-corrupt, exit 1, with where and the next step", async () => {
		const { path, storeDir, lines } = copy();
		const [batch] = foldLines(lines);
		const blob = blobPath(storeDir, batch?.record.sourceHash ?? "");
		const bytes = readFileSync(blob);
		bytes[5] = (bytes[5] ?? 0) ^ 0x01;
		chmodSync(blob, 0o644);
		writeFileSync(blob, bytes);
		const { code, text, json } = await verify(path);
		expect(code).toBe(1);
		// The batch's blob is also a part of the chapter's source: both folds fail to read, each named.
		expect(kinds(json)).toEqual(["blob-corrupt", "blob-corrupt"]);
		const [, chapter] = foldLines(lines);
		expect(json.defects[0]).toMatchObject({ where: batch?.record.id, line: (batch?.index ?? 0) + 1 });
		expect(json.defects[1]).toMatchObject({ where: chapter?.record.id });
		expect(json.defects[1]?.problem).toContain(`as a part of fold source ${chapter?.record.sourceHash}`);
		expect(json.defects[0]?.problem).toContain("the log still holds its exact bytes");
		expect(text).toMatch(
			/Defects: 2\n\s+1\. blob-corrupt at f-[0-9a-f]{12} \(line \d+\)\n.*fails SHA-256 verification.*\n\s+next: move the corrupt blob aside/,
		);
		expect(text).toMatch(/Result: 2 defects\./);
	});

	it("a flipped byte in a run of the chapter's parts: blob-corrupt at the chapter, naming the part", async () => {
		const { path, storeDir, lines } = copy();
		const [batch, chapter] = foldLines(lines);
		const list = readFileSync(`${blobPath(storeDir, chapter?.record.sourceHash ?? "")}.parts`, "utf8");
		const run = /^part ([0-9a-f]{64}) /m.exec(list)?.[1] ?? "";
		expect(run).not.toBe(batch?.record.sourceHash);
		const blob = blobPath(storeDir, run);
		const bytes = readFileSync(blob);
		bytes[3] = (bytes[3] ?? 0) ^ 0x01;
		chmodSync(blob, 0o644);
		writeFileSync(blob, bytes);
		const { code, json } = await verify(path);
		expect(code).toBe(1);
		expect(json.defects.map((d) => [d.kind, d.where])).toEqual([["blob-corrupt", chapter?.record.id]]);
		expect(json.defects[0]?.problem).toContain(run);
	});

	it("a deleted blob is rebuildable from the log, not a defect", async () => {
		const { path, storeDir, lines } = copy();
		const [batch] = foldLines(lines);
		rmSync(blobPath(storeDir, batch?.record.sourceHash ?? ""));
		const { code, text, json } = await verify(path);
		expect(json.defects).toEqual([]);
		expect(code).toBe(0);
		// The chapter's source lacks that part too; the log still holds both.
		const [, chapter] = foldLines(lines);
		expect(json.rebuildable).toEqual([batch?.record.id, chapter?.record.id]);
		expect(text).toMatch(/Rebuildable \(not defects\): 2 folds whose blob is missing/);
	});

	it("a record whose sourceHash names another fold's blob (id re-derived): blob-mismatch naming that fold", async () => {
		const { path, lines, write } = copy();
		const [batch, chapter] = foldLines(lines);
		if (!batch || !chapter) throw new Error("two folds expected");
		const forgedHash = batch.record.sourceHash;
		const forgedId = `f-${foldIdDigest("chapter", forgedHash).slice(0, 12)}`;
		const forged = { ...chapter.record, sourceHash: forgedHash, id: forgedId };
		lines[chapter.index] = { ...(lines[chapter.index] as Line), data: { v: 1, record: forged } };
		write(lines);
		const { code, json } = await verify(path);
		expect(code).toBe(1);
		expect(kinds(json)).toEqual(["blob-mismatch"]);
		expect(json.defects[0]?.where).toBe(forgedId);
		expect(json.defects[0]?.problem).toContain(`(the blob of fold ${batch.record.id})`);
	});

	it("a record re-pointed at a forged blob of the same entries and length: source-conflict, naming the re-pointing", async () => {
		const { path, storeDir, lines, write } = copy();
		const [batch] = foldLines(lines);
		if (!batch) throw new Error("a fold expected");
		const blob = readFileSync(blobPath(storeDir, batch.record.sourceHash), "utf8");
		expect(blob).toContain(SECRET);
		const forgedBlob = blob.replace(SECRET, "FORGED-CONTENT-0000");
		expect(forgedBlob.length).toBe(blob.length);
		const forgedHash = sha256Hex(new TextEncoder().encode(forgedBlob));
		mkdirSync(dirname(blobPath(storeDir, forgedHash)), { recursive: true });
		writeFileSync(blobPath(storeDir, forgedHash), forgedBlob);
		const forgedId = `f-${foldIdDigest("tool-batch", forgedHash).slice(0, 12)}`;
		const forged = { ...batch.record, sourceHash: forgedHash, id: forgedId };
		lines[batch.index] = { ...(lines[batch.index] as Line), data: { v: 1, record: forged } };
		write(lines);
		const { code, json } = await verify(path);
		expect(code).toBe(1);
		const conflict = json.defects.find((defect) => defect.where === forgedId);
		expect(conflict?.kind).toBe("source-conflict");
		expect(conflict?.problem).toContain(`also holds blob ${batch.record.sourceHash} of the log's current bytes`);
	});

	it("a dissolved fold is no longer referenced: verify does not read it, gc removes what only it named (issue 28.2)", async () => {
		const { path, storeDir, lines, write } = copy();
		const [batch, chapter] = foldLines(lines);
		if (!batch || !chapter) throw new Error("two folds expected");
		// Dissolve the chapter (what reboundary does): it folds nothing now; folding the span again writes its source again.
		const next = append(lines, {
			type: "custom",
			customType: `${PREFIX}:delta`,
			data: { v: 1, ops: [{ op: "dissolve", id: chapter.record.id }] },
		});
		write(next);
		const clean = await verify(path);
		expect(clean.json.defects).toEqual([]);
		expect(clean.json.counts).toMatchObject({ folds: 1, blobsChecked: 1 });
		const dry = JSON.parse((await runCli(["gc", "--json", "--grace", "0", path])).stdout) as {
			unreferenced: { hash: string; form: string }[];
		};
		// The chapter's part list and its two runs; the batch's blob is still the batch's.
		expect(dry.unreferenced).toHaveLength(3);
		expect(dry.unreferenced.filter((file) => file.form === "parts").map((file) => file.hash)).toEqual([
			chapter.record.sourceHash,
		]);
		expect(dry.unreferenced.map((file) => file.hash)).not.toContain(batch.record.sourceHash);
		expect((await runCli(["gc", "--apply", "--grace", "0", path])).stdout).toMatch(/Removed 3 files/);
		expect(blobsIn(storeDir).map((name) => name.slice(-64))).toEqual([batch.record.sourceHash]);
		expect((await verify(path)).code).toBe(0);
	});

	it("a record with parts: [null]: unreadable-state at its entry; the fold that nests it is rejected", async () => {
		const { path, lines, write } = copy();
		const [batch, chapter] = foldLines(lines);
		const line = lines[batch?.index ?? 0] as Line;
		lines[batch?.index ?? 0] = { ...line, data: { v: 1, record: { ...batch?.record, parts: [null] } } };
		write(lines);
		const { code, json } = await verify(path);
		expect(code).toBe(1);
		expect(json.defects.map((d) => [d.kind, d.where])).toEqual([
			["unreadable-state", line.id],
			["rejected-record", chapter?.record.id],
		]);
		expect(json.defects[0]?.problem).toBe(`${PREFIX}:fold entry: malformed fold record`);
		expect(json.defects[1]?.problem).toMatch(/names a missing fold/);
	});

	it("a checkpoint with baselines: null: unreadable-state, baselines dropped", async () => {
		const { path, lines, write } = copy();
		const state = { expanded: [], protected: [], briefs: {}, dissolved: [], marks: [], baselines: null };
		const next = append(lines, { type: "custom", customType: `${PREFIX}:checkpoint`, data: { v: 1, state } });
		write(next);
		const { code, json } = await verify(path);
		expect(code).toBe(1);
		expect(json.defects.map((d) => [d.kind, d.where, d.problem, d.line])).toEqual([
			[
				"unreadable-state",
				next.at(-1)?.id,
				`${PREFIX}:checkpoint entry: malformed baselines in checkpoint (dropped)`,
				next.length,
			],
		]);
	});

	it("a delta with a bad baseline: unreadable-state naming the op", async () => {
		const { path, lines, write } = copy();
		const target = lines.find((line) => line.type === "message")?.id ?? "";
		const ops = [{ op: "baseline", entries: { [target]: { content: 5 } } }];
		const next = append(lines, { type: "custom", customType: `${PREFIX}:delta`, data: { v: 1, ops } });
		write(next);
		const { json } = await verify(path);
		expect(json.defects.map((d) => [d.kind, d.problem])).toEqual([
			["unreadable-state", `${PREFIX}:delta entry: malformed op 0`],
		]);
	});

	it("a Fabric compaction with broken details: compaction-details with the first bad field", async () => {
		const { path, lines, write } = copy();
		const kept = lines.at(-1)?.id;
		const details = { compactor: "fabric", version: 2, sections: "not a list" };
		const next = append(lines, { type: "compaction", summary: "s", firstKeptEntryId: kept, tokensBefore: 10, details });
		write(next);
		const { code, json } = await verify(path);
		expect(code).toBe(1);
		expect(json.counts.compactions).toBe(1);
		expect(kinds(json)).toEqual(["compaction-details"]);
		expect(json.defects[0]?.problem).toMatch(/^compaction details unreadable: /);
	});

	it("a fold whose entries were edited in the log: source-conflict for every fold over them", async () => {
		const { path, lines, write } = copy();
		const result = lines.find((line) => JSON.stringify(line).includes(SECRET) && line.type === "message");
		if (!result) throw new Error("no entry holds the secret");
		lines[lines.indexOf(result)] = JSON.parse(JSON.stringify(result).replaceAll(SECRET, "EDITED")) as Line;
		write(lines);
		const { code, text, json } = await verify(path);
		expect(code).toBe(1);
		expect(kinds(json)).toEqual(["source-conflict", "source-conflict"]);
		expect(text).toMatch(/the log was edited after folding, or the record was re-pointed at a forged blob\n/);
	});

	it("a skipped line is a defect of the file, named with its line number", async () => {
		const { path } = copy();
		writeFileSync(path, `${readFileSync(path, "utf8")}{"type":"message","message":null,"id":"zz","parentId":null}\n`);
		const { code, json } = await verify(path);
		expect(code).toBe(1);
		expect(json.defects[0]).toMatchObject({ kind: "bad-line", where: `line ${json.counts.lines}` });
	});

	it("needs a path, and explains itself", async () => {
		expect(await runCli(["verify"])).toMatchObject({ code: 2 });
		expect((await runCli(["verify", "--apply", "x"])).stderr).toMatch(/unknown option "--apply" for verify/);
		expect((await runCli(["help", "verify"])).stdout).toMatch(/Usage: pi-fold verify/);
		expect((await runCli(["help"])).stdout).toMatch(/verify \[--json\] <session\.jsonl>[^\n]*\n\s+gc \[--apply\]/);
	});
});

describe("a session id the store cannot use", () => {
	it("verify says there is no store; gc names the id and exits 1", async () => {
		const { path, lines, write } = copy();
		write([{ ...(lines[0] as Line), id: "a..b" }, ...lines.slice(1)]);
		const verified = await runCli(["verify", path]);
		expect(verified.stdout).toMatch(/store\s+none: "a\.\.b" is not a valid session id/);
		const collected = await runCli(["gc", path]);
		expect(collected).toMatchObject({ code: 1, stdout: "" });
		expect(collected.stderr).toMatch(/^pi-fold: "a\.\.b" is not a valid session id .*Use the session's own id\.\n$/);
	});
});

describe("pi-fold gc", () => {
	/** A blob no fold references, stored as the runtime stores blobs. */
	function strayBlob(storeDir: string): { hash: string; path: string } {
		const bytes = Buffer.from("stray source bytes\n");
		const hash = sha256Hex(bytes);
		const path = blobPath(storeDir, hash);
		mkdirSync(dirname(path), { recursive: true });
		writeFileSync(path, bytes, { flag: "wx" });
		return { hash, path };
	}

	it("lists an unreferenced blob in a dry run, removes it only with --apply, never a referenced one", async () => {
		const { path, storeDir, lines } = copy();
		const referenced = foldLines(lines).map((fold) => fold.record.sourceHash);
		const { hash, path: stray } = strayBlob(storeDir);
		// Written within the grace period: a running Pi may be about to name it.
		const recent = await runCli(["gc", "--apply", path]);
		expect(recent.stdout).toMatch(/recent\s+1 unreferenced, kept: modified within the last 60 minutes/);
		expect(recent.stdout).toMatch(/Nothing to remove\./);
		expect(readFileSync(stray, "utf8")).toBe("stray source bytes\n");
		const hourAgo = new Date(Date.now() - 61 * 60_000);
		utimesSync(stray, hourAgo, hourAgo);

		const dry = await runCli(["gc", path]);
		expect(dry.code).toBe(0);
		expect(dry.stdout).toMatch(/store\s+4 blobs and 1 part list, .* \(\d+\.\d% of the session\)/);
		expect(dry.stdout).toMatch(/referenced\s+4 \(never removed\)/);
		expect(dry.stdout).toContain(`    ${hash}  19 B`);
		expect(dry.stdout).toMatch(/Dry run: nothing removed\. Run "pi-fold gc --apply /);
		expect(readFileSync(stray, "utf8")).toBe("stray source bytes\n");

		const json = JSON.parse((await runCli(["gc", "--json", path])).stdout) as { unreferenced: { hash: string }[] };
		expect(json.unreferenced.map((blob) => blob.hash)).toEqual([hash]);

		const applied = await runCli(["gc", "--apply", path]);
		expect(applied.stdout).toMatch(/Removed 1 file, 19 B freed\./);
		const [batchHash, chapterHash] = referenced;
		const left = blobsIn(storeDir).map((name) => name.slice(-64));
		expect(left).toHaveLength(3);
		expect(left).toContain(batchHash);
		expect(left).not.toContain(hash);
		expect(readFileSync(`${blobPath(storeDir, chapterHash ?? "")}.parts`, "utf8")).toMatch(/^pi-fold-source-parts 1\n/);
		expect((await runCli(["verify", path])).code).toBe(0);
		expect((await runCli(["gc", path])).stdout).toMatch(/Nothing to remove\./);
	});

	it("keeps what a recent part list names, and removes nothing while a reachable list is damaged", async () => {
		const { path, storeDir, lines } = copy();
		const [, chapter] = foldLines(lines);
		const listPath = `${blobPath(storeDir, chapter?.record.sourceHash ?? "")}.parts`;
		const text = readFileSync(listPath, "utf8");
		chmodSync(listPath, 0o644);
		writeFileSync(
			listPath,
			text.replace(/^part ([0-9a-f])/m, (_, digit: string) => `part ${digit === "0" ? "1" : "0"}`),
		);
		const { hash } = strayBlob(storeDir);
		const hourAgo = new Date(Date.now() - 61 * 60_000);
		utimesSync(blobPath(storeDir, hash), hourAgo, hourAgo);
		const applied = await runCli(["gc", "--apply", path]);
		expect(applied.stdout).toMatch(/damaged list\s+[0-9a-f]{64}: .*check line does not match/);
		expect(applied.stdout).toMatch(/Nothing removed: 1 part list cannot be read/);
		expect(readFileSync(blobPath(storeDir, hash), "utf8")).toBe("stray source bytes\n");
		const verified = await verify(path);
		expect(kinds(verified.json)).toEqual(["blob-corrupt"]);
		expect(verified.json.defects[0]?.problem).toMatch(/part list .* cannot be trusted: its check line does not match/);
	});

	it("never follows a symbolic link out of the store: a linked shard or blob is listed, not walked or removed", async () => {
		const { path, storeDir } = copy();
		const outside = mkdtempSync(join(tmpdir(), "pi-fold-outside-"));
		copies.push(outside);
		// Blob hashes come from the session's random ids, so any shard name may already be real:
		// link one the store does not have.
		const shards = readdirSync(join(storeDir, "sha256"));
		const linkedShard =
			Array.from({ length: 256 }, (_, i) => (255 - i).toString(16).padStart(2, "0")).find(
				(name) => !shards.includes(name),
			) ?? "";
		// A file outside the store named like a blob of the linked shard, and another for a linked blob.
		const victimName = `${linkedShard}${"0".repeat(62)}`;
		const victim = join(outside, victimName);
		writeFileSync(victim, "not pi-fold's\n");
		const linkedTarget = join(outside, "target.txt");
		writeFileSync(linkedTarget, "also not pi-fold's\n");
		symlinkSync(outside, join(storeDir, "sha256", linkedShard));
		const realShard = shards[0] ?? "";
		const linkedBlob = join(storeDir, "sha256", realShard, `${realShard}${"1".repeat(62)}`);
		symlinkSync(linkedTarget, linkedBlob);

		const applied = await runCli(["gc", "--apply", path]);
		expect(applied.code, applied.stderr).toBe(0);
		expect(readFileSync(victim, "utf8")).toBe("not pi-fold's\n");
		expect(readFileSync(linkedTarget, "utf8")).toBe("also not pi-fold's\n");
		expect(applied.stdout).not.toContain(victimName);
		expect(applied.stdout).toMatch(/links\s+2, never followed or removed/);
		expect(applied.stdout).toContain(join(storeDir, "sha256", linkedShard));
		expect(applied.stdout).toContain(linkedBlob);
		expect(applied.stdout).toMatch(/Nothing to remove\./);
	});

	it("keeps a blob a malformed record still names, and refuses --apply while lines are unreadable", async () => {
		const { path, storeDir, lines, write } = copy();
		const [batch] = foldLines(lines);
		const line = lines[batch?.index ?? 0] as Line;
		lines[batch?.index ?? 0] = { ...line, data: { v: 1, record: { ...batch?.record, parts: [null] } } };
		write(lines);
		await runCli(["gc", "--apply", "--grace", "0", path]);
		expect(blobsIn(storeDir)).toHaveLength(3);

		writeFileSync(path, `${readFileSync(path, "utf8")}not json\n`);
		const refused = await runCli(["gc", "--apply", path]);
		expect(refused.code).toBe(1);
		expect(refused.stderr).toMatch(
			/1 line of .* could not be read \(line \d+\); .*gc removed nothing\. Run "pi-fold verify/,
		);
	});
});

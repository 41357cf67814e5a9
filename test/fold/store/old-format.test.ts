/**
 * A session and fold store written before part lists (pi-fold main ad33d61:
 * every fold's source one whole blob, the consolidation's repeating its
 * chapters' bytes) read by this version: peek (offsets included), search,
 * verify and gc work on the old form as written, and a source rebuilt from
 * the log is stored in the new form beside the old blobs it references.
 *
 * The fixture was written by running the old tree's code (a throwaway
 * SDK-harness test against `git archive ad33d61`: a read folded as a tool
 * batch, two chapters, the agent consolidating them, immediate scheduling),
 * then packing the session file and every store file as JSON.
 */

import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../../src/cli/main.ts";
import type { VerifyOutcome } from "../../../src/cli/verify.ts";
import { peekFold } from "../../../src/fold/actions/peek.ts";
import { searchWorkspace } from "../../../src/fold/actions/search-action.ts";
import { readSource } from "../../../src/fold/actions/source-read.ts";
import type { FoldWorkspace } from "../../../src/fold/engine/workspace.ts";
import { analyzeBranch } from "../../../src/fold/lattice/units.ts";
import { resolveOptions } from "../../../src/fold/options.ts";
import { liveLattice, rebuildState } from "../../../src/fold/state/state.ts";
import { branchTo, leafIds } from "../../../src/fold/store/referenced.ts";
import { openFileFoldStore } from "../../../src/fold/store/store-file.ts";
import { loadSessionFile } from "../../../src/session/load.ts";

const FIXTURE = join(import.meta.dirname, "../../fixtures/stores/old-format-consolidation.json.gz");
const PREFIX = "pi-fold-active-context";

interface Fixture {
	sessionFile: string;
	session: string;
	store: Record<string, string>;
}

const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The old session and store unpacked into a temp session directory. */
function unpack(): { path: string; storeDir: string } {
	const fixture = JSON.parse(gunzipSync(readFileSync(FIXTURE)).toString("utf8")) as Fixture;
	const dir = mkdtempSync(join(tmpdir(), "pi-fold-old-store-"));
	dirs.push(dir);
	const path = join(dir, fixture.sessionFile);
	writeFileSync(path, fixture.session);
	const id = (JSON.parse(fixture.session.split("\n")[0] ?? "{}") as { id: string }).id;
	const storeDir = join(dir, `${id}.pi-fold`);
	for (const [name, base64] of Object.entries(fixture.store)) {
		const file = join(storeDir, name);
		mkdirSync(dirname(file), { recursive: true });
		writeFileSync(file, Buffer.from(base64, "base64"), { mode: 0o444 });
	}
	return { path, storeDir };
}

function workspace(path: string): FoldWorkspace {
	const session = loadSessionFile(path);
	const [leaf] = leafIds(session.entries);
	const branch = branchTo(session.entries, leaf ?? "");
	const state = rebuildState(branch, PREFIX);
	return {
		branch,
		view: analyzeBranch(branch),
		state,
		lattice: liveLattice(state),
		store: openFileFoldStore({ sessionDir: dirname(path), sessionId: session.header.id }),
		options: resolveOptions({}),
		cwd: "/work",
		freshTailStart: branch.length,
		origin: "agent",
	};
}

const consolidationOf = (ws: FoldWorkspace) =>
	[...ws.lattice.folds.values()].find((record) => record.kind === "consolidation");

describe("a store written before part lists", () => {
	it("verifies clean and keeps every blob: four whole blobs, no part list", async () => {
		const { path } = unpack();
		const verified = JSON.parse((await runCli(["verify", "--json", path])).stdout) as VerifyOutcome;
		expect(verified.defects).toEqual([]);
		expect(verified.counts.checked).toMatchObject({ folds: 4, parts: 0 });
		const gc = await runCli(["gc", "--grace", "0", path]);
		expect(gc.stdout).toMatch(/store\s+4 blobs and 0 part lists/);
		expect(gc.stdout).toMatch(/Nothing to remove\./);
	});

	it("peeks every fold, slices by offset and searches, from the old whole blobs", async () => {
		const { path, storeDir } = unpack();
		const ws = workspace(path);
		const consolidation = consolidationOf(ws);
		if (!consolidation) throw new Error("the fixture holds a consolidation");
		const whole = readFileSync(
			join(storeDir, "sha256", consolidation.sourceHash.slice(0, 2), consolidation.sourceHash),
		);
		for (const id of ws.lattice.folds.keys()) expect((await peekFold(ws, id)).ok).toBe(true);
		expect((await peekFold(ws, consolidation.id)).text).toContain("OLD-STORE-D-41c2");
		const page = await peekFold(ws, consolidation.id, 100, 400);
		expect(page.text).toContain(`Bytes 100–500 of ${whole.length}`);
		expect(page.text.endsWith(whole.subarray(100, 500).toString("utf8"))).toBe(true);
		const found = await searchWorkspace(ws, { artifacts: async () => [] }, { query: "OLD-STORE-D-41c2" });
		if (!("result" in found)) throw new Error(found.text);
		expect(found.result.hits.length).toBeGreaterThan(0);
		expect(found.result.hits.every((hit) => ws.lattice.folds.has(hit.id))).toBe(true);
	});

	it("rebuilds a lost whole blob from the log as a part list over the old chapter blobs", async () => {
		const { path, storeDir } = unpack();
		const ws = workspace(path);
		const consolidation = consolidationOf(ws);
		if (!consolidation) throw new Error("the fixture holds a consolidation");
		const blob = join(storeDir, "sha256", consolidation.sourceHash.slice(0, 2), consolidation.sourceHash);
		const before = readFileSync(blob);
		chmodSync(blob, 0o644);
		rmSync(blob);
		const read = await readSource(ws, consolidation);
		expect("ok" in read).toBe(false);
		if ("ok" in read) return;
		expect(Buffer.from(read.bytes).equals(before)).toBe(true);
		const list = readFileSync(`${blob}.parts`, "utf8");
		const children = [...ws.lattice.folds.values()].filter((record) => record.kind === "chapter");
		for (const chapter of children) expect(list).toContain(`part ${chapter.sourceHash} ${chapter.sizes.sourceBytes}`);
		const verified = JSON.parse((await runCli(["verify", "--json", path])).stdout) as VerifyOutcome;
		expect(verified.defects).toEqual([]);
		expect(verified.counts.checked).toMatchObject({ folds: 4 });
		expect((await runCli(["gc", "--grace", "0", path])).stdout).toMatch(/Nothing to remove\./);
	});
});

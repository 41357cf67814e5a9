/**
 * What one consolidation costs as the session grows (issue 28.4): on a
 * folded fixture whose store holds every fold's source (written as the
 * runtime writes it), the ladder's long-session commit, a consolidation of
 * every visible fold outside the raw tail, is planned (its source, hash
 * and brief) and its source stored. Reports the time of each step, the
 * bytes the store wrote against the bytes of the source, and the session
 * file beside the store.
 */

import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { FoldEngine } from "../../src/fold/engine/engine.ts";
import { consolidateFolds } from "../../src/fold/lattice/lattice.ts";
import { indexLattice } from "../../src/fold/lattice/lattice-index.ts";
import { isRefusal } from "../../src/fold/lattice/records.ts";
import type { ResolvedOptions } from "../../src/fold/options.ts";
import { putFoldSource } from "../../src/fold/store/store.ts";
import { openFileFoldStore } from "../../src/fold/store/store-file.ts";
import type { FoldedFixture } from "./fixtures.ts";

export interface CommitCost {
	generatedEntries: number;
	branchEntries: number;
	/** The session file's bytes (JSONL of the branch) and the store's after every fold's source was written. */
	sessionBytes: number;
	storeBytes: number;
	/** The consolidation: folds it joins, leaf entries, source bytes. */
	joined: number;
	leafEntries: number;
	sourceBytes: number;
	planMs: number;
	storeMs: number;
	/** Bytes the store wrote for it (runs and the part list; a whole blob would be `sourceBytes`). */
	writtenBytes: number;
}

/** Bytes of every file under `dir`. */
function treeBytes(dir: string): number {
	let bytes = 0;
	for (const name of readdirSync(dir, { recursive: true }) as string[]) {
		const info = statSync(join(dir, name));
		if (info.isFile()) bytes += info.size;
	}
	return bytes;
}

function sessionFileBytes(branch: readonly SessionEntry[]): number {
	return branch.reduce((sum, entry) => sum + Buffer.byteLength(JSON.stringify(entry)) + 1, 0);
}

/**
 * The session file's bytes (JSONL of the branch) and the fold store's once
 * every fold's source is written as the runtime writes it (issue 28: the
 * store reported beside the session at every scale). The store is written
 * to a temporary directory and removed.
 */
export async function storeBeside(fixture: FoldedFixture): Promise<{ sessionBytes: number; storeBytes: number }> {
	const dir = mkdtempSync(join(tmpdir(), "pi-fold-store-size-"));
	try {
		await fixture.writeStore(openFileFoldStore({ sessionDir: dir, sessionId: "store-size" }));
		return { sessionBytes: sessionFileBytes(fixture.branch), storeBytes: treeBytes(dir) };
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

export async function timeCommitCost(
	fixture: FoldedFixture,
	options: ResolvedOptions,
	cwd: string,
): Promise<CommitCost> {
	const dir = mkdtempSync(join(tmpdir(), "pi-fold-commit-cost-"));
	try {
		const store = openFileFoldStore({ sessionDir: dir, sessionId: "commit-cost" });
		await fixture.writeStore(store);
		const storeBytes = treeBytes(dir);
		const engine = new FoldEngine(options);
		engine.reset(fixture.branch);
		const lattice = engine.lattice();
		const view = engine.view;
		const roots = indexLattice(lattice, view).roots.map((root) => root.id);
		const start = performance.now();
		const made = consolidateFolds(lattice, view, roots, { origin: "ladder", cwd });
		const planMs = performance.now() - start;
		if (isRefusal(made)) throw new Error(`commit cost: consolidation refused: ${made.message}`);
		const storeStart = performance.now();
		const put = await putFoldSource(store, made.record.sourceHash, made.plan);
		const storeMs = performance.now() - storeStart;
		return {
			generatedEntries: fixture.generatedEntries,
			branchEntries: fixture.branch.length,
			sessionBytes: sessionFileBytes(fixture.branch),
			storeBytes,
			joined: roots.length,
			leafEntries: made.record.sizes.entryCount,
			sourceBytes: made.record.sizes.sourceBytes,
			planMs,
			storeMs,
			writtenBytes: put.written,
		};
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

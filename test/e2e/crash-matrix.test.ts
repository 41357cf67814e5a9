/**
 * Crash points by construction. A real Pi 1.6.0 session (SDK, faux model)
 * runs staged work in a small window, so the runtime commits several times,
 * then compacts with the deterministic compactor and works on; then the
 * session file is cut at every line, and in the middle of every
 * line (a kill mid-write), and each cut is opened with Pi's own session
 * manager as a resume would. After every cut: no dangling fold, every fold
 * record belongs to a commit that landed whole (never a mix of a commit's
 * folds), every edit the runtime would send is one Pi accepts, every fold is
 * exact to its SHA-256, and no message entry before the cut is lost.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ExtensionAPI, SessionManager } from "@earendil-works/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { editDrafts, planWindow } from "../../src/fold/engine/materialize.ts";
import { checkLattice } from "../../src/fold/lattice/lattice-view.ts";
import { analyzeBranch } from "../../src/fold/lattice/units.ts";
import { liveLattice, rebuildState, stateEntryTypes } from "../../src/fold/state/state.ts";
import { registerPiFold } from "../../src/index.ts";
import { persistDrafts } from "../fixtures/fold.ts";
import { registerStageTool } from "../fixtures/stage-tool.ts";
import { callTools, createSdkHarness, reply, toolCall } from "../harness/sdk.ts";

const PREFIX = "pi-fold-active-context";
const STAGES = 20;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A persisted session in which the ladder committed more than once. */
async function committedSession(): Promise<string[]> {
	const extension = (pi: ExtensionAPI) => {
		registerPiFold(pi);
		registerStageTool(pi, (stage) => `stage ${stage}\n${`stage ${stage} detail line\n`.repeat(900)}`);
	};
	const harness = await createSdkHarness({
		extensions: [extension],
		tools: ["repo_stage", "active_context"],
		contextWindow: 40_000,
		persist: true,
		// Manual compaction only, keeping a short raw tail so there is something to summarize.
		settings: { compaction: { enabled: false, reserveTokens: 4_096, keepRecentTokens: 2_000 } },
	});
	cleanups.push(() => harness.dispose());
	for (let k = 1; k <= STAGES; k++) harness.enqueue(callTools([toolCall("repo_stage", { stage: k }, `st-${k}`)]));
	harness.enqueue(reply("done"));
	await harness.run("Run the stages.");
	// A deterministic compaction after the folds, so the cuts cross a compaction line too; then one more turn.
	await harness.session.compact();
	harness.enqueue(callTools([toolCall("repo_stage", { stage: STAGES + 1 }, `st-${STAGES + 1}`)]), reply("after"));
	await harness.run("One more stage.");
	const file = harness.session.sessionManager.getSessionFile();
	if (!file) throw new Error("session not persisted");
	return readFileSync(file, "utf8").split("\n").filter(Boolean);
}

interface Parsed {
	type?: string;
	id?: string;
	customType?: string;
	data?: { records?: { id: string }[]; record?: { id: string } };
}

/** Fold ids a cut may hold: those of whole fold and commit lines before it. */
function landedFoldIds(lines: readonly string[]): Set<string> {
	const types = stateEntryTypes(PREFIX);
	const ids = new Set<string>();
	for (const line of lines) {
		const entry = JSON.parse(line) as Parsed;
		if (entry.customType === types.commit) for (const record of entry.data?.records ?? []) ids.add(record.id);
		if (entry.customType === types.fold && entry.data?.record) ids.add(entry.data.record.id);
	}
	return ids;
}

describe("crash matrix", () => {
	it("every cut of the session file resumes to a whole-commit state with exact folds and no lost entry", async () => {
		const lines = await committedSession();
		const commits = lines.filter((line) => line.includes(`"${stateEntryTypes(PREFIX).commit}"`));
		expect(commits.length).toBeGreaterThan(1);
		const compactions = lines.filter((line) => line.includes('"type":"compaction"'));
		expect(compactions).toHaveLength(1);
		// The summary names the folds it covers, so they stay one peek away after the compaction.
		expect(compactions[0]).toContain("Folds in this range keep their exact source one peek away");
		const dir = mkdtempSync(join(tmpdir(), "pi-fold-crash-"));
		cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
		let cuts = 0;
		for (let k = 1; k <= lines.length; k++) {
			const whole = lines.slice(0, k);
			const last = lines[k - 1] ?? "";
			// The cut after line k, and a kill in the middle of writing line k (Pi itself refuses a half-written header).
			const texts = [`${whole.join("\n")}\n`];
			if (k > 1) texts.push([...whole.slice(0, -1), last.slice(0, last.length >> 1)].join("\n"));
			for (const text of texts) {
				const complete = text.endsWith("\n") ? whole : whole.slice(0, -1);
				const file = join(dir, `cut-${cuts++}.jsonl`);
				writeFileSync(file, text);
				const manager = SessionManager.open(file, dir);
				const branch = manager.getBranch();
				const state = rebuildState(branch, PREFIX);
				const lattice = liveLattice(state);
				const view = analyzeBranch(branch);
				expect(checkLattice(lattice, view, { verifySources: true }), `cut ${cuts}`).toEqual([]);
				expect(new Set(lattice.folds.keys()), `cut ${cuts}`).toEqual(landedFoldIds(complete));
				const plan = planWindow(branch, {
					lattice,
					expanded: new Set(state.data.expanded),
					brandNoun: "active-context",
				});
				persistDrafts(branch, editDrafts(branch, plan));
				const onBranch = new Set(branch.map((entry) => entry.id));
				for (const line of complete.slice(1)) {
					const entry = JSON.parse(line) as Parsed;
					if (entry.type === "message") expect(onBranch.has(entry.id ?? ""), `cut ${cuts}: ${entry.id}`).toBe(true);
				}
			}
		}
		expect(cuts).toBe(2 * lines.length - 1);
	});
});

/**
 * The first turn after a resume goes without pi-fold's `turn_end` boundary
 * (src/fold/pi/boundary-listeners.ts: Pi projects the whole branch around
 * every boundary handler, ~0.4 s a turn at 50,000 entries), unless something
 * changes during it. In real Pi: an agent's fold in that first turn is still
 * made durable at that turn's end, before the next reply.
 */

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { BranchBuilder, sessionHeader } from "../fixtures/session.ts";
import { callTools, type LoopbackProvider, say, startLoopbackProvider } from "../harness/loopback-provider.ts";
import { createPiSandbox, type PiSandbox, readSessionFile, runPrint } from "../harness/pi-cli.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Three turns with a large read each: ids of the first turn's first and last entries. */
function sessionFile(sandbox: PiSandbox): { path: string; first: string; last: string } {
	const b = new BranchBuilder();
	const notes = "A line of project notes.\n".repeat(400);
	let first = "";
	let last = "";
	for (let turn = 1; turn <= 3; turn++) {
		const user = b.user(`Turn ${turn}: read the notes.`);
		b.assistant("", [{ id: `read-${turn}`, name: "read", args: { path: "notes.md" } }]);
		b.result(`read-${turn}`, notes);
		const reply = b.assistant("Read.");
		if (turn === 1) [first, last] = [user, reply];
	}
	const path = join(sandbox.sessionDir, "resumed.jsonl");
	const lines = [sessionHeader({ cwd: sandbox.cwd }), ...b.entries].map((entry) => JSON.stringify(entry));
	writeFileSync(path, `${lines.join("\n")}\n`);
	return { path, first, last };
}

const isFoldRecord = (entry: SessionEntry) => entry.type === "custom" && String(entry.customType).endsWith(":fold");
const saysText = (text: string) => (entry: SessionEntry) =>
	entry.type === "message" &&
	entry.message.role === "assistant" &&
	JSON.stringify(entry.message.content).includes(text);

describe("the first turn after a resume", () => {
	it("makes an agent's fold durable at that turn's end, before the next reply", async () => {
		const provider: LoopbackProvider = await startLoopbackProvider({ script: [] });
		cleanups.push(() => provider.close());
		// Immediate scheduling: the fold lands at once (under epoch it would be a mark, persisted the same way).
		const sandbox = createPiSandbox({
			baseUrl: provider.baseUrl,
			settings: { piFold: { foldScheduling: "immediate" } },
		});
		cleanups.push(() => sandbox.dispose());
		writeFileSync(join(sandbox.cwd, "notes.md"), "A line of project notes.\n".repeat(400));
		const { path, first, last } = sessionFile(sandbox);
		provider.enqueue(
			callTools([{ id: "fold-1", name: "active_context", arguments: { action: "fold", ids: [first, last] } }]),
			say("Folded the first turn."),
		);
		// Print mode: no interface builds the branch at the start, so the first request goes out unbuilt (quiet).
		const run = await runPrint(sandbox, ["--session", path, "--", "Fold the first turn."]);
		expect(run.code, run.stderr).toBe(0);
		expect(run.stderr).not.toContain("Extension error");
		const entries = readSessionFile(path) as unknown as SessionEntry[];
		const record = entries.findIndex(isFoldRecord);
		const reply = entries.findIndex(saysText("Folded the first turn."));
		expect(record).toBeGreaterThan(0);
		expect(reply).toBeGreaterThan(0);
		// Handed over at the tool turn's own boundary, not left to the next turn's.
		expect(record).toBeLessThan(reply);
		const edits = entries.flatMap((entry, index) => (entry.type === "context_edit" ? [index] : []));
		expect(edits.length).toBeGreaterThan(0);
		expect(Math.max(...edits)).toBeLessThan(reply);
		// The reply's request already showed the brief in place of the first turn.
		const request = JSON.stringify(provider.requests.at(-1)?.body ?? {});
		// Two of the three reads are left in it (the first turn's is behind its brief).
		expect(request.split("A line of project notes.").length - 1).toBe(800);
	});
});

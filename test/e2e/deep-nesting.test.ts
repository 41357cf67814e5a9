/**
 * Another extension's session data nested far deeper than any reader may
 * recurse (issue 18, item 10): a custom entry nested 100,000 levels in a
 * session file (JSON.parse reads it, so Pi loads it; JSON.stringify could
 * never write it, so it comes from another program). pi-fold must raise no
 * extension error on any request, fold a span holding it and compact past it.
 */

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BranchBuilder, sessionHeader } from "../fixtures/session.ts";
import { callTools, type LoopbackProvider, say, startLoopbackProvider } from "../harness/loopback-provider.ts";
import { createPiSandbox, type PiSandbox, readSessionFile } from "../harness/pi-cli.ts";
import { startRpc } from "../harness/pi-rpc.ts";

const DEPTH = 100_000;
const RPC_COMPACT_TIMEOUT_MS = 60_000;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Two turns with a large tool result each, and the deep custom entry between them; ids e1…e9. */
function sessionFile(sandbox: PiSandbox): { path: string; first: string; last: string } {
	const b = new BranchBuilder();
	const notes = "A line of project notes.\n".repeat(400);
	const first = b.user("Turn 1: read the notes.");
	b.assistant("", [{ id: "read-1", name: "read", args: { path: "notes.md" } }]);
	b.result("read-1", notes);
	b.assistant("Read.");
	b.custom("other-ext.deep", { placeholder: true });
	b.user("Turn 2: read them again.");
	b.assistant("", [{ id: "read-2", name: "read", args: { path: "notes.md" } }]);
	b.result("read-2", notes);
	const last = b.assistant("Read again.");
	const lines = [
		JSON.stringify(sessionHeader({ cwd: sandbox.cwd })),
		...b.entries.map((entry) => JSON.stringify(entry)),
	];
	// JSON text of the deep value, spliced in where the placeholder was.
	const deep = `${'{"next":'.repeat(DEPTH)}{"leaf":true}${"}".repeat(DEPTH)}`;
	const text = `${lines.join("\n").replace('{"placeholder":true}', deep)}\n`;
	const path = join(sandbox.sessionDir, "deep.jsonl");
	writeFileSync(path, text);
	return { path, first, last };
}

describe("session data nested 100,000 levels deep", () => {
	it("raises no extension error: requests, a fold over it and a compaction past it all work", async () => {
		const provider: LoopbackProvider = await startLoopbackProvider({ script: [] });
		cleanups.push(() => provider.close());
		const sandbox: PiSandbox = createPiSandbox({
			baseUrl: provider.baseUrl,
			// Immediate scheduling: the fold must land at once whatever the system message Pi writes on
			// resume weighs (under epoch it counts toward the tail that decides between applying and marking).
			settings: { compaction: { keepRecentTokens: 200 }, piFold: { foldScheduling: "immediate" } },
		});
		cleanups.push(() => sandbox.dispose());
		writeFileSync(join(sandbox.cwd, "notes.md"), "A line of project notes.\n".repeat(400));
		const { path, first, last } = sessionFile(sandbox);

		const rpc = startRpc(sandbox, ["--session", path]);
		cleanups.push(async () => {
			await rpc.close();
		});
		// The agent folds turns 1 and 2, a span holding the deep entry.
		provider.enqueue(
			callTools([{ id: "fold-1", name: "active_context", arguments: { action: "fold", ids: [first, last] } }]),
			say("Folded."),
		);
		expect((await rpc.promptAndSettle("Turn 3: fold the first two turns.")).response.success).toBe(true);
		provider.enqueue(say("Still here."));
		expect((await rpc.promptAndSettle("Turn 4: anything left?")).response.success).toBe(true);
		const compacted = await rpc.send({ type: "compact" }, RPC_COMPACT_TIMEOUT_MS);
		provider.enqueue(say("After the compaction."));
		expect((await rpc.promptAndSettle("Turn 5: go on.")).response.success).toBe(true);

		expect(rpc.records.filter((record) => record.type === "extension_error")).toEqual([]);
		expect(rpc.stderr()).not.toContain("Extension error");
		expect(compacted.success, compacted.error).toBe(true);
		const entries = readSessionFile(path);
		// The fold landed (its record and its context edits), and its result said so.
		expect(entries.some((entry) => entry.type === "custom" && String(entry.customType).endsWith(":fold"))).toBe(true);
		expect(entries.some((entry) => entry.type === "context_edit")).toBe(true);
		const foldResult = entries.find(
			(entry) => entry.type === "message" && (entry.message as { toolCallId?: string }).toolCallId === "fold-1",
		);
		expect(JSON.stringify(foldResult)).toContain("is stored and verified");
		expect(entries.some((entry) => entry.type === "compaction")).toBe(true);
	});
});

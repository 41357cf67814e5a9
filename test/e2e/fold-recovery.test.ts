/**
 * A fold the model was told about whose records never landed (Pi stopped
 * between the tool result and the turn boundary): on resume the truth
 * follows as an appended notice, and nothing already sent is rewritten.
 */

import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { cleanupsAfterEach, loopbackSandbox } from "../harness/cli-setup.ts";
import { callTools, say } from "../harness/loopback-provider.ts";
import { onlySessionFile, runPrint } from "../harness/pi-cli.ts";

const cleanups = cleanupsAfterEach();
const setup = () => loopbackSandbox(cleanups, { "c.txt": "line of c\n".repeat(200) });

/**
 * Drop what the boundary after the fold persisted (pi-fold's custom entries
 * and the context edits), relinking the chain, as if Pi had been killed
 * right after the fold's tool result was written.
 */
function dropBoundary(file: string, lost = isBoundaryEntry): void {
	const lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
	const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
	const dropped = new Map<string, unknown>();
	const kept: Record<string, unknown>[] = [];
	for (const entry of entries) {
		if (lost(entry)) {
			dropped.set(String(entry.id), entry.parentId);
			continue;
		}
		let parent = entry.parentId;
		while (typeof parent === "string" && dropped.has(parent)) parent = dropped.get(parent);
		kept.push({ ...entry, ...(entry.type === "session" ? {} : { parentId: parent }) });
	}
	writeFileSync(file, `${kept.map((entry) => JSON.stringify(entry)).join("\n")}\n`);
}

function isBoundaryEntry(entry: Record<string, unknown>): boolean {
	return (
		entry.type === "context_edit" ||
		(entry.type === "custom" && String(entry.customType).startsWith("pi-fold-active-context:"))
	);
}

/** Two runs: the model reads c.txt, then folds that read (the fold lands at the second run's boundary). */
async function readThenFold() {
	const { provider, sandbox } = await setup();
	provider.enqueue(callTools([{ id: "call_read", name: "read", arguments: { path: "c.txt" } }]), say("Read it."));
	expect((await runPrint(sandbox, "Read c.txt.")).code).toBe(0);
	provider.enqueue(
		callTools([{ id: "call_fold", name: "active_context", arguments: { action: "fold", ids: ["call_read"] } }]),
		say("Folded."),
	);
	expect((await runPrint(sandbox, ["--continue", "--", "Fold that read."])).code).toBe(0);
	return { provider, sandbox };
}

describe("fold recovery", () => {
	it("appends a notice naming a fold that never landed, without rewriting the sent window", async () => {
		const { provider, sandbox } = await readThenFold();
		const foldResult = provider.requests.at(-1)?.body.messages.find((m) => m.tool_call_id === "call_fold");
		const foldId = /Folded tool-batch (f-[0-9a-f]{12})/.exec(JSON.stringify(foldResult?.content))?.[1];
		expect(foldId, JSON.stringify(foldResult)).toBeDefined();
		dropBoundary(onlySessionFile(sandbox));

		provider.enqueue(say("Noted."));
		expect((await runPrint(sandbox, ["--continue", "--", "Anything else?"])).code).toBe(0);
		const last = JSON.stringify(provider.requests.at(-1)?.body.messages);
		expect(last).toContain(`Fold ${foldId} announced earlier did not land`);
		expect(last).toContain("line of c");
		expect(provider.rejections).toEqual([]);

		// The notice is said once: a further resume does not repeat it.
		provider.enqueue(say("Again."));
		expect((await runPrint(sandbox, ["--continue", "--", "And now?"])).code).toBe(0);
		const again = JSON.stringify(provider.requests.at(-1)?.body.messages);
		expect(again.split("announced earlier did not land").length - 1).toBe(1);
	});

	it("a fold whose edits never landed reaches the window at the second request after resume, announced", async () => {
		const { provider, sandbox } = await readThenFold();
		// Pi stopped between the boundary's records and its edits: the fold state holds the fold, the window does not.
		dropBoundary(onlySessionFile(sandbox), (entry) => entry.type === "context_edit");

		// One run, two requests. The first goes as persisted (the engine builds the branch while the provider
		// answers); the second carries the fold. Strict append-only mode (on in every test) fails an unannounced rewrite.
		provider.enqueue(callTools([{ id: "call_ls", name: "ls", arguments: { path: "." } }]), say("Listed."));
		const sent = provider.requests.length;
		expect((await runPrint(sandbox, ["--continue", "--", "List the files."])).code).toBe(0);
		const [first, second] = provider.requests.slice(sent).map((request) => JSON.stringify(request.body.messages));
		expect(first).toContain("line of c\\nline of c");
		expect(second).not.toContain("line of c\\nline of c");
		expect(second).toMatch(/fold f-[0-9a-f]{12} · tool-batch/);
		expect(second).not.toContain("did not land");
		expect(provider.rejections).toEqual([]);
	});
});

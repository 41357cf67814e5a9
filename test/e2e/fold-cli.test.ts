/**
 * The fold runtime through the real Pi 1.6.0 CLI against the loopback
 * provider: a fold lands with no request a provider would reject, the
 * instrument attributes every rewrite, and resuming the session reproduces
 * the same window bytes.
 */

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { callTools, type LoopbackProvider, say, startLoopbackProvider } from "../harness/loopback-provider.ts";
import { createPiSandbox, onlySessionFile, type PiSandbox, readSessionFile, runPrint } from "../harness/pi-cli.ts";

const SECRET = "CHARLIE-CONTENT-55aa";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(): Promise<{ provider: LoopbackProvider; sandbox: PiSandbox }> {
	const provider = await startLoopbackProvider();
	cleanups.push(() => provider.close());
	const sandbox = createPiSandbox({ baseUrl: provider.baseUrl });
	cleanups.push(() => sandbox.dispose());
	writeFileSync(join(sandbox.cwd, "c.txt"), `${SECRET}\n`);
	return { provider, sandbox };
}

/** Messages of a recorded request without the system prompt, as canonical text. */
function conversation(provider: LoopbackProvider, index: number): unknown[] {
	return (provider.requests[index]?.body.messages ?? []).filter((m) => m.role !== "system");
}

describe("fold runtime through the CLI", () => {
	it("folds, reports zero unattributed rewrites, and resumes with the same window bytes", async () => {
		const { provider, sandbox } = await setup();
		provider.enqueue(
			callTools([{ id: "call_read", name: "read", arguments: { path: "c.txt" } }]),
			say("Read it."),
			callTools([{ id: "call_fold", name: "active_context", arguments: { action: "fold", ids: ["call_read"] } }]),
			say("Folded."),
		);
		const first = await runPrint(sandbox, "Read c.txt, then fold that read.");
		expect(first.code).toBe(0);
		// A second prompt in the same session: its request is the first to carry the committed fold.
		provider.enqueue(say("Still here."));
		const second = await runPrint(sandbox, ["--continue", "--", "Anything else?"]);
		expect(second.code).toBe(0);
		expect(provider.rejections).toEqual([]);

		const requests = provider.requests.length;
		expect(requests).toBe(5);
		const afterCommit = JSON.stringify(conversation(provider, 3));
		expect(JSON.stringify(conversation(provider, 1))).toContain(SECRET);
		expect(afterCommit).not.toContain(SECRET);
		expect(afterCommit).toContain("active_context");

		// Resume: the resumed request starts with exactly the window the last request of the first run sent.
		const resumed = conversation(provider, 4);
		const beforeResume = conversation(provider, 3);
		expect(JSON.stringify(resumed.slice(0, beforeResume.length))).toBe(JSON.stringify(beforeResume));

		// The session file holds the fold record and the context edits.
		const entries = readSessionFile(onlySessionFile(sandbox));
		expect(entries.some((e) => e.type === "custom" && e.customType === "pi-fold-active-context:fold")).toBe(true);
		expect(entries.filter((e) => e.type === "context_edit").length).toBeGreaterThan(0);

		// The instrument of a resumed run sees its requests as appends only.
		const status = await runPrint(sandbox, ["--continue", "--", "/context"]);
		expect(status.code).toBe(0);
		expect(status.stdout).toMatch(/Folds: 1 \(1 collapsed/);
		expect(status.stdout).toMatch(/0 unattributed/);
	});
});

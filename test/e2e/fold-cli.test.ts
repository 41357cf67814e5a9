/**
 * The fold runtime through the real Pi 1.6.0 CLI against the loopback
 * provider: a fold lands with no request a provider would reject, the
 * instrument attributes every rewrite, and resuming the session reproduces
 * the same window bytes.
 */

import { describe, expect, it } from "vitest";
import { cleanupsAfterEach, loopbackSandbox } from "../harness/cli-setup.ts";
import { callTools, type LoopbackProvider, type RecordedRequest, say } from "../harness/loopback-provider.ts";
import { onlySessionFile, type PiSandbox, readSessionFile, runPrint } from "../harness/pi-cli.ts";
import { type PiRpc, type RpcRecord, startRpc } from "../harness/pi-rpc.ts";

const SECRET = "CHARLIE-CONTENT-55aa";

const cleanups = cleanupsAfterEach();

// The first line shows in the brief (a brief names what a call returned); the secret is past it.
const setup = () => loopbackSandbox(cleanups, { "c.txt": `notes for c\n${SECRET}\n` });

/** One RPC process that reads c.txt, then folds that read through active_context. */
async function readThenFoldInRpc(provider: LoopbackProvider, sandbox: PiSandbox): Promise<PiRpc> {
	const rpc = startRpc(sandbox);
	cleanups.push(async () => {
		await rpc.close();
	});
	provider.enqueue(callTools([{ id: "call_read", name: "read", arguments: { path: "c.txt" } }]), say("Read it."));
	await rpc.promptAndSettle("Read c.txt.");
	provider.enqueue(
		callTools([{ id: "call_fold", name: "active_context", arguments: { action: "fold", ids: ["call_read"] } }]),
		say("Folded."),
	);
	await rpc.promptAndSettle("Fold that read.");
	return rpc;
}

/** Messages of a recorded request without the system prompt, as canonical text. */
function conversation(provider: LoopbackProvider, index: number): unknown[] {
	return (provider.requests[index]?.body.messages ?? []).filter((m) => m.role !== "system");
}

describe("fold runtime through the CLI", () => {
	it("folds, reports zero unattributed rewrites, and resumes with the same window bytes", async () => {
		const { provider, sandbox } = await setup();
		// One RPC process reads, folds and reports; a second process (print mode) resumes the session.
		const rpc = await readThenFoldInRpc(provider, sandbox);
		const shown = await rpc.promptAndSettle("/context");
		const notice = shown.records.find((r: RpcRecord) => r.type === "extension_ui_request" && r.method === "notify");
		const report = String(notice?.message ?? "");
		expect(report).toMatch(/Folds: 1 \(1 collapsed, holding/);
		expect(report).toMatch(/Requests: 4 \(2 appends, 0 identical, 1 rewrites, 0 unattributed, 0 by other extensions\)/);
		await rpc.close();
		provider.enqueue(say("Still here."));
		expect((await runPrint(sandbox, ["--continue", "--", "Anything else?"])).code).toBe(0);
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
	});

	it("expand and rebrief survive a restart: the resumed window shows exactly what the last run showed", async () => {
		const { provider, sandbox } = await setup();
		const foldIdOf = (request: RecordedRequest) =>
			/Folded tool-batch (f-[0-9a-f]+)/.exec(JSON.stringify(request.body.messages))?.[1] ?? "";
		const rpc = await readThenFoldInRpc(provider, sandbox);
		provider.enqueue(
			(request) =>
				callTools([
					{
						id: "call_rebrief",
						name: "active_context",
						arguments: { action: "rebrief", id: foldIdOf(request), brief: "c.txt holds the charlie marker." },
					},
				]),
			say("Rebriefed."),
		);
		await rpc.promptAndSettle("Rebrief it.");
		const rebriefed = JSON.stringify(conversation(provider, provider.requests.length - 1));
		expect(rebriefed).toContain("c.txt holds the charlie marker.");
		expect(rebriefed).not.toContain(SECRET);
		await rpc.close();

		provider.enqueue(say("Resumed."));
		expect((await runPrint(sandbox, ["--continue", "--", "Still folded?"])).code).toBe(0);
		const last = provider.requests.length - 1;
		const before = conversation(provider, last - 1);
		expect(JSON.stringify(conversation(provider, last).slice(0, before.length))).toBe(JSON.stringify(before));

		provider.enqueue(
			(request) =>
				callTools([
					{ id: "call_expand", name: "active_context", arguments: { action: "expand", id: foldIdOf(request) } },
				]),
			say("Expanded."),
		);
		expect((await runPrint(sandbox, ["--continue", "--", "Expand it."])).code).toBe(0);
		provider.enqueue(say("Raw again."));
		expect((await runPrint(sandbox, ["--continue", "--", "Raw?"])).code).toBe(0);
		const raw = provider.requests.length - 1;
		expect(JSON.stringify(conversation(provider, raw))).toContain(SECRET);
		const beforeRestart = conversation(provider, raw - 1);
		expect(JSON.stringify(conversation(provider, raw).slice(0, beforeRestart.length))).toBe(
			JSON.stringify(beforeRestart),
		);
		expect(provider.rejections).toEqual([]);
	});
});

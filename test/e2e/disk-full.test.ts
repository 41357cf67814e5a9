/**
 * A full disk and a read-only store lose nothing (issue 28.3), in the real
 * Pi 1.6.0 CLI against the loopback provider.
 *
 * Full disk: the session directory is a 1 MiB tmpfs with 24 KiB free. Two
 * stages (reads), an agent fold and a peek: pi-fold refuses to write its
 * blob (the store keeps 1 MiB free for Pi's own log), so the fold is not
 * made; the agent and the person are told, once; Pi exits 0 and every line
 * of the session file is whole; `pi-fold verify` is clean. The tmpfs is then
 * given room (remounted at 16 MiB) and the session resumed: the fold is
 * made, its peek serves the exact bytes, verify is clean.
 *
 * Read-only store: the store directory is a read-only bind mount (as root;
 * chmod when not); the same steps, the same guarantees.
 *
 * Mounting needs root and a kernel that allows it here; where it is
 * refused the test skips, saying why.
 */

import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, readdirSync, readFileSync, statfsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.ts";
import { STORE_FREE_SPACE_RESERVE_BYTES } from "../../src/fold/store/store-file.ts";
import { cleanupsAfterEach, loopbackSandbox } from "../harness/cli-setup.ts";
import { callTools, type LoopbackProvider, type RecordedRequest, say } from "../harness/loopback-provider.ts";
import { onlySessionFile, type PiSandbox, runPrint } from "../harness/pi-cli.ts";
import { startRpc } from "../harness/pi-rpc.ts";

const cleanups = cleanupsAfterEach();

/** Two stages of a few KB each: Pi's own lines fit in the 24 KiB left, pi-fold's blobs must not take it. */
const STAGE = (n: number) =>
	`stage ${n} ${"result line of the staged read, deterministic text ".repeat(8)}\n`.repeat(2);
const SECRET = "DISK-FULL-STAGE-1-7d1a";
const TMPFS_BYTES = 1024 * 1024;
const LEFT_FREE = 24 * 1024;
const ROOMY_TMPFS = "16m";

/** Mount `args` on `dir`, or say why it cannot be done here. */
function mount(args: readonly string[]): string | undefined {
	if (process.getuid?.() !== 0) return "not running as root, so no tmpfs or bind mount can be made";
	try {
		execFileSync("mount", args, { stdio: "pipe" });
		return undefined;
	} catch (error) {
		const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
		return `mount ${args.join(" ")} was refused: ${stderr || String(error)}`;
	}
}

function unmount(dir: string): void {
	try {
		execFileSync("umount", [dir], { stdio: "pipe" });
	} catch {
		execFileSync("umount", ["-l", dir], { stdio: "pipe" });
	}
}

/** The id of the fold the last tool result announced, if any. */
function foldIdIn(request: RecordedRequest): string | undefined {
	return /(?:Folded|Marked) tool-batch (f-[0-9a-f]{12})/.exec(JSON.stringify(request.body.messages))?.[1];
}

/** Text of the tool results a request carries, by call id. */
function toolResult(request: RecordedRequest | undefined, callId: string): string {
	const message = request?.body.messages.find((m) => m.role === "tool" && m.tool_call_id === callId);
	return typeof message?.content === "string" ? message.content : JSON.stringify(message?.content ?? "");
}

/** Two reads, an agent fold of the first, a peek: in RPC, so notifications are seen. `beforeFold` runs after the reads. */
async function stagesFoldAndPeek(provider: LoopbackProvider, sandbox: PiSandbox, beforeFold?: () => void) {
	const rpc = startRpc(sandbox);
	cleanups.push(async () => {
		await rpc.close();
	});
	for (const n of [1, 2]) {
		provider.enqueue(callTools([{ id: `call_s${n}`, name: "read", arguments: { path: `s${n}.txt` } }]), say("Read."));
		await rpc.promptAndSettle(`Read s${n}.txt.`);
	}
	beforeFold?.();
	provider.enqueue(
		callTools([{ id: "call_fold", name: "active_context", arguments: { action: "fold", ids: ["call_s1"] } }]),
		say("Asked to fold."),
	);
	await rpc.promptAndSettle("Fold the first read.");
	// The fold if it was made, else the read's result entry (as an agent reading status or a summary would).
	const target = (request: RecordedRequest) => foldIdIn(request) ?? resultEntryId(sandbox, "call_s1");
	provider.enqueue(
		(request) =>
			callTools([{ id: "call_peek", name: "active_context", arguments: { action: "peek", id: target(request) } }]),
		say("Peeked."),
	);
	await rpc.promptAndSettle("Peek it.");
	const notices = rpc.records
		.filter((record) => record.type === "extension_ui_request" && record.method === "notify")
		.map((record) => String(record.message));
	const exit = await rpc.close();
	return { exit, notices };
}

/** The session entry id of a tool call's result. */
function resultEntryId(sandbox: PiSandbox, callId: string): string {
	const entry = lines(onlySessionFile(sandbox)).find(
		(line) => (line as { message?: { toolCallId?: string } }).message?.toolCallId === callId,
	);
	return (entry as { id?: string } | undefined)?.id ?? callId;
}

/** Every line of the session file parses whole (no line torn by a failed write). */
function lines(file: string): unknown[] {
	return readFileSync(file, "utf8")
		.trimEnd()
		.split("\n")
		.map((line) => JSON.parse(line) as unknown);
}

/** Resume the session, fold the first read again and peek the fold: the peek must serve the exact stage. */
async function resumeFoldAndPeek(provider: LoopbackProvider, sandbox: PiSandbox): Promise<string> {
	provider.enqueue(
		callTools([{ id: "call_refold", name: "active_context", arguments: { action: "fold", ids: ["call_s1"] } }]),
		(request) =>
			callTools([
				{ id: "call_repeek", name: "active_context", arguments: { action: "peek", id: foldIdIn(request) ?? "" } },
			]),
		say("Done."),
	);
	const resumed = await runPrint(sandbox, ["--continue", "--", "Fold the first read again and peek it."]);
	expect(resumed.code, resumed.stderr).toBe(0);
	expect(resumed.stderr).not.toMatch(/Extension error/i);
	return toolResult(provider.requests.at(-1), "call_repeek");
}

async function verified(file: string) {
	const run = await runCli(["verify", "--json", file]);
	return { code: run.code, json: JSON.parse(run.stdout) as { defects: unknown[]; counts: { folds: number } } };
}

describe("a full disk and a read-only store (issue 28.3)", () => {
	it("on a 1 MiB tmpfs with 24 KiB free: no fold, told once, Pi exits 0, no torn line; after room is made every fold is exact", async (ctx) => {
		const { provider, sandbox } = await loopbackSandbox(cleanups, {
			"s1.txt": `${SECRET}\n${STAGE(1)}`,
			"s2.txt": STAGE(2),
		});
		const refused = mount(["-t", "tmpfs", "-o", `size=${TMPFS_BYTES}`, "tmpfs", sandbox.sessionDir]);
		if (refused) ctx.skip(refused);
		cleanups.push(() => unmount(sandbox.sessionDir));
		const info = statfsSync(sandbox.sessionDir);
		writeFileSync(join(sandbox.sessionDir, "filler"), Buffer.alloc(info.bavail * info.bsize - LEFT_FREE));
		const free = statfsSync(sandbox.sessionDir);
		expect(free.bavail * free.bsize).toBe(LEFT_FREE);

		const { exit, notices } = await stagesFoldAndPeek(provider, sandbox);
		expect(exit.code, exit.stderr).toBe(0);
		expect(exit.stderr).not.toMatch(/Extension error/i);
		const file = onlySessionFile(sandbox);
		expect(() => lines(file)).not.toThrow();
		// The agent was told why nothing folded; the person once.
		const foldReply = toolResult(provider.requests[5], "call_fold");
		expect(foldReply).toMatch(/pi-fold leaves at least \d+ free for Pi's own session log/);
		const told = notices.filter((notice) => /fold store cannot be written/.test(notice));
		expect(told, notices.join("\n")).toHaveLength(1);
		expect(toolResult(provider.requests.at(-1), "call_peek")).toContain(SECRET);
		expect(readdirSync(sandbox.sessionDir).filter((name) => name.endsWith(".pi-fold"))).toEqual([]);
		expect((await verified(file)).code).toBe(0);

		execFileSync("mount", ["-o", `remount,size=${ROOMY_TMPFS}`, sandbox.sessionDir]);
		expect(statfsSync(sandbox.sessionDir).bavail * statfsSync(sandbox.sessionDir).bsize).toBeGreaterThan(
			STORE_FREE_SPACE_RESERVE_BYTES,
		);
		const peeked = await resumeFoldAndPeek(provider, sandbox);
		expect(peeked).toMatch(/source sha256 [0-9a-f]{64} verified/);
		expect(peeked).toContain(SECRET);
		expect(() => lines(file)).not.toThrow();
		const after = await verified(file);
		expect(after.json.defects).toEqual([]);
		expect(after.json.counts.folds).toBeGreaterThan(0);
		expect(provider.rejections).toEqual([]);
	});

	it("with a read-only store directory: no fold, told once, Pi exits 0; writable again, every fold is exact", async (ctx) => {
		const { provider, sandbox } = await loopbackSandbox(cleanups, {
			"s1.txt": `${SECRET}\n${STAGE(1)}`,
			"s2.txt": STAGE(2),
		});
		// The session's store directory exists but cannot be written: a read-only bind mount (root bypasses modes),
		// or 0555. Pi names the store after the session id, so it is made once the session file exists.
		let release: () => void = () => undefined;
		let refused: string | undefined;
		const readOnlyStore = () => {
			const id = (lines(onlySessionFile(sandbox))[0] as { id: string }).id;
			const storeDir = join(sandbox.sessionDir, `${id}.pi-fold`);
			mkdirSync(storeDir);
			if (process.getuid?.() !== 0) {
				chmodSync(storeDir, 0o555);
				release = () => chmodSync(storeDir, 0o755);
				return;
			}
			refused = mount(["--bind", storeDir, storeDir]);
			if (refused) return;
			release = () => unmount(storeDir);
			refused = mount(["-o", "remount,ro,bind", storeDir]);
		};
		cleanups.push(() => release());
		const { exit, notices } = await stagesFoldAndPeek(provider, sandbox, readOnlyStore);
		if (refused) ctx.skip(refused);
		expect(exit.code, exit.stderr).toBe(0);
		expect(exit.stderr).not.toMatch(/Extension error/i);
		const file = onlySessionFile(sandbox);
		expect(() => lines(file)).not.toThrow();
		expect(toolResult(provider.requests[5], "call_fold")).toMatch(/not writable|read-only/);
		expect(notices.filter((notice) => /fold store cannot be written/.test(notice))).toHaveLength(1);
		expect(toolResult(provider.requests.at(-1), "call_peek")).toContain(SECRET);
		expect((await verified(file)).code).toBe(0);

		release();
		release = () => undefined;
		const peeked = await resumeFoldAndPeek(provider, sandbox);
		expect(peeked).toContain(SECRET);
		const after = await verified(file);
		expect(after.json.defects).toEqual([]);
		expect(after.json.counts.folds).toBeGreaterThan(0);
	});
});

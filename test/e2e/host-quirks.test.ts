/**
 * Pins the Pi 1.6.0 behaviours the harness works around, so a host upgrade that changes one is noticed:
 * `/compact` is not a print-mode command, a session whose cwd vanished is refused, and upgrading a v1
 * log assigns random entry ids (persisted in place). Runs without our extension to isolate the host.
 */

import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { REAL_SESSIONS } from "../fixtures/session.ts";
import { type LoopbackProvider, say, startLoopbackProvider } from "../harness/loopback-provider.ts";
import {
	createPiSandbox,
	importSessionLog,
	onlySessionFile,
	type PiSandbox,
	readSessionFile,
	runPrint,
} from "../harness/pi-cli.ts";
import { startRpc } from "../harness/pi-rpc.ts";

/** A real v1 session log (read only), decompressed from the repo's fixtures. */
const V1_LOG = REAL_SESSIONS.large;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function hostOnly(
	script: ReturnType<typeof say>[] = [],
): Promise<{ provider: LoopbackProvider; sandbox: PiSandbox }> {
	const provider = await startLoopbackProvider({ script });
	cleanups.push(() => provider.close());
	const sandbox = createPiSandbox({ baseUrl: provider.baseUrl, extensions: [] });
	cleanups.push(() => sandbox.dispose());
	return { provider, sandbox };
}

async function entryIdsAfterOpen(sandbox: PiSandbox, sessionPath: string): Promise<string[]> {
	const rpc = startRpc(sandbox, ["--session", sessionPath]);
	const response = await rpc.send({ type: "get_entries" });
	await rpc.close();
	expect(response.success, response.error).toBe(true);
	return ((response.data as { entries: { id: string }[] }).entries ?? []).map((entry) => entry.id);
}

describe("Pi 1.6.0 host quirks", () => {
	it("sends /compact in print mode to the model as a plain user message instead of compacting", async () => {
		const { provider, sandbox } = await hostOnly([say("Sure.")]);

		const result = await runPrint(sandbox, "/compact");

		expect(result.code, result.stderr).toBe(0);
		expect(provider.requests).toHaveLength(1);
		expect(provider.requests[0]?.body.messages.at(-1)).toMatchObject({ role: "user" });
		expect(JSON.stringify(provider.requests[0]?.body.messages.at(-1)?.content)).toContain("/compact");
		const types = readSessionFile(onlySessionFile(sandbox)).map((entry) => entry.type);
		expect(types).not.toContain("compaction");
	});

	it("refuses to reopen a session non-interactively while its recorded cwd does not exist", async () => {
		const { sandbox } = await hostOnly();
		expect((await runPrint(sandbox, "hello")).code).toBe(0);
		const session = onlySessionFile(sandbox);
		const elsewhere = { ...sandbox, cwd: join(sandbox.root, "elsewhere") };
		mkdirSync(elsewhere.cwd);

		renameSync(sandbox.cwd, `${sandbox.cwd}-gone`);
		const refused = await runPrint(elsewhere, ["--session", session, "--", "again"]);
		renameSync(`${sandbox.cwd}-gone`, sandbox.cwd);
		const reopened = await runPrint(elsewhere, ["--session", session, "--", "again"]);

		expect(refused.code).not.toBe(0);
		expect(refused.stderr).toContain("Stored session working directory does not exist");
		expect(reopened.code, reopened.stderr).toBe(0);
	});

	it("refuses a session file that starts with a UTF-8 byte order mark (pi-fold's loader says so too)", async () => {
		const { sandbox } = await hostOnly([say("Hello.")]);
		expect((await runPrint(sandbox, "hello")).code).toBe(0);
		const session = onlySessionFile(sandbox);
		writeFileSync(session, `\uFEFF${readFileSync(session, "utf8")}`);
		const refused = await runPrint(sandbox, ["--session", session, "--", "again"]);
		expect(refused.code).not.toBe(0);
		expect(refused.stderr).toContain("is not a valid pi session");
		expect(readFileSync(session, "utf8").charCodeAt(0)).toBe(0xfeff);
	});

	it("gives the same v1 log different entry ids on each upgrade, and rewrites the file as v3", async () => {
		const { sandbox } = await hostOnly();
		const first = importSessionLog(sandbox, V1_LOG, { maxEntries: 10, fileName: "first.jsonl" });
		const secondPath = importSessionLog(sandbox, V1_LOG, { maxEntries: 10, fileName: "second.jsonl" });

		// Opening also appends a thinking_level_change entry; compare only the 10 upgraded entries.
		const firstIds = (await entryIdsAfterOpen(sandbox, first)).slice(0, 10);
		const secondIds = (await entryIdsAfterOpen(sandbox, secondPath)).slice(0, 10);

		expect(firstIds).toHaveLength(10);
		expect(firstIds.every((id) => /^[0-9a-f]{8}$/.test(id))).toBe(true);
		expect(firstIds).not.toEqual(secondIds);
		const [header, ...entries] = readSessionFile(first);
		expect(header).toMatchObject({ type: "session", version: 3 });
		expect(entries.slice(0, 10).map((entry) => entry.id)).toEqual(firstIds);
		expect((await entryIdsAfterOpen(sandbox, first)).slice(0, 10)).toEqual(firstIds);
	});
});

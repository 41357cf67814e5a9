/**
 * A small model window with Pi's default `reserveTokens` (issue 18, item 9):
 * 20,000 tokens of window less 16,384 reserved leaves a 3,254-token reserve
 * ceiling, and 90% of a failed request less 16,384 leaves nothing, so once
 * the summary itself (its protected dialogue alone) outgrew that, every
 * compaction cancelled: the threshold ones quietly, `/compact` with a
 * warning, overflow recovery with an error, and the session was stuck. Real
 * Pi CLI (RPC mode, loopback provider), the compactor alone and the package.
 */

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type LoopbackProvider, overflowError, say, startLoopbackProvider } from "../harness/loopback-provider.ts";
import { createPiSandbox, onlySessionFile, type PiSandbox, REPO_ROOT, readSessionFile } from "../harness/pi-cli.ts";
import { type PiRpc, type RpcRecord, startRpc } from "../harness/pi-rpc.ts";

const WINDOW = 20_000;
const RPC_COMPACT_TIMEOUT_MS = 60_000;
/** Characters of each prompt: long asks fill the summary's protected dialogue, as real ones do. */
const PROMPT_CHARS = 3_000;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Session {
	provider: LoopbackProvider;
	sandbox: PiSandbox;
	rpc: PiRpc;
}

/** Pi with a 20k window and Pi's default reserveTokens; `extension` is the package or the compactor alone. */
async function smallWindow(extension: "package" | "compactor", automatic: boolean): Promise<Session> {
	const provider = await startLoopbackProvider();
	cleanups.push(() => provider.close());
	const sandbox = createPiSandbox({
		baseUrl: provider.baseUrl,
		contextWindow: WINDOW,
		extensions: [],
		// keepRecentTokens below the window, so Pi prepares a compaction at all; reserveTokens stays Pi's 16,384.
		// `enabled: false` turns off Pi's automatic compaction only; /compact still runs.
		settings: { compaction: { keepRecentTokens: 4_000, enabled: automatic } },
	});
	cleanups.push(() => sandbox.dispose());
	let path = REPO_ROOT;
	if (extension === "compactor") {
		path = join(sandbox.root, "compactor-only.ts");
		const hook = JSON.stringify(join(REPO_ROOT, "src/compaction/pi/hook.ts"));
		writeFileSync(
			path,
			`import { registerCompaction } from ${hook};\nexport default (pi) => { registerCompaction(pi); };\n`,
		);
	}
	const rpc = startRpc({ ...sandbox, extensions: [path] });
	cleanups.push(async () => {
		await rpc.close();
	});
	return { provider, sandbox, rpc };
}

/** `count` turns from `from` on, each a long ask and a short answer. */
async function playTurns({ provider, rpc }: Session, from: number, count: number): Promise<void> {
	for (let turn = from; turn < from + count; turn++) {
		provider.enqueue(say(`Answer ${turn}.`));
		const ask = `Turn ${turn}: ${`keep requirement ${turn} in mind; `.repeat(PROMPT_CHARS / 30)}`;
		const { response } = await rpc.promptAndSettle(ask);
		expect(response.success, response.error).toBe(true);
	}
}

const compactions = (sandbox: PiSandbox) =>
	readSessionFile(onlySessionFile(sandbox)).filter((entry) => entry.type === "compaction").length;
const ends = (records: readonly RpcRecord[], reason: string) =>
	records.filter((record) => record.type === "compaction_end" && record.reason === reason);

describe.each(["compactor", "package"] as const)("a 20k window with Pi's default reserveTokens (%s)", (extension) => {
	it("threshold compaction and overflow recovery compact, and the retried request is answered", async () => {
		const session = await smallWindow(extension, true);
		const { provider, rpc } = session;
		await playTurns(session, 1, 8);
		// Pi's threshold (20,000 − 16,384 = 3,616 tokens) fired on the way, and each one compacted.
		const threshold = ends(rpc.records, "threshold");
		expect(threshold.length).toBeGreaterThan(0);
		expect(threshold.filter((record) => record.aborted !== false)).toEqual([]);

		// A long ask (about 12,000 tokens, under the advertised window) that the provider refuses as too long:
		// the failed size proves a smaller working window, and 90% of it less 16,384 reserved leaves nothing.
		provider.enqueue(overflowError(), say("Answered after the overflow."));
		const since = rpc.mark();
		const { response } = await rpc.promptAndSettle(`Turn 9: ${"the long final requirement; ".repeat(1_700)}`);
		expect(response.success, response.error).toBe(true);
		const [overflow] = ends(rpc.records.slice(since), "overflow");
		expect(overflow).toMatchObject({ aborted: false, willRetry: true });
		expect(overflow?.errorMessage).toBeUndefined();
		const failed = provider.requests.findIndex((request) => request.failure !== undefined);
		expect(provider.requests.slice(failed + 1)[0]?.reply).toBeDefined();
		expect(provider.rejections).toEqual([]);
	});

	it("/compact compacts, and says the window leaves less room than reserveTokens asks", async () => {
		const session = await smallWindow(extension, false);
		const { sandbox, rpc } = session;
		await playTurns(session, 1, 8);
		const since = rpc.mark();
		const manual = await rpc.send({ type: "compact" }, RPC_COMPACT_TIMEOUT_MS);
		expect(manual.success, manual.error).toBe(true);
		expect(compactions(sandbox)).toBe(1);
		const notices = rpc.records
			.slice(since)
			.filter((record) => record.type === "extension_ui_request" && record.method === "notify")
			.map((record) => String(record.message));
		expect(notices.join("\n")).toContain("Lower compaction.reserveTokens for this model");
	});
});

/**
 * Compaction settings the user can see, in the real Pi 1.6.0 CLI: a bad
 * `compaction` section is reported exactly once per session (one stderr line
 * in print mode, one notification in RPC mode) naming file, key, value and
 * what was used; `/fabric-settings` prints the effective settings in print
 * mode and, in the TUI (tmux), edits Max occupancy and the model's Threshold
 * and saves them to settings.json.
 */

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startLoopbackProvider } from "../harness/loopback-provider.ts";
import {
	createPiSandbox,
	LOOPBACK_MODEL_ID,
	LOOPBACK_PROVIDER_ID,
	type PiSandbox,
	runPrint,
} from "../harness/pi-cli.ts";
import { type RpcRecord, startRpc } from "../harness/pi-rpc.ts";
import { HAS_TMUX, startTmuxPi } from "../harness/pi-tmux.ts";

const COLUMNS = 160;
const ROWS = 50;
/** Pi's editor treats keys that arrive with the text as one paste; Enter must come on its own. */
const KEY_GAP_MS = 600;
const MODEL_KEY = `${LOOPBACK_PROVIDER_ID}/${LOOPBACK_MODEL_ID}`;
const BAD = { compaction: { engine: "bogus", targetContextRatio: 5 } };

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function sandboxWith(settings: Record<string, unknown>): Promise<PiSandbox> {
	const provider = await startLoopbackProvider();
	cleanups.push(() => provider.close());
	const sandbox = createPiSandbox({ baseUrl: provider.baseUrl, settings });
	cleanups.push(() => sandbox.dispose());
	return sandbox;
}

const noticeLines = (stderr: string) => stderr.split("\n").filter((line) => line.includes("compaction settings:"));

describe("compaction settings in the CLI", () => {
	it("print mode: one stderr line for a bad file, and /fabric-settings prints the effective settings", async () => {
		const sandbox = await sandboxWith(BAD);
		const result = await runPrint(sandbox, "/fabric-settings");
		expect(result.code, result.stderr).toBe(0);
		const lines = noticeLines(result.stderr);
		expect(lines).toHaveLength(1);
		const file = join(sandbox.agentDir, "settings.json");
		expect(lines[0]).toContain(`${file}: compaction.engine = "bogus" must be "fabric" or "pi"; used "fabric"`);
		expect(lines[0]).toContain(`${file}: compaction.targetContextRatio = 5 lowered to the maximum 0.85; used 0.85`);
		expect(result.stdout).toContain("Compaction settings (pi-fold)");
		expect(result.stdout).toContain("Max occupancy: 85%");
		expect(result.stdout).toContain(`Threshold for ${MODEL_KEY}: Pi default`);

		const umbrella = await runPrint(sandbox, "/fabric settings");
		expect(umbrella.stdout).toContain("Max occupancy: 85%");
	});

	it("RPC mode: a bad file is exactly one warning notification for the session", async () => {
		const sandbox = await sandboxWith(BAD);
		const rpc = startRpc(sandbox);
		cleanups.push(async () => {
			await rpc.close();
		});
		await rpc.promptAndSettle("/fabric-settings");
		await rpc.promptAndSettle("/context");
		const notices = rpc.records.filter(
			(record: RpcRecord) =>
				record.type === "extension_ui_request" &&
				record.method === "notify" &&
				String(record.message).includes("compaction settings:"),
		);
		expect(notices).toHaveLength(1);
		expect(notices[0]).toMatchObject({ notifyType: "warning" });
		expect(String(notices[0]?.message)).toContain('compaction.engine = "bogus"');
	});
});

describe.skipIf(!HAS_TMUX)("/fabric-settings in Pi's TUI (tmux)", () => {
	it("edits Max occupancy and the model's Threshold and saves them", async () => {
		const sandbox = await sandboxWith({});
		const pi = startTmuxPi(sandbox, { name: "pi-fold-settings", columns: COLUMNS, rows: ROWS, keyGapMs: KEY_GAP_MS });
		cleanups.push(() => pi.stop());
		const { waitFor, keys } = pi;
		const type = (text: string) => pi.line(text);
		const saved = () => JSON.parse(readFileSync(join(sandbox.agentDir, "settings.json"), "utf8")).compaction;

		await waitFor("fold 0%");
		await type("/fabric-settings");
		const menu = await waitFor("Max occupancy: 65%");
		writeFileSync(join(sandbox.root, "settings-menu.txt"), menu);
		expect(menu).toContain("Compaction settings (pi-fold)");
		expect(menu).toContain(`Threshold (${MODEL_KEY}): Pi default`);

		// Max occupancy: the list starts at 25%; five steps down is 50%.
		await keys("Enter");
		await waitFor("Max occupancy: context ceiling after a compaction");
		await keys("Down", "Down", "Down", "Down", "Down", "Enter");
		await waitFor("Max occupancy: 50%");
		expect(saved()).toEqual({ targetContextRatio: 0.5 });

		// Threshold: Custom tokens…, then 400000.
		await keys("Down", "Enter");
		await waitFor(`Threshold for ${MODEL_KEY}: compact when the context reaches`);
		for (let step = 0; step < 11; step++) await keys("Down");
		await keys("Enter");
		await waitFor("Threshold in tokens");
		await type("400000");
		const after = await waitFor(`Threshold (${MODEL_KEY}): 400,000 tokens`);
		writeFileSync(join(sandbox.root, "settings-after.txt"), after);
		if (process.env.PI_FOLD_TUI_CAPTURE) writeFileSync(process.env.PI_FOLD_TUI_CAPTURE, after);
		expect(saved()).toEqual({ targetContextRatio: 0.5, tokenThresholds: { [MODEL_KEY]: 400_000 } });
		await keys("Escape");
	});
});

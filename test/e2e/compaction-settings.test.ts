/**
 * pi-fold's settings as a person meets them in the real Pi 1.6.0 CLI: every
 * settings problem (a bad `compaction` value, a serving window larger than
 * the model's) is told once per session in one notice (one stderr line in
 * print mode, one warning in RPC mode) naming file, key, value and what is
 * used; `/context settings` prints the effective values and where each comes
 * from in print mode and, in the TUI (tmux), opens the dialog at the value in
 * force and writes to the file the person chose, saying when another file
 * decides.
 */

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { servingBudget } from "../../src/fold/policy/budget.ts";
import { startLoopbackProvider } from "../harness/loopback-provider.ts";
import {
	createPiSandbox,
	LOOPBACK_CONTEXT_WINDOW,
	LOOPBACK_MAX_TOKENS,
	type PiSandbox,
	runPrint,
} from "../harness/pi-cli.ts";
import { type RpcRecord, startRpc } from "../harness/pi-rpc.ts";
import { HAS_TMUX, saveScreen, startTmuxPi } from "../harness/pi-tmux.ts";

const COLUMNS = 160;
const ROWS = 50;
/** Pi's editor treats keys that arrive with the text as one paste; Enter must come on its own. */
const KEY_GAP_MS = 600;
/** The loopback model's window is 128,000 tokens; this serving window is larger. */
const BAD = { compaction: { engine: "bogus", targetContextRatio: 5 }, piFold: { providerTotalWindow: 200_000 } };
const NOTICE_HEAD = "pi-fold settings:";

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

describe("settings in the CLI", () => {
	it("print mode: one stderr line for every problem, and /context settings prints values and their files", async () => {
		const sandbox = await sandboxWith(BAD);
		const result = await runPrint(sandbox, "/context settings");
		expect(result.code, result.stderr).toBe(0);
		const lines = result.stderr.split("\n").filter((line) => line.includes(NOTICE_HEAD));
		expect(lines).toHaveLength(1);
		const file = join(sandbox.agentDir, "settings.json");
		expect(lines[0]).toContain(`${NOTICE_HEAD} 3 problems; every other setting is in use. ${file}: `);
		expect(lines[0]).toContain('compaction.engine = "bogus": must be "fabric" or "pi"; using "fabric".');
		expect(lines[0]).toContain("compaction.targetContextRatio = 5: lowered to the maximum 0.85; using 0.85.");
		expect(lines[0]).toContain(
			"piFold.providerTotalWindow = 200000: is larger than loopback/loopback-1's context window of 128,000 tokens",
		);
		// It names the budget pi-fold keeps (Pi's line, as the runtime measures it), not the total "as set".
		const budget = servingBudget({
			tokens: null,
			descriptor: LOOPBACK_CONTEXT_WINDOW,
			providerTotalWindow: 200_000,
			outputReservation: LOOPBACK_MAX_TOKENS,
		});
		expect(lines[0]).toContain(`the budget stays ${budget?.toLocaleString("en-US")} tokens (Pi's compaction line`);
		expect(lines[0]).not.toContain("200,000 as set");
		expect(result.stdout).toContain("pi-fold settings (value · where it comes from)");
		expect(result.stdout).toMatch(/Max occupancy +85% · global file +compaction\.targetContextRatio/);
		expect(result.stdout).toMatch(/Provider window +200,000 tokens · global file +piFold\.providerTotalWindow/);
		expect(result.stdout).toContain(`Global file:  ${file}`);
	});

	it("RPC mode: the problems are exactly one warning notification for the session", async () => {
		const sandbox = await sandboxWith(BAD);
		const rpc = startRpc(sandbox);
		cleanups.push(async () => {
			await rpc.close();
		});
		await rpc.promptAndSettle("/context");
		await rpc.promptAndSettle("/context");
		const notices = rpc.records.filter(
			(record: RpcRecord) =>
				record.type === "extension_ui_request" &&
				record.method === "notify" &&
				String(record.message).includes(NOTICE_HEAD),
		);
		expect(notices).toHaveLength(1);
		expect(notices[0]).toMatchObject({ notifyType: "warning" });
		expect(String(notices[0]?.message)).toContain('compaction.engine = "bogus"');
		expect(String(notices[0]?.message)).toContain("piFold.providerTotalWindow = 200000");
	});
});

describe.skipIf(!HAS_TMUX)("/context settings in Pi's TUI (tmux)", () => {
	it("opens at the values in force, shows their files, and writes to the file the person chose", async () => {
		const sandbox = await sandboxWith({ defaultProjectTrust: "always", compaction: { targetContextRatio: 0.5 } });
		const projectFile = join(sandbox.cwd, ".pi", "settings.json");
		mkdirSync(join(sandbox.cwd, ".pi"), { recursive: true });
		writeFileSync(projectFile, JSON.stringify({ compaction: { targetContextRatio: 0.6 } }));
		const globalFile = join(sandbox.agentDir, "settings.json");
		const read = (path: string) => JSON.parse(readFileSync(path, "utf8")).compaction;
		const pi = startTmuxPi(sandbox, { name: "pi-fold-settings", columns: COLUMNS, rows: ROWS, keyGapMs: KEY_GAP_MS });
		cleanups.push(() => pi.stop());
		const capture = (name: string, screen: string) => saveScreen(pi, sandbox, name, screen);

		await pi.waitFor("% of ");
		// A trailing space closes the subcommand completions, so Enter submits instead of completing.
		await pi.line("/context settings ");
		const dialog = await pi.waitFor("Max occupancy");
		capture("settings-dialog", dialog);
		// The project file holds 60% and wins over the global 50%; changes go to the project file first.
		expect(dialog).toMatch(/Save changes to +project file/);
		expect(dialog).toMatch(/Max occupancy +60% · project file/);

		// The picker opens at 60%; one step down is 65%, written to the project file.
		await pi.keys("Down", "Enter");
		const picker = await pi.waitFor("✓ 60%");
		capture("settings-picker", picker);
		await pi.keys("Down", "Enter");
		await pi.waitFor("65% · project file");
		expect(read(projectFile)).toEqual({ targetContextRatio: 0.65 });

		// Saved to the global file instead, 70% is written there, and the dialog says the project file still wins.
		await pi.keys("Up", "Enter", "Down", "Enter");
		// The picker opens at the value in force (the project's 65%), not at the global file's 50%.
		await pi.waitFor("✓ 65%");
		await pi.keys("Down", "Enter");
		const after = await pi.waitFor("and wins");
		capture("settings-after", after);
		expect(read(globalFile)).toEqual({ targetContextRatio: 0.7 });
		expect(read(projectFile)).toEqual({ targetContextRatio: 0.65 });
		expect(after).toContain(`Max occupancy: saved 70% to ${globalFile}, but ${projectFile} (project file) sets 65%`);
		expect(after).toMatch(/Max occupancy +65% · project file/);
		await pi.keys("Escape");
	});
});

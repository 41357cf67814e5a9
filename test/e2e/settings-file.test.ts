/**
 * The `piFold` key of Pi's settings files in the real Pi 1.6.0 CLI: global
 * options apply (registration and session ones), a trusted project's file
 * overrides session options, a bad value is reported exactly once (one
 * stderr line in print mode, one notification in RPC mode) and never stops
 * the package loading.
 */

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startLoopbackProvider } from "../harness/loopback-provider.ts";
import { createPiSandbox, type PiSandbox, runPrint } from "../harness/pi-cli.ts";
import { type RpcRecord, startRpc } from "../harness/pi-rpc.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function sandboxWith(piFold: Record<string, unknown>): Promise<PiSandbox> {
	const provider = await startLoopbackProvider();
	cleanups.push(() => provider.close());
	const sandbox = createPiSandbox({ baseUrl: provider.baseUrl, settings: { piFold } });
	cleanups.push(() => sandbox.dispose());
	return sandbox;
}

const settingsLines = (stderr: string) => stderr.split("\n").filter((line) => line.startsWith("pi-fold settings:"));

describe("piFold in settings.json", () => {
	it("applies global options, reports a bad value once on stderr, and keeps loading", async () => {
		const sandbox = await sandboxWith({
			commandPrefix: "pf",
			providerTotalWindow: 50_000,
			foldScheduling: "sometimes",
		});
		const result = await runPrint(sandbox, "/pf-context");
		expect(result.code, result.stderr).toBe(0);
		expect(result.stdout).toContain("45,904-token budget (provider total 50,000 less 4,096 for output)");
		expect(result.stdout).toContain('Scheduling: batched (foldScheduling "epoch")');
		const lines = settingsLines(result.stderr);
		expect(lines).toHaveLength(1);
		expect(lines[0]).toContain(join(sandbox.agentDir, "settings.json"));
		expect(lines[0]).toContain('piFold.foldScheduling = "sometimes"');
		expect(lines[0]).toContain('using "epoch"');
	});

	it("a trusted project's file overrides session options and cannot rename the tool", async () => {
		const sandbox = await sandboxWith({ providerTotalWindow: 50_000 });
		mkdirSync(join(sandbox.cwd, ".pi"), { recursive: true });
		writeFileSync(
			join(sandbox.cwd, ".pi", "settings.json"),
			JSON.stringify({ piFold: { providerTotalWindow: 60_000, toolName: "evil" } }),
		);
		const trusted = await runPrint(sandbox, ["--approve", "--", "/context"]);
		expect(trusted.code, trusted.stderr).toBe(0);
		expect(trusted.stdout).toContain("55,904-token budget");
		const lines = settingsLines(trusted.stderr);
		expect(lines).toHaveLength(1);
		expect(lines[0]).toMatch(/\.pi\/settings\.json: piFold\.toolName = "evil": not read from a project file/);

		const untrusted = await runPrint(sandbox, ["--no-approve", "--", "/context"]);
		expect(untrusted.code, untrusted.stderr).toBe(0);
		expect(untrusted.stdout).toContain("45,904-token budget");
		expect(settingsLines(untrusted.stderr)).toEqual([]);
	});

	it("with a UI, a bad value is exactly one warning notification for the session", async () => {
		const sandbox = await sandboxWith({ readOnlyTools: "read", blockingTools: ["Agent"] });
		const rpc = startRpc(sandbox);
		cleanups.push(async () => {
			await rpc.close();
		});
		await rpc.promptAndSettle("/context");
		await rpc.promptAndSettle("/context tree");
		const notices = rpc.records.filter(
			(record: RpcRecord) =>
				record.type === "extension_ui_request" &&
				record.method === "notify" &&
				String(record.message).startsWith("pi-fold settings:"),
		);
		expect(notices).toHaveLength(1);
		expect(notices[0]).toMatchObject({ notifyType: "warning" });
		expect(String(notices[0]?.message)).toMatch(/piFold\.readOnlyTools = "read": readOnlyTools must be a list/);
		expect(String(notices[0]?.message)).toContain('using ["read","grep","find","ls"]');
	});
});

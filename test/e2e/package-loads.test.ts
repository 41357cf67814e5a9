/**
 * The package loads in the real Pi 1.6.0 host and its command answers, through each harness:
 * the SDK with the faux model, the CLI in print and json mode, and the CLI in RPC mode.
 * Everything runs offline against in-process or loopback models.
 */

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import piFold from "../../src/index.ts";
import { callTools as loopbackCallTools, say, startLoopbackProvider } from "../harness/loopback-provider.ts";
import {
	createPiSandbox,
	onlySessionFile,
	type PiSandbox,
	readSessionFile,
	runJson,
	runPrint,
} from "../harness/pi-cli.ts";
import { type PiRpc, type RpcRecord, startRpc } from "../harness/pi-rpc.ts";
import { callTools, createSdkHarness, reply, type SdkHarness, toolCall } from "../harness/sdk.ts";

/** The contract of `/context`: its report names the window's entries and tokens. */
const CONTEXT_REPORT = [/entries/, /tokens/];

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function sdk(options: Parameters<typeof createSdkHarness>[0]): Promise<SdkHarness> {
	const harness = await createSdkHarness(options);
	cleanups.push(() => harness.dispose());
	return harness;
}

async function cli(options: Parameters<typeof startLoopbackProvider>[0] = {}, settings?: Record<string, unknown>) {
	const provider = await startLoopbackProvider(options);
	cleanups.push(() => provider.close());
	const sandbox: PiSandbox = createPiSandbox({ baseUrl: provider.baseUrl, ...(settings ? { settings } : {}) });
	cleanups.push(() => sandbox.dispose());
	return { provider, sandbox };
}

function rpcSession(sandbox: PiSandbox): PiRpc {
	const rpc = startRpc(sandbox);
	cleanups.push(async () => {
		await rpc.close();
	});
	return rpc;
}

describe("SDK with the faux model", () => {
	it("registers /context, whose report answers without calling the model", async () => {
		const harness = await sdk({ extensions: [piFold] });
		expect(harness.session.extensionRunner.getCommand("context")).toBeDefined();

		const shown = await harness.run("/context");

		expect(shown).toHaveLength(1);
		for (const pattern of CONTEXT_REPORT) expect(shown[0]).toMatch(pattern);
		expect(harness.requests).toHaveLength(0);
	});

	it("plays scripted turns (text, tool call, text) and logs what each request carried", async () => {
		const harness = await sdk({
			extensions: [piFold],
			script: [callTools([toolCall("ls", { path: "." }, "call_ls")], "Looking."), reply("Nothing there.")],
			tools: ["ls"],
		});

		await harness.run("What is in this folder?");

		expect(harness.session.getLastAssistantText()).toBe("Nothing there.");
		expect(harness.requests).toHaveLength(2);
		const second = harness.requests[1]?.messages ?? [];
		expect(second.map((m) => m.role)).toEqual(["system", "user", "assistant", "toolResult"]);
		expect(second.at(-1)).toMatchObject({ role: "toolResult", toolCallId: "call_ls" });
	});
});

describe("CLI print and json mode against the loopback provider", () => {
	it('prints the /context report on stdout for `pi -p "/context"` without a model request', async () => {
		const { provider, sandbox } = await cli();

		const result = await runPrint(sandbox, "/context");

		expect(result.code, result.stderr).toBe(0);
		// Pi's print mode reroutes process.stdout.write and console.log to stderr; only fd 1 reaches stdout.
		const hint = `stdout lacks the report; stderr was:\n${result.stderr}`;
		for (const pattern of CONTEXT_REPORT) expect(result.stdout, hint).toMatch(pattern);
		expect(provider.requests).toHaveLength(0);
	});

	it("round-trips a prompt with a tool call through the provider with no rejected request", async () => {
		const { provider, sandbox } = await cli({
			script: [
				loopbackCallTools([{ id: "call_read_1", name: "read", arguments: { path: "notes.txt" } }], "Reading."),
				say("The note says hello."),
			],
		});
		writeFileSync(join(sandbox.cwd, "notes.txt"), "hello\n");

		const result = await runPrint(sandbox, "What does notes.txt say?");

		expect(result.code, result.stderr).toBe(0);
		expect(result.stdout).toBe("The note says hello.\n");
		expect(provider.requests).toHaveLength(2);
		expect(provider.rejections).toEqual([]);
		const answered = provider.requests[1]?.body.messages.at(-1);
		expect(answered).toMatchObject({ role: "tool", tool_call_id: "call_read_1" });
		expect(String(answered?.content)).toContain("hello");
		expect(provider.requests[1]?.cache.cachedTokens).toBeGreaterThan(0);
	});

	it("emits only JSON records on stdout in json mode, ending the run with agent_end", async () => {
		const { provider, sandbox } = await cli({ script: [say("Done.")] });

		const result = await runJson(sandbox, "Say done.");

		expect(result.code, result.stderr).toBe(0);
		expect(result.strayLines).toEqual([]);
		const types = result.records.map((record) => (record as { type?: string }).type);
		expect(types[0]).toBe("session");
		expect(types).toContain("agent_end");
		expect(provider.requests).toHaveLength(1);
	});
});

describe("CLI in RPC mode against the loopback provider", () => {
	it("prompts to the end of the run, shows /context through the UI channel, and compacts", async () => {
		// A tiny keep-recent budget gives a two-turn session something to compact.
		const { provider, sandbox } = await cli(
			{ script: [say("First answer. ".repeat(20)), say("Second answer. ".repeat(20))] },
			{ compaction: { keepRecentTokens: 50 } },
		);
		const rpc = rpcSession(sandbox);

		const first = await rpc.promptAndSettle("First question");
		expect(first.response.success).toBe(true);
		expect(first.records.map((r) => r.type)).toContain("agent_end");
		await rpc.promptAndSettle("Second question");

		const shown = await rpc.promptAndSettle("/context");
		expect((shown.response.data as { disposition?: string }).disposition).toBe("handled");
		const notice = shown.records.find((r: RpcRecord) => r.type === "extension_ui_request" && r.method === "notify");
		for (const pattern of CONTEXT_REPORT) expect(String(notice?.message)).toMatch(pattern);

		const compacted = await rpc.send({ type: "compact" });
		expect(compacted, String(compacted.error)).toMatchObject({ command: "compact", success: true });
		expect(provider.rejections).toEqual([]);

		await rpc.close();
		const types = readSessionFile(onlySessionFile(sandbox)).map((entry) => entry.type);
		expect(types).toContain("compaction");
	});
});

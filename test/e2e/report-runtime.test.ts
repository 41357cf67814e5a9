/**
 * `pi-fold report` over a session the fold runtime itself wrote in real Pi
 * 1.6.0 (SDK, faux model, the session persisted as a JSONL file): the
 * ladder's commits are counted with their reasons in words and the tokens
 * they freed, exactly as the runtime's `:commit` lines record them; the HTML
 * page names the session's directory, model and date and carries the same
 * headline numbers. And the tool declaration the report's "would have
 * saved" charges per request is what pi-fold adds to a real request of the
 * Pi CLI (the wire body with and without the package).
 */

import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.ts";
import { toolDeclarationChars } from "../../src/fold/actions/tool-schema.ts";
import { resolveOptions } from "../../src/fold/options.ts";
import { commitReasonText } from "../../src/fold/pi/commit-reasons.ts";
import { registerPiFold } from "../../src/index.ts";
import { registerStageTool, STAGE_TOOL, stageReport } from "../fixtures/stage-tool.ts";
import { startLoopbackProvider } from "../harness/loopback-provider.ts";
import { createPiSandbox, REPO_ROOT, runPrint } from "../harness/pi-cli.ts";
import { callTools, createSdkHarness, FAUX_MODEL_ID, FAUX_PROVIDER_ID, reply, toolCall } from "../harness/sdk.ts";

const WINDOW = 40_000;
const STAGES = 10;
/** About 6,000 tokens per stage: the window fills after a few and the ladder commits. */
const STAGE_LINES = 600;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** What the runtime wrote: every `:commit` line's summary, read straight from the file. */
function commitSummaries(path: string): { reason: string; freedTokens: number }[] {
	return readFileSync(path, "utf8")
		.split("\n")
		.filter((line) => line.trim() !== "")
		.map((line) => JSON.parse(line) as { type: string; customType?: string; data?: { summary?: unknown } })
		.filter((entry) => entry.type === "custom" && entry.customType?.endsWith(":commit"))
		.map((entry) => entry.data?.summary as { reason: string; freedTokens: number });
}

describe("pi-fold report on a session the runtime wrote", () => {
	it("counts the ladder's commits by reason, in words, with the tokens they freed; the HTML says the same", async () => {
		const harness = await createSdkHarness({
			extensions: [
				(pi: ExtensionAPI) => {
					registerPiFold(pi);
					registerStageTool(pi, (stage) => stageReport(stage, STAGE_LINES));
				},
			],
			tools: [STAGE_TOOL, "active_context"],
			contextWindow: WINDOW,
			persist: true,
			settings: { compaction: { enabled: true, reserveTokens: 4_096, keepRecentTokens: 8_000 } },
		});
		cleanups.push(() => harness.dispose());
		for (let k = 1; k <= STAGES; k++) harness.enqueue(callTools([toolCall(STAGE_TOOL, { stage: k }, `st-${k}`)]));
		harness.enqueue(reply("All stages done."));
		await harness.run("Run all stages.");
		const file = harness.session.sessionManager.getSessionFile();
		if (!file) throw new Error("the harness did not persist the session");

		const written = commitSummaries(file);
		expect(written.length).toBeGreaterThan(0);
		const out = join(mkdtempSync(join(tmpdir(), "pi-fold-report-runtime-")), "report.html");
		const result = await runCli(["report", "--no-replay", "--html", out, file]);
		expect(result.code, result.stderr).toBe(0);

		const freed = written.reduce((total, summary) => total + summary.freedTokens, 0);
		expect(freed).toBeGreaterThan(0);
		const byReason = new Map<string, number>();
		for (const summary of written) byReason.set(summary.reason, (byReason.get(summary.reason) ?? 0) + 1);
		const integer = new Intl.NumberFormat("en-US");
		expect(result.stdout).toContain(
			`  commits       ${written.length} (each one rewrite of the window), ~${integer.format(freed)} tokens freed:\n`,
		);
		for (const [reason, count] of byReason)
			expect(result.stdout).toContain(`                ${count} because ${commitReasonText(reason)}\n`);
		expect(result.stdout).not.toMatch(/could not be read/);

		const html = readFileSync(out, "utf8");
		const header = JSON.parse(readFileSync(file, "utf8").split("\n")[0] ?? "{}") as { timestamp: string };
		const title = `pi-fold report: ${harness.cwd} · ${FAUX_PROVIDER_ID}/${FAUX_MODEL_ID} · ${header.timestamp.slice(0, 10)}`;
		expect(html).toContain(`<title>${title}</title>`);
		expect(html).toContain(`<dt>commits</dt><dd>${written.length}, ~${integer.format(freed)} tokens freed</dd>`);
		expect(html).toContain("<dt>Pi&#39;s ledger (as recorded)</dt>");
	});
});

describe("the tool declaration the report charges", () => {
	it("is what pi-fold adds to each request of the real Pi CLI", async () => {
		const bodyChars = async (extensions: string[]) => {
			const provider = await startLoopbackProvider();
			cleanups.push(() => provider.close());
			const sandbox = createPiSandbox({ baseUrl: provider.baseUrl, extensions });
			cleanups.push(() => sandbox.dispose());
			const result = await runPrint(sandbox, "hello");
			expect(result.code, result.stderr).toBe(0);
			return JSON.stringify(provider.requests[0]?.body).length;
		};
		const added = (await bodyChars([REPO_ROOT])) - (await bodyChars([]));
		const options = resolveOptions();
		const charged = toolDeclarationChars(options.toolName, options.toolActions);
		// The wire adds a separator or two and the prompt line's list marker; nothing more.
		expect(Math.abs(added - charged)).toBeLessThan(charged * 0.01);
	});
});

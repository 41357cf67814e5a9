/**
 * The report prints no figure the session cannot support: on the six-request
 * sample, pi-fold's column carries its tool's declaration as Pi's request
 * carries it (~880 tokens, test/e2e/report-runtime.test.ts), not scaled by a
 * fit over six prompts, and a loss is said as one; on a log whose requests
 * recorded no prompt usage, nothing sent is priced, no percentage, cache
 * share or peak is claimed, and the HTML page draws no empty chart.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NO_CHART_TEXT } from "../../src/cli/html.ts";
import { runCli, SAMPLE_SESSION_PATH } from "../../src/cli/main.ts";
import { projectSavings } from "../../src/cost/projected-savings.ts";
import { toolDeclarationChars } from "../../src/fold/actions/tool-schema.ts";
import { resolveOptions } from "../../src/fold/options.ts";
import { loadSessionFile } from "../../src/session/load.ts";
import { usage } from "../fixtures/cost.ts";
import { readTurns, sessionHeader, toJsonl } from "../fixtures/session.ts";

const dir = mkdtempSync(join(tmpdir(), "pi-fold-limits-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A converted log: reads and replies, every reply with output usage only. */
function logWithoutPromptUsage(): string {
	const entries = readTurns(15, 6_000).map((entry) =>
		entry.type === "message" && entry.message.role === "assistant"
			? {
					...entry,
					message: {
						...entry.message,
						provider: "anthropic",
						model: "claude-opus-4-5",
						usage: {
							...usage({ output: 40 }),
							totalTokens: 40,
							cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
						},
					},
				}
			: entry,
	);
	const path = join(dir, "converted.jsonl");
	writeFileSync(path, toJsonl(entries, sessionHeader({ id: "converted" })));
	return path;
}

describe("the report on the bundled six-request sample", () => {
	it("charges the tool's declaration as Pi's request carries it, and says pi-fold would have cost more, and why", async () => {
		const session = loadSessionFile(SAMPLE_SESSION_PATH);
		const projection = await projectSavings(session.manager.getBranch(), "/");
		const options = resolveOptions();
		const estimated = Math.ceil(toolDeclarationChars(options.toolName, options.toolActions) / 4);
		expect(projection.declarationTokens).toBe(estimated);
		const requests = projection.projected.requests.length;
		// Nothing folds in six requests: the columns differ by the declaration alone.
		expect(projection.commits).toBe(0);
		expect(projection.projected.promptTokens - projection.native.promptTokens).toBe(requests * estimated);

		const text = (await runCli(["report"])).stdout;
		expect(text).toMatch(
			/ {2}saving {11}none: pi-fold would have cost \$0\.\d{4} \(\d+\.\d%\) more; it folded nothing and its tool's declaration adds ~[\d,]+ tokens to each request\n/,
		);
		expect(text).not.toMatch(/saving +\$-/);
	});
});

describe("the report on a log whose requests recorded no prompt usage", () => {
	it("prices nothing that was sent, says why, and shows the replay in Pi's estimate without a saving", async () => {
		const text = (await runCli(["report", logWithoutPromptUsage()])).stdout;
		const savings = text.slice(text.indexOf("What pi-fold would have saved"), text.indexOf("Recorded provider usage"));
		expect(savings).toMatch(
			/^What pi-fold would have saved: not priced: none of the 30 requests recorded prompt usage/,
		);
		expect(savings).toMatch(/tokens sent \(est\.\) +[\d,]+ +[\d,]+\n/);
		// What each window hid is counted without a price.
		expect(savings).toMatch(/hidden from +\d+ of \d+ +\d+ of \d+\n/);
		expect(savings).not.toMatch(/\$|%|saving /);
		const cost = text.slice(text.indexOf("Cost:"), text.indexOf("Context per request"));
		expect(cost).toContain("not priced             none of the 30 requests recorded prompt usage");
		expect(cost).not.toMatch(/catalog card|cache share|peak request context/);
		expect(text).toContain("Context per request: no chart (no request recorded prompt usage)");
	});

	it("writes an HTML page without a chart, naming the model the log records", async () => {
		const out = join(dir, "converted.html");
		const result = await runCli(["report", logWithoutPromptUsage(), "--html", out]);
		expect(result.stdout).toContain(`Page written to ${out}, without a chart: no request recorded prompt usage`);
		const html = readFileSync(out, "utf8");
		expect(html).not.toContain("<svg");
		expect(html).toContain(NO_CHART_TEXT);
		expect(html).toContain("<title>pi-fold report: /tmp · anthropic/claude-opus-4-5 · ");
		expect(html).not.toContain("cache share");
		expect(html).toContain("tokens sent, Pi alone (estimate)");
	});
});

/**
 * Model briefs in the real Pi 1.6.0 host (SDK, faux model): a long staged
 * turn folds by the dozen, the ladder consolidates, and the default
 * "session" summarizer writes the consolidation briefs through Pi's model
 * registry. Checked on the request log: side requests never eat the agent's
 * scripted replies, a model brief is in place from the first request that
 * shows its fold, and no fold's brief ever changes after it was sent.
 */

import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import type { FoldRecord } from "../../src/fold/lattice/records.ts";
import type { PiFoldOptions } from "../../src/fold/options.ts";
import type { FoldRuntime } from "../../src/fold/pi/runtime.ts";
import { liveLattice, rebuildState } from "../../src/fold/state/state.ts";
import { SUMMARIZER_ENTRY_SUFFIX } from "../../src/fold/summarizer/summarizer-prompt.ts";
import { registerRuntime } from "../../src/register.ts";
import { registerStageTool } from "../fixtures/stage-tool.ts";
import {
	callTools,
	createSdkHarness,
	FAUX_MODEL_ID,
	FAUX_PROVIDER_ID,
	FAUX_SIDE_REPLY_TEXT,
	reply,
	type SdkHarness,
	toolCall,
} from "../harness/sdk.ts";

const WINDOW = 40_000;
const STAGES = 30;
/** About 6,000 tokens per stage result: three or four fill the window, so the ladder folds every few stages. */
const STAGE_LINES = 600;
const PREFIX = "pi-fold-active-context";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function stageText(stage: number): string {
	const lines = [`stage ${stage} report`];
	for (let i = 0; i < STAGE_LINES; i++) lines.push(`stage ${stage} line ${i}: ${"lorem ipsum ".repeat(3)}`);
	return lines.join("\n");
}

async function stagedRun(options: PiFoldOptions): Promise<{ harness: SdkHarness; runtime: FoldRuntime }> {
	let runtime: FoldRuntime | undefined;
	const extension = (pi: ExtensionAPI) => {
		runtime = registerRuntime(pi, options);
		registerStageTool(pi, stageText);
	};
	const harness = await createSdkHarness({
		extensions: [extension],
		tools: ["repo_stage", "active_context"],
		contextWindow: WINDOW,
		persist: true,
	});
	cleanups.push(() => harness.dispose());
	if (!runtime) throw new Error("fold runtime not loaded");
	for (let k = 1; k <= STAGES; k++) harness.enqueue(callTools([toolCall("repo_stage", { stage: k }, `st-${k}`)]));
	harness.enqueue(reply("All stages done."));
	await harness.run("Run all stages.");
	await runtime.summarizer.settled();
	return { harness, runtime };
}

function records(harness: SdkHarness): FoldRecord[] {
	return [...liveLattice(rebuildState(harness.session.sessionManager.getBranch(), PREFIX)).folds.values()];
}

/** Index of every request whose messages carry the fold's brief header. */
function requestsShowing(harness: SdkHarness, id: string): number[] {
	return harness.requests.flatMap((request, index) => (JSON.stringify(request.messages).includes(id) ? [index] : []));
}

describe("model summarizer in Pi", () => {
	it("writes consolidation briefs from side requests and never swaps a brief once sent", async () => {
		const { harness, runtime } = await stagedRun({});
		// Every scripted agent reply went to the agent: one request per stage plus the final one.
		expect(harness.requests).toHaveLength(STAGES + 1);
		expect(harness.sideRequests.length).toBeGreaterThan(0);
		const folds = records(harness);
		const model = folds.filter((record) => record.provenance.briefGenerator === "model");
		// Each consolidation was asked for right after the commit that made it eligible, so its brief was ready.
		expect(model.length).toBeGreaterThan(0);
		expect(model).toEqual(folds.filter((record) => record.kind === "consolidation"));
		for (const record of model) {
			expect(record.kind).not.toBe("tool-batch");
			expect(record.provenance.model).toEqual({ provider: FAUX_PROVIDER_ID, model: FAUX_MODEL_ID });
			expect(record.brief).toContain(FAUX_SIDE_REPLY_TEXT);
			expect(record.brief).toMatch(/^Steps: stage \d+–\d+$/m);
		}
		for (const record of folds) {
			if (record.kind === "tool-batch") expect(record.provenance.briefGenerator).toBe("deterministic");
			// Whichever requests showed this fold's brief showed this exact brief: it was never replaced.
			const encoded = JSON.stringify(record.brief).slice(1, -1);
			for (const index of requestsShowing(harness, `fold ${record.id}`)) {
				expect(JSON.stringify(harness.requests[index]?.messages)).toContain(encoded);
			}
		}
		expect(model.some((record) => requestsShowing(harness, `fold ${record.id}`).length > 0)).toBe(true);
		// Usage is recorded in the session and counted in status.
		const branch = harness.session.sessionManager.getBranch();
		const usage = branch.filter(
			(entry) => entry.type === "custom" && entry.customType === `${PREFIX}${SUMMARIZER_ENTRY_SUFFIX}`,
		);
		const status = runtime.status(harness.session.extensionRunner.createContext());
		expect(status.summarizer?.usage.requests).toBe(harness.sideRequests.length);
		expect(usage.length).toBeGreaterThan(0);
		expect(usage.length).toBeLessThanOrEqual(harness.sideRequests.length);
		expect(status.instrument.unattributed).toBe(0);
	});

	it('makes no side request with summarizer "deterministic"', async () => {
		const { harness } = await stagedRun({ summarizer: "deterministic" });
		expect(harness.sideRequests).toHaveLength(0);
		expect(records(harness).every((record) => record.provenance.briefGenerator === "deterministic")).toBe(true);
	});
});

/**
 * The runtime folding on its own in the real Pi 1.6.0 host (SDK, faux
 * model): one user turn, two dozen large results of a tool that is not
 * read-only, a small window. Checked against the exact requests the model
 * received: occupancy stays in band, every rewrite is a runtime commit, Pi
 * never compacts, every folded stage is one exact peek away; and epoch
 * scheduling moves far fewer bytes than immediate folding for the same agent.
 */

import type { Message } from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { simulatePrefixCache } from "../../src/cost/prefix-cache.ts";
import { peekFold } from "../../src/fold/actions/peek.ts";
import { messageDigest } from "../../src/fold/engine/instrument.ts";
import type { PiFoldOptions } from "../../src/fold/options.ts";
import type { FoldRuntime } from "../../src/fold/pi/runtime.ts";
import { BACKSTOP_OCCUPANCY } from "../../src/fold/policy/ladder.ts";
import { registerRuntime } from "../../src/register.ts";
import { estimateMessageTokens } from "../../src/session/tokens.ts";
import { registerAgentTool, registerStageTool } from "../fixtures/stage-tool.ts";
import { callTools, createSdkHarness, reply, type SdkHarness, toolCall } from "../harness/sdk.ts";

const WINDOW = 40_000;
const STAGES = 24;
/** About 6,000 tokens per stage result: three or four fill the window. */
const LARGE_STAGE_LINES = 600;
/**
 * About 1,500 tokens per stage: small enough that several stay in the fresh
 * tail and the ladder waits for them to accumulate, so the agent's own marks
 * are what moves bytes.
 */
const SMALL_STAGE_LINES = 150;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const fact = (stage: number) => `FACT-${stage}-${(stage * 7919).toString(36)}`;

/** Deterministic stage output with one planted fact. */
function stageText(stage: number, stageLines: number): string {
	const lines = [`stage ${stage} report`, `planted: ${fact(stage)}`];
	for (let i = 0; i < stageLines; i++) lines.push(`stage ${stage} line ${i}: ${"lorem ipsum ".repeat(3)}`);
	return lines.join("\n");
}

async function stagedSession(
	options: PiFoldOptions,
	stageLines = LARGE_STAGE_LINES,
	reserveTokens = 4_096,
	contextWindow = WINDOW,
): Promise<{ harness: SdkHarness; runtime: FoldRuntime }> {
	let runtime: FoldRuntime | undefined;
	const extension = (pi: ExtensionAPI) => {
		runtime = registerRuntime(pi, options);
		registerStageTool(pi, (stage) => stageText(stage, stageLines));
		registerAgentTool(pi);
	};
	const harness = await createSdkHarness({
		extensions: [extension],
		tools: ["repo_stage", "active_context", "Agent"],
		contextWindow,
		settings: { compaction: { enabled: true, reserveTokens, keepRecentTokens: 8_000 } },
	});
	cleanups.push(() => harness.dispose());
	if (!runtime) throw new Error("fold runtime not loaded");
	return { harness, runtime };
}

/** One agentic turn: stage k each response; `marking` also folds stage k−2 alongside stage k. */
async function runStages(harness: SdkHarness, marking: boolean): Promise<void> {
	for (let k = 1; k <= STAGES; k++) {
		const calls = [toolCall("repo_stage", { stage: k }, `st-${k}`)];
		if (marking && k > 2) calls.push(toolCall("active_context", { action: "fold", ids: [`st-${k - 2}`] }, `mk-${k}`));
		harness.enqueue(callTools(calls));
	}
	harness.enqueue(reply("All stages done."));
	await harness.run("Run all stages.");
}

const withoutSystem = (messages: readonly Message[]) => messages.filter((m) => m.role !== "system");
const requestTokens = (messages: readonly Message[]) =>
	withoutSystem(messages).reduce((total, message) => total + estimateMessageTokens(message), 0);

/** Uncached prompt tokens over the run: each request less its longest common prefix with any earlier one. */
function uncachedTokens(harness: SdkHarness): number {
	const requests = harness.requests.map((request) => ({
		messages: withoutSystem(request.messages).map((message) => ({
			digest: messageDigest(message),
			tokens: estimateMessageTokens(message),
		})),
	}));
	return simulatePrefixCache(requests).freshTokens;
}

function statusOf(harness: SdkHarness, runtime: FoldRuntime) {
	return runtime.status(harness.session.extensionRunner.createContext());
}

describe("automatic ladder in Pi", () => {
	it("keeps a long single turn in band with lossless folds only: no compaction, every rewrite a commit", async () => {
		const { harness, runtime } = await stagedSession({});
		await runStages(harness, false);
		expect(harness.requests).toHaveLength(STAGES + 1);
		const peak = Math.max(...harness.requests.map((request) => requestTokens(request.messages)));
		expect(peak).toBeLessThanOrEqual(BACKSTOP_OCCUPANCY * WINDOW);
		const branch = harness.session.sessionManager.getBranch();
		expect(branch.filter((entry) => entry.type === "compaction")).toEqual([]);
		const status = statusOf(harness, runtime);
		expect(status.automatic.commits).toBeGreaterThan(0);
		expect(status.instrument.unattributed).toBe(0);
		expect(status.instrument.rewrites).toBeLessThanOrEqual(status.automatic.commits);
		for (const event of status.instrument.history) expect(event.causes).toContain("commit");
		// The newest stage is raw in the last request; every older one is folded and one exact peek away.
		const last = JSON.stringify(harness.requests.at(-1)?.messages);
		expect(last).toContain(fact(STAGES));
		expect(last).not.toContain(fact(1));
		const ws = runtime.workspace(harness.session.extensionRunner.createContext(), "command");
		// The ladder folds stages alone or as runs of batches (a span): every fold verifies, and each older
		// stage's fact is in one of them.
		const folded = status.folds;
		expect(folded.length).toBeGreaterThan(0);
		const peeks = await Promise.all(folded.map((fold) => peekFold(ws, fold.id)));
		for (const [i, fold] of folded.entries()) {
			expect(peeks[i]?.ok).toBe(true);
			expect(peeks[i]?.text).toContain(`source sha256 ${fold.sourceHash} verified`);
		}
		for (let k = 1; k <= STAGES - 3; k++) {
			expect(last).not.toContain(fact(k));
			expect(peeks.some((peek) => peek.text.includes(fact(k)))).toBe(true);
		}
	});

	it("epoch marks move no bytes and cost far less uncached input than folding each mark immediately", async () => {
		const epoch = await stagedSession({ foldScheduling: "epoch" }, SMALL_STAGE_LINES);
		await runStages(epoch.harness, true);
		const immediate = await stagedSession({ foldScheduling: "immediate" }, SMALL_STAGE_LINES);
		await runStages(immediate.harness, true);

		const epochStatus = statusOf(epoch.harness, epoch.runtime);
		const immediateStatus = statusOf(immediate.harness, immediate.runtime);
		for (const status of [epochStatus, immediateStatus]) expect(status.instrument.unattributed).toBe(0);
		// In epoch mode only runtime commits rewrite: a mark alone never changes a sent byte.
		for (const event of epochStatus.instrument.history) expect(event.causes).toEqual(["commit"]);
		expect(epochStatus.instrument.rewrites).toBeLessThan(immediateStatus.instrument.rewrites / 2);
		expect(uncachedTokens(epoch.harness)).toBeLessThan(uncachedTokens(immediate.harness));
		for (const harness of [epoch.harness, immediate.harness]) {
			const branch = harness.session.sessionManager.getBranch();
			expect(branch.filter((entry) => entry.type === "compaction")).toEqual([]);
		}
	});

	it("cancels Pi's threshold compaction when a lossless fold makes room, and says so in status", async () => {
		const RESERVE = 28_000;
		// Pi compacts above 40,000 − 28,000 tokens: a reserve larger than Pi's default, so Pi's line comes
		// before the ladder's own (which assumes Pi's default reserve until a compaction shows the real one).
		const { harness, runtime } = await stagedSession({}, SMALL_STAGE_LINES, RESERVE);
		await runStages(harness, false);
		const branch = harness.session.sessionManager.getBranch();
		expect(branch.filter((entry) => entry.type === "compaction")).toEqual([]);
		const status = statusOf(harness, runtime);
		expect(status.automatic.cancelledCompactions).toBeGreaterThan(0);
		expect(status.instrument.unattributed).toBe(0);
		const peak = Math.max(...harness.requests.map((request) => requestTokens(request.messages)));
		expect(peak).toBeLessThanOrEqual(WINDOW - RESERVE + 2 * 1_600);
	});

	it("commits stale folds for free after a blocking tool, and not when blockingTools is empty", async () => {
		// As the contract's blocking-tool case: 24 small stages in a 128k window, so the older stages have
		// left the working set and paid for their re-fetches, not yet for the rewrite too.
		const run = async (options: PiFoldOptions) => {
			const { harness, runtime } = await stagedSession(options, SMALL_STAGE_LINES, 4_096, 128_000);
			for (let k = 1; k <= STAGES; k++) harness.enqueue(callTools([toolCall("repo_stage", { stage: k }, `st-${k}`)]));
			harness.enqueue(callTools([toolCall("Agent", {}, "agent-1")]), reply("done"));
			await harness.run("Run the stages, then delegate.");
			return statusOf(harness, runtime).automatic;
		};
		const blocking = await run({});
		expect(blocking.lastCommit?.reason).toBe("free-rewrite");
		const none = await run({ blockingTools: [] });
		// Without the free rewrite the same stages wait until their rent covers the rewrite too: priced.
		expect(none.lastCommit?.reason).toBe("priced");
		expect(none.commits).toBeLessThanOrEqual(blocking.commits);
	});

	it("refuses an over-budget request before transmission when nothing can fold, out of band", async () => {
		const { harness, runtime } = await stagedSession({});
		await expect(harness.run(`Read this: ${"y".repeat(4 * WINDOW + 400)}`)).resolves.toBeDefined();
		expect(harness.requests).toEqual([]);
		expect(harness.ui.notifications.map((n) => n.message).join("\n")).toMatch(
			/request not sent.*over the [\d,]+-token budget/,
		);
		expect(statusOf(harness, runtime).automatic.fenceRefusals).toBe(1);
	});
});

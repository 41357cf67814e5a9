/**
 * Expand, reboundary and expand-after-compaction tell the agent the truth
 * (issue 18, items 5–7), in the real Pi 1.6.0 host (SDK, faux model): the
 * agent's calls go through the registered `active_context` tool and what it
 * is told is read from the next request the model receives.
 *
 * 5. An expand the serving budget cannot hold is refused with a peek slice;
 *    one past the ladder's pressure line is admitted with a warning, and the
 *    next request shows the expanded span raw.
 * 6. `reboundary` with `ids` under epoch scheduling (the default) leaves the
 *    pending mark it announces: `unmark` withdraws it, or the next commit
 *    folds it; and that commit (free after the dissolve's rewrite) never
 *    folds the dissolved span again as it was.
 * 7. `expand` of a fold a compaction removed from the window says so and
 *    points to `peek`, which still reads the exact source.
 */

import type { Message, ToolCall } from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { reboundary } from "../../src/fold/actions/actions.ts";
import type { FoldRuntime } from "../../src/fold/pi/runtime.ts";
import { registerRuntime } from "../../src/register.ts";
import { registerStageTool, stageReport } from "../fixtures/stage-tool.ts";
import { callTools, createSdkHarness, reply, type SdkHarness, toolCall } from "../harness/sdk.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Lines of a stage report per ~1,000 tokens. */
const LINES_PER_KILOTOKEN = 72;

async function session(
	stageKilotokens: (stage: number) => number,
	settings: { contextWindow: number; keepRecentTokens?: number },
): Promise<{ harness: SdkHarness; runtime: FoldRuntime }> {
	let runtime: FoldRuntime | undefined;
	const extension = (pi: ExtensionAPI) => {
		runtime = registerRuntime(pi, {});
		registerStageTool(pi, (stage) => stageReport(stage, stageKilotokens(stage) * LINES_PER_KILOTOKEN));
	};
	const harness = await createSdkHarness({
		extensions: [extension],
		tools: ["repo_stage", "active_context"],
		contextWindow: settings.contextWindow,
		persist: true,
		settings: { compaction: { enabled: false, keepRecentTokens: settings.keepRecentTokens ?? 20_000 } },
	});
	cleanups.push(() => harness.dispose());
	if (!runtime) throw new Error("fold runtime not loaded");
	return { harness, runtime };
}

/** One user turn: the model runs stage `k` (call id `st-k`), then answers. */
async function stageTurn(harness: SdkHarness, k: number): Promise<void> {
	harness.enqueue(callTools([toolCall("repo_stage", { stage: k }, `st-${k}`)]), reply(`Stage ${k} done.`));
	await harness.run(`Run stage ${k}.`);
}

/** One user turn: the model calls `active_context` with `args` (call id `callId`), then answers. */
async function contextCall(harness: SdkHarness, callId: string, args: ToolCall["arguments"]): Promise<string> {
	harness.enqueue(callTools([toolCall("active_context", args, callId)]), reply("Noted."));
	await harness.run(`Call ${callId}.`);
	return resultText(harness, callId);
}

/** What the model was told for tool call `callId`, from the first request that carried it. */
function resultText(harness: SdkHarness, callId: string): string {
	for (const request of harness.requests) {
		const result = request.messages.find(
			(message): message is Extract<Message, { role: "toolResult" }> =>
				message.role === "toolResult" && message.toolCallId === callId,
		);
		if (result) return result.content.map((part) => (part.type === "text" ? part.text : "")).join("");
	}
	throw new Error(`no request carried the result of ${callId}`);
}

const ctxOf = (harness: SdkHarness) => harness.session.extensionRunner.createContext();
/** The fold whose span holds the result of tool call `callId`. */
function foldOf(harness: SdkHarness, runtime: FoldRuntime, callId: string): string {
	const branch = harness.session.sessionManager.getBranch();
	const at = branch.findIndex(
		(entry) => entry.type === "message" && entry.message.role === "toolResult" && entry.message.toolCallId === callId,
	);
	const fold = runtime
		.status(ctxOf(harness))
		.folds.find((item) => item.parent === null && item.range[0] <= at && at < item.range[1]);
	if (!fold) throw new Error(`no top-level fold holds ${callId}`);
	return fold.id;
}
/** The first request that carried the result of tool call `callId`, as sent. */
function requestAfter(harness: SdkHarness, callId: string): string {
	const request = harness.requests.find((r) =>
		r.messages.some((message) => message.role === "toolResult" && message.toolCallId === callId),
	);
	return JSON.stringify(request?.messages);
}

describe("actions tell the truth in Pi (issue 18, items 5–7)", () => {
	it("5: an expand past the budget is refused with a peek slice; one past 80% is warned and stays raw", async () => {
		// ~10k tokens per stage on a 40k window: Pi's line (and the budget) is 40,000 − 16,384 = 23,616.
		const { harness, runtime } = await session(() => 10, { contextWindow: 40_000 });
		for (let k = 1; k <= 3; k++) await stageTurn(harness, k);
		const first = foldOf(harness, runtime, "st-1");
		const second = foldOf(harness, runtime, "st-2");
		expect(first).not.toBe(second);

		const warned = await contextCall(harness, "ex-1", { action: "expand", id: first });
		expect(warned).toContain("show their original content from the next request on");
		expect(warned).toMatch(/will hold ~\d+% of its budget: past 80% the automatic ladder folds other spans/);
		// The boundary after the expand ran the ladder past its pressure line; stage 1 came back raw all the same.
		expect(runtime.engine.foldState.data.expanded).toContain(first);
		expect(requestAfter(harness, "ex-1")).toContain(`stage 1 line ${10 * LINES_PER_KILOTOKEN - 1}:`);

		const refused = await contextCall(harness, "ex-2", { action: "expand", id: second });
		expect(refused).toContain(`Expand of ${second} refused, nothing changed`);
		expect(refused).toMatch(new RegExp(`"action":"peek","id":"${second}","offset":0,"bytes":\\d+`));
		expect(runtime.engine.foldState.data.expanded).not.toContain(second);
		expect(requestAfter(harness, "ex-2")).not.toContain(`stage 2 line ${10 * LINES_PER_KILOTOKEN - 1}:`);
	});

	it("6: reboundary with ids under epoch scheduling leaves the mark it announces: unmark withdraws it, or it commits", async () => {
		/** Three turns (the third the fresh tail), the oldest two folded by the person, and that fold's id. */
		const folded = async () => {
			const { harness, runtime } = await session((k) => (k === 3 ? 9 : 3), { contextWindow: 128_000 });
			for (let k = 1; k <= 3; k++) await stageTurn(harness, k);
			// A command folds at once, also under epoch scheduling. Both stages are named: the ladder leaves stages
			// this small and this recent raw (the working set), so no fold of its own holds them already.
			await harness.run("/fold-context st-1 st-2");
			return { harness, runtime, old: foldOf(harness, runtime, "st-1") };
		};
		// The agent re-cuts the fold to the span it meant, stage 1's batch alone.
		const recutArgs = (old: string) => ({ action: "reboundary", id: old, ids: ["st-1"] });
		const markedIn = (text: string) => /Marked tool-batch (f-[0-9a-f]+)/.exec(text)?.[1] ?? "";

		// Withdrawn in the same response (the tool runs its calls in order, before the boundary's commit), and
		// kept raw as the unmark's reply says to. The mark's id is content-derived: the same action, run on the
		// same workspace without applying, names it.
		const a = await folded();
		const preview = await reboundary(a.runtime.workspace(ctxOf(a.harness), "agent"), a.old, ["st-1"]);
		const predicted = preview.foldId ?? "";
		a.harness.enqueue(
			callTools([
				toolCall("active_context", recutArgs(a.old), "rb-1"),
				toolCall("active_context", { action: "unmark", id: predicted }, "um-1"),
				toolCall("active_context", { action: "protect", ids: ["st-1"] }, "pr-1"),
			]),
			reply("Noted."),
		);
		await a.harness.run("Re-cut it.");
		const recut = resultText(a.harness, "rb-1");
		const marked = markedIn(recut);
		expect(recut).toContain(`Dissolved ${a.old}.`);
		expect(marked, recut).toBe(predicted);
		expect(recut).toContain("its entries show raw until then");
		const unmarked = resultText(a.harness, "um-1");
		expect(unmarked).toContain(`Withdrew the pending mark ${marked}; it does not fold as your mark.`);
		expect(unmarked).toMatch(/to keep these entries raw: active_context \{"action":"protect","ids":\[/);
		expect(a.runtime.engine.foldState.data.marks).toEqual([]);
		// From the next request on stage 1 shows raw: the dissolve's rewrite (allowed by the tripwire), and the
		// ladder's commit at that boundary folded neither the dissolved span again nor the protected batch.
		const after = requestAfter(a.harness, "um-1");
		expect(after).toContain("stage 1 line 100:");
		expect(after).not.toContain(`fold ${a.old}`);
		const folds = a.runtime.status(ctxOf(a.harness)).folds.map((fold) => fold.id);
		expect(folds).not.toContain(a.old);
		expect(folds).not.toContain(marked);

		// Left alone, the mark folds at the next commit (the dissolve's rewrite makes that boundary's commit free).
		const b = await folded();
		const left = markedIn(await contextCall(b.harness, "rb-1", recutArgs(b.old)));
		expect(left).not.toBe("");
		expect(b.runtime.status(ctxOf(b.harness)).folds.map((fold) => fold.id)).toContain(left);
		const next = requestAfter(b.harness, "rb-1");
		expect(next).toContain(`fold ${left}`);
		expect(next).not.toContain("stage 1 line 100:");
		expect(next).not.toContain(`fold ${b.old}`);
	});

	it("6: a reboundary without ids shows the span raw from the next request on: the free commit folds nothing of it", async () => {
		const { harness, runtime } = await session((k) => (k === 3 ? 9 : 3), { contextWindow: 128_000 });
		for (let k = 1; k <= 3; k++) await stageTurn(harness, k);
		await harness.run("/fold-context st-1");
		const old = foldOf(harness, runtime, "st-1");
		const commits = runtime.status(ctxOf(harness)).automatic.commits;

		const dissolved = await contextCall(harness, "rb-1", { action: "reboundary", id: old });
		expect(dissolved).toContain(`Dissolved ${old}; its entries show raw from the next request on.`);
		const next = requestAfter(harness, "rb-1");
		expect(next).toContain("stage 1 line 100:");
		expect(next).toContain("stage 2 line 100:");
		expect(next).not.toContain(`fold ${old}`);
		expect(runtime.status(ctxOf(harness)).folds).toEqual([]);
		expect(runtime.status(ctxOf(harness)).automatic.commits).toBe(commits);
	});

	it("7: expand of a fold a compaction removed says so and points to peek, which reads the source", async () => {
		const { harness, runtime } = await session(() => 3, { contextWindow: 128_000, keepRecentTokens: 2_000 });
		await stageTurn(harness, 1);
		await stageTurn(harness, 2);
		await harness.run("/fold-context st-1");
		const id = foldOf(harness, runtime, "st-1");
		await harness.session.compact();
		const branch = harness.session.sessionManager.getBranch();
		const compaction = branch.findLast((entry) => entry.type === "compaction");
		expect(compaction?.type).toBe("compaction");

		const expanded = await contextCall(harness, "ex-1", { action: "expand", id });
		expect(expanded).toContain(`Fold ${id} was removed from the window by a compaction`);
		expect(expanded).toContain(`{"action":"peek","id":"${id}"}`);
		expect(runtime.engine.foldState.data.expanded).not.toContain(id);
		const peeked = await contextCall(harness, "pk-1", { action: "peek", id });
		expect(peeked).toMatch(new RegExp(`Fold ${id} \\(tool-batch\\), source sha256 [0-9a-f]{64} verified`));
		expect(peeked).toContain("stage 1 line 100:");
	});
});

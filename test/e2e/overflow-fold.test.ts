/**
 * A provider's overflow refusal gets a lossless attempt first (issue 18,
 * item 9), in the real Pi 1.6.0 host (SDK, faux model standing in for a
 * provider whose real window is smaller than the model's advertised one: it
 * refuses any request over LIMIT tokens as too long). Three ~3k-token tool
 * batches and a long final ask overflow it; folding the batches makes the
 * request fit, so the overflow compaction is cancelled and the retry (the
 * `agent_before_settle` continuation) carries the folded window: answered,
 * no compaction written, every original one verified peek away. When the
 * overflow line is out of folding's reach, nothing folds and Pi's recovery
 * compaction runs as before.
 */

import type { Message } from "@earendil-works/pi-ai";
import { fauxAssistantMessage } from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { parseCompactionDetails } from "../../src/compaction/records/details.ts";
import { peekFold } from "../../src/fold/actions/peek.ts";
import type { FoldRuntime } from "../../src/fold/pi/runtime.ts";
import { registerRuntime } from "../../src/register.ts";
import { spanHash } from "../../src/session/canonical.ts";
import { estimateMessageTokens } from "../../src/session/tokens.ts";
import { registerStageTool, stageReport } from "../fixtures/stage-tool.ts";
import { OVERFLOW_ERROR_MESSAGE } from "../harness/loopback-provider.ts";
import { callTools, createSdkHarness, reply, type SdkHarness, toolCall } from "../harness/sdk.ts";

/** The model's advertised window: Pi's threshold and pi-fold's fence never fire under it. */
const WINDOW = 64_000;
/** What the provider really accepts (messages' estimated tokens). */
const LIMIT = 16_000;
/** Lines of one stage report: about 3,000 tokens. */
const STAGE_LINES = 215;
const STAGES = 3;
/** The final ask: ~9,000 tokens, the fresh tail on its own, so the three batches are what may fold. */
const LONG_ASK = `Now the final step: ${"keep every stage's result in mind; ".repeat(1_000)}`;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const requestTokens = (messages: readonly Message[]) =>
	messages.filter((m) => m.role !== "system").reduce((total, message) => total + estimateMessageTokens(message), 0);

/** The provider: a request over `limit` is refused as too long, any other is answered with `text`. */
const limited =
	(text: string, limit = LIMIT) =>
	(context: { messages: Message[] }) =>
		requestTokens(context.messages) > limit
			? fauxAssistantMessage([], { stopReason: "error", errorMessage: OVERFLOW_ERROR_MESSAGE })
			: fauxAssistantMessage(text);

async function session(
	reserveTokens: number,
	keepRecentTokens = 2_000,
): Promise<{ harness: SdkHarness; runtime: FoldRuntime }> {
	let runtime: FoldRuntime | undefined;
	const extension = (pi: ExtensionAPI) => {
		runtime = registerRuntime(pi, {});
		registerStageTool(pi, (stage) => stageReport(stage, STAGE_LINES));
	};
	const harness = await createSdkHarness({
		extensions: [extension],
		tools: ["repo_stage", "active_context"],
		contextWindow: WINDOW,
		persist: true,
		// keepRecentTokens under the window (by default), so Pi prepares its overflow compaction at all.
		settings: { compaction: { enabled: true, reserveTokens, keepRecentTokens } },
	});
	cleanups.push(() => harness.dispose());
	if (!runtime) throw new Error("fold runtime not loaded");
	for (let k = 1; k <= STAGES; k++) harness.enqueue(callTools([toolCall("repo_stage", { stage: k }, `st-${k}`)]));
	harness.enqueue(reply("Stages done."));
	await harness.run("Run the three stages.");
	expect(harness.requests.every((request) => requestTokens(request.messages) <= LIMIT)).toBe(true);
	return { harness, runtime };
}

const branchOf = (harness: SdkHarness) => harness.session.sessionManager.getBranch();

/** The long ask: refused as too long, then retried with the folded window and answered. */
async function askRefusedThenRetried(harness: SdkHarness) {
	const before = harness.requests.length;
	harness.enqueue(limited("Answered after folding."), limited("Answered after folding."));
	const notices = await harness.run(LONG_ASK);
	const [refused, retried, ...more] = harness.requests.slice(before);
	expect(more).toEqual([]);
	expect(requestTokens(refused?.messages ?? [])).toBeGreaterThan(LIMIT);
	expect(requestTokens(retried?.messages ?? [])).toBeLessThanOrEqual(LIMIT);
	const last = harness.session.messages.at(-1);
	expect(last).toMatchObject({ role: "assistant", stopReason: "stop" });
	expect(JSON.stringify(last)).toContain("Answered after folding.");
	return { notices, retried };
}

describe("an overflow refusal in Pi", () => {
	it("folds the batches, cancels the compaction and retries: answered, nothing summarized, originals one peek away", async () => {
		const { harness, runtime } = await session(4_000);
		const ctx = harness.session.extensionRunner.createContext();
		expect(runtime.status(ctx).folds).toEqual([]);
		const { notices, retried } = await askRefusedThenRetried(harness);
		// The retry is the same ask over the folded window: no summary, no compaction.
		expect(retried?.messages.at(-1)?.role).toBe("user");
		expect(JSON.stringify(retried?.messages.at(-1)?.content)).toContain("keep every stage's result in mind");
		expect(branchOf(harness).filter((entry) => entry.type === "compaction")).toEqual([]);
		const sent = JSON.stringify(retried?.messages);
		expect(sent).not.toContain("The conversation history before this point was compacted");
		expect(sent).not.toContain("stage 1 line 100:");
		expect(sent).toContain("[pi-fold fold f-");

		// The person is told what happened.
		const status = runtime.status(ctx);
		const folded = status.automatic.lastCommit?.folds.map((fold) => fold.id) ?? [];
		expect(notices.join("\n")).toMatch(
			new RegExp(
				`provider refused the request as too long .*Folded ${folded.length} spans? losslessly instead.*Pi retries the request with the folded window; nothing was summarized`,
			),
		);
		expect(status.automatic.lastCommit?.reason).toBe("overflow");
		expect(status.automatic.cancelledCompactions).toBe(1);
		// Strict append-only stays on (the e2e tripwire): the rewrite was the commit's and nothing else's.
		expect(status.instrument.unattributed).toBe(0);
		for (const event of status.instrument.history) expect(event.causes).toContain("commit");

		// Every original is intact in the log and one verified peek away; the log's bytes hash to each record's.
		const results = branchOf(harness).flatMap((entry) =>
			entry.type === "message" && entry.message.role === "toolResult" ? [entry.message] : [],
		);
		expect(results.map((result) => JSON.stringify(result.content))).toEqual(
			[1, 2, 3].map((k) => JSON.stringify([{ type: "text", text: stageReport(k, STAGE_LINES) }])),
		);
		expect(folded.length).toBeGreaterThan(0);
		expect(status.folds.map((fold) => fold.id).sort()).toEqual([...folded].sort());
		const ws = runtime.workspace(ctx, "command");
		let peeked = "";
		for (const fold of status.folds) {
			const span = branchOf(harness).slice(fold.range[0], fold.range[1]);
			expect(spanHash(span)).toBe(fold.sourceHash);
			const peek = await peekFold(ws, fold.id);
			expect(peek.ok, peek.text).toBe(true);
			expect(peek.text).toContain(`source sha256 ${fold.sourceHash} verified`);
			peeked += peek.text;
		}
		for (let k = 1; k <= STAGES; k++) expect(peeked).toContain(`stage ${k} line ${STAGE_LINES - 1}:`);
	});

	it("when folding cannot reach the overflow line, folds nothing, says so, and Pi's compaction recovers", async () => {
		// 90% of the ~21k-token failed request less 14,000 reserved leaves ~5k: three batches cannot get there.
		const { harness, runtime } = await session(14_000);
		const before = harness.requests.length;
		harness.enqueue(limited("Answered after compacting."), limited("Answered after compacting."));

		const notices = await harness.run(LONG_ASK);

		expect(notices.join("\n")).toMatch(
			/provider refused the request as too long .*folding every eligible span would free only ~[\d,]+ tokens\. Folding was not enough, so nothing was folded; Pi's recovery compaction goes ahead/,
		);
		const compactions = branchOf(harness).filter((entry) => entry.type === "compaction");
		expect(compactions).toHaveLength(1);
		expect(parseCompactionDetails(compactions[0]?.details)).toMatchObject({ ok: true });
		expect(runtime.status(harness.session.extensionRunner.createContext()).folds).toEqual([]);
		const [, retried] = harness.requests.slice(before);
		expect(requestTokens(retried?.messages ?? [])).toBeLessThanOrEqual(LIMIT);
		expect(harness.session.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "stop" });
		expect(JSON.stringify(harness.session.messages.at(-1))).toContain("Answered after compacting.");
	});

	it("a folded retry the provider refuses too ends the turn once (no loop), and the next ask recovers by compacting", async () => {
		// A provider whose real window (8,000) is far below 90% of the refused request: the folded retry fails too.
		const { harness, runtime } = await session(4_000);
		const before = harness.requests.length;
		harness.enqueue(limited("never", 8_000), limited("never", 8_000), limited("never", 8_000));

		await harness.run(LONG_ASK);

		// The refused ask and the refused retry; Pi's one recovery attempt is spent, so no third request.
		expect(harness.requests.length - before).toBe(2);
		expect(harness.session.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "error" });
		expect(runtime.status(harness.session.extensionRunner.createContext()).automatic.lastCommit?.reason).toBe(
			"overflow",
		);
		expect(branchOf(harness).filter((entry) => entry.type === "compaction")).toEqual([]);

		// The next ask overflows again; nothing more can fold, so Pi's recovery compaction runs and it is answered.
		const next = harness.requests.length;
		harness.enqueue(limited("Answered after compacting.", 8_000), limited("Answered after compacting.", 8_000));
		const notices = await harness.run("Go on.");
		expect(notices.join("\n")).toContain("Folding was not enough");
		expect(branchOf(harness).filter((entry) => entry.type === "compaction")).toHaveLength(1);
		expect(harness.requests.length - next).toBe(2);
		expect(JSON.stringify(harness.session.messages.at(-1))).toContain("Answered after compacting.");
	});

	it("with the window under keepRecentTokens (Pi asks no one: nothing to compact), folds and retries at the settle boundary", async () => {
		// Pi's default keepRecentTokens (20,000) holds the whole ~19k-token request: Pi omits the failed reply and stops.
		const { harness, runtime } = await session(4_000, 20_000);
		const { notices } = await askRefusedThenRetried(harness);
		expect(notices.join("\n")).toMatch(/Folded \d+ spans? losslessly instead.*Pi retries the request/);
		expect(branchOf(harness).filter((entry) => entry.type === "compaction")).toEqual([]);
		const status = runtime.status(harness.session.extensionRunner.createContext());
		expect(status.automatic.lastCommit?.reason).toBe("overflow");
		// No compaction was asked for, so none was cancelled.
		expect(status.automatic.cancelledCompactions).toBe(0);
	});
});

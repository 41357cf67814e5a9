/**
 * Repeated tool call ids in real Pi 1.6.0 (issue 33): some providers and
 * local model servers number tool calls per response, so a second user turn
 * calls `st-01`, `st-02`, … again. The oracle is the same workload with
 * fresh ids in the second turn (as long as the repeated ones, the same tool
 * output): pi-fold must commit the same folds at the same requests and send
 * the same window, in one process and across a resume; and peek, search and
 * `/context` must name the right fold for each turn's output.
 */

import type { Message } from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { searchWorkspace } from "../../src/fold/actions/search-action.ts";
import type { CommitSummary } from "../../src/fold/engine/commit.ts";
import type { FoldRuntime } from "../../src/fold/pi/runtime.ts";
import { registerRuntime } from "../../src/register.ts";
import { requestTokens } from "../contract/cases.ts";
import { registerStageTool, stageReport } from "../fixtures/stage-tool.ts";
import { callTools, createSdkHarness, reply, type SdkHarness, toolCall } from "../harness/sdk.ts";

const WINDOW = 40_000;
const STAGES = 12;
/** About 1,900 tokens a stage: the ladder folds several times a turn in this window. */
const STAGE_LINES = 150;
/** Turn 2 runs stages 101…: their output differs from turn 1's, in both variants alike. */
const SECOND_TURN_STAGE = 100;
const PREFIX = "pi-fold-active-context";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Turn 2's call ids: turn 1's again (`st-01`…), or fresh ones of the same length (`su-01`…). */
const callId = (turn: number, stage: number, repeat: boolean) =>
	`${turn === 2 && !repeat ? "su" : "st"}-${String(stage).padStart(2, "0")}`;

async function open(resume?: SdkHarness): Promise<{ harness: SdkHarness; runtime: () => FoldRuntime }> {
	let runtime: FoldRuntime | undefined;
	const harness = await createSdkHarness({
		extensions: [
			(pi: ExtensionAPI) => {
				runtime = registerRuntime(pi, { summarizer: "deterministic" });
				registerStageTool(pi, (stage) => stageReport(stage, STAGE_LINES));
			},
		],
		tools: ["repo_stage", "active_context"],
		contextWindow: WINDOW,
		persist: true,
		...(resume ? { resume } : {}),
	});
	return {
		harness,
		runtime: () => {
			if (!runtime) throw new Error("pi-fold did not register");
			return runtime;
		},
	};
}

async function turn(harness: SdkHarness, turnNumber: number, repeat: boolean): Promise<void> {
	for (let k = 1; k <= STAGES; k++) {
		const stage = turnNumber === 2 ? SECOND_TURN_STAGE + k : k;
		harness.enqueue(callTools([toolCall("repo_stage", { stage }, callId(turnNumber, k, repeat))]));
	}
	harness.enqueue(reply(`Turn ${turnNumber} done.`));
	await harness.run(`Run turn ${turnNumber}'s stages.`);
}

/** Run both turns (with a resume between them when asked); returns what the oracle compares. */
async function run(repeat: boolean, resume: boolean) {
	const first = await open();
	let current = first;
	cleanups.push(() => current.harness.dispose());
	await turn(first.harness, 1, repeat);
	if (resume) {
		await first.harness.close();
		current = await open(first.harness);
	}
	await turn(current.harness, 2, repeat);
	const sent = resume ? [...first.harness.requests, ...current.harness.requests] : current.harness.requests;
	const requests: Message[][] = sent.map((request) => request.messages);
	const branch = current.harness.session.sessionManager.getBranch();
	const commits = branch.flatMap((entry) =>
		entry.type === "custom" && entry.customType === `${PREFIX}:commit`
			? [(entry.data as { summary: CommitSummary }).summary]
			: [],
	);
	// What the model reads, with the call ids and the fold ids they hash into written out; what differs run to run
	// by itself is left aside: the faux provider's bookkeeping (times, usage, its api tag) and the byte counts of
	// folded sources, whose entries carry times and durations.
	const neutral = (messages: readonly Message[]) =>
		JSON.stringify(
			messages
				.filter((message) => message.role !== "system")
				.map((message) => ({
					role: message.role,
					content: message.content,
					...(message.role === "toolResult" ? { call: message.toolCallId } : {}),
				})),
		)
			.replace(/s[tu]-\d\d/g, "id")
			.replace(/f-[0-9a-f]{12}/g, "f-id")
			.replace(/\d+ bytes folded/g, "n bytes folded");
	const secondAsk = branch.findLastIndex((entry) => entry.type === "message" && entry.message.role === "user");
	return {
		harness: current.harness,
		runtime: current.runtime(),
		/** Commits the ladder made in turn 2: none is the failure (folding stops once ids repeat). */
		secondTurnCommits: branch
			.slice(secondAsk)
			.filter((entry) => entry.type === "custom" && entry.customType === `${PREFIX}:commit`).length,
		oracle: {
			commits: commits.map((commit) => [commit.reason, commit.folds.map((fold) => fold.rung), commit.freedTokens]),
			requests: requests.map(requestTokens),
			lastWindow: neutral(requests.at(-1) ?? []),
			compactions: branch.filter((entry) => entry.type === "compaction").length,
		},
	};
}

describe("repeated tool call ids in Pi", () => {
	it.each([
		["in one process", false],
		["across a resume", true],
	] as const)("fold %s exactly as fresh ids do: the same commits, requests and window", async (_name, resume) => {
		const fresh = await run(false, resume);
		const repeated = await run(true, resume);
		// The second turn gave the ladder work: it committed in both turns.
		expect(fresh.oracle.commits.length).toBeGreaterThan(fresh.secondTurnCommits);
		expect(fresh.secondTurnCommits).toBeGreaterThan(0);
		expect(repeated.secondTurnCommits).toBe(fresh.secondTurnCommits);
		expect(fresh.oracle.compactions).toBe(0);
		expect(repeated.oracle).toEqual(fresh.oracle);
	});

	it("search, peek and /context name the fold holding each turn's own output", async () => {
		const { harness, runtime } = await run(true, false);
		const ctx = harness.session.extensionRunner.createContext();
		const ws = runtime.workspace(ctx, "command");
		const folds = runtime.status(ctx).folds;
		// Turn 1's stage 1 and turn 2's stage 101 were both called st-01: each line is found in the fold over its own call.
		for (const stage of [1, SECOND_TURN_STAGE + 1]) {
			const found = await searchWorkspace(ws, runtime.evidence, { query: `stage ${stage} line 7:` });
			if (!("result" in found)) throw new Error(found.text);
			expect(found.result.total).toBe(1);
			const hit = found.result.hits[0];
			const holder = folds.find((fold) => fold.id === hit?.id);
			if (!holder || !hit) throw new Error(`no fold holds stage ${stage}`);
			const call = ws.branch.findIndex((entry) => JSON.stringify(entry).includes(`"arguments":{"stage":${stage}}`));
			expect(call).toBeGreaterThanOrEqual(holder.range[0]);
			expect(call).toBeLessThan(holder.range[1]);
			const peek = (await harness.run(`/context peek ${hit.id}`)).join("\n");
			expect(peek).toContain(`stage ${stage} report`);
		}
	});
});

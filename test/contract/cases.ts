/**
 * The engine's contract: one list of cases every host runs, and what each
 * must show. The hosts are the Pi adapter in real Pi 1.6.0 (SDK harness,
 * faux model), the headless player replaying the log Pi wrote (the driver
 * behind the report and the benchmarks; src/fold/engine/headless.ts), and
 * the report's replay (src/cost/fold-replay.ts: the same engine over the log
 * without pi-fold's entries, Pi's threshold compaction modelled). A case a
 * host cannot run names the host and why, here and nowhere else.
 *
 * A case checks behaviour, not only agreement: every host runs the same
 * engine, so a bug planted in it (the fence's commit gone, the rent-or-buy
 * threshold doubled) would keep the hosts in agreement and must still fail
 * the case's own expectations. test/e2e/contract.test.ts runs the table.
 */

import { fauxAssistantMessage, type Message } from "@earendil-works/pi-ai";
import type { ExtensionAPI, SessionEntry } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { expect } from "vitest";
import type { CommitOutcome } from "../../src/fold/engine/automatic.ts";
import type { CommitSummary } from "../../src/fold/engine/commit.ts";
import type { FoldRecord } from "../../src/fold/lattice/records.ts";
import type { PiFoldOptions } from "../../src/fold/options.ts";
import { MIN_COMMIT_FREED_TOKENS } from "../../src/fold/policy/ladder.ts";
import { estimateMessageTokens } from "../../src/session/tokens.ts";
import { REAL_SESSIONS, realBranch } from "../fixtures/fold.ts";
import { registerAgentTool, registerStageTool, stageReport } from "../fixtures/stage-tool.ts";
import { OVERFLOW_ERROR_MESSAGE } from "../harness/loopback-provider.ts";
import { type RecordedScript, recordedScript } from "../harness/recorded-session.ts";
import { callTools, type HarnessSettings, reply, type SdkHarness, toolCall } from "../harness/sdk.ts";

export type ContractHost = "pi" | "headless" | "replay";

/** What every host reports of one case's run, read off the branch it ended with and the requests it sent. */
export interface ContractRun {
	host: ContractHost;
	/** The automatic commits in order (the `:commit` entries' summaries). */
	commits: CommitSummary[];
	/** Estimated tokens of each request's messages (system prompt excluded), in order. */
	requests: number[];
	/** The serving budget the host measured against. */
	budget: number | undefined;
	compactions: number;
	cancelledCompactions: number;
	unattributed: number;
	/** Every fold record the branch holds. */
	records: FoldRecord[];
	branch: readonly SessionEntry[];
	/** Every automatic commit's outcome (the headless player's; Pi's are the same, by parity). */
	outcomes?: readonly CommitOutcome[];
}

/** The Pi session a case drives: the current harness, a resume of its file, and the runtime's reading. */
export interface PiSession {
	harness: SdkHarness;
	/** Estimated tokens the next request will hold (the runtime's reading), system prompt and tools included. */
	nextWindow(): number;
	/** The serving budget of the next request. */
	budget(): number;
	/** Close this process and open the same session file in a new one (a resume). */
	resume(): Promise<SdkHarness>;
}

export interface ContractCase {
	name: string;
	/** What the case holds every host to. */
	says: string;
	options: PiFoldOptions;
	contextWindow: number;
	/** Pi's settings (compaction and retry); the replay models Pi's threshold compaction from them when enabled. */
	settings?: HarnessSettings;
	/** Persist the session to a file (a resume needs one). */
	persist?: boolean;
	/** Tools the session offers (pi-fold's own is added). */
	tools(pi: ExtensionAPI): void;
	toolNames: string[];
	/** Drive real Pi through the case's session. */
	drive(session: PiSession): Promise<void>;
	/** What each host's run must show. */
	expect(run: ContractRun): void;
	/** Hosts that cannot run the case, each with the reason. */
	cannot?: Partial<Record<Exclude<ContractHost, "pi">, string>>;
}

const PREFIX = "pi-fold-active-context";

/**
 * Holds for every run of every case: no rewrite without a cause, and the
 * ladder's rent-or-buy rule, a miss priced in (the expected re-fetches of what
 * a fold hides are part of what it costs).
 */
export function holdsAlways(run: ContractRun): void {
	expect(run.unattributed, `${run.host}: unattributed rewrites`).toBe(0);
	for (const commit of run.commits)
		if (commit.reason === "priced")
			expect(commit.carriedCost, `${run.host}: a priced commit pays for itself`).toBeGreaterThanOrEqual(
				commit.rewriteCost + commit.refetchCost,
			);
	// Rent or buy: a boundary that could free enough declines only while the rent paid is under the rewrite's
	// price and the re-fetches its folds are expected to need.
	for (const outcome of run.outcomes ?? []) {
		if (outcome.kind !== "declined") continue;
		const { decision } = outcome;
		if (decision.commit || decision.freedTokens < MIN_COMMIT_FREED_TOKENS) continue;
		expect(decision.carriedCost, `${run.host}: declined "${decision.declined}"`).toBeLessThan(
			decision.rewriteCost + decision.refetchCost,
		);
	}
}

const reasons = (run: ContractRun) => run.commits.map((commit) => commit.reason);
const peak = (run: ContractRun) => Math.max(0, ...run.requests);

/** Pi's estimate of a request's messages (system prompt excluded), as every host counts them. */
export function requestTokens(messages: readonly Message[]): number {
	return messages
		.filter((m) => m.role !== "system")
		.reduce((total, message) => total + estimateMessageTokens(message), 0);
}

/** One agentic turn: `repo_stage` once per response for the given stages, then a closing reply. */
async function stages(harness: SdkHarness, ask: string, from: number, to: number, closing = "Done."): Promise<void> {
	for (let k = from; k <= to; k++) harness.enqueue(callTools([toolCall("repo_stage", { stage: k }, `st-${k}`)]));
	harness.enqueue(reply(closing));
	await harness.run(ask);
}

/** Tools named as a log's, each answering a call with the result the log recorded for its id. */
function recordedTools(script: RecordedScript, names: readonly string[]) {
	return (pi: ExtensionAPI) => {
		for (const name of names) {
			pi.registerTool({
				name,
				label: name,
				description: `Recorded ${name}.`,
				parameters: Type.Object({}, { additionalProperties: true }),
				async execute(toolCallId) {
					const recorded = script.results.get(toolCallId)?.[0];
					if (!recorded)
						return {
							content: [{ type: "text", text: `no recorded result for ${toolCallId}` }],
							details: {},
							isError: true,
						};
					return { content: recorded.content, details: recorded.details ?? {}, isError: recorded.isError };
				},
			});
		}
	};
}

/** A real log's opening turns played in Pi: the faux model answers each request with the recorded reply. */
function realLogCase(name: keyof typeof REAL_SESSIONS, turns: number): ContractCase {
	const script = recordedScript(realBranch(REAL_SESSIONS[name]));
	const toolNames = ["read", "bash", "edit", "write"];
	return {
		name: `ordinary turns (${name} log)`,
		says: "the ladder commits on its own at turn boundaries; every host persists the same commits",
		options: { summarizer: "deterministic" },
		// Anthropic's window: the real requests fit, so only the ladder's own decisions fold.
		contextWindow: 200_000,
		settings: { retry: { enabled: false } },
		tools: recordedTools(script, toolNames),
		toolNames,
		async drive({ harness }) {
			for (const turn of script.turns.slice(0, turns)) {
				const failed = turn.requests.findIndex((request) => request.failed);
				const requests = failed === -1 ? turn.requests : turn.requests.slice(0, failed + 1);
				for (const request of requests)
					harness.enqueue(
						fauxAssistantMessage(request.reply.content, {
							stopReason: request.reply.stopReason,
							...(request.reply.errorMessage ? { errorMessage: request.reply.errorMessage } : {}),
						}),
					);
				await harness.run(turn.text || "(empty)");
				// Replies a run did not reach are dropped, so the next turn starts with its own.
				while (harness.pendingSteps() > 0) await harness.run("(continue)");
			}
		},
		expect(run) {
			expect(run.commits.length).toBeGreaterThanOrEqual(2);
			expect(run.compactions).toBe(0);
		},
	};
}

/**
 * Model briefs come from side requests only Pi makes (the summarizer case):
 * every other case writes deterministic briefs, so the log holds nothing the
 * headless player could not decide itself.
 */
const DETERMINISTIC = { summarizer: "deterministic" } as const;

/** Lines of a stage report of about 3,000 tokens. */
const STAGE_LINES = 215;
/** Lines of a small stage report (~1,900 tokens): several stay in the fresh tail, so the ladder waits. */
const SMALL_STAGE_LINES = 150;
const stageTools = (lines: number) => (pi: ExtensionAPI) => {
	registerStageTool(pi, (stage) => stageReport(stage, lines));
	registerAgentTool(pi);
};
const STAGE_TOOLS = ["repo_stage", "Agent"];

/** An ask of about `tokens` estimated tokens. */
const askOf = (tokens: number) => `Next: ${"keep the stages in mind; ".repeat(Math.ceil((tokens * 4) / 25))}`;

const fence: ContractCase = {
	name: "budget guard and fence",
	says: "a request over the serving budget is folded under it before it goes out, by a fence commit",
	options: DETERMINISTIC,
	contextWindow: 40_000,
	tools: stageTools(STAGE_LINES),
	toolNames: STAGE_TOOLS,
	async drive(session) {
		await stages(session.harness, "Run two stages.", 1, 2);
		// Too small to fold at a boundary; a long ask then takes the next request past the budget.
		const over = session.budget() - session.nextWindow() + 2_000;
		session.harness.enqueue(reply("Noted."));
		await session.harness.run(askOf(over));
	},
	expect(run) {
		expect(reasons(run)).toEqual(["fence"]);
		expect(peak(run)).toBeLessThanOrEqual(run.budget ?? 0);
	},
};

const THRESHOLD_RESERVE = 28_000;
const threshold: ContractCase = {
	name: "threshold compaction",
	says: "a lossless commit under Pi's compaction line stands in for Pi's threshold compaction",
	options: DETERMINISTIC,
	contextWindow: 40_000,
	// Pi compacts above 40,000 − 28,000 tokens, before the ladder's own lines (it assumes Pi's default reserve).
	settings: { compaction: { enabled: true, reserveTokens: THRESHOLD_RESERVE, keepRecentTokens: 8_000 } },
	tools: stageTools(SMALL_STAGE_LINES),
	toolNames: STAGE_TOOLS,
	async drive({ harness }) {
		await stages(harness, "Run twelve stages.", 1, 12);
	},
	expect(run) {
		expect(run.compactions).toBe(0);
		expect(run.cancelledCompactions).toBeGreaterThan(0);
		expect(reasons(run)).toContain("threshold");
	},
	cannot: {
		headless: "Pi's threshold check is Pi's own, not an event in the log the player replays; the replay models it",
	},
};

/** What the provider really accepts (messages' estimated tokens): less than the window the model advertises. */
const OVERFLOW_LIMIT = 16_000;
const limited = (text: string) => (context: { messages: Message[] }) =>
	requestTokens(context.messages) > OVERFLOW_LIMIT
		? fauxAssistantMessage([], { stopReason: "error", errorMessage: OVERFLOW_ERROR_MESSAGE })
		: fauxAssistantMessage(text);

const overflow: ContractCase = {
	name: "overflow",
	says: "a provider's overflow refusal is answered by a lossless fold and a retry that fits, not a summary",
	options: DETERMINISTIC,
	contextWindow: 64_000,
	settings: { compaction: { enabled: true, reserveTokens: 4_000, keepRecentTokens: 2_000 } },
	persist: true,
	tools: stageTools(STAGE_LINES),
	toolNames: STAGE_TOOLS,
	async drive({ harness }) {
		await stages(harness, "Run three stages.", 1, 3);
		harness.enqueue(limited("Answered after folding."), limited("Answered after folding."));
		await harness.run(askOf(9_000));
	},
	expect(run) {
		expect(run.compactions).toBe(0);
		expect(reasons(run)).toContain("overflow");
		expect(run.requests.at(-1)).toBeLessThanOrEqual(OVERFLOW_LIMIT);
	},
	cannot: {
		headless: "the player sends nothing, so no provider refuses a request: the refusal and its retry are Pi's",
		replay: "the replay sends nothing, so no provider refuses a request: the refusal and its retry are Pi's",
	},
};

const actionThenSettle: ContractCase = {
	name: "action then settle",
	says: "an agent's fold in a run's last tool call lands by the time the run settles; the next request shows it",
	options: { ...DETERMINISTIC, foldScheduling: "immediate" },
	contextWindow: 200_000,
	tools: stageTools(STAGE_LINES),
	toolNames: STAGE_TOOLS,
	async drive({ harness }) {
		harness.enqueue(
			callTools([toolCall("repo_stage", { stage: 1 }, "st-1")]),
			callTools([toolCall("active_context", { action: "fold", ids: ["st-1"] }, "fold-1")]),
			reply("Folded stage one."),
			reply("Next."),
		);
		await harness.run("Run stage one, then fold it.");
		await harness.run("Go on.");
	},
	expect(run) {
		const record = run.records.find((candidate) => candidate.kind === "tool-batch");
		expect(record?.provenance.origin).toBe("agent");
		// The request after the run: the brief, not the stage's lines.
		expect(run.requests.at(-1)).toBeLessThan(1_500);
		expect(run.commits).toEqual([]);
	},
	cannot: {
		headless: "an action is the agent's tool call, which Pi runs; the player replays a log and runs no tool",
		replay: "an action is the agent's tool call, which Pi runs; the replay runs no tool",
	},
};

/** Stages the blocking-tool case runs before its blocking call (~1,900 tokens each, ~46k in all). */
const BLOCKING_STAGES = 24;
const blockingTool: ContractCase = {
	name: "blocking tool",
	says: "after a blocking tool the prefix cache is cold, so the next boundary commits stale folds for free",
	options: DETERMINISTIC,
	// Room for every stage without the backstop, and enough stages that the older ones have left the working
	// set and paid for their expected re-fetches but not yet for the rewrite too: the blocking tool makes the
	// rewrite free, so that boundary commits them (a stage fewer, nothing has paid; more, a priced commit).
	contextWindow: 128_000,
	tools: stageTools(SMALL_STAGE_LINES),
	toolNames: STAGE_TOOLS,
	async drive({ harness }) {
		for (let k = 1; k <= BLOCKING_STAGES; k++)
			harness.enqueue(callTools([toolCall("repo_stage", { stage: k }, `st-${k}`)]));
		harness.enqueue(callTools([toolCall("Agent", {}, "agent-1")]), reply("done"));
		await harness.run(`Run ${BLOCKING_STAGES} stages, then delegate.`);
	},
	expect(run) {
		expect(reasons(run).at(-1)).toBe("free-rewrite");
	},
};

/** Lines of a large stage report (~6,000 tokens): three or four fill a 40k window. */
const LARGE_STAGE_LINES = 600;

const summarizer: ContractCase = {
	name: "model summarizer on",
	says: "with the model summarizer on, the ladder's consolidations carry the briefs it prepared",
	options: { summarizer: "session" },
	contextWindow: 40_000,
	tools: stageTools(LARGE_STAGE_LINES),
	toolNames: STAGE_TOOLS,
	async drive({ harness }) {
		// Folds by the dozen, so the ladder consolidates; each consolidation is prepared when it becomes eligible.
		await stages(harness, "Run all stages.", 1, 30);
	},
	expect(run) {
		const model = run.records.filter((record) => record.provenance.briefGenerator === "model");
		expect(model.length).toBeGreaterThan(0);
		for (const record of model) expect(record.kind).not.toBe("tool-batch");
		expect(run.compactions).toBe(0);
	},
	cannot: {
		headless: "the player prepares no model briefs: those in the log come from side requests it does not make",
		replay: "the replay prices the summarizer's requests but writes deterministic briefs",
	},
};

/** Tokens a turn's closing reply and the next ask add to a request (with their message overhead): well under a stage. */
const RESUME_TURN_TOKENS = 100;

const resume: ContractCase = {
	name: "resume",
	says: "a resumed session's first request is the persisted window, and the ladder goes on committing",
	options: DETERMINISTIC,
	contextWindow: 40_000,
	persist: true,
	tools: stageTools(SMALL_STAGE_LINES),
	toolNames: STAGE_TOOLS,
	async drive(session) {
		await stages(session.harness, "Run twelve stages.", 1, 12);
		const harness = await session.resume();
		await stages(harness, "Run eight more.", 13, 20);
	},
	expect(run) {
		const atResume = run.branch.findLastIndex((entry) => entry.type === "message" && entry.message.role === "user");
		const isCommit = (entry: SessionEntry) => entry.type === "custom" && entry.customType === `${PREFIX}:commit`;
		expect(run.branch.slice(0, atResume).filter(isCommit).length).toBeGreaterThan(0);
		expect(run.branch.slice(atResume).filter(isCommit).length).toBeGreaterThan(0);
		// One request per reply: the first after the resume carries the folds the closed process left, so it is the
		// last one before it plus that reply and the new ask, not the stages' raw output.
		const sentBefore = run.branch
			.slice(0, atResume)
			.filter((entry) => entry.type === "message" && entry.message.role === "assistant").length;
		const [last, first] = [run.requests[sentBefore - 1] ?? 0, run.requests[sentBefore] ?? Infinity];
		expect(first).toBeLessThanOrEqual(last + RESUME_TURN_TOKENS);
		expect(run.compactions).toBe(0);
	},
	cannot: {
		headless: "a resume is a second Pi process opening the file; the player is one process (deferred-build.test.ts)",
		replay: "a resume is a second Pi process opening the file; the replay is one process",
	},
};

export const CONTRACT_CASES: readonly ContractCase[] = [
	realLogCase("beforeCompaction", 12),
	realLogCase("large", 8),
	fence,
	threshold,
	overflow,
	actionThenSettle,
	blockingTool,
	summarizer,
	resume,
];

/**
 * The I/O shell of one host-replay run: one arm, one session, one window, one
 * real Pi 1.6.0 process in RPC mode against its own loopback provider.
 *
 * Owns starting and stopping the provider and the sandbox, writing the serve
 * plan, driving Pi turn by turn (the recorded `!cmd` runs, then the user
 * message; steered messages come from the extension), answering each request
 * from the plan (agent requests in order, Pi's summarization with a summary of
 * realistic size, pi-fold's side requests with a short text), checking each
 * agent request ends with what the plan says it must (the turn's user message
 * or the previous reply's results), and reading back what the run left: the
 * session file (commits, compactions) and Pi's stderr (unattributed
 * rewrites). The wall clock is read here and reaches nothing else.
 */

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { STRICT_APPEND_ONLY_ENV } from "../../src/fold/pi/runtime.ts";
import { contentText } from "../../src/text/lines.ts";
import {
	failWith,
	type RecordedRequest,
	type ScriptedFailure,
	type ScriptedReply,
	say,
	startLoopbackProvider,
} from "../../test/harness/loopback-provider.ts";
import {
	createPiSandbox,
	findSessionFiles,
	type LoopbackModelCost,
	REPO_ROOT,
	readSessionFile,
} from "../../test/harness/pi-cli.ts";
import { startRpc } from "../../test/harness/pi-rpc.ts";
import type { PromptCacheRules, WireMessage } from "../../test/harness/provider-rules.ts";
import { classifyRequest, type RequestKind, SIDE_REPLY_TEXT } from "../agent/agent.ts";
import { UNATTRIBUTED_MARK } from "../agent/run-arm.ts";
import { type ArmSetup, armEnv } from "./config.ts";
import type { ExpectedRequest, ReplayPlan } from "./plan.ts";

/** The bench extension Pi loads with `-e`. */
export const HOST_REPLAY_EXTENSION = join(REPO_ROOT, "bench/host-replay/extension.ts");

/** Size of the summary Pi's compaction gets: about what a real summarizer writes for a coding session. */
export const SUMMARY_CHARS = 1_200;

/** The summary every compaction request gets: a real summary's headings, padded to SUMMARY_CHARS, no facts. */
export function replaySummary(): string {
	const head =
		"## Goal\nContinue the coding task the user set.\n## Progress\nFiles were read, edited and tested; see the kept messages.\n## Next steps\nPick up from the latest user request.\n";
	const pad = "(earlier details were not kept in this summary)\n";
	let text = head;
	while (text.length < SUMMARY_CHARS) text += pad;
	return text.slice(0, SUMMARY_CHARS);
}

/** Everything one run needs besides the plan. */
export interface RunSpec {
	arm: { name: string; setup: ArmSetup };
	contextWindow: number;
	maxTokens: number;
	/** Prices the loopback model declares to Pi (and so to pi-fold). */
	modelCost: LoopbackModelCost;
	/** Pi's compaction settings in force. */
	piCompaction: { reserveTokens: number; keepRecentTokens: number };
	cacheRules: PromptCacheRules;
	/** Upper bound for one turn (one RPC prompt to settled). */
	turnTimeoutMs: number;
}

/** One loopback request with what the run made of it. */
export interface RunRequest {
	request: RecordedRequest;
	kind: RequestKind;
	/** Recorded time the ledger prices it at (ms): its expected request's, or the latest agent request's. */
	at: number;
	/** Index into the plan's expected requests (agent requests only). */
	expected?: number;
}

/** What one run left behind, before any arithmetic. */
export interface RawRun {
	arm: string;
	failure?: string;
	requests: RunRequest[];
	/** Plan mismatches: an agent request that did not end as the plan says, or expected requests never made. */
	desyncs: string[];
	/** Session entry types after the header, in file order. */
	entryTypes: string[];
	unattributedRewrites: number;
	exitCode: number | null;
	stderrTail: string;
	wallMs: number;
}

function lastMessage(messages: readonly WireMessage[]): WireMessage | undefined {
	return messages.at(-1);
}

/** Why `request` does not end as `expected` says, or undefined when it does. */
export function endMismatch(messages: readonly WireMessage[], expected: ExpectedRequest): string | undefined {
	if ("user" in expected.after) {
		const last = lastMessage(messages);
		const text = last ? contentText(last.content as never) : "";
		if (last?.role !== "user") return `ends with ${last?.role ?? "nothing"}, expected the user message`;
		return text.trim() === expected.after.user.trim() ? undefined : "ends with another user message";
	}
	const ids = new Set(expected.after.toolCallIds);
	let index = messages.length - 1;
	// A steered user message may follow the results.
	if (messages[index]?.role === "user") index--;
	for (; index >= 0 && messages[index]?.role === "tool"; index--) ids.delete(messages[index]?.tool_call_id ?? "");
	return ids.size === 0 ? undefined : `misses the results of ${[...ids].join(", ")}`;
}

/** Run one arm of one session. */
export async function runArm(plan: ReplayPlan, spec: RunSpec): Promise<RawRun> {
	const requests: RunRequest[] = [];
	const desyncs: string[] = [];
	let next = 0;
	let clock = plan.expected[0]?.at ?? 0;
	const respond = (request: RecordedRequest): ScriptedReply | ScriptedFailure => {
		const kind = classifyRequest(request.body);
		if (kind !== "agent") {
			requests.push({ request, kind, at: clock });
			return say(kind === "summarization" ? replaySummary() : SIDE_REPLY_TEXT);
		}
		const index = next++;
		const expected = plan.expected[index];
		if (!expected) {
			desyncs.push(`request ${request.index}: an agent request past the end of the plan`);
			requests.push({ request, kind, at: clock });
			return failWith(400, "host replay: no recorded request left");
		}
		clock = expected.at;
		requests.push({ request, kind, at: clock, expected: index });
		const mismatch = endMismatch(request.body.messages, expected);
		if (mismatch) desyncs.push(`request ${request.index} (expected #${index}, turn ${expected.turn}): ${mismatch}`);
		return "reply" in expected.answer ? expected.answer.reply : failWith(400, expected.answer.failure);
	};
	const provider = await startLoopbackProvider({ respond, cacheRules: spec.cacheRules });
	const sandbox = createPiSandbox({
		baseUrl: provider.baseUrl,
		extensions: [HOST_REPLAY_EXTENSION],
		contextWindow: spec.contextWindow,
		maxTokens: spec.maxTokens,
		cost: spec.modelCost,
		// No automatic retry: a replayed failure must end its run as it did when recorded.
		settings: { compaction: { enabled: true, ...spec.piCompaction }, retry: { enabled: false } },
	});
	const planFile = join(sandbox.root, "serve-plan.json");
	const statusFile = join(sandbox.root, "arm-status.json");
	writeFileSync(planFile, JSON.stringify(plan.serve));
	const env = { ...armEnv(planFile, spec.arm.setup, statusFile), [STRICT_APPEND_ONLY_ENV]: "1" };
	const started = process.hrtime.bigint();
	const rpc = startRpc({ ...sandbox, env }, ["--no-extensions"]);
	let failure: string | undefined;
	try {
		for (const step of plan.steps) {
			for (const bash of step.bashBefore) {
				const response = await rpc.send({ type: "bash", command: bash.command }, spec.turnTimeoutMs);
				if (!response.success) desyncs.push(`turn ${step.turn}: !${bash.command} failed: ${response.error}`);
			}
			if (step.delivery === "steer") continue;
			const { response } = await rpc.promptAndSettle(step.text, spec.turnTimeoutMs);
			const disposition = (response.data as { disposition?: string } | undefined)?.disposition;
			if (!response.success || disposition === "handled")
				desyncs.push(`turn ${step.turn}: prompt not run (${response.error ?? disposition ?? "refused"})`);
		}
	} catch (error) {
		failure = error instanceof Error ? error.message.split("\n")[0] : String(error);
	}
	const closed = await rpc.close();
	const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
	await provider.close();
	try {
		const status = readStatus(statusFile);
		if (!status?.ok) failure ??= status?.message ?? "the extension wrote no status (did it load?)";
		if (next < plan.expected.length) desyncs.push(`${plan.expected.length - next} expected request(s) never made`);
		const files = findSessionFiles(sandbox);
		const entries = files.length > 0 ? readSessionFile(files[files.length - 1] ?? "").slice(1) : [];
		return {
			arm: spec.arm.name,
			...(failure !== undefined ? { failure } : {}),
			requests,
			desyncs,
			entryTypes: entries.map((entry) => String(entry.type)),
			unattributedRewrites: closed.stderr.split("\n").filter((line) => line.includes(UNATTRIBUTED_MARK)).length,
			exitCode: closed.code,
			stderrTail: closed.stderr.split("\n").slice(-20).join("\n"),
			wallMs,
		};
	} finally {
		sandbox.dispose();
	}
}

function readStatus(file: string): { ok: boolean; message?: string } | undefined {
	if (!existsSync(file)) return undefined;
	return JSON.parse(readFileSync(file, "utf8")) as { ok: boolean; message?: string };
}

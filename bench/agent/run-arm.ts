/**
 * The I/O shell of one agent-benchmark run: one arm, one seed, one real Pi
 * 1.6.0 process in print mode against its own loopback provider.
 *
 * Owns starting and stopping the provider and the sandbox, running Pi
 * (`--no-extensions -e bench/agent/extension.ts`, offline, isolated agent dir,
 * `PI_FOLD_STRICT_APPEND_ONLY=1`), wiring the scripted agent to the provider,
 * and reading back what the run left: the status file, the session file
 * (commits, compactions) and Pi's stderr (unattributed rewrites). Everything
 * it measures is returned as plain data for metrics.ts; the wall clock is
 * read here and never reaches the model.
 */

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { STRICT_APPEND_ONLY_ENV } from "../../src/fold/pi/runtime.ts";
import type { RateCard } from "../../src/pricing/rate-card.ts";
import {
	type RecordedRequest,
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
	runPi,
} from "../../test/harness/pi-cli.ts";
import {
	type AgentState,
	agentStep,
	classifyRequest,
	fixedSummary,
	initialAgentState,
	SIDE_REPLY_TEXT,
} from "./agent.ts";
import { benchEnv } from "./config.ts";
import { type ArmSpec, type Preset, presetCard, presetWorkload } from "./presets.ts";
import { userMessages, type Workload } from "./workload.ts";

/** The bench extension Pi loads with `-e`. */
export const BENCH_EXTENSION = join(REPO_ROOT, "bench/agent/extension.ts");
/** Stderr mark of the append-only tripwire (src/fold/runtime.ts), one per unattributed rewrite. */
export const UNATTRIBUTED_MARK = "pi-fold: unattributed rewrite";

/** What one run left behind, before any arithmetic. */
export interface RawRun {
	arm: string;
	seed: number;
	/** Undefined when the arm registered; otherwise why it failed. */
	failure?: string;
	requests: RecordedRequest[];
	agent: AgentState;
	/** Session entries after the header, in file order (type field only is read). */
	entryTypes: string[];
	unattributedRewrites: number;
	exitCode: number | null;
	timedOut: boolean;
	stderrTail: string;
	wallMs: number;
}

/** models.json `cost` for a card, so Pi's runtime sees the same prices the ledger bills. */
export function modelCostOf(card: RateCard): LoopbackModelCost {
	const { input, output, cacheRead, cacheWrite } = card.base;
	return {
		input,
		output,
		cacheRead,
		cacheWrite,
		tiers: card.tiers.map((tier) => ({
			inputTokensAbove: tier.contextAbove,
			input: tier.input,
			output: tier.output,
			cacheRead: tier.cacheRead,
			cacheWrite: tier.cacheWrite,
		})),
	};
}

function readStatus(file: string): { ok: boolean; message?: string } | undefined {
	if (!existsSync(file)) return undefined;
	return JSON.parse(readFileSync(file, "utf8")) as { ok: boolean; message?: string };
}

/** Run one arm on one seed. */
export async function runArm(preset: Preset, arm: ArmSpec, seed: number): Promise<RawRun> {
	const workload: Workload = presetWorkload(preset, seed);
	const card = presetCard(preset);
	let agent = initialAgentState(workload, arm.marking);
	let statusFile = "";
	let failure: string | undefined;
	const respond = (request: RecordedRequest): ScriptedReply => {
		const kind = classifyRequest(request.body);
		if (kind === "summarization") return say(fixedSummary());
		if (kind === "side") return say(SIDE_REPLY_TEXT);
		if (agent.main === undefined && !agent.finished) {
			const status = readStatus(statusFile);
			if (!status?.ok) {
				failure = status?.message ?? "the bench extension wrote no status (did it load?)";
				agent = { ...agent, finished: true, error: failure };
				return say("Stopping: the arm did not register.");
			}
		}
		const step = agentStep(agent, request.body);
		agent = step.state;
		return step.reply;
	};
	const provider = await startLoopbackProvider({ respond, cacheRules: preset.cacheRules });
	const settings = { compaction: { ...preset.piCompaction } };
	const sandbox = createPiSandbox({
		baseUrl: provider.baseUrl,
		extensions: [BENCH_EXTENSION],
		contextWindow: preset.contextWindow,
		maxTokens: preset.maxTokens,
		cost: modelCostOf(card),
		settings,
	});
	statusFile = join(sandbox.root, "arm-status.json");
	const env = { ...benchEnv(workload, arm.setup, statusFile), [STRICT_APPEND_ONLY_ENV]: "1" };
	const withEnv = { ...sandbox, env };
	try {
		const started = process.hrtime.bigint();
		const args = ["--no-extensions", "-p", "--", ...userMessages(workload)];
		const result = await runPi(withEnv, args, preset.timeoutMs);
		const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
		const files = findSessionFiles(sandbox);
		const entries = files.length > 0 ? readSessionFile(files[files.length - 1] ?? "").slice(1) : [];
		const unattributed = result.stderr.split("\n").filter((line) => line.includes(UNATTRIBUTED_MARK)).length;
		return {
			arm: arm.name,
			seed,
			...(failure !== undefined ? { failure } : {}),
			requests: [...provider.requests],
			agent,
			entryTypes: entries.map((entry) => String(entry.type)),
			unattributedRewrites: unattributed,
			exitCode: result.code,
			timedOut: result.timedOut,
			stderrTail: result.stderr.split("\n").slice(-20).join("\n"),
			wallMs,
		};
	} finally {
		await provider.close();
		sandbox.dispose();
	}
}

/**
 * One recorded log through every policy: the host facts each request had
 * (its model's catalog window and prices, the system prompt's size as the
 * log's calibration implies it; `logSetup`, src/cost/projected-savings.ts),
 * the replays, and their priced totals beside the recorded ones. Pure over
 * the log's entries.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { modelKeyOf, type ReplayResult } from "../../src/cost/fold-replay.ts";
import type { PrefixCacheOptions } from "../../src/cost/prefix-cache.ts";
import type { LogSetup } from "../../src/cost/projected-savings.ts";
import type { SessionRequest } from "../../src/cost/session-requests.ts";
import type { ResolvedOptions } from "../../src/fold/options.ts";
import type { Calibration } from "../../src/session/tokens.ts";
import { POLICIES, type PolicyName, replayPolicy } from "./policies.ts";
import { priceSequence, recordedTotals, type SequenceTotals } from "./pricing.ts";

export interface PolicyRow {
	policy: PolicyName;
	replay: Omit<ReplayResult, "branch" | "requests">;
	priced: SequenceTotals;
}

export interface LogReplay {
	mainModelKey: string;
	calibration: Calibration;
	cache: PrefixCacheOptions;
	/** Estimated tokens standing for the system prompt and tool declarations in the ladder's reading. */
	fixedTokens: number;
	budget: number | undefined;
	recorded: SequenceTotals;
	rows: PolicyRow[];
	/** The `recorded` replay sent exactly the prompts session-requests.ts derives from the log. */
	recordedMatchesLog: boolean;
	compactions: number;
}

/** Replay one linear branch through every policy and price each. */
export async function replayLog(
	branch: readonly SessionEntry[],
	options: ResolvedOptions,
	setup: LogSetup,
	policies: readonly PolicyName[] = POLICIES,
): Promise<LogReplay> {
	let recordedMatchesLog = false;
	const rows: PolicyRow[] = [];
	for (const policy of policies) {
		const result = await replayPolicy(branch, policy, options, setup.hostFor);
		if (policy === "recorded") recordedMatchesLog = samePrompts(result, setup.logged);
		const { branch: _branch, requests, ...replay } = result;
		rows.push({ policy, replay, priced: priceSequence(requests, setup.calibration, setup.cache) });
	}
	const main = branch.find((entry) => entry.type === "message" && modelKeyOf(entry) === setup.mainModelKey);
	return {
		mainModelKey: setup.mainModelKey,
		calibration: setup.calibration,
		cache: setup.cache,
		fixedTokens: setup.fixedTokens,
		budget: main ? setup.hostFor(main).budget : undefined,
		recorded: recordedTotals(branch),
		rows,
		recordedMatchesLog,
		compactions: branch.filter((entry) => entry.type === "compaction").length,
	};
}

function samePrompts(result: ReplayResult, logged: readonly SessionRequest[]): boolean {
	if (result.requests.length !== logged.length) return false;
	return result.requests.every((request, index) => {
		const other = logged[index];
		if (!other || other.entryId !== request.entryId) return false;
		const a = request.context.map((message) => message.digest).join(",");
		const b = other.context.map((message) => message.digest).join(",");
		return a === b;
	});
}

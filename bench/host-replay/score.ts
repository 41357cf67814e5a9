/**
 * One real-Pi run scored for what its window hid (pure): the recorded
 * branch's replies against the requests the loopback provider received for
 * them, each read as the model saw it (view.ts), and charged at the prompt
 * size the run's ledger billed for that request. The same scorer and charge
 * as `pi-fold report`'s (src/cost/out-of-view/), so the two compare.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { scoreArm } from "../../src/cost/out-of-view/arm-score.ts";
import { branchEvents } from "../../src/cost/out-of-view/branch-events.ts";
import type { ChargeRules, HiddenCharge } from "../../src/cost/out-of-view/charge.ts";
import type { SentRequest } from "../../src/cost/out-of-view/scorer.ts";
import type { OutOfViewSummary } from "../../src/cost/out-of-view/summary.ts";
import type { Ledger } from "./ledger.ts";
import type { ReplayPlan } from "./plan.ts";
import type { RawRun } from "./run-arm.ts";
import { wireRequestViewer } from "./view.ts";

/** What a run's window hid, and what getting it back is charged. */
export interface RunScore {
	summary: OutOfViewSummary;
	charge: HiddenCharge;
}

/**
 * Score a run: `branch` is the recorded branch the run replayed (through the
 * turns it played), `ledger` the run's own (its rows in the run's request order).
 */
export function scoreRun(
	raw: RawRun,
	plan: ReplayPlan,
	branch: readonly SessionEntry[],
	ledger: Ledger,
	rules: ChargeRules,
): RunScore {
	const view = wireRequestViewer();
	const requests = new Map<string, RawRun["requests"][number]>();
	const promptTokens = new Map<string, number>();
	raw.requests.forEach((run, index) => {
		if (run.expected === undefined || run.request.reply === undefined) return;
		const entryId = plan.expected[run.expected]?.entryId;
		if (entryId === undefined) return;
		requests.set(entryId, run);
		const row = ledger.rows[index];
		if (row) promptTokens.set(entryId, row.promptTokens);
	});
	const sentFor = (entryId: string): SentRequest | undefined => {
		const run = requests.get(entryId);
		return run ? view(run.request.body) : undefined;
	};
	const { summary, charge } = scoreArm(branchEvents(branch, sentFor), rules, promptTokens);
	return { summary, charge };
}

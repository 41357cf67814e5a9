/**
 * `replay`: both real logs replayed through each fold policy (bench/replay/),
 * priced under one prefix-cache model and each request's own rate card, next
 * to the usage the provider recorded. Timed: one whole replay per policy and
 * log (every boundary's decision and every request's projection included).
 */

import { logSetup } from "../../src/cost/projected-savings.ts";
import { resolveOptions } from "../../src/fold/options.ts";
import { loadSessionFile } from "../../src/session/load.ts";
import type { BenchCase, Benchmark } from "../harness.ts";
import { replayLog } from "../replay/log-replay.ts";
import { POLICIES, replayPolicy } from "../replay/policies.ts";
import { POLICY_LABELS, replayFacts } from "../replay/report.ts";
import { realLogs } from "../sessions.ts";

export const replayBench: Benchmark = {
	name: "replay",
	description:
		"The real logs replayed through each fold policy (as recorded, pi-fold's ladder, fold-all reference), priced under one prefix-cache model against the provider's recorded usage.",
	async prepare() {
		const options = resolveOptions();
		const cases: BenchCase[] = [];
		const facts: string[] = [];
		for (const log of realLogs()) {
			const session = loadSessionFile(log.path);
			const branch = session.manager.getBranch();
			const setup = logSetup(branch, session.header.cwd ?? "/");
			const replay = await replayLog(branch, options, setup);
			facts.push(...replayFacts(log.name, replay));
			const input = { bytes: log.bytes, entries: branch.length, requests: replay.recorded.requests };
			for (const policy of POLICIES) {
				cases.push({
					label: `replay ${policy} ${log.name}`,
					input,
					run: () => replayPolicy(branch, policy, options, setup.hostFor),
				});
			}
		}
		return {
			cases,
			facts,
			notes: [
				"- Each log's active branch (both are linear) is rebuilt entry by entry (`src/cost/fold-replay.ts`, the fold-all reference in `bench/replay/policies.ts`). Before each recorded assistant message the runtime's `context` hook runs on the branch so far (`src/cost/fold-shell.ts` mirrors src/fold/runtime.ts step for step); its messages are that request's prompt. After each finished turn (the assistant message and the tool results after it) the policy runs, and what it persists (fold / delta / checkpoint / commit custom entries, `context_edit` drafts) is appended before the next recorded entry.",
				`- Policies: ${POLICY_LABELS.recorded} — no folding; ${POLICY_LABELS.ladder} — \`decideCommit\` on the branch so far with the reading from Pi's \`buildSessionProjection\` + \`readWindow\`, \`planCommit\` applied through \`persistChange\`, the window from \`planWindow\` / \`editDrafts\` / \`projectionWithDrafts\`, default options (epoch scheduling, so peek batches fold; no agent marks: the logs hold none), the fence before any request over the serving budget; ${POLICY_LABELS["fold-all"]} — a reference: at every boundary every completed tool batch except the newest context unit whose results outweigh a brief (${"`BRIEF_TOKENS_ESTIMATE`"}) is folded, whatever the price.`,
				"- Host facts per request: the serving model's catalog context window as the serving budget (no `providerTotalWindow`), its catalog card's prices for the ladder's rent-or-buy; the system prompt is not in the log, so the ladder's fixed part is the calibration's overhead converted to Pi's estimate. Blocking tools (`Agent`) mark the cache cold as the runtime does; none occur in these logs.",
				"- What the replay does not re-decide: Pi's compactions stay where the log has them (under the ladder's smaller windows Pi might not have compacted there, and the summarization calls are not requests in the log); user messages, tool results and outputs are the recorded ones (a folded window might have led the model elsewhere); request times are the recorded ones.",
				"- Pricing (`bench/replay/pricing.ts` over `modelSequence`, src/cost/projected-savings.ts): each sequence's prompts are calibrated to provider tokens with the log's own least-squares fit (the same fit for every policy), run through `simulatePrefixCache` (longest common prefix with any earlier request, message granularity) with the main model's catalog cache TTL and a 1,024-token minimum, and priced per request with that request's model's catalog card (fresh input billed as cache writes on Anthropic, as Pi marks prompts for caching); output tokens are the recorded ones. `provider recorded` is the log's own usage and Pi's ledger cost (src/cost/session-cost.ts).",
				"- `rewrites` are requests whose messages diverge from the previous request's before its end (the append-only instrument); `unattributed` are rewrites without an announced commit or compaction, which must be 0.",
			],
		};
	},
};

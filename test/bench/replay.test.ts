/**
 * The replay benchmark's pure parts (bench/replay/ over src/cost/fold-replay.ts):
 * a tiny built branch replayed through each policy yields the commits and
 * windows the ladder's rules imply, and a hand-sized request sequence prices
 * to the hand-computed sum. No Pi process runs.
 */

import { describe, expect, it } from "vitest";
import { replayPolicy } from "../../bench/replay/policies.ts";
import { priceSequence } from "../../bench/replay/pricing.ts";
import { replayBranch } from "../../src/cost/fold-replay.ts";
import type { SessionRequest } from "../../src/cost/session-requests.ts";
import type { HostFacts } from "../../src/fold/engine/host-facts.ts";
import { resolveOptions } from "../../src/fold/options.ts";
import { IDENTITY_CALIBRATION } from "../../src/session/tokens.ts";
import { FoldBranch } from "../fixtures/fold.ts";

const HOST: HostFacts = {
	budget: 1_000_000,
	prices: { uncached: 1, cached: 0.1, longContextAbove: null },
	fixedTokens: 0,
	cwd: "/project",
};

/** A serving budget that two 9,000-token stages fill past the ladder's backstop (80%). */
const SMALL_HOST: HostFacts = { ...HOST, budget: 22_000 };

/** Text of about `tokens` estimated tokens (four characters a token). */
const filler = (tokens: number, tag: string) => `${tag}\n${"x".repeat(tokens * 4)}`;

/** One user turn: three staged calls with 9,000-token results, then a closing reply. */
function staged() {
	const b = new FoldBranch();
	b.user("Run every stage.");
	const calls: string[] = [];
	for (let k = 1; k <= 3; k++) {
		calls.push(b.calls([{ id: `s${k}`, name: "repo_stage", args: { stage: k } }]));
		b.result(`s${k}`, "repo_stage", filler(9_000, `STAGE ${k}`));
	}
	b.assistant("All stages done.");
	return { entries: b.entries, calls };
}

const options = resolveOptions();
const tokensOf = (request: SessionRequest | undefined) =>
	(request?.context ?? []).reduce((total, message) => total + message.tokens, 0);

describe("replayBranch", () => {
	it("as recorded: one request per assistant message, no commits, pure appends", async () => {
		const { entries } = staged();
		const result = await replayBranch(entries, "recorded", options, () => HOST);
		expect(result.requests.map((request) => request.entryId)).toEqual(["e2", "e4", "e6", "e8"]);
		expect(result).toMatchObject({ commits: 0, folds: 0, rewrites: 0, unattributed: 0 });
		expect(result.branch).toHaveLength(entries.length);
	});

	it("ladder: folds stage 1 at the boundary after stage 2 (backstop), stage 2 after stage 3", async () => {
		const { entries } = staged();
		const recorded = await replayBranch(entries, "recorded", options, () => HOST);
		// A window two stages fill past the backstop: what left the working set folds at once.
		const ladder = await replayBranch(entries, "ladder", options, () => SMALL_HOST);
		expect(ladder).toMatchObject({ commits: 2, folds: 2, rewrites: 2, unattributed: 0, fenceCommits: 0 });
		// Requests 1 and 2 are the recorded ones; from request 3 on stage 1 shows its brief.
		expect(tokensOf(ladder.requests[1])).toBe(tokensOf(recorded.requests[1]));
		expect(tokensOf(recorded.requests[2]) - tokensOf(ladder.requests[2])).toBeGreaterThan(8_000);
		expect(tokensOf(recorded.requests[3]) - tokensOf(ladder.requests[3])).toBeGreaterThan(16_000);
		const edits = ladder.branch.filter((entry) => entry.type === "context_edit");
		expect(edits.map((entry) => (entry.type === "context_edit" ? entry.targetId : ""))).toEqual(["e3", "e5"]);
		const commits = ladder.branch.filter(
			(entry) => entry.type === "custom" && entry.customType === `${options.entryTypePrefix}:commit`,
		);
		expect(
			commits.map((entry) =>
				entry.type === "custom" ? (entry.data as { summary: { reason: string } }).summary.reason : "",
			),
		).toEqual(["backstop", "backstop"]);
	});

	it("fold-all: each batch at the first boundary where it is not the newest, the last after the closing reply", async () => {
		const { entries } = staged();
		const all = await replayPolicy(entries, "fold-all", options, () => HOST);
		// Stage 3 folds at the final turn's boundary, as Pi runs it; no request follows, so no rewrite is sent.
		expect(all).toMatchObject({ commits: 3, folds: 3, rewrites: 2, unattributed: 0, commitRequests: [2, 3, 4] });
	});

	it("under a tight budget the backstop commits where the price alone would not", async () => {
		const { entries } = staged();
		const cheapCache = { uncached: 1, cached: 0.001, longContextAbove: null };
		const priced = await replayBranch(entries, "ladder", options, () => ({ ...HOST, prices: cheapCache }));
		expect(priced.commits).toBe(0);
		const tight = await replayBranch(entries, "ladder", options, () => ({
			...HOST,
			budget: 20_000,
			prices: cheapCache,
		}));
		const reasons = tight.branch.flatMap((entry) =>
			entry.type === "custom" && entry.customType === `${options.entryTypePrefix}:commit`
				? [(entry.data as { summary: { reason: string } }).summary.reason]
				: [],
		);
		expect(reasons).toEqual(["backstop", "backstop"]);
		expect(tight).toMatchObject({ fenceCommits: 0, unattributed: 0 });
	});
});

describe("priceSequence", () => {
	it("bills the cached prefix as cache reads and the fresh rest at the card's fresh-input rate", () => {
		// Pi's catalog card for the model: $3/M input, billed as $3.75/M cache writes, $0.30/M reads, $15/M output.
		const m1 = { digest: "m1", tokens: 2_000 };
		const m2 = { digest: "m2", tokens: 1_000 };
		const requests: SessionRequest[] = [
			{ entryId: "a", modelKey: "anthropic/claude-sonnet-4-5", context: [m1], output: 100 },
			{ entryId: "b", modelKey: "anthropic/claude-sonnet-4-5", context: [m1, m2], output: 0 },
		];
		const totals = priceSequence(requests, IDENTITY_CALIBRATION, { minCachedTokens: 1_024 });
		expect(totals).toMatchObject({
			requests: 2,
			promptTokens: 5_000,
			cachedTokens: 2_000,
			uncachedTokens: 3_000,
			outputTokens: 100,
			fallbackPriced: 0,
		});
		// $3.75/M cache writes for 2,000 + 1,000 fresh tokens, $0.30/M for 2,000 read, $15/M for 100 out.
		expect(totals.cost).toBeCloseTo((3.75 * 3_000 + 0.3 * 2_000 + 15 * 100) / 1e6, 12);
	});

	it("counts requests priced with the fallback card", () => {
		const requests: SessionRequest[] = [{ entryId: "a", modelKey: "nobody/unknown", context: [], output: 1 }];
		expect(priceSequence(requests, IDENTITY_CALIBRATION, {}).fallbackPriced).toBe(1);
	});
});

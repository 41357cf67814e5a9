/**
 * The working set and the price of a miss: which closed units stay raw
 * because the agent is still using them, and what hiding the rest is
 * expected to cost.
 *
 * A unit is in play while little has been written since its last reference
 * (references.ts): fewer than the working-set horizon's tokens. The horizon
 * is measured in tokens, so a long single turn of large outputs still folds inside the
 * turn and keeps its recent steps by their size, not their count. It is a
 * share of the serving budget that shrinks as the window fills: the window is
 * room to use, so nothing the agent may be about to use is folded to keep a
 * large window small, and under pressure the stalest go first.
 *
 * A miss is priced: when a reply needs what a fold hid, the agent searches
 * and peeks, each a further request re-sending the prompt (the charge the
 * host replay's out-of-view scorer bills every arm). The chance that
 * a unit is needed again falls with the requests since its last reference;
 * the expected re-fetch of a candidate is that chance times the re-sent
 * prompts and the peeked source itself (billed fresh), and a commit pays for
 * itself only when the rent already paid covers the rewrite and the expected
 * re-fetches together.
 */

import type { BranchView, StructuralUnit } from "../lattice/units.ts";
import { rangeTokens, type TokenPrices, type WindowReading } from "./budget.ts";
import { referenceIndex, requestsSinceReference, unitLastReference } from "./references.ts";

/**
 * Tokens written since a unit's last reference below which it is in play
 * however full the window (unless Pi is about to compact): an edit quotes
 * a read made a few steps before it. On the tuned sessions most edit
 * anchors sat in a result at most eight requests old.
 */
export const WORKING_SET_MIN_TOKENS = 4_096;
/**
 * The horizon with an empty window, as a share of the serving budget. Set on
 * the tuned sessions with the quick loop (`npm run bench -- host-replay-quick`):
 * at 0.1 the large Pi session cost 0.77× native charged at 200k with 3 replies
 * hiding a reference; at 0.08, 0.66× with 8 (of 431; the target allows 21);
 * at 0.065 and below the hidden replies doubled (15–20) for a few hundredths
 * more. 0.08 keeps a step back from that edge. The Codex session does not
 * move with it (no commit pays for itself at 200k).
 */
export const WORKING_SET_BUDGET_SHARE = 0.08;
/** The horizon when the budget is unknown. */
export const WORKING_SET_DEFAULT_TOKENS = 32_768;
/**
 * What the agent and the person wrote (a unit without tool results: the
 * agent's text, the person's messages) stays in play this many times as long
 * as a tool batch does: it is a small share of a session's bytes, and most
 * references to old material name something the agent itself wrote. A tool
 * batch goes by its results' horizon, its call with it: stretching batches
 * too (as first built) kept 0.74× native at 200k on the large Pi session where
 * this costs 0.66×, for 2 more hidden replies of 431.
 */
export const OWN_TEXT_HORIZON_FACTOR = 2;

/** The horizon factor of a unit: the agent's and the person's own text stay longer than tool output. */
function horizonFactor(unit: StructuralUnit): number {
	return unit.kind === "tool-batch" || unit.kind === "orphan-result" ? 1 : OWN_TEXT_HORIZON_FACTOR;
}

/**
 * Chance that a unit referenced just now is referenced again later, and the
 * requests over which that chance halves: P(s) = AT_ZERO × HALF / (HALF + s).
 * Fitted on the tuned sessions' replies (a later reply naming a token whose
 * newest copy the unit holds): about 0.6 at once, 0.3 after 8–12 requests,
 * 0.14 after 32, 0.09 after 64.
 */
export const REFERENCE_AGAIN_AT_ZERO = 0.6;
export const REFERENCE_AGAIN_HALF_REQUESTS = 10;

/** Further requests a reply that needs hidden sources makes: one search to find them… */
export const SEARCHES_PER_MISS = 1;
/** …and one peek per source it needs. */
export const PEEKS_PER_SOURCE = 1;

/**
 * The working-set horizon in tokens written since a unit's last reference,
 * for a serving budget at an occupancy: a share of the budget (`share`,
 * `WORKING_SET_BUDGET_SHARE` unless the tuning front varies it), shrinking
 * with the room left until the backstop, never under the floor.
 */
export function workingSetTokens(
	budget: number | undefined,
	occupancy: number | null,
	backstop: number,
	share: number = WORKING_SET_BUDGET_SHARE,
): number {
	if (budget === undefined || occupancy === null) return WORKING_SET_DEFAULT_TOKENS;
	const room = Math.min(1, Math.max(0, 1 - occupancy / backstop));
	return Math.max(WORKING_SET_MIN_TOKENS, Math.round(budget * share * room));
}

/**
 * Units smaller than this count for less: a one-line result ("Wrote a.ts")
 * holds little a later reply could name. About the tuned sessions' median
 * result (100–1,100 bytes) at its upper end.
 */
export const REFERENCE_UNIT_TOKENS = 512;

/** Chance that a unit of `tokens` last referenced `requests` requests ago is needed again. */
export function referenceAgainChance(requests: number, tokens: number = REFERENCE_UNIT_TOKENS): number {
	const size = Math.min(1, Math.max(0, tokens) / REFERENCE_UNIT_TOKENS);
	return (
		(size * REFERENCE_AGAIN_AT_ZERO * REFERENCE_AGAIN_HALF_REQUESTS) /
		(REFERENCE_AGAIN_HALF_REQUESTS + Math.max(0, requests))
	);
}

/** What hiding a range is expected to cost later: the sources a reply will need again, and what peeking them brings back. */
export interface ExpectedMisses {
	/** Σ over its units of the chance a later reply needs each again. */
	sources: number;
	/** Σ over its units of that chance × the unit's tokens: what the expected peeks bring back, fresh. */
	tokens: number;
}

/**
 * Expected price of the re-fetches hiding a range costs, at a prompt of
 * `promptTokens`: a peek per source expected to be needed, and a search for
 * the reply that needs them (at most one expected), each re-sending the
 * prompt at the cached rate; and what the peeks bring back, uncached (the
 * host replay's charge bills the same: for a large source on a dear cache
 * write it is most of the price).
 */
export function expectedRefetchCost(misses: ExpectedMisses, promptTokens: number, prices: TokenPrices): number {
	const requests = PEEKS_PER_SOURCE * misses.sources + SEARCHES_PER_MISS * Math.min(1, misses.sources);
	return requests * promptTokens * prices.cached + PEEKS_PER_SOURCE * misses.tokens * prices.uncached;
}

/** What the working set says about the branch at one boundary: which units are in play, what hiding a range risks. */
export interface WorkingSet {
	/** True while the unit is in play (the agent's and the person's own text by a longer horizon than tool output). */
	inPlay(unit: StructuralUnit): boolean;
	/** Requests that carried the unit since it left the working set (0 while in play): rent it paid unused. */
	carriedUnused(unit: StructuralUnit): number;
	/** What hiding the context units of `[start, end)` is expected to cost in re-fetches. */
	misses(start: number, end: number): ExpectedMisses;
}

/** The working set of a branch under a horizon (tokens written since a unit's last reference). */
export function workingSetOf(input: { view: BranchView; reading: WindowReading; horizon: number }): WorkingSet {
	const { view, reading, horizon } = input;
	const references = referenceIndex(view);
	const end = view.entries.length;
	const total = view.responsesBefore[end] ?? 0;
	/** The entry index by which `limit` tokens had been written after the unit's last reference; undefined while fewer have. */
	const exitAt = (unit: StructuralUnit, limit: number): number | undefined => {
		const from = unitLastReference(references, unit) + 1;
		if (rangeTokens(view, reading, from, end) < limit) return undefined;
		let lo = from;
		let hi = end;
		while (lo < hi) {
			const mid = (lo + hi) >> 1;
			if (rangeTokens(view, reading, from, mid) >= limit) hi = mid;
			else lo = mid + 1;
		}
		return lo;
	};
	return {
		inPlay: (unit) => unit.context && exitAt(unit, horizon * horizonFactor(unit)) === undefined,
		carriedUnused: (unit) => {
			const exit = exitAt(unit, horizon * horizonFactor(unit));
			return exit === undefined ? 0 : total - (view.responsesBefore[exit] ?? total);
		},
		misses: (start, stop) => {
			let sources = 0;
			let tokens = 0;
			for (let u = view.unitOf[start] ?? view.units.length; u < view.units.length; u++) {
				const unit = view.units[u];
				if (!unit || unit.start >= stop) break;
				if (!unit.context || unit.kind === "user") continue;
				const unitTokens = rangeTokens(view, reading, unit.start, unit.end);
				const chance = referenceAgainChance(requestsSinceReference(view, references, unit), unitTokens);
				sources += chance;
				tokens += chance * unitTokens;
			}
			return { sources, tokens };
		},
	};
}

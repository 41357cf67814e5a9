/**
 * `[Current Turn Plan]`: the plan and decisions the agent stated in the turn
 * the cut falls inside (a departure from the spec, which has no such block).
 *
 * When a long turn is cut in the middle, the protected dialogue keeps the
 * turn's ask and the last summarized reply, and the raw tail keeps its end;
 * the plan the agent wrote at its start ("Plan: 1. … 2. …") and the
 * decisions it took on the way were in neither. This block lists them, as
 * `src/session/plan.ts` selects them, with their addresses. The renderer
 * protects it like the dialogue (its own ceiling, rendered before the
 * historical blocks share the rest), so a plan line is never traded for file
 * or transcript lines.
 */

import type { NormalizedEvent } from "../../session/events.ts";
import { PLAN_LINE_MAX_BYTES, planLines } from "../../session/plan.ts";
import type { ViewBlock, ViewItem } from "./projections-model.ts";
import { renderAddress } from "./render-text.ts";

export const PLAN_HEADER = "[Current Turn Plan]";
/** Plan lines listed (earliest plus latest) before the rest is counted in an omission marker. */
export const PLAN_LINE_LIMIT = 16;

/**
 * The summarized events of the turn the cut falls inside, or undefined when
 * the cut falls between turns. The turn starts after the prefix's last user
 * message. It goes on past the cut when the first kept event is not a user
 * message or `!cmd` run; with nothing kept, when the prefix does not end on
 * a finished reply (an overflow retries the turn; a `/compact` while idle
 * comes after the reply).
 */
export function currentTurnEvents(
	events: readonly NormalizedEvent[],
	cutEventIndex: number,
): { user?: NormalizedEvent; events: readonly NormalizedEvent[] } | undefined {
	const next = events[cutEventIndex];
	const last = events[cutEventIndex - 1];
	const continues =
		next !== undefined
			? next.kind !== "user" && next.kind !== "bash"
			: last !== undefined && !(last.kind === "assistant" && last.stopReason === "stop" && last.text.trim() !== "");
	if (!continues) return undefined;
	let start = cutEventIndex - 1;
	while (start >= 0 && events[start]?.kind !== "user") start--;
	const user = events[start];
	return { ...(user ? { user } : {}), events: events.slice(start + 1, cutEventIndex) };
}

/** The plan block of a summary whose cut is at `cutEventIndex`; empty when the cut falls between turns. */
export function projectCurrentTurnPlan(events: readonly NormalizedEvent[], cutEventIndex: number): ViewBlock {
	const turn = currentTurnEvents(events, cutEventIndex);
	const items = (turn ? planLines(turn.events) : []).map(
		(line): ViewItem => ({
			entryId: line.entryId,
			lead: `${renderAddress(line.address)} ${line.kind}: `,
			text: `"${line.text}"`,
			trail: "",
			keep: "start",
			textRequired: true,
		}),
	);
	const from = turn?.user ? ` (asked at ${renderAddress(turn.user.address)})` : "";
	return {
		key: "plan",
		header: PLAN_HEADER,
		prelude:
			items.length > 0
				? [`The turn this summary cuts goes on after it${from}; the agent's own plan and decisions, not outcomes.`]
				: [],
		groups: [
			{ key: "plan", items, limit: PLAN_LINE_LIMIT, mode: "earliest-latest", maxTextBytes: PLAN_LINE_MAX_BYTES },
		],
	};
}

/**
 * Whether the window has room for an expand: the admission check every
 * expand passes before it changes anything.
 *
 * The automatic ladder never folds over a fold the agent expanded (it would
 * undo the expand at the very boundary the agent was told it takes effect),
 * so the room has to be found here, once: an expand that would take the next
 * request past the serving budget (Pi's compaction line: Pi would compact it
 * away) is refused, naming the narrow read that needs no room; one that
 * takes it past the ladder's pressure line is admitted with a warning that
 * other spans will fold around it. Pure over the window reading the engine
 * keeps; the estimate is Pi's (chars/4), the same the ladder weighs.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { estimateMessageTokens, PI_CHARS_PER_TOKEN } from "../../session/tokens.ts";
import type { WindowRoom } from "../engine/workspace.ts";
import type { FoldRecord } from "../lattice/records.ts";
import type { BranchView } from "../lattice/units.ts";
import { rangeTokens } from "../policy/budget.ts";
import { BACKSTOP_OCCUPANCY } from "../policy/ladder.ts";

/** Estimated tokens of the next request before and after the expand, against its budget. */
export interface Crowding {
	before: number;
	after: number;
	budget: number;
	added: number;
}

export type RoomVerdict = { kind: "fits" } | ({ kind: "pressed" | "over" } & Crowding);

/** Tokens an entry shows raw in the window: Pi's estimate of its message (a custom message's text). */
function rawTokens(entry: SessionEntry): number {
	if (entry.type === "message") return estimateMessageTokens(entry.message);
	if (entry.type === "custom_message") {
		const text = typeof entry.content === "string" ? entry.content : JSON.stringify(entry.content);
		return Math.ceil(text.length / PI_CHARS_PER_TOKEN);
	}
	return 0;
}

/**
 * The window after expanding `record` (placed at `[start, end)`): its entries
 * raw, its child folds as briefs (an expand opens one level), in place of
 * what the span shows now.
 */
export function expandRoom(
	room: WindowRoom,
	record: FoldRecord,
	span: { start: number; end: number },
	view: BranchView,
	childBrief: (id: string) => string | undefined,
): RoomVerdict {
	const { reading, budget } = room;
	if (budget === undefined) return { kind: "fits" };
	let shown = 0;
	for (const part of record.parts) {
		if (part.type === "entry") {
			const entry = view.entries[view.indexById.get(part.entryId) ?? -1];
			shown += entry ? rawTokens(entry) : 0;
		} else shown += Math.ceil((childBrief(part.foldId)?.length ?? 0) / PI_CHARS_PER_TOKEN);
	}
	const added = Math.max(0, shown - rangeTokens(view, reading, span.start, span.end));
	const after = reading.total + added;
	const facts = { before: reading.total, after, budget, added };
	if (after > budget) return { kind: "over", ...facts };
	if (after >= BACKSTOP_OCCUPANCY * budget) return { kind: "pressed", ...facts };
	return { kind: "fits" };
}

/**
 * All summary projections: typed events → protected dialogue and current-turn
 * plan plus the bounded historical view blocks, in render order.
 *
 * A projection is a pure function of normalized events. Each block holds its
 * complete ordered collections; the renderer picks how many items fit, and
 * QA recomputes the same collections from events to check what was rendered.
 */

import type { NormalizedEvent } from "../../session/events.ts";
import { type RenderedDialogue, renderDialogue } from "./dialogue.ts";
import {
	projectActivity,
	projectHistoricalRequests,
	projectStatus,
	projectTranscript,
	projectTurns,
} from "./projections-activity.ts";
import { projectFiles, projectOutstanding } from "./projections-files.ts";
import type { ViewBlock } from "./projections-model.ts";
import { projectCurrentTurnPlan } from "./projections-plan.ts";
import { projectCurrentWork, projectDecisions } from "./projections-work.ts";

export interface SummaryProjection {
	dialogue: RenderedDialogue;
	/** The plan of the turn the cut falls inside; protected like the dialogue. */
	plan: ViewBlock;
	/** The last steps before the compaction, kept tail included; protected like the plan. */
	work: ViewBlock;
	/** Historical blocks in render order (request/carry-forward/footer are rendered separately). */
	blocks: ViewBlock[];
}

/** Events of the summarized prefix only. */
export function prefixEvents(events: readonly NormalizedEvent[], cutEventIndex: number): readonly NormalizedEvent[] {
	return events.slice(0, cutEventIndex);
}

/** Every projection of the summary, computed from normalized events alone. */
export function projectSummary(events: readonly NormalizedEvent[], cutEventIndex: number): SummaryProjection {
	const dialogue = renderDialogue(events, cutEventIndex);
	const source = prefixEvents(events, cutEventIndex);
	const dialogueUsers = new Set(
		dialogue.exchanges.flatMap((exchange) => (exchange.user ? [exchange.user.ordinal] : [])),
	);
	return {
		dialogue,
		plan: projectCurrentTurnPlan(events, cutEventIndex),
		work: projectCurrentWork(events, cutEventIndex),
		blocks: [
			projectHistoricalRequests(source, dialogueUsers),
			projectFiles(source),
			projectDecisions(events),
			projectActivity(source),
			projectOutstanding(source),
			projectTurns(source),
			projectStatus(source),
			projectTranscript(source),
		],
	};
}

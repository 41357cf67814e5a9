/**
 * One arm of a replay scored and charged (pure): the recorded branch's
 * replies against the requests the arm sent, the figures, and the charge at
 * each request's prompt size. The report's replays (Pi's compaction replayed,
 * pi-fold's ladder played headless) and the host replay's real-Pi runs score
 * through here, so every arm is held to one rule.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { buildSessionProjection, type SessionEntry } from "@earendil-works/pi-coding-agent";
import { branchEvents } from "./branch-events.ts";
import { type ChargeRules, type HiddenCharge, sessionCharge } from "./charge.ts";
import { type ScoringEvent, type SentRequest, type SessionScore, scoreReplies } from "./scorer.ts";
import { type OutOfViewSummary, outOfViewSummary } from "./summary.ts";
import { agentMessageViewer, type ViewMessage } from "./view.ts";

export interface ArmScore {
	score: SessionScore;
	summary: OutOfViewSummary;
	/** What the hidden references add to the arm's raw cost. */
	charge: HiddenCharge;
}

/** Score events and charge the replies at their requests' prompt sizes (by reply entry id). */
export function scoreArm(
	events: Iterable<ScoringEvent>,
	rules: ChargeRules,
	promptTokens: ReadonlyMap<string, number>,
): ArmScore {
	const score = scoreReplies(events);
	return {
		score,
		summary: outOfViewSummary(score.replies),
		charge: sessionCharge(rules, score.replies, (reply) =>
			reply.id === undefined ? undefined : promptTokens.get(reply.id),
		),
	};
}

/** Host messages per reply entry id, collected while a replay runs, read back as sent requests. */
export interface SentCollector {
	/** Record the messages sent for the reply with this entry id. */
	observe(entryId: string, messages: readonly AgentMessage[]): void;
	sentFor(entryId: string): SentRequest | undefined;
	/** The converter the requests were read with (pass it to `branchEvents` so both share its memo). */
	view: (message: AgentMessage) => ViewMessage | undefined;
}

/** A collector for one replay. */
export function sentCollector(): SentCollector {
	const view = agentMessageViewer();
	const sent = new Map<string, readonly AgentMessage[]>();
	return {
		observe: (entryId, messages) => {
			sent.set(entryId, [...messages]);
		},
		sentFor: (entryId) => {
			const messages = sent.get(entryId);
			return messages ? { messages: messages.flatMap((message) => view(message) ?? []) } : undefined;
		},
		view,
	};
}

/**
 * The requests a branch's own projection sends: for each reply, Pi's context
 * at its parent (compactions and context edits applied), as
 * `sessionRequests` reads the same branch.
 */
export function projectionCollector(branch: readonly SessionEntry[]): Omit<SentCollector, "observe"> {
	const all = branch as SessionEntry[];
	const byId = new Map(all.map((entry) => [entry.id, entry]));
	const view = agentMessageViewer();
	return {
		sentFor: (entryId) => {
			const entry = byId.get(entryId);
			if (!entry || entry.parentId === null) return undefined;
			const messages = buildSessionProjection(all, entry.parentId, byId).messages;
			return { messages: messages.flatMap((message) => view(message) ?? []) };
		},
		view,
	};
}

/** The events of a recorded branch against the requests a collector holds. */
export function armEvents(
	recorded: readonly SessionEntry[],
	collector: Pick<SentCollector, "sentFor" | "view">,
): Iterable<ScoringEvent> {
	return branchEvents(recorded, collector.sentFor, collector.view);
}

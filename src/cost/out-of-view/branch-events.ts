/**
 * A recorded branch as the scorer's events (pure): its transcript in order
 * (messages and extension messages as Pi puts them in context; summaries of
 * compactions and branches are not originals, so they are not transcript),
 * each recorded reply paired with the request a replay sent for it. Failed
 * replies are left out: pi-ai drops them from every later request, so no
 * model saw them again and nothing can refer to them.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import { type SessionEntry, sessionEntryToContextMessages } from "@earendil-works/pi-coding-agent";
import type { ScoringEvent, SentRequest } from "./scorer.ts";
import { agentMessageViewer, type ViewMessage } from "./view.ts";

/** Entry types whose messages are the transcript (a summary stands for messages; it is not one). */
const TRANSCRIPT_ENTRY_TYPES: ReadonlySet<string> = new Set(["message", "custom_message"]);

function isFailedReply(entry: SessionEntry): boolean {
	if (entry.type !== "message" || entry.message.role !== "assistant") return false;
	const reason = (entry.message as AssistantMessage).stopReason;
	return reason === "error" || reason === "aborted";
}

/**
 * The events of `branch`: `sentFor(entryId)` is the request the reply with that
 * id answered as sent (undefined: the replay did not send it; the reply is not
 * scored but joins the history). `view` converts a host message (one viewer per
 * session reuses its memo).
 */
export function* branchEvents(
	branch: readonly SessionEntry[],
	sentFor: (entryId: string) => SentRequest | undefined,
	view: (message: AgentMessage) => ViewMessage | undefined = agentMessageViewer(),
): Generator<ScoringEvent> {
	for (const entry of branch) {
		if (!TRANSCRIPT_ENTRY_TYPES.has(entry.type) || isFailedReply(entry)) continue;
		for (const message of sessionEntryToContextMessages(entry)) {
			const seen = view(message);
			if (!seen) continue;
			if (message.role === "assistant") {
				const sent = sentFor(entry.id);
				yield { kind: "reply", reply: seen, id: entry.id, ...(sent ? { sent } : {}) };
			} else yield { kind: "message", message: seen };
		}
	}
}

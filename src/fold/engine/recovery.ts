/**
 * Folds the model was told about that never landed. A fold result says
 * "from the next request on"; if Pi stopped before the boundary persisted
 * the fold's records, the resumed session has no fold behind that sentence.
 * The truth follows as an appended notice, never by rewriting the result.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { FoldState } from "../state/state.ts";

/** Custom message type of the notice, under the state prefix. */
export function noticeType(prefix: string): string {
	return `${prefix}:notice`;
}

interface ToolDetailsLike {
	action?: unknown;
	ok?: unknown;
	foldId?: unknown;
}

/**
 * Fold ids a successful fold or reboundary result of the context tool
 * announced that the state holds neither as a record nor as a pending mark,
 * and that no earlier notice already explained.
 */
export function lostAnnouncements(
	branch: readonly SessionEntry[],
	state: FoldState,
	toolName: string,
	prefix: string,
): string[] {
	const known = new Set([...state.records.map((r) => r.id), ...state.data.marks.map((m) => m.record.id)]);
	const explained = new Set<string>();
	const announced: string[] = [];
	for (const entry of branch) {
		if (entry.type === "custom_message" && entry.customType === noticeType(prefix)) {
			const ids = (entry.details as { foldIds?: unknown } | undefined)?.foldIds;
			if (Array.isArray(ids)) for (const id of ids) if (typeof id === "string") explained.add(id);
			continue;
		}
		if (entry.type !== "message" || entry.message.role !== "toolResult" || entry.message.toolName !== toolName)
			continue;
		const details = entry.message.details as ToolDetailsLike | undefined;
		if (details?.ok !== true || (details.action !== "fold" && details.action !== "reboundary")) continue;
		if (typeof details.foldId === "string") announced.push(details.foldId);
	}
	return [...new Set(announced)].filter((id) => !known.has(id) && !explained.has(id));
}

/** The notice the model reads: which folds did not land and what that means. */
export function lostNoticeText(ids: readonly string[], toolName: string): string {
	const list = ids.join(", ");
	return `[pi-fold] ${ids.length === 1 ? "Fold" : "Folds"} ${list} announced earlier did not land: the session stopped before ${ids.length === 1 ? "it was" : "they were"} saved. Those entries are still raw in the window; nothing was lost. Fold again with ${toolName} {"action":"fold",…} if still wanted.`;
}

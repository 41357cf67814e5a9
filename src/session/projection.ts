/**
 * Model-context messages mapped to the session entries they came from.
 *
 * Pi's `buildSessionProjection` already walks the active branch, applies the
 * latest compaction and every `context_edit`, and keeps provenance per entry.
 * This module flattens that into one row per model-visible message, so the
 * `context` hook (whose messages carry no ids) can be matched position by
 * position, and records which entries were omitted or replaced by edits.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { ContextEditEntry, SessionEntry, SessionProjection } from "@earendil-works/pi-coding-agent";

/** One model-visible message and the raw entry that owns it. */
export interface ProjectedMessage {
	/** Position in the model context (0-based). */
	index: number;
	/** Id of the owning entry (compaction, branch summary, custom message or message entry). */
	entryId: string;
	entryType: SessionEntry["type"];
	message: AgentMessage;
}

/** Flatten a Pi projection into rows, one per model-visible message. */
export function projectedMessages(projection: SessionProjection): ProjectedMessage[] {
	const rows: ProjectedMessage[] = [];
	for (const projected of projection.entries) {
		for (const message of projected.messages) {
			rows.push({
				index: rows.length,
				entryId: projected.sourceEntry.id,
				entryType: projected.sourceEntry.type,
				message,
			});
		}
	}
	return rows;
}

/** Latest `context_edit` per target on a branch (later edits win, as in Pi's projection). */
export function latestEdits(branch: readonly SessionEntry[]): Map<string, ContextEditEntry> {
	const edits = new Map<string, ContextEditEntry>();
	for (const entry of branch) if (entry.type === "context_edit") edits.set(entry.targetId, entry);
	return edits;
}

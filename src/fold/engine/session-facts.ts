/**
 * Facts the engine reads off the branch and off message lists: where the
 * fresh tail starts for an action, the last commit persisted on the branch,
 * what other extensions had edited before a fold covered it, and whether
 * one message list begins with another. Pure; no state.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { ContextEditEntry, SessionEntry } from "@earendil-works/pi-coding-agent";
import type { FoldOrigin, FoldRecord } from "../lattice/records.ts";
import type { FoldOp } from "../state/state-schema.ts";
import type { CommitSummary } from "./commit.ts";
import { messageDigest } from "./instrument.ts";

/** The newest commit summary on a branch, so status survives a resume. */
export function lastCommitOn(branch: readonly SessionEntry[], prefix: string): CommitSummary | undefined {
	const type = `${prefix}:commit`;
	for (let i = branch.length - 1; i >= 0; i--) {
		const entry = branch[i];
		if (entry?.type !== "custom" || entry.customType !== type) continue;
		const data = (entry.data as { summary?: Partial<CommitSummary> } | undefined)?.summary;
		if (data?.v === 1 && Array.isArray(data.folds) && typeof data.reason === "string") return data as CommitSummary;
	}
	return undefined;
}

/**
 * The `baseline` op for entries `records` cover for the first time
 * (`managed`: entries a fold covered before) that another extension had
 * already edited: expand restores that edit, not the raw entry.
 */
export function baselineOp(
	records: readonly FoldRecord[],
	latestEdits: ReadonlyMap<string, ContextEditEntry>,
	managed: ReadonlySet<string>,
): FoldOp | undefined {
	const entries: Record<string, ContextEditEntry["replacement"]> = {};
	for (const record of records) {
		for (const part of record.parts) {
			const edit = part.type === "entry" && !managed.has(part.entryId) ? latestEdits.get(part.entryId) : undefined;
			if (edit) entries[edit.targetId] = edit.replacement;
		}
	}
	return Object.keys(entries).length > 0 ? { op: "baseline", entries } : undefined;
}

/** True when `messages` begin with `prefix`, message for message (the same object or the same digest). */
export function startsWith(messages: readonly AgentMessage[], prefix: readonly AgentMessage[]): boolean {
	if (prefix.length > messages.length) return false;
	for (let index = 0; index < prefix.length; index++) {
		const a = messages[index];
		const b = prefix[index];
		if (a !== b && messageDigest(a) !== messageDigest(b)) return false;
	}
	return true;
}

/**
 * Where the fresh tail starts. For the agent: the latest assistant response,
 * which is still in flight while its tool calls run. For a command typed
 * while idle: the latest user message, so the exchange in progress stays raw.
 */
export function freshTailStart(branch: readonly SessionEntry[], origin: FoldOrigin): number {
	const role = origin === "agent" ? "assistant" : "user";
	for (let index = branch.length - 1; index >= 0; index--) {
		const entry = branch[index];
		if (entry?.type === "message" && entry.message.role === role) return index;
	}
	return branch.length;
}

/**
 * The fold runtime's plain helpers: opening the session's store, reading the
 * last commit back, the drafts' memo key, and the message comparisons the
 * `context` hook makes. No state; the runtime (runtime.ts) owns that.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { CommitSummary } from "../engine/commit.ts";
import { messageDigest } from "../engine/instrument.ts";
import type { FoldOrigin } from "../lattice/records.ts";
import { createMemoryFoldStore, type FoldStore, FoldStoreError } from "../store/store.ts";
import { openFileFoldStore } from "../store/store-file.ts";

/** A linear branch's identity while it only grows: its length and both ends. */
export function branchKey(branch: readonly SessionEntry[]): string {
	return `${branch.length}:${branch[0]?.id ?? ""}:${branch.at(-1)?.id ?? ""}`;
}

/**
 * What the drafts depend on besides the fold state: the edits and
 * compactions on the branch (folds cover only old, closed entries, so a new
 * message never changes them). A count plus the last such entry's id.
 */
export function editFingerprint(branch: readonly SessionEntry[]): string {
	let count = 0;
	let last = "";
	for (const entry of branch) {
		if (entry.type !== "context_edit" && entry.type !== "compaction") continue;
		count++;
		last = entry.id;
	}
	return `${count}:${last}:${branch[0]?.id ?? ""}`;
}

/**
 * The session's fold store. A session id the store cannot use as a path is
 * an explicit "no durable store" state, shown in status and fold results,
 * never a silent downgrade.
 */
export function openSessionStore(file: string | undefined, sessionDir: string, sessionId: string): FoldStore {
	if (!file) return createMemoryFoldStore();
	try {
		return openFileFoldStore({ sessionDir, sessionId });
	} catch (error) {
		if (!(error instanceof FoldStoreError)) throw error;
		return createMemoryFoldStore({ noDurableStore: error.message });
	}
}

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
 * Development tripwire: with this variable set to "1", an unattributed
 * rewrite throws from the `context` hook, so Pi reports it as an extension
 * error instead of it only being counted. The e2e suite runs with it on.
 */
export const STRICT_APPEND_ONLY_ENV = "PI_FOLD_STRICT_APPEND_ONLY";

export function strictAppendOnly(): boolean {
	return process.env[STRICT_APPEND_ONLY_ENV] === "1";
}

export function withoutSystem(messages: readonly AgentMessage[]): AgentMessage[] {
	return messages.filter((message) => message.role !== "system");
}

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

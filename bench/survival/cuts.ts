/**
 * Where Pi would compact a recorded session, independent of any compactor.
 *
 * Pi compacts when the context passes its line: the model window less
 * `reserveTokens` (16,384 by default). The context is measured in provider
 * tokens: Pi's structural estimate (chars/4) of every message, scaled by
 * `PROVIDER_TOKENS_PER_ESTIMATE` (the provider of the two Pi logs counted
 * 1.26–1.42 tokens per estimated token, system prompt included). The check
 * runs after each finished assistant reply. After a compaction the context
 * restarts at a fixed model of what stays (`keepRecentTokens` plus the largest
 * summary, 32 KiB ≈ 8,192 tokens), so every compactor is cut at the same
 * entries: cut positions never depend on the summary under test.
 */

import { estimateTokens, type SessionEntry } from "@earendil-works/pi-coding-agent";

/** Windows of the models Pi would compact for (their lines are window − reserve). */
export const WINDOWS = [128_000, 200_000, 272_000] as const;
/** Pi 1.6.0's defaults (docs/compaction.md). */
export const RESERVE_TOKENS = 16_384;
export const KEEP_RECENT_TOKENS = 20_000;
/** Provider tokens per structural-estimate token (measured on the two Pi logs' recorded usage: 1.26–1.42). */
export const PROVIDER_TOKENS_PER_ESTIMATE = 1.4;
/** Tokens of the largest summary (32 KiB at chars/4), in the model of what stays after a compaction. */
export const SUMMARY_RESERVE_TOKENS = 8_192;
/** System prompt and tool declarations in the calibration (structural estimate). */
export const FIXED_CONTEXT_ESTIMATE = 5_000;

export interface CutPoint {
	window: number;
	/** 1-based position among this session's compactions at this window. */
	sequence: number;
	/** Index of the last entry before the compaction (Pi compacts before the request that would follow it). */
	entryIndex: number;
	/** Provider tokens of the context at that point, in the model above. */
	contextTokens: number;
}

/** Pi's structural estimate of one entry's message (0 for entries without one). */
export function entryEstimate(entry: SessionEntry): number {
	if (entry.type === "message") return estimateTokens(entry.message);
	if (entry.type === "custom_message") {
		const text =
			typeof entry.content === "string"
				? entry.content
				: entry.content.map((part) => (part.type === "text" ? part.text : "")).join("");
		return Math.ceil(text.length / 4);
	}
	return 0;
}

/** True when Pi sends a request right after `entry`: the next entry is a reply, or a new prompt after a reply. */
function beforeRequest(entry: SessionEntry, next: SessionEntry | undefined): boolean {
	if (next?.type !== "message") return false;
	if (next.message.role === "assistant") return true;
	return next.message.role === "user" && entry.type === "message" && entry.message.role === "assistant";
}

/** Every point where Pi would compact `branch` at `window`, in order. */
export function cutPoints(branch: readonly SessionEntry[], window: number): CutPoint[] {
	const line = window - RESERVE_TOKENS;
	const restart = PROVIDER_TOKENS_PER_ESTIMATE * (KEEP_RECENT_TOKENS + SUMMARY_RESERVE_TOKENS + FIXED_CONTEXT_ESTIMATE);
	const cuts: CutPoint[] = [];
	let context = PROVIDER_TOKENS_PER_ESTIMATE * FIXED_CONTEXT_ESTIMATE;
	branch.forEach((entry, index) => {
		context += PROVIDER_TOKENS_PER_ESTIMATE * entryEstimate(entry);
		if (context > line && beforeRequest(entry, branch[index + 1])) {
			cuts.push({ window, sequence: cuts.length + 1, entryIndex: index, contextTokens: Math.round(context) });
			context = restart;
		}
	});
	return cuts;
}

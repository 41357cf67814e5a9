/**
 * The entries one more agent turn appends while a benchmark runs: an
 * assistant reading a file and the read's result, linked after the branch's
 * last entry, with ids no fixture uses. Two sizes: a small result (about 70
 * estimated tokens) the ladder never folds on its own, so requests stay
 * steady; a large one (about 1,000) the ladder folds as soon as carrying it
 * has paid for the rewrite, so most requests commit.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";

const LINE = "export function grown(input: string) { return input.trim(); }\n";

export type TurnSize = "small" | "large";

const RESULT_TEXT: Record<TurnSize, string> = { small: LINE.repeat(4), large: LINE.repeat(64) };

/** The assistant message and tool result of turn `n`. */
export function turnMessages(n: number, size: TurnSize = "small") {
	const callId = `bench-call-${n}`;
	const assistant = {
		role: "assistant" as const,
		content: [{ type: "toolCall" as const, id: callId, name: "read", arguments: { path: `src/grown/${n}.ts` } }],
		api: "anthropic-messages",
		provider: "anthropic",
		model: "claude-opus-4-5",
		usage: {
			input: 0,
			output: 40,
			cacheRead: 0,
			cacheWrite: 0,
			totalTokens: 40,
			cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
		},
		stopReason: "toolUse" as const,
		timestamp: 0,
	};
	const result = {
		role: "toolResult" as const,
		toolCallId: callId,
		toolName: "read",
		content: [{ type: "text" as const, text: RESULT_TEXT[size] }],
		isError: false,
		timestamp: 0,
	};
	return { assistant, result };
}

/** Turn `n` as session entries after `last`. */
export function assistantTurn(last: SessionEntry | undefined, n: number, size: TurnSize = "small"): SessionEntry[] {
	const { assistant, result } = turnMessages(n, size);
	const timestamp = last?.timestamp ?? "2026-01-01T00:00:00.000Z";
	const a = { type: "message", id: `bench-turn-${n}-a`, parentId: last?.id ?? null, timestamp, message: assistant };
	const r = { type: "message", id: `bench-turn-${n}-r`, parentId: a.id, timestamp, message: result };
	return [a, r] as SessionEntry[];
}

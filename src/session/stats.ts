/**
 * Counting what a session holds: entries by type, messages by role, tool
 * calls by tool, estimated tokens of the model context, and the usage and
 * cost providers recorded on assistant messages. Pure; shared by the CLI
 * report and the `/context` command.
 */

import type { SessionEntry, SessionProjection } from "@earendil-works/pi-coding-agent";
import { closureDefects, toolCallIdsOf, toolCallSpans } from "./closure.ts";
import { estimateMessagesTokens } from "./tokens.ts";

export interface UsageTotals {
	requests: number;
	input: number;
	cacheRead: number;
	cacheWrite: number;
	output: number;
	cost: number;
}

export interface SessionStats {
	entryCount: number;
	entriesByType: Record<string, number>;
	messagesByRole: Record<string, number>;
	toolCallsByTool: Record<string, number>;
	toolCallCount: number;
	toolResultCount: number;
	/** Call ids without a result, results without a call, ids answered twice. */
	closureDefects: { missingResult: number; missingCall: number; duplicateResult: number };
	/** Pi-compatible estimate of the current model context (active branch, edits and compaction applied). */
	contextMessages: number;
	contextTokens: number;
	usage: UsageTotals;
}

/** Count `key` in a record, keeping keys in first-seen order. */
function bump(counts: Record<string, number>, key: string): void {
	counts[key] = (counts[key] ?? 0) + 1;
}

/** Statistics over all entries (every branch) plus the projection of the active one. */
export function sessionStats(entries: readonly SessionEntry[], projection: SessionProjection): SessionStats {
	const entriesByType: Record<string, number> = {};
	const messagesByRole: Record<string, number> = {};
	const toolCallsByTool: Record<string, number> = {};
	const usage: UsageTotals = { requests: 0, input: 0, cacheRead: 0, cacheWrite: 0, output: 0, cost: 0 };
	let toolCallCount = 0;
	let toolResultCount = 0;
	for (const entry of entries) {
		bump(entriesByType, entry.type);
		if (entry.type !== "message") continue;
		const message = entry.message;
		bump(messagesByRole, message.role);
		for (const call of toolCallIdsOf(entry)) {
			bump(toolCallsByTool, call.name);
			toolCallCount++;
		}
		if (message.role === "toolResult") toolResultCount++;
		if (message.role === "assistant" && message.usage) {
			usage.requests++;
			usage.input += message.usage.input ?? 0;
			usage.cacheRead += message.usage.cacheRead ?? 0;
			usage.cacheWrite += message.usage.cacheWrite ?? 0;
			usage.output += message.usage.output ?? 0;
			usage.cost += message.usage.cost?.total ?? 0;
		}
	}
	const defects = closureDefects(toolCallSpans(entries));
	const count = (kind: string) => defects.filter((defect) => defect.kind === kind).length;
	return {
		entryCount: entries.length,
		entriesByType,
		messagesByRole,
		toolCallsByTool,
		toolCallCount,
		toolResultCount,
		closureDefects: {
			missingResult: count("missing-result"),
			missingCall: count("missing-call"),
			duplicateResult: count("duplicate-result"),
		},
		contextMessages: projection.messages.length,
		contextTokens: estimateMessagesTokens(projection.messages),
		usage,
	};
}

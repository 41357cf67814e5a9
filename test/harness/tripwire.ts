/**
 * Suite-wide tripwires for the e2e project: harnesses report what must never
 * happen (a request a provider would refuse, an extension error, an
 * unattributed window rewrite) and `test/e2e/setup.ts` fails the test that
 * caused it, so no test has to remember to look.
 */

import type { Message } from "@earendil-works/pi-ai";
import { DROPPED_STOP_REASONS } from "../../src/session/closure.ts";
import { pairingDefects, type WireMessage } from "./provider-rules.ts";

const problems: string[] = [];

export function reportProblem(problem: string): void {
	problems.push(problem);
}

/** Problems reported since the last call, oldest first. */
export function takeProblems(): string[] {
	return problems.splice(0);
}

/**
 * Pairing defects a real provider would refuse in a pi-ai message list. pi-ai
 * drops failed assistant messages and answers unanswered calls with
 * placeholders before sending, so only orphan and duplicate results remain.
 */
export function providerVisibleDefects(messages: readonly Message[]): string[] {
	const wire: WireMessage[] = messages.flatMap((message): WireMessage[] => {
		if (message.role === "assistant") {
			if (DROPPED_STOP_REASONS.has(message.stopReason)) return [];
			const calls = message.content.flatMap((part) => (part.type === "toolCall" ? [{ id: part.id }] : []));
			return [{ role: "assistant", ...(calls.length > 0 ? { tool_calls: calls } : {}) }];
		}
		if (message.role === "toolResult") return [{ role: "tool", tool_call_id: message.toolCallId }];
		return [{ role: message.role }];
	});
	return pairingDefects(wire)
		.filter((defect) => defect.kind !== "missing-result")
		.map((defect) => `${defect.kind} ${defect.toolCallId} at message ${defect.messageIndex}`);
}

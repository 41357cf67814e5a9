/**
 * A session's request sequence, as the prefix-cache model needs it: one
 * request per assistant message, whose prompt is the model context Pi built
 * for it (`buildSessionProjection` at the assistant entry's parent: branch,
 * compaction and context edits applied), each message reduced to a digest of
 * its canonical JSON and Pi's token estimate.
 *
 * The system prompt and tool schemas never reach the log; `calibrateRequests`
 * fits them as a fixed overhead (and the estimate's scale to the provider's
 * tokens) from the prompt sizes the provider recorded on each request, and
 * `promptRequests` turns that into one leading message per request, keyed by
 * the serving model so a model switch shares no cached prefix. Thinking-level
 * and tool-set changes are not visible to the key.
 *
 * Each request rebuilds its projection from its own leaf, so the walk costs
 * O(requests × branch depth); digests are memoized per message object (Pi
 * reuses the entry's message object in every projection), so each distinct
 * message is serialized and hashed once.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import { buildSessionProjection, type SessionEntry } from "@earendil-works/pi-coding-agent";
import { canonicalJson, sha256Hex } from "../session/canonical.ts";
import {
	type Calibration,
	type CalibrationPoint,
	calibratedTokens,
	estimateMessageTokens,
	fitCalibration,
	IDENTITY_CALIBRATION,
} from "../session/tokens.ts";
import type { PromptMessage, PromptRequest } from "./prefix-cache.ts";
import { promptTokens, type TokenUsage } from "./price.ts";

/** Digest prefix of the leading message standing for the system prompt and tool schemas. */
export const FIXED_PREFIX_DIGEST = "pi-fold:fixed-prefix";

/** One request of a recorded session. */
export interface SessionRequest {
	/** The assistant entry this request produced. */
	entryId: string;
	/** `provider/model` that served it: a different model never shares a cached prefix. */
	modelKey: string;
	/** The model context Pi sent, one digest + estimate per message. */
	context: PromptMessage[];
	/** Send time (ms since epoch) from the assistant message, when recorded. */
	time?: number;
	/** Usage the provider reported, when the message carries it. */
	recorded?: TokenUsage;
	/** Output tokens the provider recorded (0 when unknown). */
	output: number;
	/** Pi's estimate of the reply (what output costs when the log recorded none). */
	outputEstimate?: number;
	/** The reply failed (stop reason "error" or "aborted"): a provider bills nothing for it. */
	failed?: boolean;
}

/** Digest and estimate per message, memoized by object identity. */
export function promptMessageMemo(): (message: AgentMessage) => PromptMessage {
	const memo = new WeakMap<object, PromptMessage>();
	return (message) => {
		let prompt = memo.get(message);
		if (!prompt) {
			prompt = { digest: sha256Hex(canonicalJson(message)), tokens: estimateMessageTokens(message) };
			memo.set(message, prompt);
		}
		return prompt;
	};
}

/** Build the request sequence of a session: every assistant message, in file order (all branches). */
export function sessionRequests(entries: readonly SessionEntry[]): SessionRequest[] {
	const all = entries as SessionEntry[];
	const byId = new Map(all.map((entry) => [entry.id, entry]));
	const toPrompt = promptMessageMemo();
	const requests: SessionRequest[] = [];
	for (const entry of all) {
		if (entry.type !== "message" || entry.message.role !== "assistant") continue;
		const context = entry.parentId === null ? [] : buildSessionProjection(all, entry.parentId, byId).messages;
		requests.push(requestOf(entry.message as AssistantMessage, entry.id, context.map(toPrompt)));
	}
	return requests;
}

/** The request that produced a recorded assistant message, with `context` as its prompt. */
export function requestOf(message: AssistantMessage, entryId: string, context: PromptMessage[]): SessionRequest {
	const request: SessionRequest = {
		entryId,
		modelKey: `${message.provider ?? ""}/${message.model ?? ""}`,
		context,
		output: message.usage?.output ?? 0,
		outputEstimate: estimateMessageTokens(message),
		failed: message.stopReason === "error" || message.stopReason === "aborted",
	};
	// pi-ai stamps an assistant message when its request starts: that is the send time.
	if (typeof message.timestamp === "number" && Number.isFinite(message.timestamp)) request.time = message.timestamp;
	if (message.usage) {
		request.recorded = {
			input: message.usage.input ?? 0,
			cacheRead: message.usage.cacheRead ?? 0,
			cacheWrite: message.usage.cacheWrite ?? 0,
			output: message.usage.output ?? 0,
		};
	}
	return request;
}

/**
 * Output tokens a request is billed for: what the provider recorded, else
 * Pi's estimate of the reply at the calibration's scale.
 */
export function outputTokens(request: SessionRequest, calibration: Calibration): number {
	return request.output > 0
		? request.output
		: calibratedTokens(request.outputEstimate ?? 0, { ...calibration, overhead: 0 });
}

/** Fit estimate → provider tokens from the requests that recorded a non-zero prompt. */
export function calibrateRequests(requests: readonly SessionRequest[]): Calibration {
	const points: CalibrationPoint[] = [];
	for (const request of requests) {
		if (!request.recorded) continue;
		const actual = promptTokens(request.recorded);
		let estimated = 0;
		for (const message of request.context) estimated += message.tokens;
		if (actual > 0 && estimated > 0) points.push({ estimated, actual });
	}
	return fitCalibration(points);
}

/**
 * The prompts the cache model sees: a leading fixed-prefix message keyed by
 * the serving model and sized by the calibration's overhead (0 uncalibrated),
 * then the context with each estimate rescaled to provider tokens.
 */
export function promptRequests(
	requests: readonly SessionRequest[],
	calibration: Calibration = IDENTITY_CALIBRATION,
	extraFixedTokens = 0,
): PromptRequest[] {
	const overhead = Math.max(0, Math.round(calibration.overhead)) + extraFixedTokens;
	const perMessage: Calibration = { ...calibration, overhead: 0 };
	const scaled = new WeakMap<PromptMessage, PromptMessage>();
	const rescale = (message: PromptMessage): PromptMessage => {
		let out = scaled.get(message);
		if (!out) {
			out = { digest: message.digest, tokens: calibratedTokens(message.tokens, perMessage) };
			scaled.set(message, out);
		}
		return out;
	};
	return requests.map((request) => {
		const fixed: PromptMessage = { digest: `${FIXED_PREFIX_DIGEST}:${request.modelKey}`, tokens: overhead };
		const prompt: PromptRequest = { messages: [fixed, ...request.context.map(rescale)] };
		if (request.time !== undefined) prompt.time = request.time;
		return prompt;
	});
}

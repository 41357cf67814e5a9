/**
 * Token estimates compatible with Pi's, and calibration against what the
 * provider actually reported.
 *
 * Pi estimates a message at chars/4 (`estimateTokens`). Providers tokenize
 * differently and add a fixed overhead (system prompt, tool schemas) that no
 * message-level heuristic sees. Each assistant message records the prompt size
 * the provider billed; against the estimate of the context that preceded it,
 * those checkpoints fit `actual ≈ overhead + scale × estimate`.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { Usage } from "@earendil-works/pi-ai";
import { estimateTokens } from "@earendil-works/pi-coding-agent";

/** Pi's own heuristic: characters per estimated token. */
export const PI_CHARS_PER_TOKEN = 4;
/** A fitted scale outside this range means the checkpoints do not describe one context; fall back. */
export const CALIBRATION_SCALE_BOUNDS = { min: 0.25, max: 4 } as const;

/** Pi-compatible estimate for one model-context message. */
export function estimateMessageTokens(message: AgentMessage): number {
	return estimateTokens(message);
}

/** Pi-compatible estimate for a list of messages. */
export function estimateMessagesTokens(messages: readonly AgentMessage[]): number {
	let total = 0;
	for (const message of messages) total += estimateTokens(message);
	return total;
}

/** Prompt tokens a provider billed for one request (fresh input + cache read + cache write). */
export function promptTokensOf(usage: Usage): number {
	return (usage.input ?? 0) + (usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0);
}

/** One observation: Pi's estimate of a request's messages and the prompt tokens the provider reported. */
export interface CalibrationPoint {
	estimated: number;
	actual: number;
}

export interface Calibration {
	/** Tokens the provider counts that no message estimate sees (system prompt, tools). */
	overhead: number;
	/** Provider tokens per estimated token. */
	scale: number;
	/** Characters per provider token implied by the fit. */
	charsPerToken: number;
	points: number;
	method: "least-squares" | "ratio" | "identity";
}

/** Identity calibration: trust Pi's estimate as is. */
export const IDENTITY_CALIBRATION: Calibration = {
	overhead: 0,
	scale: 1,
	charsPerToken: PI_CHARS_PER_TOKEN,
	points: 0,
	method: "identity",
};

/**
 * Fit `actual = overhead + scale × estimated` by least squares. With one usable
 * point (or a degenerate spread) the fit is a pure ratio; with none, identity.
 */
export function fitCalibration(points: readonly CalibrationPoint[]): Calibration {
	const usable = points.filter((point) => point.estimated > 0 && point.actual > 0);
	if (usable.length === 0) return IDENTITY_CALIBRATION;
	const n = usable.length;
	const meanX = usable.reduce((sum, point) => sum + point.estimated, 0) / n;
	const meanY = usable.reduce((sum, point) => sum + point.actual, 0) / n;
	let sxx = 0;
	let sxy = 0;
	for (const point of usable) {
		sxx += (point.estimated - meanX) ** 2;
		sxy += (point.estimated - meanX) * (point.actual - meanY);
	}
	if (n >= 2 && sxx > 0) {
		const scale = sxy / sxx;
		const overhead = meanY - scale * meanX;
		if (scale >= CALIBRATION_SCALE_BOUNDS.min && scale <= CALIBRATION_SCALE_BOUNDS.max && overhead >= 0) {
			return { overhead, scale, charsPerToken: PI_CHARS_PER_TOKEN / scale, points: n, method: "least-squares" };
		}
	}
	const scale = clamp(meanY / meanX, CALIBRATION_SCALE_BOUNDS.min, CALIBRATION_SCALE_BOUNDS.max);
	return { overhead: 0, scale, charsPerToken: PI_CHARS_PER_TOKEN / scale, points: n, method: "ratio" };
}

/** Apply a calibration to a structural estimate. */
export function calibratedTokens(estimated: number, calibration: Calibration): number {
	return Math.round(calibration.overhead + calibration.scale * estimated);
}

/**
 * Calibration points from a model-context message list: every assistant
 * message with reported usage, against the estimate of the messages before it.
 */
export function calibrationPoints(messages: readonly AgentMessage[]): CalibrationPoint[] {
	const points: CalibrationPoint[] = [];
	let estimated = 0;
	for (const message of messages) {
		if (message.role === "assistant" && message.usage) {
			const actual = promptTokensOf(message.usage);
			if (actual > 0) points.push({ estimated, actual });
		}
		estimated += estimateTokens(message);
	}
	return points;
}

function clamp(value: number, min: number, max: number): number {
	return Math.min(max, Math.max(min, value));
}

/**
 * Edits of the `compaction` section for the settings dialog
 * (src/settings/): the choices it offers, parsing what the person typed, and
 * the edit a choice makes to a settings file's JSON.
 *
 * Edits touch only `compaction.targetContextRatio` ("Max occupancy") and the
 * active model's entry in `compaction.thresholds` / `compaction.tokenThresholds`
 * ("Threshold"); a percent clears the model's token threshold and a token
 * count clears its percent, so one of them holds; "Pi default" clears both.
 * Every other key of the file is kept as it was.
 */

import { isPlainRecord } from "../../session/records/record-guards.ts";
import {
	MAX_TARGET_CONTEXT_RATIO,
	MAX_THRESHOLD_RATIO,
	MAX_THRESHOLD_TOKENS,
	MIN_TARGET_CONTEXT_RATIO,
	MIN_THRESHOLD_RATIO,
	MIN_THRESHOLD_TOKENS,
} from "./settings.ts";

/** Step of the offered percentages: coarse enough for a short list. */
export const PERCENT_STEP = 5;
/** Lowest Threshold percent offered in the list (custom entry still accepts down to the minimum). */
export const LOWEST_LISTED_THRESHOLD_PERCENT = 50;

export type ThresholdChoice =
	| { kind: "ratio"; ratio: number }
	| { kind: "tokens"; tokens: number }
	| { kind: "pi-default" };

function percents(from: number, to: number): number[] {
	const out: number[] = [];
	for (let percent = from; percent <= to + 1e-9; percent += PERCENT_STEP) out.push(percent);
	return out;
}

/** Max occupancy choices, in percent. */
export const OCCUPANCY_PERCENTS = percents(MIN_TARGET_CONTEXT_RATIO * 100, MAX_TARGET_CONTEXT_RATIO * 100);
/** Threshold choices, in percent. */
export const THRESHOLD_PERCENTS = percents(LOWEST_LISTED_THRESHOLD_PERCENT, MAX_THRESHOLD_RATIO * 100);

/** `"65%"` or `"65"` → 0.65 when within [min, max]; else undefined. */
export function parsePercent(text: string, min: number, max: number): number | undefined {
	const match = /^\s*(\d+(?:\.\d+)?)\s*%?\s*$/.exec(text);
	if (!match?.[1]) return undefined;
	const ratio = Number(match[1]) / 100;
	return ratio >= min - 1e-9 && ratio <= max + 1e-9 ? Math.round(ratio * 10_000) / 10_000 : undefined;
}

/** `"400000"`, `"400,000"` or `"400k"` → tokens within the threshold bounds; else undefined. */
export function parseTokens(text: string): number | undefined {
	const match = /^\s*(\d[\d,_]*)\s*(k)?\s*$/i.exec(text);
	if (!match?.[1]) return undefined;
	const tokens = Number(match[1].replace(/[,_]/g, "")) * (match[2] ? 1_000 : 1);
	return Number.isInteger(tokens) && tokens >= MIN_THRESHOLD_TOKENS && tokens <= MAX_THRESHOLD_TOKENS
		? tokens
		: undefined;
}

function section(file: Record<string, unknown>): Record<string, unknown> {
	return isPlainRecord(file.compaction) ? { ...file.compaction } : {};
}

/** The file with `compaction.targetContextRatio` set. */
export function withOccupancy(file: Record<string, unknown>, ratio: number): Record<string, unknown> {
	return { ...file, compaction: { ...section(file), targetContextRatio: ratio } };
}

function withoutKey(map: unknown, key: string): Record<string, unknown> | undefined {
	if (!isPlainRecord(map)) return undefined;
	const { [key]: _dropped, ...rest } = map;
	return Object.keys(rest).length > 0 ? rest : undefined;
}

/** The file with the model's Threshold set to `choice` (see the module comment). */
export function withThreshold(
	file: Record<string, unknown>,
	modelKey: string,
	choice: ThresholdChoice,
): Record<string, unknown> {
	const next = section(file);
	const thresholds = withoutKey(next.thresholds, modelKey);
	const tokenThresholds = withoutKey(next.tokenThresholds, modelKey);
	delete next.thresholds;
	delete next.tokenThresholds;
	const ratios = { ...thresholds, ...(choice.kind === "ratio" ? { [modelKey]: choice.ratio } : {}) };
	const tokens = { ...tokenThresholds, ...(choice.kind === "tokens" ? { [modelKey]: choice.tokens } : {}) };
	if (Object.keys(ratios).length > 0) next.thresholds = ratios;
	if (Object.keys(tokens).length > 0) next.tokenThresholds = tokens;
	return { ...file, compaction: next };
}

/** Bounds a custom threshold percent must satisfy. */
export const THRESHOLD_PERCENT_BOUNDS = { min: MIN_THRESHOLD_RATIO, max: MAX_THRESHOLD_RATIO } as const;

/**
 * The compactor's own compaction triggers and Pi threshold deferral, as pure
 * decisions over the current context size.
 *
 * A model's configured threshold (`tokenThresholds` wins over `thresholds`,
 * keyed by `provider/model`) is a token limit: the token count itself, or the
 * ratio times the model window, floored. When `outputReserveTokens` is
 * positive, the headroom rule also applies: fewer than that many tokens left
 * in the window. At a settled boundary the compactor compacts when either rule is
 * met (`autoTrigger`). When Pi's own threshold compaction fires first, the compactor
 * defers it (cancels quietly) while the model's configured threshold is not
 * reached and the headroom rule is not breached (`shouldDeferThreshold`).
 * Without a configured threshold the compactor never defers, and overflow and manual
 * compactions are never deferred (the caller only asks for "threshold").
 */

import { type CompactorSettings, compactionModelKey, thresholdForModel } from "../settings/settings.ts";

export type AutoTrigger = "headroom" | "tokens" | "ratio";

export interface PressureInput {
	/** Current context tokens (Pi's usage-based estimate). */
	tokens: number;
	contextWindow: number;
	settings: CompactorSettings;
	/** Active model, for the threshold key. */
	model?: { provider: string; id: string };
}

/** The model's configured threshold as a token limit, if any. */
export function modelThresholdTokens(input: PressureInput): { kind: "tokens" | "ratio"; limit: number } | undefined {
	if (!input.model) return undefined;
	const threshold = thresholdForModel(input.settings, compactionModelKey(input.model.provider, input.model.id));
	if (!threshold) return undefined;
	if (threshold.kind === "tokens") return { kind: "tokens", limit: threshold.tokens };
	if (!(input.contextWindow > 0)) return undefined;
	return { kind: "ratio", limit: Math.floor(threshold.ratio * input.contextWindow + 1e-6) };
}

/** True when fewer than `outputReserveTokens` tokens are left in the window. */
export function headroomBreached(input: PressureInput): boolean {
	const reserve = input.settings.outputReserveTokens;
	return reserve > 0 && input.contextWindow > 0 && input.contextWindow - input.tokens < reserve;
}

/**
 * Whether any rule could ask for a compaction at some context size: the
 * headroom rule is on, or the model has a configured threshold. When neither
 * holds `autoTrigger` answers undefined for every size, so a caller may skip
 * measuring the context at all (Pi's usage reading projects the whole branch).
 */
export function mayTrigger(settings: CompactorSettings, model: PressureInput["model"]): boolean {
	if (settings.outputReserveTokens > 0) return true;
	return model !== undefined && thresholdForModel(settings, compactionModelKey(model.provider, model.id)) !== undefined;
}

/** Which rule asks the compactor to compact at a settled boundary, if any. */
export function autoTrigger(input: PressureInput): AutoTrigger | undefined {
	if (!Number.isFinite(input.tokens) || input.tokens <= 0) return undefined;
	if (headroomBreached(input)) return "headroom";
	const threshold = modelThresholdTokens(input);
	if (threshold && input.tokens >= threshold.limit) return threshold.kind;
	return undefined;
}

/** Whether Pi's threshold compaction should wait for the model's own threshold. */
export function shouldDeferThreshold(input: PressureInput): boolean {
	const threshold = modelThresholdTokens(input);
	if (!threshold || headroomBreached(input)) return false;
	return input.tokens < threshold.limit;
}

/**
 * Growth of the context, as a share of the model window, that a cancelled
 * threshold compaction waits for before the trigger may fire again: the
 * compactor could not produce a fitting summary at that size, and nothing
 * but new context can change that (5% is a few turns, not every settle).
 */
export const BACKOFF_GROWTH_RATIO = 0.05;
/** Floor of that growth in tokens, so a small window still waits for real growth. */
export const BACKOFF_MIN_GROWTH_TOKENS = 1_000;

/** A threshold compaction that was cancelled, and the size it waits to exceed. */
export interface TriggerBackoff {
	/** Context tokens when the compaction was cancelled. */
	cancelledAtTokens: number;
	/** Tokens the context must reach before the trigger fires again. */
	resumeAtTokens: number;
	/** Why the compaction was cancelled (the cancel code). */
	cause: string;
}

/**
 * After a cancelled threshold compaction, wait until usage grows by
 * `BACKOFF_GROWTH_RATIO` of the window (at least `BACKOFF_MIN_GROWTH_TOKENS`).
 */
export function backoffAfterCancel(tokens: number, contextWindow: number | undefined, cause: string): TriggerBackoff {
	const window = contextWindow !== undefined && contextWindow > 0 ? contextWindow : 0;
	const growth = Math.max(BACKOFF_MIN_GROWTH_TOKENS, Math.ceil(window * BACKOFF_GROWTH_RATIO));
	return { cancelledAtTokens: tokens, resumeAtTokens: tokens + growth, cause };
}

/** Whether a back-off still holds at `tokens` (it holds until usage reaches `resumeAtTokens`). */
export function backoffHolds(backoff: TriggerBackoff | undefined, tokens: number): boolean {
	return backoff !== undefined && tokens < backoff.resumeAtTokens;
}

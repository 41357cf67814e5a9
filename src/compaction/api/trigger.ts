/**
 * Fabric's own compaction triggers and Pi threshold deferral, as pure
 * decisions over the current context size.
 *
 * A model's configured threshold (`tokenThresholds` wins over `thresholds`,
 * keyed by `provider/model`) is a token limit: the token count itself, or the
 * ratio times the model window, floored. When `outputReserveTokens` is
 * positive, the headroom rule also applies: fewer than that many tokens left
 * in the window. At a settled boundary Fabric compacts when either rule is
 * met (`autoTrigger`). When Pi's own threshold compaction fires first, Fabric
 * defers it (cancels quietly) while the model's configured threshold is not
 * reached and the headroom rule is not breached (`shouldDeferThreshold`).
 * Without a configured threshold Fabric never defers, and overflow and manual
 * compactions are never deferred (the caller only asks for "threshold").
 */

import { compactionModelKey, type FabricCompactionSettings, thresholdForModel } from "./settings.ts";

export type AutoTrigger = "headroom" | "tokens" | "ratio";

export interface PressureInput {
	/** Current context tokens (Pi's usage-based estimate). */
	tokens: number;
	contextWindow: number;
	settings: FabricCompactionSettings;
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

/** Which rule asks Fabric to compact at a settled boundary, if any. */
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

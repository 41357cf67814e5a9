/**
 * Live cut and continuity budget: which entries Pi keeps raw after a deterministic
 * compaction. Pure functions over the active branch.
 *
 * Live window. The last compaction marker decides what Pi currently replays:
 * a `firstKeptEntryId` found before the marker starts the window there; a
 * compact-all marker (""), a missing id, or an id not found before the marker
 * (orphan) starts it right after the marker; with no marker the whole branch
 * is live. The marker's own summary is part of the current context, so its
 * estimate is counted once; older markers inside the kept range add nothing
 * (Pi projects only the newest one).
 *
 * Calibration. `rawTokensBefore` (R) is the sum of the caller's structural
 * estimates over the current context; `fixedContextEstimate` (F, default 0) is
 * the structural estimate of context outside the entries (system prompt, tool
 * schemas) when known. Pi's `tokensBefore` (T) is one observation of the true
 * size. The compactor fits T = scale × (R + F): every structural estimate, entries and
 * fixed context alike, is off by the same tokenizer factor, so
 * - scale = T / (R + F), rounded up to a multiple of 1e-6, within
 *   [1e-6, MAX_TOKEN_SCALE];
 * - fixedOverhead = T − scale × R, rounded up (= scale × F; more when the
 *   scale is capped).
 * T < R + F (the estimate overshoots) gives a scale below 1 and an overhead of
 * about scale × F. T > R + F gives a scale above 1: dense tokenization (CJK
 * text at about one token per character against Pi's four characters per
 * token) shrinks with the raw tail instead of posing as unshrinkable context,
 * so such sessions stay compactable. Only the known fixed estimate F counts as
 * overhead. Past MAX_TOKEN_SCALE (two tokens per character, beyond any real
 * tokenizer's average) the rest of the excess is context no estimate sees and
 * becomes fixed overhead. R = 0 leaves nothing to scale: scale 1, overhead T.
 *
 * Budget. The summary reservation is the largest summary (32 KiB; at Pi's 4
 * characters per token counted on UTF-8 bytes, which never fall below the
 * character count: 8,192 tokens) times max(1, scale), since the summary
 * tokenizes like the text it quotes. The continuity target is fixedOverhead +
 * keepRecentTokens + the reservation (reported as `continuityTargetTokens`).
 * The hard target is the smallest ceiling: window × targetContextRatio
 * ("occupancy"), 90% of (window − reserveTokens) ("reserve", the
 * estimator-error margin), and 95% of tokensBefore ("reduction"). On overflow
 * the window is first clamped to 90% of the failed size. The raw-tail budget,
 * in structural tokens, is (target − fixedOverhead − reservation) / scale. An
 * actual summary counts max(bytes / 4, scale × characters / 4) tokens.
 *
 * Cut. Candidates are user, custom_message, `!cmd` (bashExecution) and
 * assistant entries strictly after the previous marker that split no tool
 * call from its result. keepRecentTokens is a floor, as Pi treats it: the
 * newest candidate whose suffix holds at least keepRecentTokens (calibrated:
 * keepRecentTokens / scale structural tokens) is kept, when that suffix fits the raw-tail budget (binding
 * constraint "continuity"). When it does not (one huge newest entry, or a
 * session smaller than the floor), the earliest candidate whose suffix fits
 * keeps the largest legal suffix, and the binding constraint is the ceiling
 * that set the budget. None fits: compact everything (`firstKeptEntryId:
 * ""`), which the summary and the UI state. This departs from the spec's
 * "continuity target clamped to the ceilings" (which kept at most
 * keepRecentTokens) on purpose: a manual /compact must keep the latest turn
 * raw whenever it fits.
 *
 * Floor: when even the smallest compaction misses the target, see
 * `summary-fit.ts`.
 *
 * Without model metadata (no window, or no positive tokensBefore) the legacy
 * fallback applies: the earliest whole-turn (user/custom) cut whose structural
 * tail fits keepRecentTokens, else the earliest such cut at any candidate,
 * else compact everything. It reports no window or calibration numbers.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { closureSafeBoundaries, toolCallSpans } from "../../session/closure.ts";
import type { BindingConstraint } from "../records/details.ts";
import {
	DEFAULT_TARGET_CONTEXT_RATIO,
	MAX_TARGET_CONTEXT_RATIO,
	MIN_TARGET_CONTEXT_RATIO,
} from "../settings/settings.ts";
import { SUMMARY_MAX_BYTES } from "../summary/render.ts";

/** Pi's structural heuristic: four characters per token; applied to UTF-8 bytes for the summary. */
export const SUMMARY_BYTES_PER_TOKEN = 4;
/** Tokens reserved for the largest possible summary when choosing the cut. */
export const SUMMARY_RESERVE_TOKENS = Math.ceil(SUMMARY_MAX_BYTES / SUMMARY_BYTES_PER_TOKEN);
/** Fraction of (window − reserveTokens) usable after compaction: the estimator-error margin. */
export const SAFE_WINDOW_FRACTION = 0.9;
/** Compaction must end below this fraction of tokensBefore, so it never expands context. */
export const REDUCTION_FRACTION = 0.95;
/** On overflow the failed request proves the effective window is below this fraction of its size. */
export const OVERFLOW_WINDOW_FRACTION = 0.9;
/** The calibration scale is rounded up to a multiple of 1 / TOKEN_SCALE_DENOMINATOR. */
export const TOKEN_SCALE_DENOMINATOR = 1_000_000;
/**
 * Largest calibration scale: two tokens per character against Pi's four
 * characters per token. Excess beyond it is fixed context, not density.
 */
export const MAX_TOKEN_SCALE = 8;

export type CompactionReason = "manual" | "threshold" | "overflow";

export interface LiveCutOptions {
	/** Pi's `preparation.tokensBefore`. */
	tokensBefore: number;
	/** Active model's advertised context window; absent selects the fallback. */
	contextWindow?: number;
	/** Pi's `compaction.reserveTokens`. */
	reserveTokens: number;
	/** Pi's `compaction.keepRecentTokens`. */
	keepRecentTokens: number;
	/** The compactor's occupancy ceiling, bounded to the settings range. */
	targetContextRatio: number;
	reason: CompactionReason;
	/**
	 * Structural estimate of an entry's current contribution to model context
	 * (Pi's `estimateTokens` over what the entry projects to; 0 when nothing).
	 * For a compaction entry: its summary.
	 */
	estimate: (entry: SessionEntry) => number;
	/** Structural estimate of context outside the entries (system prompt, tools), if known. */
	fixedContextEstimate?: number;
}

export type PriorMarker = "none" | "kept" | "compact-all" | "missing" | "orphan";

export interface LiveWindow {
	/** Index of the first live entry. */
	start: number;
	/** Index of the last compaction marker, or -1. */
	markerIndex: number;
	marker: PriorMarker;
}

/** Calibrated continuity budget; every number details v2 records. */
export interface ContinuityBudget {
	/** Advertised window before the overflow clamp. */
	nominalContextWindow: number;
	/** Window after the overflow clamp. */
	contextWindow: number;
	overflowClamped: boolean;
	targetContextRatio: number;
	occupancyCeilingTokens: number;
	safeCeilingTokens: number;
	reductionCeilingTokens: number;
	continuityTargetTokens: number;
	/** min(continuity target, every ceiling). */
	targetContextTokens: number;
	/** The floor a compact-all summary may use when it cannot meet the target; see the module comment. */
	floorCeilingTokens: number;
	bindingConstraint: BindingConstraint;
	reserveTokens: number;
	keepRecentTokens: number;
	tokensBefore: number;
	rawTokensBefore: number;
	/** The structural fixed-context estimate F the calibration used (0 when unknown). */
	fixedContextEstimateTokens: number;
	tokenScale: number;
	fixedOverheadTokens: number;
	/** Largest summary at the calibrated scale: SUMMARY_RESERVE_TOKENS × max(1, scale). */
	summaryReserveTokens: number;
	/** Structural tokens the kept suffix may use. */
	rawTailTokenBudget: number;
	retainedRawTokens: number;
	/** Projection with the full summary reservation; see `fitsAfterSummary` for the actual summary. */
	projectedTokensAfter: number;
}

export type CutRule = "budget" | "whole-turn" | "suffix" | "compact-all";

export interface LiveCutPlan {
	window: LiveWindow;
	/** Index of the first kept entry; `entries.length` when compacting everything. */
	keptIndex: number;
	/** Id for the compaction result; "" compacts everything. */
	firstKeptEntryId: string;
	compactAll: boolean;
	rule: CutRule;
	/** Live entries the cut summarizes: [window.start, keptIndex). 0 means nothing to compact. */
	liveCutEntries: number;
	rawTokensBefore: number;
	retainedRawTokens: number;
	rawTailTokenBudget: number;
	/** Present only when model metadata allowed calibrated budgeting. */
	budget?: ContinuityBudget;
	fallbackReason?: "no-context-window" | "no-tokens-before";
}

/** The live window made by the last compaction marker. */
export function findLiveWindow(entries: readonly SessionEntry[]): LiveWindow {
	let markerIndex = -1;
	for (let index = entries.length - 1; index >= 0; index--) {
		if (entries[index]?.type === "compaction") {
			markerIndex = index;
			break;
		}
	}
	const marker = entries[markerIndex];
	if (marker?.type !== "compaction") return { start: 0, markerIndex: -1, marker: "none" };
	const keptId: unknown = marker.firstKeptEntryId;
	const after = { start: markerIndex + 1, markerIndex };
	if (keptId === "") return { ...after, marker: "compact-all" };
	if (typeof keptId !== "string") return { ...after, marker: "missing" };
	const keptIndex = entries.findIndex((entry, index) => index < markerIndex && entry.id === keptId);
	if (keptIndex === -1) return { ...after, marker: "orphan" };
	return { start: keptIndex, markerIndex, marker: "kept" };
}

/**
 * How an entry may serve as the first kept entry. A `!cmd` run is a turn of
 * its own, as Pi treats it: the user ran it, and its output is often the
 * newest thing the next request needs.
 */
export function cutCandidateKind(entry: SessionEntry): "turn" | "assistant" | undefined {
	if (entry.type === "custom_message") return "turn";
	if (entry.type !== "message") return undefined;
	if (entry.message.role === "user" || entry.message.role === "bashExecution") return "turn";
	if (entry.message.role === "assistant") return "assistant";
	return undefined;
}

/** Fit `tokensBefore = scale × (raw + fixed)` with `fixedOverhead = tokensBefore − scale × raw`; see the module comment. */
export function calibrate(
	rawTokens: number,
	tokensBefore: number,
	fixedContextEstimate = 0,
): { tokenScale: number; fixedOverheadTokens: number } {
	const raw = sanitize(rawTokens);
	const fixed = sanitize(fixedContextEstimate);
	const observed = sanitize(tokensBefore);
	if (raw === 0) return { tokenScale: 1, fixedOverheadTokens: Math.ceil(observed) };
	const steps = Math.ceil((observed * TOKEN_SCALE_DENOMINATOR) / (raw + fixed) - 1e-9);
	const tokenScale = Math.min(MAX_TOKEN_SCALE, Math.max(1, steps) / TOKEN_SCALE_DENOMINATOR);
	return { tokenScale, fixedOverheadTokens: Math.max(0, Math.ceil(observed - tokenScale * raw)) };
}

/** Summary tokens at Pi's heuristic, counted on UTF-8 bytes. */
export function summaryTokensForBytes(bytes: number): number {
	return Math.ceil(sanitize(bytes) / SUMMARY_BYTES_PER_TOKEN);
}

/**
 * Calibrated tokens of a summary of `bytes` UTF-8 bytes and `characters` UTF-16
 * code units: Pi's character estimate at the calibrated scale, never below the
 * byte-counted estimate (so a scale below 1 never shrinks the summary).
 */
export function calibratedSummaryTokens(bytes: number, characters: number, tokenScale: number): number {
	const scaled = Math.ceil((sanitize(tokenScale) * sanitize(characters)) / SUMMARY_BYTES_PER_TOKEN - 1e-9);
	return Math.max(summaryTokensForBytes(bytes), scaled);
}

/** Reservation for the largest summary at `tokenScale`; see the module comment. */
export function summaryReserveTokens(tokenScale: number): number {
	return Math.ceil(SUMMARY_RESERVE_TOKENS * Math.max(1, sanitize(tokenScale)) - 1e-9);
}

function sanitize(value: number): number {
	return Number.isFinite(value) && value > 0 ? value : 0;
}

/** Floor that ignores binary noise such as 200000 × 0.65 = 129999.99999999999. */
function floorTokens(value: number): number {
	return Math.max(0, Math.floor(value + 1e-6));
}

/**
 * The window a provider's overflow refusal leaves: below OVERFLOW_WINDOW_FRACTION of the refused
 * request's tokens, or the model's window when that is smaller. The compactor's budget after an
 * overflow and the fold runtime's lossless attempt (src/fold/pi/overflow.ts) both read it.
 */
export function overflowWindow(contextWindow: number, refusedTokens: number): number {
	return Math.min(floorTokens(contextWindow), floorTokens(refusedTokens * OVERFLOW_WINDOW_FRACTION));
}

/** Choose the kept boundary and, with model metadata, the calibrated budget. Never throws on numeric input. */
export function planLiveCut(entries: readonly SessionEntry[], options: LiveCutOptions): LiveCutPlan {
	const window = findLiveWindow(entries);
	const n = entries.length;
	// Structural tokens per entry from the live start on; the marker counts once.
	const tokens = new Float64Array(n + 1);
	let rawTokensBefore = 0;
	for (let index = window.start; index < n; index++) {
		const entry = entries[index];
		if (!entry || entry.type === "compaction") continue;
		tokens[index] = Math.ceil(sanitize(options.estimate(entry)));
		rawTokensBefore += tokens[index] ?? 0;
	}
	const marker = entries[window.markerIndex];
	if (marker) rawTokensBefore += Math.ceil(sanitize(options.estimate(marker)));
	const suffix = new Float64Array(n + 1);
	for (let index = n - 1; index >= 0; index--) suffix[index] = (suffix[index + 1] ?? 0) + (tokens[index] ?? 0);

	const safe = closureSafeBoundaries(n, toolCallSpans(entries));
	// A cut must leave at least one entry summarized and follow the previous marker.
	const firstCandidate = Math.max(window.markerIndex + 1, 1);
	const candidate = (index: number, turnsOnly: boolean): boolean => {
		const entry = entries[index];
		if (!entry || !safe[index]) return false;
		const kind = cutCandidateKind(entry);
		return kind === "turn" || (kind === "assistant" && !turnsOnly);
	};
	const earliestFit = (budget: number, turnsOnly: boolean): number | undefined => {
		for (let index = firstCandidate; index < n; index++) {
			if ((suffix[index] ?? 0) <= budget && candidate(index, turnsOnly)) return index;
		}
		return undefined;
	};
	// keepRecentTokens as a floor: the newest cut that keeps at least `floor`, if it fits the ceiling.
	const floorFit = (floor: number, ceiling: number): number | undefined => {
		for (let index = n - 1; index >= firstCandidate; index--) {
			const kept = suffix[index] ?? 0;
			if (kept > ceiling) return undefined;
			if (kept >= floor && candidate(index, false)) return index;
		}
		return undefined;
	};
	const finish = (
		keptIndex: number | undefined,
		rule: CutRule,
		rawTailTokenBudget: number,
	): Omit<LiveCutPlan, "budget" | "fallbackReason"> => {
		const compactAll = keptIndex === undefined;
		const kept = keptIndex ?? n;
		return {
			window,
			keptIndex: kept,
			firstKeptEntryId: compactAll ? "" : (entries[kept]?.id ?? ""),
			compactAll,
			rule: compactAll ? "compact-all" : rule,
			liveCutEntries: Math.max(0, kept - window.start),
			rawTokensBefore,
			retainedRawTokens: compactAll ? 0 : (suffix[kept] ?? 0),
			rawTailTokenBudget,
		};
	};

	const keepRecentTokens = floorTokens(sanitize(options.keepRecentTokens));
	const contextWindow = sanitize(options.contextWindow ?? 0);
	const tokensBefore = sanitize(options.tokensBefore);
	if (contextWindow === 0 || tokensBefore === 0) {
		const wholeTurn = earliestFit(keepRecentTokens, true);
		const plan =
			wholeTurn !== undefined
				? finish(wholeTurn, "whole-turn", keepRecentTokens)
				: finish(earliestFit(keepRecentTokens, false), "suffix", keepRecentTokens);
		return { ...plan, fallbackReason: contextWindow === 0 ? "no-context-window" : "no-tokens-before" };
	}

	const ratio = Number.isFinite(options.targetContextRatio)
		? Math.min(MAX_TARGET_CONTEXT_RATIO, Math.max(MIN_TARGET_CONTEXT_RATIO, options.targetContextRatio))
		: DEFAULT_TARGET_CONTEXT_RATIO;
	const reserveTokens = floorTokens(sanitize(options.reserveTokens));
	const fixedContextEstimateTokens = Math.ceil(sanitize(options.fixedContextEstimate ?? 0));
	const { tokenScale, fixedOverheadTokens } = calibrate(rawTokensBefore, tokensBefore, fixedContextEstimateTokens);
	const reservation = summaryReserveTokens(tokenScale);
	const nominalContextWindow = floorTokens(contextWindow);
	const effectiveWindow =
		options.reason === "overflow" ? overflowWindow(contextWindow, tokensBefore) : nominalContextWindow;
	const limits: Record<BindingConstraint, number> = {
		continuity: fixedOverheadTokens + keepRecentTokens + reservation,
		occupancy: floorTokens(effectiveWindow * ratio),
		reserve: floorTokens(Math.max(0, effectiveWindow - reserveTokens) * SAFE_WINDOW_FRACTION),
		reduction: floorTokens(tokensBefore * REDUCTION_FRACTION),
	};
	// The ceilings bound what may be kept; keepRecentTokens is the floor Pi keeps when it fits under them.
	const targetContextTokens = Math.min(limits.occupancy, limits.reserve, limits.reduction);
	const floorCeilingTokens = Math.min(floorTokens(effectiveWindow * SAFE_WINDOW_FRACTION), limits.reduction);
	const rawTailTokenBudget = floorTokens(
		Math.max(0, targetContextTokens - fixedOverheadTokens - reservation) / tokenScale,
	);
	// The floor counts real tokens, like the continuity target: structurally keepRecentTokens / scale.
	const floorIndex = floorFit(floorTokens(keepRecentTokens / tokenScale), rawTailTokenBudget);
	const keptIndex = floorIndex ?? earliestFit(rawTailTokenBudget, false);
	const ceilingName = (["occupancy", "reserve", "reduction"] as const).find(
		(name) => limits[name] === targetContextTokens,
	);
	const bindingConstraint = floorIndex !== undefined ? "continuity" : ceilingName;
	const plan = finish(keptIndex, "budget", rawTailTokenBudget);
	return {
		...plan,
		budget: {
			nominalContextWindow,
			contextWindow: effectiveWindow,
			overflowClamped: effectiveWindow < nominalContextWindow,
			targetContextRatio: ratio,
			occupancyCeilingTokens: limits.occupancy,
			safeCeilingTokens: limits.reserve,
			reductionCeilingTokens: limits.reduction,
			continuityTargetTokens: limits.continuity,
			targetContextTokens,
			floorCeilingTokens,
			bindingConstraint: bindingConstraint ?? "continuity",
			reserveTokens,
			keepRecentTokens,
			tokensBefore,
			rawTokensBefore,
			fixedContextEstimateTokens,
			tokenScale,
			fixedOverheadTokens,
			summaryReserveTokens: reservation,
			rawTailTokenBudget,
			retainedRawTokens: plan.retainedRawTokens,
			projectedTokensAfter: projectAfter(fixedOverheadTokens, tokenScale, plan.retainedRawTokens, reservation),
		},
	};
}

export function projectAfter(overhead: number, scale: number, retainedRaw: number, summaryTokens: number): number {
	return overhead + Math.ceil(scale * retainedRaw - 1e-9) + summaryTokens;
}

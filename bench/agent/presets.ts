/**
 * The agent benchmark's presets and arms, as data.
 *
 * Owns what a run is made of: stage count, seeds, the model's window and
 * output limit, stage payload bounds, the Pi compaction settings in force,
 * the provider's cache rules and rate card, and the list of arms with the
 * agent each one runs. An arm is data, so an arm whose registration fails is
 * reported as failed while the others still run.
 */

import { resolveRateCard } from "../../src/cost/catalog.ts";
import type { RateCard } from "../../src/cost/rate-card.ts";
import type { PromptCacheRules } from "../../test/harness/provider-rules.ts";
import type { ArmSetup } from "./config.ts";
import { FULL_MAX_BYTES, FULL_MIN_BYTES } from "./workload.ts";

export interface ArmSpec {
	name: string;
	/** What the column means, for the report. */
	label: string;
	setup: ArmSetup;
	/** The marking agent folds stage k−2 after stage k; the other agent never folds. */
	marking: boolean;
}

export const ARMS: readonly ArmSpec[] = [
	{ name: "native", label: "Pi native compaction", setup: { kind: "native" }, marking: false },
	{ name: "defaults", label: "pi-fold defaults, agent never folds", setup: { kind: "pi-fold" }, marking: false },
	{
		// The spec's default scheduling, to measure the choice of epoch as ours side by side.
		name: "immediate-defaults",
		label: 'pi-fold foldScheduling "immediate", agent never folds',
		setup: { kind: "pi-fold", options: { foldScheduling: "immediate" } },
		marking: false,
	},
	{
		name: "epoch-marking",
		label: 'pi-fold foldScheduling "epoch", marking agent',
		setup: { kind: "pi-fold", options: { foldScheduling: "epoch" } },
		marking: true,
	},
	{
		name: "immediate-marking",
		label: 'pi-fold foldScheduling "immediate", marking agent',
		setup: { kind: "pi-fold", options: { foldScheduling: "immediate" } },
		marking: true,
	},
	{ name: "compactor", label: "folding off, compactor alone", setup: { kind: "compactor" }, marking: false },
];

/** Pi's own compaction settings written to the sandbox's settings.json; undefined fields keep Pi's defaults. */
export interface PiCompactionSettings {
	reserveTokens?: number;
	keepRecentTokens?: number;
}

export interface Preset {
	name: string;
	stages: number;
	seeds: readonly number[];
	contextWindow: number;
	maxTokens: number;
	minBytes: number;
	maxBytes: number;
	piCompaction: PiCompactionSettings;
	/** What the settings above are, for the report. */
	compactionNote: string;
	cacheRules: PromptCacheRules;
	rateCard: string;
	/** Upper bound for one Pi run. */
	timeoutMs: number;
}

/** OpenAI's documented prompt caching: prefixes of at least 1,024 tokens, in 128-token increments. */
export const PROVIDER_CACHE_RULES: PromptCacheRules = { minCachedTokens: 1024, granularityTokens: 128 };

/** The workload: 64 stages of 24–48 KB, three seeds, a 272,000-token window. */
const FULL: Preset = {
	name: "full",
	stages: 64,
	seeds: [1, 2, 3],
	contextWindow: 272_000,
	maxTokens: 32_000,
	minBytes: FULL_MIN_BYTES,
	maxBytes: FULL_MAX_BYTES,
	piCompaction: {},
	compactionNote: "Pi defaults (enabled, reserveTokens 16,384, keepRecentTokens 20,000)",
	cacheRules: PROVIDER_CACHE_RULES,
	rateCard: "gpt-5.6",
	timeoutMs: 60 * 60_000,
};

/**
 * CI size: 12 stages of 18–36 KB in a 40,000-token window. The stage mass is
 * about twice the window, as in the full preset (64 × ~9k tokens against 272k),
 * so compactions and commits happen; Pi's reserve and kept tail are scaled to
 * the window (10%, and about two stages) instead of its 272k-sized defaults,
 * which would compact after nearly every stage here.
 */
const SMALL: Preset = {
	name: "small",
	stages: 12,
	seeds: [1],
	contextWindow: 40_000,
	maxTokens: 4_096,
	minBytes: Math.round(FULL_MIN_BYTES * 0.75),
	maxBytes: Math.round(FULL_MAX_BYTES * 0.75),
	piCompaction: { reserveTokens: 4_000, keepRecentTokens: 14_000 },
	compactionNote: "scaled to the window: reserveTokens 4,000, keepRecentTokens 14,000 (Pi's other defaults)",
	cacheRules: PROVIDER_CACHE_RULES,
	rateCard: "gpt-5.6",
	timeoutMs: 5 * 60_000,
};

export const PRESETS: Readonly<Record<string, Preset>> = { full: FULL, small: SMALL };
export const DEFAULT_PRESET = "small";

/** The user message of every run. */
export function userMessage(stages: number): string {
	return `Work through the staged repository assignment: call repo_stage for stages 1 to ${stages} in order, and answer every probe a stage asks before moving on.`;
}

/** The preset's rate card; throws when the name resolves to none. */
export function presetCard(preset: Preset): RateCard {
	const card = resolveRateCard(preset.rateCard);
	if (!card) throw new Error(`agent bench: unknown rate card ${preset.rateCard}`);
	return card;
}

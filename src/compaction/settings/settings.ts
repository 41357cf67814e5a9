/**
 * Compaction settings: defaults, bounds, and a total resolver.
 *
 * `resolveCompactionSettings` reads the `compaction` section of a settings
 * file (any JSON value, possibly hand-written) and never throws. Every value
 * it had to replace, clamp, round or drop is reported, so a settings UI can
 * say what it changed. `keepRecentTokens` belongs to Pi (its own
 * `compaction.keepRecentTokens`, default 20,000); it is resolved here with
 * Pi's default so the continuity budget has one source of settings.
 */

import { isPlainRecord } from "../../session/records/record-guards.ts";

export type CompactionEngine = "fabric" | "pi";

export const DEFAULT_ENGINE: CompactionEngine = "fabric";
/** Post-compaction occupancy ceiling ("Max occupancy"). */
export const DEFAULT_TARGET_CONTEXT_RATIO = 0.65;
export const MIN_TARGET_CONTEXT_RATIO = 0.25;
export const MAX_TARGET_CONTEXT_RATIO = 0.85;
/** Per-model percent thresholds (window occupancy that triggers compaction). */
export const MIN_THRESHOLD_RATIO = 0.25;
export const MAX_THRESHOLD_RATIO = 0.95;
/** Per-model token thresholds, rounded to integers. */
export const MIN_THRESHOLD_TOKENS = 1_000;
export const MAX_THRESHOLD_TOKENS = 100_000_000;
/** Headroom trigger; 0 disables it. */
export const DEFAULT_OUTPUT_RESERVE_TOKENS = 0;
/** Upper bound for any other token count read from settings. */
export const MAX_SETTINGS_TOKENS = 100_000_000;
/** Labels for `compact.pressure()`; they never trigger compaction. */
export const DEFAULT_PRESSURE_BANDS: Readonly<PressureBands> = Object.freeze({ warn: 0.6, urgent: 0.8 });
export const DEFAULT_REPAIR_ORPHANS = true;
/** Pi's default continuity tail. */
export const DEFAULT_KEEP_RECENT_TOKENS = 20_000;

export interface PressureBands {
	warn: number;
	urgent: number;
}

export interface CompactorSettings {
	engine: CompactionEngine;
	targetContextRatio: number;
	/** Percent thresholds by canonical `provider/model` key. */
	thresholds: Record<string, number>;
	/** Token thresholds by canonical `provider/model` key; see `thresholdForModel` for precedence. */
	tokenThresholds: Record<string, number>;
	outputReserveTokens: number;
	pressureBands: PressureBands;
	repairOrphans: boolean;
	keepRecentTokens: number;
}

export type SettingsAction = "defaulted" | "clamped" | "rounded" | "dropped";

/** One change the resolver made to the raw settings. */
export interface SettingsAdjustment {
	/** Dotted path under `compaction`, e.g. `thresholds["openai/gpt-5"]`. */
	path: string;
	action: SettingsAction;
	reason: string;
}

export interface ResolvedCompactionSettings {
	settings: CompactorSettings;
	adjustments: SettingsAdjustment[];
}

/** A fresh copy of the defaults. */
export function defaultCompactionSettings(): CompactorSettings {
	return {
		engine: DEFAULT_ENGINE,
		targetContextRatio: DEFAULT_TARGET_CONTEXT_RATIO,
		thresholds: {},
		tokenThresholds: {},
		outputReserveTokens: DEFAULT_OUTPUT_RESERVE_TOKENS,
		pressureBands: { ...DEFAULT_PRESSURE_BANDS },
		repairOrphans: DEFAULT_REPAIR_ORPHANS,
		keepRecentTokens: DEFAULT_KEEP_RECENT_TOKENS,
	};
}

/** Canonical threshold key for a model. */
export function compactionModelKey(provider: string, modelId: string): string {
	return `${provider}/${modelId}`;
}

/** True for a canonical `provider/model` key: a non-empty provider, a slash, a non-empty model id. */
export function isModelKey(key: string): boolean {
	const slash = key.indexOf("/");
	return slash > 0 && slash < key.length - 1 && key.trim() === key;
}

function isFiniteNumber(value: unknown): value is number {
	return typeof value === "number" && Number.isFinite(value);
}

/** Resolve the raw `compaction` settings section. Never throws. */
export function resolveCompactionSettings(raw: unknown): ResolvedCompactionSettings {
	const settings = defaultCompactionSettings();
	const adjustments: SettingsAdjustment[] = [];
	const note = (path: string, action: SettingsAction, reason: string): void => {
		adjustments.push({ path, action, reason });
	};
	try {
		if (raw === undefined || raw === null) return { settings, adjustments };
		if (!isPlainRecord(raw)) {
			note("compaction", "defaulted", "the compaction settings must be an object");
			return { settings, adjustments };
		}
		readEngine(raw.engine, settings, note);
		settings.targetContextRatio = readRatio(
			raw.targetContextRatio,
			"targetContextRatio",
			DEFAULT_TARGET_CONTEXT_RATIO,
			MIN_TARGET_CONTEXT_RATIO,
			MAX_TARGET_CONTEXT_RATIO,
			note,
		);
		settings.thresholds = readThresholdMap(raw.thresholds, "thresholds", note, (value, path) =>
			clampNumber(value, MIN_THRESHOLD_RATIO, MAX_THRESHOLD_RATIO, path, note),
		);
		settings.tokenThresholds = readThresholdMap(raw.tokenThresholds, "tokenThresholds", note, (value, path) =>
			roundTokens(value, MIN_THRESHOLD_TOKENS, MAX_THRESHOLD_TOKENS, path, note),
		);
		settings.outputReserveTokens = readTokens(
			raw.outputReserveTokens,
			"outputReserveTokens",
			DEFAULT_OUTPUT_RESERVE_TOKENS,
			note,
		);
		settings.pressureBands = readPressureBands(raw.pressureBands, note);
		if (raw.repairOrphans !== undefined) {
			if (typeof raw.repairOrphans === "boolean") settings.repairOrphans = raw.repairOrphans;
			else note("repairOrphans", "defaulted", "must be a boolean");
		}
		settings.keepRecentTokens = readTokens(raw.keepRecentTokens, "keepRecentTokens", DEFAULT_KEEP_RECENT_TOKENS, note);
		return { settings, adjustments };
	} catch {
		// A hostile value (throwing getter, proxy) must not break compaction: use the defaults.
		return {
			settings: defaultCompactionSettings(),
			adjustments: [{ path: "compaction", action: "defaulted", reason: "the compaction settings could not be read" }],
		};
	}
}

type Note = (path: string, action: SettingsAction, reason: string) => void;

function readEngine(value: unknown, settings: CompactorSettings, note: Note): void {
	if (value === undefined) return;
	if (value === "fabric" || value === "pi") settings.engine = value;
	else note("engine", "defaulted", 'must be "fabric" or "pi"');
}

function clampNumber(value: number, min: number, max: number, path: string, note: Note): number {
	if (value < min) {
		note(path, "clamped", `raised to the minimum ${min}`);
		return min;
	}
	if (value > max) {
		note(path, "clamped", `lowered to the maximum ${max}`);
		return max;
	}
	return value;
}

function roundTokens(value: number, min: number, max: number, path: string, note: Note): number {
	const rounded = Math.round(value);
	if (rounded !== value) note(path, "rounded", "token counts are integers");
	return clampNumber(rounded, min, max, path, note);
}

function readRatio(value: unknown, path: string, fallback: number, min: number, max: number, note: Note): number {
	if (value === undefined) return fallback;
	if (!isFiniteNumber(value)) {
		note(path, "defaulted", "must be a number");
		return fallback;
	}
	return clampNumber(value, min, max, path, note);
}

function readTokens(value: unknown, path: string, fallback: number, note: Note): number {
	if (value === undefined) return fallback;
	if (!isFiniteNumber(value)) {
		note(path, "defaulted", "must be a number");
		return fallback;
	}
	return roundTokens(value, 0, MAX_SETTINGS_TOKENS, path, note);
}

function readThresholdMap(
	value: unknown,
	name: string,
	note: Note,
	bound: (value: number, path: string) => number,
): Record<string, number> {
	const out: Record<string, number> = {};
	if (value === undefined) return out;
	if (!isPlainRecord(value)) {
		note(name, "defaulted", "must be an object keyed by provider/model");
		return out;
	}
	for (const key of Object.keys(value).sort()) {
		const path = `${name}[${JSON.stringify(key)}]`;
		const entry = value[key];
		if (!isModelKey(key)) note(path, "dropped", "the key must be provider/model");
		else if (!isFiniteNumber(entry)) note(path, "dropped", "must be a number");
		else out[key] = bound(entry, path);
	}
	return out;
}

function readPressureBands(value: unknown, note: Note): PressureBands {
	if (value === undefined) return { ...DEFAULT_PRESSURE_BANDS };
	if (isPlainRecord(value)) {
		const { warn, urgent } = value;
		if (isFiniteNumber(warn) && isFiniteNumber(urgent) && warn > 0 && warn < urgent && urgent < 1) {
			return { warn, urgent };
		}
	}
	note("pressureBands", "defaulted", "must satisfy 0 < warn < urgent < 1");
	return { ...DEFAULT_PRESSURE_BANDS };
}

/** Which configured threshold applies to a model: a token threshold wins over a percent one. */
export type ModelThreshold = { kind: "tokens"; tokens: number } | { kind: "ratio"; ratio: number };

export function thresholdForModel(settings: CompactorSettings, modelKey: string): ModelThreshold | undefined {
	if (Object.hasOwn(settings.tokenThresholds, modelKey)) {
		const tokens = settings.tokenThresholds[modelKey];
		if (tokens !== undefined) return { kind: "tokens", tokens };
	}
	if (Object.hasOwn(settings.thresholds, modelKey)) {
		const ratio = settings.thresholds[modelKey];
		if (ratio !== undefined) return { kind: "ratio", ratio };
	}
	return undefined;
}

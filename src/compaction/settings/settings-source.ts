/**
 * Where the compactor's settings come from, read at use time.
 *
 * Three layers, later ones winning key by key:
 * 1. the `options` a host passed to `registerCompaction` (defaults for this
 *    installation);
 * 2. the `compaction` section of Pi's global settings file,
 *    `<agentDir>/settings.json` (`agentDir` from Pi's `getAgentDir()`);
 * 3. the `compaction` section of the project file `<cwd>/.pi/settings.json`,
 *    read only when the context says the project is trusted.
 * Top-level keys replace; keys whose values are plain objects on both sides
 * (`thresholds`, `tokenThresholds`, `pressureBands`) merge one level deep, as
 * Pi merges its own nested settings. The merged section is then validated by
 * `resolveCompactionSettings`, which never throws. A missing file adds
 * nothing; an unreadable or malformed one is skipped and reported (Pi warns
 * about malformed settings files itself). Nothing is read at import time:
 * every compaction reads the files afresh, so edits apply without a reload.
 */

import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { CONFIG_DIR_NAME, getAgentDir } from "@earendil-works/pi-coding-agent";
import { isPlainRecord } from "../../session/records/record-guards.ts";
import {
	type CompactionEngine,
	type PressureBands,
	type ResolvedCompactionSettings,
	resolveCompactionSettings,
} from "./settings.ts";

/** File name of Pi's settings file, in the agent dir and in `<cwd>/.pi/`. */
export const SETTINGS_FILE_NAME = "settings.json";
/** The settings section the compactor reads (shared with Pi's own compaction keys). */
export const COMPACTION_SECTION = "compaction";

/**
 * Compaction options a host may pass to `registerPiFold({ compaction })`.
 * Every field is optional and validated like a hand-written settings file:
 * out-of-range values are clamped, malformed ones fall back to the default.
 */
export interface CompactionOptions {
	/** "fabric" (default) runs the deterministic compactor; "pi" defers to Pi's summarizer. */
	engine?: CompactionEngine;
	/** Post-compaction occupancy ceiling, 0.25–0.85 (default 0.65). */
	targetContextRatio?: number;
	/** Percent thresholds by `provider/model`, 0.25–0.95. */
	thresholds?: Record<string, number>;
	/** Token thresholds by `provider/model`, 1,000–100,000,000; win over a percent threshold. */
	tokenThresholds?: Record<string, number>;
	/** Headroom kept for the next response; 0 (default) disables the headroom trigger. */
	outputReserveTokens?: number;
	pressureBands?: PressureBands;
	/** Repair orphaned tool results in the outgoing context (default true). */
	repairOrphans?: boolean;
	/** Fallback continuity tail; Pi's own `compaction.keepRecentTokens` from the event wins. */
	keepRecentTokens?: number;
}

/** One settings layer that could not be used. */
export interface SettingsSourceProblem {
	path: string;
	reason: string;
}

export interface CompactionSettingsSources {
	settings: ResolvedCompactionSettings;
	/** Files that were read (existing and parsed), in merge order. */
	files: string[];
	/** The raw `compaction` section of each read file, in merge order (for naming a file's own problems). */
	layers: { path: string; scope: "global" | "project"; section: unknown }[];
	problems: SettingsSourceProblem[];
}

/** What the reader needs from the host; tests pass their own. */
export interface SettingsReadContext {
	cwd: string;
	isProjectTrusted(): boolean;
}

export interface SettingsFileIo {
	agentDir(): string;
	/** File text, or undefined when the file does not exist. Throws for other failures. */
	readText(path: string): string | undefined;
	/** Replace a file's text (the settings dialog persists through it); absent: the dialog cannot save. */
	writeText?(path: string, text: string): void;
}

export const NODE_SETTINGS_IO: SettingsFileIo = {
	agentDir: () => getAgentDir(),
	readText: (path) => {
		try {
			return readFileSync(path, "utf8");
		} catch (error) {
			if ((error as { code?: unknown }).code === "ENOENT") return undefined;
			throw error;
		}
	},
	writeText: (path, text) => {
		// Temp file then rename, so Pi never reads a half-written settings file.
		mkdirSync(dirname(path), { recursive: true });
		const temp = `${path}.${process.pid}.tmp`;
		writeFileSync(temp, text);
		renameSync(temp, path);
	},
};

/** Merge raw `compaction` sections; later layers win, plain-object values merge one level deep. */
export function mergeCompactionSections(layers: readonly unknown[]): Record<string, unknown> {
	const merged: Record<string, unknown> = {};
	for (const layer of layers) {
		if (!isPlainRecord(layer)) continue;
		for (const [key, value] of Object.entries(layer)) {
			const previous = merged[key];
			merged[key] = isPlainRecord(previous) && isPlainRecord(value) ? { ...previous, ...value } : value;
		}
	}
	return merged;
}

/** The `compaction` section of one settings file, or undefined when the file adds nothing. */
function readSection(path: string, io: SettingsFileIo, problems: SettingsSourceProblem[]): unknown {
	let text: string | undefined;
	try {
		text = io.readText(path);
	} catch (error) {
		problems.push({ path, reason: `unreadable: ${error instanceof Error ? error.message : String(error)}` });
		return undefined;
	}
	if (text === undefined) return undefined;
	let parsed: unknown;
	try {
		parsed = JSON.parse(text);
	} catch {
		problems.push({ path, reason: "not valid JSON" });
		return undefined;
	}
	if (!isPlainRecord(parsed)) {
		problems.push({ path, reason: "not a JSON object" });
		return undefined;
	}
	return parsed[COMPACTION_SECTION];
}

/** Read and resolve the effective compaction settings for one use. */
export function readCompactionSettings(
	context: SettingsReadContext,
	options: unknown,
	io: SettingsFileIo = NODE_SETTINGS_IO,
): CompactionSettingsSources {
	const problems: SettingsSourceProblem[] = [];
	const files: string[] = [];
	const fileLayers: CompactionSettingsSources["layers"] = [];
	const layers: unknown[] = [options];
	const paths: { path: string; scope: "global" | "project" }[] = [
		{ path: join(io.agentDir(), SETTINGS_FILE_NAME), scope: "global" },
	];
	if (context.isProjectTrusted())
		paths.push({ path: join(context.cwd, CONFIG_DIR_NAME, SETTINGS_FILE_NAME), scope: "project" });
	for (const { path, scope } of paths) {
		const section = readSection(path, io, problems);
		if (section === undefined) continue;
		files.push(path);
		fileLayers.push({ path, scope, section });
		layers.push(section);
	}
	return {
		settings: resolveCompactionSettings(mergeCompactionSections(layers)),
		files,
		layers: fileLayers,
		problems,
	};
}

/**
 * The compactor's settings problems, for the one settings notice
 * (src/host/settings-notice.ts): each names the file, the key, the value found and
 * what the compactor used instead.
 *
 * Each file's `compaction` section is resolved on its own, so a problem is
 * attributed to the file that holds it; "used" is the effective value after
 * every layer merged (a later file may have set a valid value). A file that
 * could not be read or parsed is Pi's to report (it reads nothing from it
 * either), so it is not repeated here.
 */

import type { SettingsProblem } from "../../host/settings-notice.ts";
import { shownValue } from "../../host/settings-notice.ts";
import { type CompactorSettings, resolveCompactionSettings } from "./settings.ts";
import type { CompactionSettingsSources } from "./settings-source.ts";

/** `thresholds["a/b"]` → ["thresholds", "a/b"]; `engine` → ["engine"]. */
function keyPath(path: string): string[] {
	const match = /^([A-Za-z]+)\[(".*")\]$/.exec(path);
	if (!match?.[1] || !match[2]) return [path];
	try {
		return [match[1], String(JSON.parse(match[2]))];
	} catch {
		return [match[1]];
	}
}

function lookup(value: unknown, keys: readonly string[]): unknown {
	let current = value;
	for (const key of keys) {
		if (typeof current !== "object" || current === null || !Object.hasOwn(current, key)) return undefined;
		current = (current as Record<string, unknown>)[key];
	}
	return current;
}

function usedText(settings: CompactorSettings, keys: readonly string[], action: string): string {
	if (keys[0] === "compaction") return "the defaults";
	const used = lookup(settings, keys);
	if (used === undefined) return action === "dropped" ? "nothing (entry ignored)" : "the default";
	return shownValue(used);
}

/** The problems of one read, in file order; empty when the settings are clean. */
export function compactionSettingsProblems(sources: CompactionSettingsSources): SettingsProblem[] {
	const problems: SettingsProblem[] = [];
	const effective = sources.settings.settings;
	for (const layer of sources.layers) {
		for (const adjustment of resolveCompactionSettings(layer.section).adjustments) {
			const keys = keyPath(adjustment.path);
			const whole = keys[0] === "compaction";
			problems.push({
				path: layer.path,
				key: whole ? "compaction" : `compaction.${adjustment.path}`,
				value: whole ? layer.section : lookup(layer.section, keys),
				reason: adjustment.reason,
				using: usedText(effective, keys, adjustment.action),
			});
		}
	}
	return problems;
}

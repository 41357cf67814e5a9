/**
 * Settings problems as the user reads them: one line per problem naming the
 * file, the key, the value found and what the compactor used instead.
 *
 * Each file's `compaction` section is resolved on its own, so a problem is
 * attributed to the file that holds it; "used" is the effective value after
 * every layer merged (a later file may have set a valid value).
 */

import { type CompactorSettings, resolveCompactionSettings } from "./settings.ts";
import type { CompactionSettingsSources } from "./settings-source.ts";

/** Characters of a found value shown in a notice: enough to recognise it, never a whole file. */
export const MAX_NOTICE_VALUE_CHARS = 80;
/** Problems listed in one notice; the rest are counted. */
export const MAX_NOTICE_LINES = 8;

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

function shown(value: unknown): string {
	let text: string;
	try {
		text = value === undefined ? "(missing)" : (JSON.stringify(value) ?? String(value));
	} catch {
		text = String(value);
	}
	return text.length > MAX_NOTICE_VALUE_CHARS ? `${text.slice(0, MAX_NOTICE_VALUE_CHARS - 1)}…` : text;
}

function usedText(settings: CompactorSettings, keys: readonly string[], action: string): string {
	if (keys[0] === "compaction") return "the defaults";
	const used = lookup(settings, keys);
	if (used === undefined) return action === "dropped" ? "nothing (entry ignored)" : "the default";
	return shown(used);
}

/** The problem lines of one read, in file order; empty when the settings are clean. */
export function settingsProblemLines(sources: CompactionSettingsSources): string[] {
	const lines: string[] = [];
	for (const problem of sources.problems) lines.push(`${problem.path}: ${problem.reason}; the file was skipped`);
	const effective = sources.settings.settings;
	for (const layer of sources.layers) {
		for (const adjustment of resolveCompactionSettings(layer.section).adjustments) {
			const keys = keyPath(adjustment.path);
			const value = keys[0] === "compaction" ? layer.section : lookup(layer.section, keys);
			lines.push(
				`${layer.path}: compaction.${adjustment.path} = ${shown(value)} ${adjustment.reason}; ` +
					`used ${usedText(effective, keys, adjustment.action)}`,
			);
		}
	}
	return lines;
}

/** One bounded notice for the lines, or undefined when there are none. */
export function settingsNotice(lines: readonly string[]): string | undefined {
	if (lines.length === 0) return undefined;
	const shownLines = lines.slice(0, MAX_NOTICE_LINES);
	const more = lines.length - shownLines.length;
	return [
		"pi-fold compaction settings:",
		...shownLines.map((line) => `- ${line}`),
		...(more > 0 ? [`- and ${more} more`] : []),
	].join("\n");
}

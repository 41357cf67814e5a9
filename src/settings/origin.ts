/**
 * Where an effective setting comes from: code, the global settings file, a
 * trusted project's file, or the default. Read by the settings dialog (it
 * shows the source next to the value) and by the window checks (a problem
 * names the file to edit).
 *
 * The two sections merge differently, as their owners document:
 * `piFold` options are global file < project file < code (a host that pins an
 * option in code means it, src/fold/settings-file.ts); `compaction` settings
 * are code < global file < project file (the host's values are defaults for
 * the installation, src/compaction/settings/settings-source.ts).
 */

import { isPlainRecord } from "../session/records/record-guards.ts";

/** The path shown for options passed in code. */
export const CODE_ORIGIN_PATH = "registerPiFold options";

export type SettingsScope = "global" | "project";

export type Origin = { kind: "default" } | { kind: "code" } | { kind: "file"; scope: SettingsScope; path: string };

/** One file's raw section, as both readers expose it. */
export interface RawLayer {
	path: string;
	scope: SettingsScope;
	section: unknown;
}

/** The value at `keys` inside a raw section, or undefined. */
export function valueAt(section: unknown, keys: readonly string[]): unknown {
	let current = section;
	for (const key of keys) {
		if (!isPlainRecord(current) || !Object.hasOwn(current, key)) return undefined;
		current = current[key];
	}
	return current;
}

/**
 * A `piFold` option's origin: code when code passed it, else the last file
 * that set it and was not refused for it (`refused` holds `path\nkey` pairs).
 */
export function foldOptionOrigin(
	key: string,
	inCode: boolean,
	layers: readonly RawLayer[],
	refused: ReadonlySet<string>,
): Origin {
	if (inCode) return { kind: "code" };
	for (const layer of [...layers].reverse()) {
		if (valueAt(layer.section, [key]) === undefined) continue;
		if (refused.has(`${layer.path}\npiFold.${key}`)) continue;
		return { kind: "file", scope: layer.scope, path: layer.path };
	}
	return { kind: "default" };
}

/** A `compaction` key's origin: the last file that sets it, else code, else the default. */
export function compactionOrigin(keys: readonly string[], inCode: boolean, layers: readonly RawLayer[]): Origin {
	for (const layer of [...layers].reverse()) {
		if (valueAt(layer.section, keys) !== undefined) return { kind: "file", scope: layer.scope, path: layer.path };
	}
	return inCode ? { kind: "code" } : { kind: "default" };
}

/** The origin's path for a problem line. */
export function originPath(origin: Origin): string {
	if (origin.kind === "file") return origin.path;
	return origin.kind === "code" ? CODE_ORIGIN_PATH : "defaults";
}

/** The origin as the dialog shows it next to a value. */
export function originLabel(origin: Origin): string {
	if (origin.kind === "file") return origin.scope === "global" ? "global file" : "project file";
	return origin.kind === "code" ? "set in code" : "default";
}

/**
 * The `piFold` section of Pi's settings files: fold options without code.
 *
 * Owns which files are read and when, how their values merge with the
 * options a host passed to `registerPiFold`, and the wording of every
 * problem. Layers, later winning key by key: the global file
 * `<agentDir>/settings.json`, a trusted project's `<cwd>/.pi/settings.json`,
 * then options passed in code (a host that pins an option in code means it).
 * Every file value is checked by `resolveOptions`, the rule code options
 * follow, one key at a time: a bad value is dropped, reported, and the value
 * below it (code, the global file, or the default) is used. Nothing here
 * throws for a file's content.
 *
 * Timing. Options that shape what Pi registers (`REGISTRATION_OPTION_KEYS`:
 * tool name, label, actions, command names, scheduling) are read when Pi
 * loads the extension, which it does for every runtime (startup, `/new`,
 * `/resume`, `/fork`, `/reload`). A factory gets no context, so the project's
 * trust is unknown then: these keys come from the global file only, and a
 * project file that sets one is told so. Every other option is read again at
 * `session_start` with the session's cwd and trust, and applied before the
 * runtime rebuilds its state. File I/O is `SettingsFileIo` from the compaction
 * settings reader, so both read the same files the same way.
 */

import { join } from "node:path";
import { CONFIG_DIR_NAME } from "@earendil-works/pi-coding-agent";
import {
	NODE_SETTINGS_IO,
	SETTINGS_FILE_NAME,
	type SettingsFileIo,
	type SettingsReadContext,
} from "../../compaction/settings/settings-source.ts";
import { type SettingsProblem, shownValue as showValue } from "../../host/settings-notice.ts";
import {
	CODE_ONLY_OPTION_KEYS,
	JSON_OPTION_KEYS,
	type JsonOptionKey,
	type PiFoldOptions,
	REGISTRATION_OPTION_KEYS,
	type ResolvedOptions,
	resolveOptions,
	SESSION_OPTION_KEYS,
} from "../options.ts";

export type { SettingsProblem } from "../../host/settings-notice.ts";

/** The settings key pi-fold reads (Pi ignores keys it does not know). */
export const SETTINGS_SECTION = "piFold";

/** One settings file's `piFold` section, as read. */
export interface SettingsLayer {
	path: string;
	scope: "global" | "project";
	/** The section's value; undefined when the file or the key is absent. */
	section: unknown;
	/** Why the file could not be used at all. */
	unreadable?: string;
}

export interface SettingsResolution {
	resolved: ResolvedOptions;
	problems: SettingsProblem[];
}

const REGISTRATION = new Set<string>(REGISTRATION_OPTION_KEYS);
const KNOWN = new Set<string>(JSON_OPTION_KEYS);
const CODE_ONLY = new Set<string>(CODE_ONLY_OPTION_KEYS);

function isPlainRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Read the `piFold` section of one file; problems with the file itself ride on the layer. */
export function readLayer(path: string, scope: SettingsLayer["scope"], io: SettingsFileIo): SettingsLayer {
	let text: string | undefined;
	try {
		text = io.readText(path);
	} catch (error) {
		return { path, scope, section: undefined, unreadable: error instanceof Error ? error.message : String(error) };
	}
	if (text === undefined) return { path, scope, section: undefined };
	try {
		const parsed: unknown = JSON.parse(text);
		if (!isPlainRecord(parsed)) return { path, scope, section: undefined, unreadable: "not a JSON object" };
		return { path, scope, section: parsed[SETTINGS_SECTION] };
	} catch {
		// Pi reports a malformed settings file itself; we only say pi-fold skipped it.
		return { path, scope, section: undefined, unreadable: "not valid JSON" };
	}
}

/** The global file always; the project file only when a context says the project is trusted. */
export function readLayers(context: SettingsReadContext | undefined, io: SettingsFileIo = NODE_SETTINGS_IO) {
	const layers = [readLayer(join(io.agentDir(), SETTINGS_FILE_NAME), "global", io)];
	if (context?.isProjectTrusted())
		layers.push(readLayer(join(context.cwd, CONFIG_DIR_NAME, SETTINGS_FILE_NAME), "project", io));
	return layers;
}

/** The resolved value a key stands for, as a notice shows it. */
function inForce(resolved: ResolvedOptions, key: JsonOptionKey): string {
	if (key === "commandPrefix") return showValue(resolved.commandNames);
	if (key === "readOnlyTools") return showValue([...resolved.readOnlyTools]);
	const value = resolved[key];
	return value === undefined ? "the model's descriptor" : showValue(value);
}

/**
 * Merge file layers under the code options and resolve. Each file value is
 * tried on top of everything accepted so far (code still on top), so a value
 * is refused for exactly the reasons `registerPiFold` would refuse it.
 */
export function resolveWithSettings(
	code: PiFoldOptions,
	layers: readonly SettingsLayer[],
	phase: "registration" | "session",
): SettingsResolution {
	const problems: SettingsProblem[] = [];
	// Code options are the host's; if they are invalid, registerPiFold throws as it always did.
	const base = resolveOptions(code);
	const accepted: Record<string, unknown> = {};
	const pending: { path: string; key: JsonOptionKey; value: unknown }[] = [];
	for (const layer of layers) {
		// Pi reports a file it cannot read or parse and reads nothing from it; neither does pi-fold (host/settings-notice.ts).
		if (layer.unreadable) continue;
		if (layer.section === undefined) continue;
		if (!isPlainRecord(layer.section)) {
			problems.push({
				path: layer.path,
				key: SETTINGS_SECTION,
				value: layer.section,
				reason: "must be an object of options",
			});
			continue;
		}
		for (const [key, value] of Object.entries(layer.section)) {
			const name = `${SETTINGS_SECTION}.${key}`;
			if (!KNOWN.has(key)) {
				const hint =
					key === "compaction"
						? 'compaction settings live in the top-level "compaction" key'
						: CODE_ONLY.has(key)
							? "it is a function, so only code passing it to registerPiFold can set it"
							: `known options: ${JSON_OPTION_KEYS.join(", ")}`;
				problems.push({ path: layer.path, key: name, value, reason: `unknown option (${hint})` });
				continue;
			}
			const option = key as JsonOptionKey;
			if (REGISTRATION.has(option) && layer.scope === "project") {
				problems.push({
					path: layer.path,
					key: name,
					value,
					reason:
						"not read from a project file: it shapes the tool and commands Pi registers before the project's trust is known; set it in the global settings file or in code",
				});
				continue;
			}
			if (phase === "registration" && !REGISTRATION.has(option)) continue;
			if (Object.hasOwn(code, option)) continue; // code wins; nothing to report
			pending.push({ path: layer.path, key: option, value });
		}
	}
	const refused: { path: string; key: JsonOptionKey; value: unknown; reason: string }[] = [];
	for (const item of pending) {
		const trial = { ...accepted, [item.key]: item.value };
		try {
			resolveOptions({ ...trial, ...code } as PiFoldOptions);
			accepted[item.key] = item.value;
		} catch (error) {
			const reason = error instanceof Error ? error.message.replace(/^pi-fold: /, "") : String(error);
			refused.push({ ...item, reason });
		}
	}
	const resolved = pending.length === 0 ? base : resolveOptions({ ...accepted, ...code } as PiFoldOptions);
	for (const item of refused) {
		problems.push({
			path: item.path,
			key: `${SETTINGS_SECTION}.${item.key}`,
			value: item.value,
			reason: item.reason,
			using: inForce(resolved, item.key),
		});
	}
	return { resolved, problems };
}

/** Resolved fields the registration keys decide, compared for drift. */
const REGISTERED_FIELDS = [
	"toolName",
	"toolLabel",
	"commandNames",
	"foldScheduling",
	"toolActions",
	"evidenceIngestion",
] as const satisfies readonly (keyof ResolvedOptions)[];

/** Registration options whose file value now differs from what Pi registered (the global file was edited since load). */
export function registrationDrift(registered: ResolvedOptions, now: ResolvedOptions, path: string): SettingsProblem[] {
	return REGISTERED_FIELDS.filter((field) => showValue(registered[field]) !== showValue(now[field])).map((field) => ({
		path,
		key: `${SETTINGS_SECTION}.${field === "commandNames" ? "commandPrefix/commandNames" : field}`,
		value: now[field],
		reason: "changed since Pi loaded pi-fold; it takes effect at the next start, /reload or new session",
		using: showValue(registered[field]),
	}));
}

/** The options in force with the session options read at session start: a new value, `current` untouched. */
export function withSessionOptions(current: ResolvedOptions, next: ResolvedOptions): ResolvedOptions {
	const session = Object.fromEntries(SESSION_OPTION_KEYS.map((key) => [key, next[key]]));
	return Object.freeze({ ...current, ...session });
}

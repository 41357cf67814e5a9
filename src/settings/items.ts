/**
 * What the settings dialog shows and changes, as pure data: the settings a
 * person most often changes (compaction ceiling and trigger, the compaction
 * engine, model briefs, the serving window, fold scheduling), each with its
 * effective value, where that value comes from, the choices offered (the
 * current one first selected), and the edit a choice makes to a settings
 * file's JSON. The host shell (command.ts) reads the files, runs the TUI
 * dialog (dialog.ts) or the RPC / print fallbacks, and writes.
 *
 * Every other option is set in JSON; the README's settings reference lists
 * them all (src/settings/reference.ts).
 */

import {
	OCCUPANCY_PERCENTS,
	parsePercent,
	parseTokens,
	THRESHOLD_PERCENT_BOUNDS,
	THRESHOLD_PERCENTS,
	withOccupancy,
	withThreshold,
} from "../compaction/settings/edit.ts";
import {
	type CompactorSettings,
	DEFAULT_TARGET_CONTEXT_RATIO,
	thresholdForModel,
} from "../compaction/settings/settings.ts";
import type { ResolvedOptions } from "../fold/options.ts";
import { isPlainRecord } from "../session/records/record-guards.ts";
import { type Origin, originLabel, type SettingsScope } from "./origin.ts";

const integer = new Intl.NumberFormat("en-US");

/** Everything the dialog needs to know, read once per open (and again after each save). */
export interface SettingsSnapshot {
	/** The global file, and the project file when the project is trusted (else undefined: Pi ignores it). */
	files: { global: string; project: string | undefined };
	compaction: CompactorSettings;
	/** Where a compaction key's value comes from. */
	compactionOrigin(keys: readonly string[]): Origin;
	/** `piFold` options as the files and code resolve them now. */
	fold: ResolvedOptions;
	foldOrigin(key: string): Origin;
	/** The options Pi registered the tool and commands with (registration keys change only at /reload). */
	registered: ResolvedOptions;
	/** The active model: `provider/model` and its context window. */
	model: { key: string; contextWindow: number } | undefined;
}

/** A choice in a picker: what the list shows and the value it writes (undefined: remove the key). */
export interface Choice {
	label: string;
	value: unknown;
}

/** When a saved change takes effect. */
export type Applies = "now" | "next session" | "after /reload";

export interface SettingsItem {
	id: string;
	label: string;
	/** What the setting does, one sentence. */
	meaning: string;
	/** The settings key, as a person would write it in JSON. */
	key: string;
	applies: Applies;
	/** Files it may be written to: registration options are read from the global file only. */
	scopes: readonly SettingsScope[];
	/** The effective value as shown. */
	value: string;
	origin: Origin;
	/** Fixed choices; `current` is the index of the effective one, when it is among them. */
	choices: Choice[];
	current: number | undefined;
	/** A typed value, when the list does not hold every value (parse returns undefined for a bad one). */
	entry?: { prompt: string; placeholder: string; parse(text: string): Choice | undefined };
	/** The file's JSON with this choice written (value undefined: key removed). */
	edit(file: Record<string, unknown>, choice: Choice): Record<string, unknown>;
}

const percent = (ratio: number): string => `${Math.round(ratio * 1000) / 10}%`;

/** `file` with `section.key` set to `value`, or removed when `value` is undefined (an emptied section is removed too). */
export function withKey(
	file: Record<string, unknown>,
	section: string,
	key: string,
	value: unknown,
): Record<string, unknown> {
	const next: Record<string, unknown> = isPlainRecord(file[section]) ? { ...file[section] } : {};
	if (value === undefined) delete next[key];
	else next[key] = value;
	const { [section]: _old, ...rest } = file;
	return Object.keys(next).length > 0 ? { ...file, [section]: next } : rest;
}

function indexOf(choices: readonly Choice[], value: unknown): number | undefined {
	const at = choices.findIndex((choice) => JSON.stringify(choice.value) === JSON.stringify(value));
	return at === -1 ? undefined : at;
}

function occupancyItem(s: SettingsSnapshot): SettingsItem {
	const ratio = s.compaction.targetContextRatio;
	const choices = OCCUPANCY_PERCENTS.map((p) => ({
		label: `${p}%${p / 100 === DEFAULT_TARGET_CONTEXT_RATIO ? " (default)" : ""}`,
		value: p / 100,
	}));
	return {
		id: "occupancy",
		label: "Max occupancy",
		meaning: "The most of the window a compaction may leave filled: the context ceiling after compacting.",
		key: "compaction.targetContextRatio",
		applies: "now",
		scopes: ["global", "project"],
		value: percent(ratio),
		origin: s.compactionOrigin(["targetContextRatio"]),
		choices,
		current: indexOf(choices, ratio),
		edit: (file, choice) =>
			typeof choice.value === "number"
				? withOccupancy(file, choice.value)
				: withKey(file, "compaction", "targetContextRatio", undefined),
	};
}

const PI_DEFAULT_THRESHOLD: Choice = { label: "Pi's own threshold (window − reserveTokens)", value: undefined };

function thresholdItem(s: SettingsSnapshot, model: { key: string; contextWindow: number }): SettingsItem {
	const threshold = thresholdForModel(s.compaction, model.key);
	const choices = [
		PI_DEFAULT_THRESHOLD,
		...THRESHOLD_PERCENTS.map((p) => ({ label: `${p}% of the window`, value: { ratio: p / 100 } })),
	];
	const value =
		threshold === undefined
			? "Pi's own"
			: threshold.kind === "tokens"
				? `${integer.format(threshold.tokens)} tokens`
				: percent(threshold.ratio);
	const current =
		threshold === undefined ? 0 : threshold.kind === "ratio" ? indexOf(choices, { ratio: threshold.ratio }) : undefined;
	const origin =
		threshold?.kind === "tokens"
			? s.compactionOrigin(["tokenThresholds", model.key])
			: threshold?.kind === "ratio"
				? s.compactionOrigin(["thresholds", model.key])
				: { kind: "default" as const };
	return {
		id: "threshold",
		label: `Threshold (${model.key})`,
		meaning: `When to compact for this model: a share of its ${integer.format(model.contextWindow)}-token window or a token count; until then Pi's own threshold compaction waits.`,
		key: `compaction.thresholds / tokenThresholds["${model.key}"]`,
		applies: "now",
		scopes: ["global", "project"],
		value,
		origin,
		choices,
		current,
		entry: {
			prompt: `Compact at this many tokens, or a percent of the window (${THRESHOLD_PERCENT_BOUNDS.min * 100}–${THRESHOLD_PERCENT_BOUNDS.max * 100}%)`,
			placeholder: "e.g. 150000 or 70%",
			parse: (text) => {
				if (text.trim().endsWith("%")) {
					const ratio = parsePercent(text, THRESHOLD_PERCENT_BOUNDS.min, THRESHOLD_PERCENT_BOUNDS.max);
					return ratio === undefined ? undefined : { label: percent(ratio), value: { ratio } };
				}
				const tokens = parseTokens(text);
				return tokens === undefined ? undefined : { label: `${integer.format(tokens)} tokens`, value: { tokens } };
			},
		},
		edit: (file, choice) => {
			const picked = choice.value as { ratio?: number; tokens?: number } | undefined;
			if (picked?.ratio !== undefined) return withThreshold(file, model.key, { kind: "ratio", ratio: picked.ratio });
			if (picked?.tokens !== undefined)
				return withThreshold(file, model.key, { kind: "tokens", tokens: picked.tokens });
			return withThreshold(file, model.key, { kind: "pi-default" });
		},
	};
}

/** A setting picked from a fixed list of values written under one key (`section.name`). */
interface ListSetting extends Pick<SettingsItem, "id" | "label" | "meaning" | "applies" | "scopes"> {
	section: "compaction" | "piFold";
	name: string;
	/** Each value with its label in the list and its short form in the value column. */
	choices: readonly (Choice & { short: string })[];
	/** The value in force and where it comes from. */
	effective(s: SettingsSnapshot): { value: unknown; origin: Origin };
}

const ENGINE_SETTING: ListSetting = {
	id: "engine",
	label: "Compaction engine",
	meaning:
		"Who writes the summary when Pi compacts: pi-fold's deterministic, LLM-free compactor or Pi's own model summary.",
	applies: "now",
	scopes: ["global", "project"],
	section: "compaction",
	name: "engine",
	choices: [
		{ label: "pi-fold's deterministic compactor (no model call)", value: "fabric", short: "pi-fold's compactor" },
		{ label: "Pi's own summarizer (a model call)", value: "pi", short: "Pi's summarizer" },
	],
	effective: (s) => ({ value: s.compaction.engine, origin: s.compactionOrigin(["engine"]) }),
};

// Registration options are read once: the value shown is the one Pi registered with.
const SCHEDULING_SETTING: ListSetting = {
	id: "scheduling",
	label: "Fold scheduling",
	meaning:
		"When the agent's folds reach the window. Epoch (the default) batches them into one rewrite, which keeps the provider's prefix cache; measured cheaper (docs/benchmarks.md).",
	applies: "after /reload",
	scopes: ["global"],
	section: "piFold",
	name: "foldScheduling",
	choices: [
		{ label: "epoch: marks wait and land together at a commit (default)", value: "epoch", short: "epoch" },
		{ label: "immediate: every fold lands when it is made", value: "immediate", short: "immediate" },
	],
	effective: (s) => ({ value: s.registered.foldScheduling, origin: s.foldOrigin("foldScheduling") }),
};

function listItem(setting: ListSetting, s: SettingsSnapshot): SettingsItem {
	const { section, name, choices } = setting;
	const { value, origin } = setting.effective(s);
	const current = indexOf(choices, value);
	return {
		id: setting.id,
		label: setting.label,
		meaning: setting.meaning,
		key: `${section}.${name}`,
		applies: setting.applies,
		scopes: setting.scopes,
		value: current === undefined ? String(value) : (choices[current]?.short ?? String(value)),
		origin,
		choices: choices.map(({ label, value }) => ({ label, value })),
		current,
		edit: (file, choice) => withKey(file, section, name, choice.value),
	};
}

function summarizerItem(s: SettingsSnapshot): SettingsItem {
	const summarizer = s.fold.summarizer;
	const choices: Choice[] = [
		{ label: "the session's model (default)", value: "session" },
		{ label: "none: deterministic briefs, no model calls", value: "deterministic" },
	];
	if (typeof summarizer === "object")
		choices.push({ label: `${summarizer.provider}/${summarizer.model} (as set)`, value: summarizer });
	const value =
		summarizer === "session"
			? "session model"
			: summarizer === "deterministic"
				? "none (deterministic)"
				: `${summarizer.provider}/${summarizer.model}`;
	return {
		id: "summarizer",
		label: "Model briefs",
		meaning:
			"Who writes the briefs of folded chapters and consolidations: a model (one background request each) or pi-fold's deterministic brief.",
		key: "piFold.summarizer",
		applies: "next session",
		scopes: ["global", "project"],
		value,
		origin: s.foldOrigin("summarizer"),
		choices,
		current: indexOf(choices, summarizer),
		edit: (file, choice) => withKey(file, "piFold", "summarizer", choice.value),
	};
}

function windowItem(s: SettingsSnapshot): SettingsItem {
	const total = s.fold.providerTotalWindow;
	const descriptor = s.model ? `the model's window (${integer.format(s.model.contextWindow)})` : "the model's window";
	const choices: Choice[] = [{ label: `${descriptor} (default)`, value: undefined }];
	if (total !== undefined) choices.push({ label: `${integer.format(total)} tokens (as set)`, value: total });
	return {
		id: "window",
		label: "Provider window",
		meaning:
			"The total window every occupancy figure, fence and fold decision is measured against (less the output reservation). Set it only when the provider serves more than the model's window says.",
		key: "piFold.providerTotalWindow",
		applies: "now",
		scopes: ["global", "project"],
		value: total === undefined ? "model's window" : `${integer.format(total)} tokens`,
		origin: s.foldOrigin("providerTotalWindow"),
		choices,
		current: total === undefined ? 0 : 1,
		entry: {
			prompt: "Total window in tokens",
			placeholder: "e.g. 200000",
			parse: (text) => {
				const tokens = Number(text.replace(/[,_\s]/g, "").replace(/k$/i, "000"));
				return Number.isInteger(tokens) && tokens > 0
					? { label: `${integer.format(tokens)} tokens`, value: tokens }
					: undefined;
			},
		},
		edit: (file, choice) => withKey(file, "piFold", "providerTotalWindow", choice.value),
	};
}

/** The dialog's items, in order. Threshold needs an active model. */
export function settingsItems(s: SettingsSnapshot): SettingsItem[] {
	return [
		occupancyItem(s),
		...(s.model ? [thresholdItem(s, s.model)] : []),
		listItem(ENGINE_SETTING, s),
		summarizerItem(s),
		windowItem(s),
		listItem(SCHEDULING_SETTING, s),
	];
}

/** "65% · default", "70% · project file": the value column. */
export function valueWithOrigin(item: SettingsItem): string {
	return `${item.value} · ${originLabel(item.origin)}`;
}

/** The description line: what it does, where the value comes from, when a change applies. */
export function itemDescription(item: SettingsItem, snapshot: SettingsSnapshot): string {
	const origin = item.origin;
	const from =
		origin.kind === "file"
			? `Now ${item.value}, from ${origin.path}.`
			: origin.kind === "code"
				? `Now ${item.value}, set in code by the host (registerPiFold options); a file cannot change it.`
				: `Now ${item.value}, the default.`;
	const where =
		item.scopes.length === 1 || snapshot.files.project === undefined
			? `Saved to ${snapshot.files.global}.`
			: "Saved to the file chosen under “Save changes to”.";
	const when =
		item.applies === "now"
			? "Applies at once."
			: item.applies === "next session"
				? "Applies from the next session (/new, /resume or a restart)."
				: "Applies after /reload or a restart.";
	return `${item.meaning} ${from} ${where} ${when} Key: ${item.key}.`;
}

/**
 * What the person is told after a save: the value now in force, and when
 * the file written is not the one that decides (a project file or code wins),
 * which one does.
 */
export function afterSave(
	item: SettingsItem,
	choice: Choice,
	written: { scope: SettingsScope; path: string },
	now: SettingsItem | undefined,
): { text: string; level: "info" | "warning" } {
	const applied = now ?? item;
	const saved = `${item.label}: saved ${choice.label} to ${written.path}`;
	const origin = applied.origin;
	const decided =
		(origin.kind === "file" && origin.path === written.path) ||
		(origin.kind === "default" && choice.value === undefined);
	if (decided) return { text: `${saved}; now ${applied.value}. ${whenText(item.applies)}`, level: "info" };
	const winner =
		origin.kind === "code"
			? "the host sets it in code, which wins"
			: origin.kind === "file"
				? `${origin.path} (${originLabel(origin)}) sets ${applied.value} and wins`
				: `the value still in force is ${applied.value}`;
	return { text: `${saved}, but ${winner}; it stays ${applied.value}.`, level: "warning" };
}

function whenText(applies: Applies): string {
	if (applies === "now") return "Applies at once.";
	return applies === "next session" ? "Applies from the next session." : "Applies after /reload.";
}

/** The settings as plain text, for print and json mode (no dialog there). */
export function settingsText(items: readonly SettingsItem[], snapshot: SettingsSnapshot, command: string): string {
	const width = Math.max(...items.map((item) => item.label.length));
	const lines = [
		"pi-fold settings (value · where it comes from)",
		...items.map((item) => `  ${item.label.padEnd(width)}  ${valueWithOrigin(item)}   ${item.key}`),
		"",
		`Global file:  ${snapshot.files.global}`,
		`Project file: ${snapshot.files.project ?? "not read (the project is not trusted)"}`,
		`Change them in the TUI with /${command} settings, or edit the files (every option: the README's settings reference).`,
	];
	return lines.join("\n");
}

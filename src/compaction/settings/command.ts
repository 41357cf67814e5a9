/**
 * `/fabric-settings` (and `/fabric settings`): show and edit Max occupancy and
 * the active model's Threshold. In the TUI it walks `ctx.ui.select` /
 * `ctx.ui.input` dialogs and saves to Pi's global settings file; without a UI
 * (print or json mode) it prints the effective settings. The choices, parsing
 * and the file edit are pure (edit.ts); this file is the host shell.
 */

import { join } from "node:path";
import type { ExtensionAPI, ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { showOutput } from "../../host/output.ts";
import { isPlainRecord } from "../../session/records/record-guards.ts";
import {
	effectiveSettingsText,
	OCCUPANCY_PERCENT_BOUNDS,
	OCCUPANCY_PERCENTS,
	occupancyText,
	parsePercent,
	parseTokens,
	THRESHOLD_PERCENT_BOUNDS,
	THRESHOLD_PERCENTS,
	type ThresholdChoice,
	thresholdText,
	withOccupancy,
	withThreshold,
} from "./edit.ts";
import { compactionModelKey } from "./settings.ts";
import { type CompactionSettingsSources, SETTINGS_FILE_NAME, type SettingsFileIo } from "./settings-source.ts";

/** The command's own name; the spec's spelling, kept so its documentation applies. */
export const SETTINGS_COMMAND = "fabric-settings";
/** The umbrella command whose `settings` argument opens the same dialog. */
export const UMBRELLA_COMMAND = "fabric";

const CUSTOM_PERCENT = "Custom percent…";
const CUSTOM_TOKENS = "Custom tokens…";
const PI_DEFAULT = "Pi default";
const DONE = "Done";

export interface SettingsCommandDeps {
	io: SettingsFileIo;
	read(ctx: ExtensionCommandContext): CompactionSettingsSources;
}

type Ctx = ExtensionCommandContext;

function modelKeyOf(ctx: Ctx): string | undefined {
	return ctx.model ? compactionModelKey(ctx.model.provider, ctx.model.id) : undefined;
}

/** Read the global settings file as an object; undefined (with a notice) when it cannot be edited safely. */
function readFile(ctx: Ctx, io: SettingsFileIo, path: string): Record<string, unknown> | undefined {
	let text: string | undefined;
	try {
		text = io.readText(path);
	} catch (error) {
		ctx.ui.notify(`Cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`, "error");
		return undefined;
	}
	if (text === undefined) return {};
	try {
		const parsed: unknown = JSON.parse(text);
		if (isPlainRecord(parsed)) return parsed;
	} catch {}
	ctx.ui.notify(`${path} is not a JSON object; fix it by hand before saving settings here.`, "error");
	return undefined;
}

function save(ctx: Ctx, deps: SettingsCommandDeps, edit: (file: Record<string, unknown>) => Record<string, unknown>) {
	const path = join(deps.io.agentDir(), SETTINGS_FILE_NAME);
	if (!deps.io.writeText) {
		ctx.ui.notify("Settings cannot be saved from this host.", "error");
		return false;
	}
	const file = readFile(ctx, deps.io, path);
	if (!file) return false;
	deps.io.writeText(path, `${JSON.stringify(edit(file), null, 2)}\n`);
	return true;
}

async function editOccupancy(ctx: Ctx, deps: SettingsCommandDeps): Promise<void> {
	const options = [...OCCUPANCY_PERCENTS.map((percent) => `${percent}%`), CUSTOM_PERCENT];
	const choice = await ctx.ui.select("Max occupancy: context ceiling after a compaction", options);
	if (choice === undefined) return;
	const text = choice === CUSTOM_PERCENT ? await ctx.ui.input("Max occupancy percent (25–85)", "65") : choice;
	if (text === undefined) return;
	const ratio = parsePercent(text, OCCUPANCY_PERCENT_BOUNDS.min, OCCUPANCY_PERCENT_BOUNDS.max);
	if (ratio === undefined) {
		ctx.ui.notify(`"${text}" is not a percent between 25 and 85; nothing changed.`, "warning");
		return;
	}
	if (save(ctx, deps, (file) => withOccupancy(file, ratio)))
		ctx.ui.notify(`Max occupancy set to ${text.trim()}.`, "info");
}

async function thresholdChoice(ctx: Ctx, modelKey: string): Promise<ThresholdChoice | undefined> {
	const options = [...THRESHOLD_PERCENTS.map((percent) => `${percent}%`), CUSTOM_PERCENT, CUSTOM_TOKENS, PI_DEFAULT];
	const choice = await ctx.ui.select(`Threshold for ${modelKey}: compact when the context reaches`, options);
	if (choice === undefined) return undefined;
	if (choice === PI_DEFAULT) return { kind: "pi-default" };
	if (choice === CUSTOM_TOKENS) {
		const text = await ctx.ui.input("Threshold in tokens (1,000–100,000,000)", "400000");
		if (text === undefined) return undefined;
		const tokens = parseTokens(text);
		if (tokens === undefined) ctx.ui.notify(`"${text}" is not a token count between 1,000 and 100,000,000.`, "warning");
		return tokens === undefined ? undefined : { kind: "tokens", tokens };
	}
	const text = choice === CUSTOM_PERCENT ? await ctx.ui.input("Threshold percent (25–95)", "80") : choice;
	if (text === undefined) return undefined;
	const ratio = parsePercent(text, THRESHOLD_PERCENT_BOUNDS.min, THRESHOLD_PERCENT_BOUNDS.max);
	if (ratio === undefined) ctx.ui.notify(`"${text}" is not a percent between 25 and 95.`, "warning");
	return ratio === undefined ? undefined : { kind: "ratio", ratio };
}

async function editThreshold(ctx: Ctx, deps: SettingsCommandDeps): Promise<void> {
	const modelKey = modelKeyOf(ctx);
	if (!modelKey) {
		ctx.ui.notify("No active model: select a model first, then set its threshold.", "warning");
		return;
	}
	const choice = await thresholdChoice(ctx, modelKey);
	if (!choice) return;
	if (save(ctx, deps, (file) => withThreshold(file, modelKey, choice))) {
		const settings = deps.read(ctx).settings.settings;
		ctx.ui.notify(`Threshold for ${modelKey} set to ${thresholdText(settings, modelKey)}.`, "info");
	}
}

/** The dialog loop: a menu showing the current values until Done or Escape. */
export async function runSettingsCommand(ctx: Ctx, deps: SettingsCommandDeps): Promise<void> {
	if (!ctx.hasUI) {
		const sources = deps.read(ctx);
		showOutput(ctx, effectiveSettingsText(sources.settings.settings, modelKeyOf(ctx), sources.files));
		return;
	}
	for (;;) {
		const settings = deps.read(ctx).settings.settings;
		const modelKey = modelKeyOf(ctx);
		const occupancy = `Max occupancy: ${occupancyText(settings)}`;
		const threshold = `Threshold${modelKey ? ` (${modelKey})` : ""}: ${thresholdText(settings, modelKey)}`;
		const choice = await ctx.ui.select("Compaction settings (pi-fold)", [occupancy, threshold, DONE]);
		if (choice === occupancy) await editOccupancy(ctx, deps);
		else if (choice === threshold) await editThreshold(ctx, deps);
		else return;
	}
}

/** Register `/fabric-settings` and `/fabric settings`. */
export function registerSettingsCommands(pi: Pick<ExtensionAPI, "registerCommand">, deps: SettingsCommandDeps): void {
	pi.registerCommand(SETTINGS_COMMAND, {
		description: "Show and edit compaction settings: Max occupancy and this model's Threshold",
		handler: (_args, ctx) => runSettingsCommand(ctx, deps),
	});
	pi.registerCommand(UMBRELLA_COMMAND, {
		description: "Compaction commands: `/fabric settings` opens the settings dialog",
		getArgumentCompletions: (prefix) =>
			"settings".startsWith(prefix.trim()) ? [{ value: "settings", label: "settings" }] : null,
		handler: async (args, ctx) => {
			if (args.trim() === "settings" || args.trim() === "") return runSettingsCommand(ctx, deps);
			showOutput(ctx, `Unknown subcommand "${args.trim()}"; try /${UMBRELLA_COMMAND} settings.`, "warning");
		},
	});
}

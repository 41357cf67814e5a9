/**
 * `/context settings`: pi-fold's settings as the person sees and changes
 * them, in every Pi mode. In the TUI, the dialog (dialog.ts); in RPC mode,
 * Pi's select and input dialogs; in print and json mode, the settings as
 * text. This module is the host shell: it reads Pi's settings files into a
 * snapshot (items.ts), writes a choice into the file the person chose
 * (atomically, every other key kept), applies at once what can apply at
 * once, and says what was saved and what is in force.
 */

import { join } from "node:path";
import { CONFIG_DIR_NAME, type ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import type { CompactionHooks } from "../compaction/pi/hook.ts";
import { thresholdForModel } from "../compaction/settings/settings.ts";
import {
	readCompactionSettings,
	SETTINGS_FILE_NAME,
	type SettingsFileIo,
} from "../compaction/settings/settings-source.ts";
import type { PiFoldOptions, ResolvedOptions } from "../fold/options.ts";
import { readLayers, resolveWithSettings } from "../fold/pi/settings-file.ts";
import { showOutput } from "../host/output.ts";
import { isPlainRecord } from "../session/records/record-guards.ts";
import { settingsDialog } from "./dialog.ts";
import {
	afterSave,
	type Choice,
	type SettingsItem,
	type SettingsSnapshot,
	settingsItems,
	settingsText,
	valueWithOrigin,
} from "./items.ts";
import { modelWindow, type WindowSettings, windowProblems } from "./limits.ts";
import { compactionOrigin, foldOptionOrigin, type SettingsScope, valueAt } from "./origin.ts";

export interface SettingsCommandDeps {
	io: SettingsFileIo;
	/** Options the host passed in code (they win over the files for `piFold`). */
	code: PiFoldOptions;
	/** The options in force (the runtime's). */
	live: () => ResolvedOptions;
	/** Put new options in force (what a save applies at once). */
	configure: (options: ResolvedOptions) => void;
	compaction: Pick<CompactionHooks, "sources">;
	/** The `/context` command's name, for the text that points at the dialog. */
	command(): string;
}

type Ctx = Pick<ExtensionCommandContext, "cwd" | "isProjectTrusted" | "model">;

/** Read both sections of both files (the project's only when trusted) into one snapshot. */
export function readSnapshot(ctx: Ctx, deps: SettingsCommandDeps): SettingsSnapshot {
	const global = join(deps.io.agentDir(), SETTINGS_FILE_NAME);
	const project = ctx.isProjectTrusted() ? join(ctx.cwd, CONFIG_DIR_NAME, SETTINGS_FILE_NAME) : undefined;
	const sources = readCompactionSettings(ctx, deps.code.compaction, deps.io);
	const layers = readLayers(ctx, deps.io);
	const { resolved, problems } = resolveWithSettings(deps.code, layers, "session");
	const refused = new Set(problems.map((problem) => `${problem.path}\n${problem.key}`));
	const model = ctx.model;
	return {
		files: { global, project },
		compaction: sources.settings.settings,
		compactionOrigin: (keys) =>
			compactionOrigin(keys, valueAt(deps.code.compaction, keys) !== undefined, sources.layers),
		fold: resolved,
		foldOrigin: (key) => foldOptionOrigin(key, Object.hasOwn(deps.code, key), layers, refused),
		registered: deps.live(),
		model: model ? modelWindow(model, sources.layers) : undefined,
	};
}

type Said = { text: string; level: "info" | "warning" };

/** The file's JSON object; a reason when it cannot be edited safely. */
function readJson(
	io: SettingsFileIo,
	path: string,
): { file: Record<string, unknown>; problem?: undefined } | { problem: string } {
	let text: string | undefined;
	try {
		text = io.readText(path);
	} catch (error) {
		return { problem: `cannot read ${path} (${error instanceof Error ? error.message : String(error)})` };
	}
	if (text === undefined) return { file: {} };
	try {
		const parsed: unknown = JSON.parse(text);
		if (isPlainRecord(parsed)) return { file: parsed };
	} catch {}
	return { problem: `${path} is not a JSON object; fix it by hand first` };
}

/** Write `choice` for `item` into the chosen file; what the person is told. */
export function saveChoice(
	ctx: Ctx,
	deps: SettingsCommandDeps,
	item: SettingsItem,
	choice: Choice,
	scope: SettingsScope,
): Said {
	const before = readSnapshot(ctx, deps);
	const path = scope === "project" ? before.files.project : before.files.global;
	const nothing = (why: string): Said => ({ text: `${item.label}: saved nothing; ${why}.`, level: "warning" });
	if (path === undefined) return nothing("the project is not trusted, so Pi ignores its settings file");
	if (!item.scopes.includes(scope))
		return nothing(
			`it is read from the global file only (it shapes what Pi registers before a project's trust is known); choose “Save changes to: global file”`,
		);
	if (item.origin.kind === "code") return nothing("the host sets it in code (registerPiFold options), which wins");
	if (!deps.io.writeText) return nothing("this host gives no way to write settings files");
	const read = readJson(deps.io, path);
	if (read.problem !== undefined) return nothing(read.problem);
	deps.io.writeText(path, `${JSON.stringify(item.edit(read.file, choice), null, 2)}\n`);
	const after = readSnapshot(ctx, deps);
	// The runtime reads the serving window live; model briefs and scheduling wait as the item says.
	if (item.id === "window")
		deps.configure(Object.freeze({ ...deps.live(), providerTotalWindow: after.fold.providerTotalWindow }));
	const said = afterSave(
		item,
		choice,
		{ scope, path },
		settingsItems(after).find((next) => next.id === item.id),
	);
	const tooLarge = windowProblems(windowSettingsOf(after, path), after.model).find((problem) =>
		item.id === "window" ? problem.key.startsWith("piFold.") : item.id === "threshold",
	);
	return tooLarge ? { text: `${said.text} Note: ${tooLarge.key} ${tooLarge.reason}.`, level: "warning" } : said;
}

/** The snapshot's window settings, for the same check session start makes (limits.ts). */
function windowSettingsOf(snapshot: SettingsSnapshot, path: string): WindowSettings {
	const total = snapshot.fold.providerTotalWindow;
	const threshold = snapshot.model ? thresholdForModel(snapshot.compaction, snapshot.model.key) : undefined;
	return {
		...(total !== undefined ? { providerTotalWindow: { value: total, path } } : {}),
		...(threshold?.kind === "tokens" ? { tokenThreshold: { value: threshold.tokens, path } } : {}),
	};
}

const TYPE_A_VALUE = "Type a value…";
const DONE = "Done";

/** Pi's select and input dialogs, for RPC mode (no custom components there). */
async function rpcDialog(ctx: ExtensionCommandContext, deps: SettingsCommandDeps): Promise<void> {
	for (;;) {
		const snapshot = readSnapshot(ctx, deps);
		const items = settingsItems(snapshot);
		const rows = items.map((item) => `${item.label}: ${valueWithOrigin(item)}`);
		const picked = await ctx.ui.select("pi-fold settings (value · where it comes from)", [...rows, DONE]);
		const item = picked === undefined ? undefined : items[rows.indexOf(picked)];
		if (!item) return;
		const labels = item.choices.map((choice, index) => `${index === item.current ? "✓ " : ""}${choice.label}`);
		const options = item.entry ? [...labels, TYPE_A_VALUE] : labels;
		const chosen = await ctx.ui.select(`${item.label}: ${item.meaning}`, options);
		if (chosen === undefined) continue;
		let choice = item.choices[labels.indexOf(chosen)];
		if (chosen === TYPE_A_VALUE && item.entry) {
			const typed = await ctx.ui.input(item.entry.prompt, item.entry.placeholder);
			if (typed === undefined) continue;
			choice = item.entry.parse(typed);
			if (!choice) {
				ctx.ui.notify(
					`${item.label}: "${typed.trim()}" is not a value this setting takes; nothing changed.`,
					"warning",
				);
				continue;
			}
		}
		if (!choice) continue;
		let scope: SettingsScope = "global";
		if (snapshot.files.project !== undefined && item.scopes.includes("project")) {
			const where = await ctx.ui.select("Save to", [
				`global file: ${snapshot.files.global}`,
				`project file: ${snapshot.files.project}`,
			]);
			if (where === undefined) continue;
			scope = where.startsWith("project") ? "project" : "global";
		}
		const said = saveChoice(ctx, deps, item, choice, scope);
		ctx.ui.notify(said.text, said.level);
	}
}

/** Run `/context settings` in whatever mode Pi is in. */
export async function runSettingsCommand(ctx: ExtensionCommandContext, deps: SettingsCommandDeps): Promise<void> {
	if (ctx.mode === "tui") {
		const snapshot = readSnapshot(ctx, deps);
		// A trusted project that already has a settings file is where a person most likely means to write.
		const scope: SettingsScope =
			snapshot.files.project !== undefined && deps.io.readText(snapshot.files.project) !== undefined
				? "project"
				: "global";
		await ctx.ui.custom<void>(
			(tui, theme, keybindings, done) =>
				settingsDialog(
					tui,
					theme,
					keybindings,
					() => done(),
					{
						read: () => readSnapshot(ctx, deps),
						save: (item, choice, chosen) => saveChoice(ctx, deps, item, choice, chosen),
					},
					scope,
				),
			{ blocked: { kind: "question", message: "pi-fold settings" } },
		);
		return;
	}
	if (ctx.hasUI) return rpcDialog(ctx, deps);
	const snapshot = readSnapshot(ctx, deps);
	showOutput(ctx, settingsText(settingsItems(snapshot), snapshot, deps.command()));
}

/**
 * The settings dialog in Pi's TUI, built as Pi builds its own `/settings`:
 * a `SettingsList` between two borders in Pi's active theme, a picker per
 * setting that opens at the value in force, a typed entry where a list
 * cannot hold every value, and a "Save changes to" row that chooses the file
 * written. Each row shows the effective value and where it comes from; after
 * a save the row is read back from the files, and a line under the list says
 * what was saved and, when another file or code decides, which one.
 *
 * Only the component lives here; reading, writing and the choice of file are
 * the command shell's (command.ts).
 */

import type { KeybindingsManager, Theme } from "@earendil-works/pi-coding-agent";
import { DynamicBorder, getSelectListTheme, getSettingsListTheme } from "@earendil-works/pi-coding-agent";
import {
	type Component,
	Container,
	Input,
	type SelectItem,
	SelectList,
	type SettingItem,
	SettingsList,
	Spacer,
	Text,
	type TUI,
} from "@earendil-works/pi-tui";
import {
	type Choice,
	itemDescription,
	type SettingsItem,
	type SettingsSnapshot,
	settingsItems,
	valueWithOrigin,
} from "./items.ts";
import type { SettingsScope } from "./origin.ts";

/** Rows of a picker shown at once. */
const PICKER_ROWS = 10;
/** Value of the picker row that switches to typed entry. */
const ENTRY_ROW = "\u0000entry";
const SCOPE_ID = "scope";

export interface DialogDeps {
	read(): SettingsSnapshot;
	/** Write `choice` for `item` into the file of `scope`; the line to show after. */
	save(item: SettingsItem, choice: Choice, scope: SettingsScope): { text: string; level: "info" | "warning" };
}

/** A picker for one setting: its choices with the one in force selected, and typed entry when it has one. */
class Picker extends Container {
	private readonly list: SelectList;
	private input: Input | undefined;
	private readonly keybindings: KeybindingsManager;
	private readonly done: (choice: Choice | undefined) => void;

	constructor(
		theme: Theme,
		item: SettingsItem,
		keybindings: KeybindingsManager,
		done: (choice: Choice | undefined) => void,
	) {
		super();
		this.keybindings = keybindings;
		this.done = done;
		this.addChild(new Text(theme.bold(theme.fg("accent", item.label)), 0, 0));
		this.addChild(new Text(theme.fg("muted", item.meaning), 0, 0));
		this.addChild(new Spacer(1));
		const rows: SelectItem[] = item.choices.map((choice, index) => ({
			value: String(index),
			label: `${index === item.current ? "✓ " : "  "}${choice.label}`,
		}));
		if (item.entry) rows.push({ value: ENTRY_ROW, label: "  Type a value…", description: item.entry.placeholder });
		this.list = new SelectList(rows, Math.min(rows.length, PICKER_ROWS), getSelectListTheme());
		if (item.current !== undefined) this.list.setSelectedIndex(item.current);
		this.list.onSelect = (row) => {
			if (row.value !== ENTRY_ROW) return done(item.choices[Number(row.value)]);
			this.openEntry(theme, item);
		};
		this.list.onCancel = () => done(undefined);
		this.addChild(this.list);
		this.addChild(new Spacer(1));
		this.addChild(new Text(theme.fg("dim", "  Enter to choose · Esc to go back"), 0, 0));
	}

	private openEntry(theme: Theme, item: SettingsItem): void {
		const entry = item.entry;
		if (!entry) return;
		this.clear();
		this.addChild(new Text(theme.bold(theme.fg("accent", item.label)), 0, 0));
		this.addChild(new Text(theme.fg("muted", entry.prompt), 0, 0));
		this.addChild(new Spacer(1));
		const input = new Input({ placeholder: entry.placeholder });
		const problem = new Text("", 0, 0);
		input.onSubmit = (text) => {
			const choice = entry.parse(text);
			if (choice) this.done(choice);
			else problem.setText(theme.fg("warning", `"${text.trim()}" is not a value this setting takes.`));
		};
		input.onEscape = () => this.done(undefined);
		input.focused = true;
		this.input = input;
		this.addChild(input);
		this.addChild(problem);
		this.addChild(new Text(theme.fg("dim", "  Enter to save · Esc to go back"), 0, 0));
	}

	handleInput(data: string): void {
		if (this.input) {
			if (this.keybindings.matches(data, "tui.select.cancel")) this.done(undefined);
			else this.input.handleInput(data);
			return;
		}
		this.list.handleInput(data);
	}
}

/** The dialog component `ctx.ui.custom` shows; `done` closes it. */
export function settingsDialog(
	tui: TUI,
	theme: Theme,
	keybindings: KeybindingsManager,
	done: () => void,
	deps: DialogDeps,
	initialScope: SettingsScope = "global",
): Component {
	let snapshot = deps.read();
	let items = settingsItems(snapshot);
	let scope: SettingsScope = snapshot.files.project === undefined ? "global" : initialScope;
	const status = new Text("", 1, 0);
	const scopeText = () => {
		if (snapshot.files.project === undefined) return "global file (the project is not trusted)";
		return scope === "global" ? "global file" : "project file";
	};
	const scopePath = () => (scope === "project" ? snapshot.files.project : snapshot.files.global) ?? "";
	const rows: SettingItem[] = [
		{
			id: SCOPE_ID,
			label: "Save changes to",
			currentValue: scopeText(),
			description: "",
			...(snapshot.files.project !== undefined ? { values: ["global file", "project file"] } : {}),
		},
		...items.map((first) => ({
			id: first.id,
			label: first.label,
			currentValue: valueWithOrigin(first),
			description: itemDescription(first, snapshot),
			submenu: (_value: string, close: (value?: string) => void) => {
				// The item as last read: a save elsewhere may have changed its value or origin.
				const item = items.find((next) => next.id === first.id) ?? first;
				return new Picker(theme, item, keybindings, (choice) => {
					if (!choice) return close();
					const said = save(item, choice);
					close(valueWithOrigin(items.find((next) => next.id === item.id) ?? item));
					status.setText(theme.fg(said.level === "info" ? "success" : "warning", said.text));
				});
			},
		})),
	];
	const describeScope = () => {
		const row = rows[0];
		if (row) row.description = `Where a change is written: ${scopePath()}. A project file wins over the global file.`;
	};
	describeScope();
	const list = new SettingsList(
		rows,
		rows.length,
		getSettingsListTheme(),
		(id, value) => {
			if (id !== SCOPE_ID) return;
			scope = value === "project file" ? "project" : "global";
			describeScope();
			tui.requestRender();
		},
		() => done(),
	);
	const save = (item: SettingsItem, choice: Choice) => {
		const said = deps.save(item, choice, scope);
		snapshot = deps.read();
		items = settingsItems(snapshot);
		for (const next of items) {
			list.updateValue(next.id, valueWithOrigin(next));
			const row = rows.find((candidate) => candidate.id === next.id);
			if (row) row.description = itemDescription(next, snapshot);
		}
		return said;
	};
	const border = () => new DynamicBorder((text: string) => theme.fg("border", text));
	const container = new Container();
	container.addChild(border());
	container.addChild(new Text(theme.bold(theme.fg("accent", "pi-fold settings")), 1, 0));
	container.addChild(
		new Text(
			theme.fg("muted", "Each value shows where it comes from: default, global file, project file or code."),
			1,
			0,
		),
	);
	container.addChild(new Spacer(1));
	container.addChild(list);
	container.addChild(status);
	container.addChild(border());
	return {
		render: (width) => container.render(width),
		invalidate: () => container.invalidate(),
		handleInput: (data) => {
			list.handleInput(data);
			tui.requestRender();
		},
	};
}

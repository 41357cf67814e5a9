/**
 * An extension UI context for in-process tests that records what extensions show.
 *
 * Owns the recording of fire-and-forget UI calls (notify, setStatus, setWidget,
 * setTitle, editor text) and the answers to dialogs (every dialog is cancelled,
 * as an unattended RPC client would). Terminal-only features are inert, as in
 * Pi's RPC mode; `theme` is the host's global theme, as in RPC mode.
 */

import type { ExtensionUIContext, Theme } from "@earendil-works/pi-coding-agent";

export type NotifyLevel = "info" | "warning" | "error";

/** What extensions showed through the UI, in order. */
export interface CapturedUi {
	notifications: { message: string; level: NotifyLevel }[];
	/** Latest text per status key; a cleared key is absent. */
	statuses: Map<string, string>;
	/** Latest string-array widget per key; component widgets are recorded as null. */
	widgets: Map<string, string[] | null>;
	titles: string[];
	/** Dialog requests (select, confirm, input, editor), each answered as cancelled. */
	dialogs: { kind: string; title: string }[];
	editorText: string;
}

export function emptyCapture(): CapturedUi {
	return { notifications: [], statuses: new Map(), widgets: new Map(), titles: [], dialogs: [], editorText: "" };
}

/** A UI context that writes into `capture`. Pi copies the context with a spread, so `theme` must not throw. */
export function captureUiContext(capture: CapturedUi, theme: Theme): ExtensionUIContext {
	const noop = (): void => {};
	return {
		select: async (title) => {
			capture.dialogs.push({ kind: "select", title });
			return undefined;
		},
		confirm: async (title) => {
			capture.dialogs.push({ kind: "confirm", title });
			return false;
		},
		input: async (title) => {
			capture.dialogs.push({ kind: "input", title });
			return undefined;
		},
		editor: async (title) => {
			capture.dialogs.push({ kind: "editor", title });
			return undefined;
		},
		notify: (message, level = "info") => {
			capture.notifications.push({ message, level });
		},
		setStatus: (key, text) => {
			if (text === undefined) capture.statuses.delete(key);
			else capture.statuses.set(key, text);
		},
		setWidget: (key: string, content: unknown) => {
			if (content === undefined) capture.widgets.delete(key);
			else capture.widgets.set(key, Array.isArray(content) ? content.map(String) : null);
		},
		setTitle: (title) => {
			capture.titles.push(title);
		},
		pasteToEditor: (text) => {
			capture.editorText += text;
		},
		setEditorText: (text) => {
			capture.editorText = text;
		},
		getEditorText: () => capture.editorText,
		onTerminalInput: () => noop,
		setWorkingMessage: noop,
		setWorkingVisible: noop,
		setWorkingIndicator: noop,
		setHiddenThinkingLabel: noop,
		setFooter: noop,
		setHeader: noop,
		// Pi's RPC mode answers custom components with undefined too; the cast states that contract.
		custom: async <T>() => undefined as T,
		addAutocompleteProvider: noop,
		setEditorComponent: noop,
		getEditorComponent: () => undefined,
		theme,
		getAllThemes: () => [],
		getTheme: () => undefined,
		setTheme: () => ({ success: false, error: "capture UI: themes are not available" }),
		getToolsExpanded: () => false,
		setToolsExpanded: noop,
	};
}

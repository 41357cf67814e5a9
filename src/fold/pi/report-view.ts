/**
 * The TUI half of a report (report-doc.ts): a bordered, themed view in Pi's
 * active theme, as Pi's own `/session` draws its info, that pages when the
 * report is taller than the terminal (↑↓ a line, PgUp/PgDn a page, Home/End)
 * and closes on Esc, Enter or q. `showReport` picks the view in the TUI and
 * plain text everywhere else.
 */

import type { ExtensionCommandContext, Theme } from "@earendil-works/pi-coding-agent";
import { DynamicBorder } from "@earendil-works/pi-coding-agent";
import { type Component, getKeybindings, type TUI, truncateToWidth, wrapTextWithAnsi } from "@earendil-works/pi-tui";
import { type OutputLevel, showOutput } from "../../host/output.ts";
import { sanitizeText } from "../../text/lines.ts";
import { plainReport, type ReportLine } from "./report-doc.ts";

/** Terminal rows the view leaves to Pi's editor and footer below it. */
const RESERVED_ROWS = 8;
/** A page is never shorter than this, however small the terminal. */
const MIN_PAGE_ROWS = 6;

function styled(theme: Theme, item: ReportLine): string {
	const indent = "  ".repeat(item.indent ?? 0);
	const text = sanitizeText(item.text);
	const value = item.value === undefined ? "" : theme.bold(sanitizeText(item.value));
	switch (item.style) {
		case "title":
			return theme.bold(theme.fg("accent", text)) + value;
		case "heading":
			return theme.bold(text) + value;
		case "muted":
			return indent + theme.fg("dim", text) + value;
		case "warning":
			return indent + theme.fg("warning", text + (item.value ?? ""));
		default:
			return indent + theme.fg("muted", text) + value;
	}
}

/** A scrollable report; `done` closes it. Exported for its paging test. */
export class ReportView implements Component {
	/**
	 * In Pi's full-screen mode (its default) PgUp/PgDn scroll the transcript
	 * unless the focused component captures them, as Pi's own lists do: the
	 * view claims them, so the keys its hint names page the report.
	 */
	readonly capturesViewportInput = true;
	private top = 0;
	private rendered: string[] = [];
	private readonly tui: TUI;
	private readonly theme: Theme;
	private readonly lines: readonly ReportLine[];
	private readonly done: () => void;

	constructor(tui: TUI, theme: Theme, lines: readonly ReportLine[], done: () => void) {
		this.tui = tui;
		this.theme = theme;
		this.lines = lines;
		this.done = done;
	}

	private pageRows(): number {
		return Math.max(MIN_PAGE_ROWS, this.tui.terminal.rows - RESERVED_ROWS);
	}

	render(width: number): string[] {
		const inner = Math.max(10, width - 2);
		const body = this.lines.flatMap((item) =>
			wrapTextWithAnsi(styled(this.theme, item), inner).map((row) => ` ${row}`),
		);
		this.rendered = body;
		const page = this.pageRows();
		this.top = Math.max(0, Math.min(this.top, body.length - page));
		const shown = body.slice(this.top, this.top + page);
		const border = new DynamicBorder((text: string) => this.theme.fg("border", text)).render(width);
		const paged = body.length > page;
		const hint = paged
			? `lines ${this.top + 1}–${this.top + shown.length} of ${body.length} · ↑↓ line · PgUp/PgDn page · Home/End · Esc close`
			: "Esc close";
		return [...border, ...shown, truncateToWidth(` ${this.theme.fg("dim", hint)}`, width), ...border];
	}

	handleInput(data: string): void {
		const keys = getKeybindings();
		const page = this.pageRows();
		const last = Math.max(0, this.rendered.length - page);
		if (keys.matches(data, "tui.select.cancel") || keys.matches(data, "tui.select.confirm") || data === "q") {
			this.done();
			return;
		}
		if (keys.matches(data, "tui.select.up")) this.top = Math.max(0, this.top - 1);
		else if (keys.matches(data, "tui.select.down")) this.top = Math.min(last, this.top + 1);
		else if (keys.matches(data, "tui.select.pageUp")) this.top = Math.max(0, this.top - page);
		else if (keys.matches(data, "tui.select.pageDown") || data === " ") this.top = Math.min(last, this.top + page);
		else if (data === "\u001b[H" || data === "\u001b[1~" || data === "g") this.top = 0;
		else if (data === "\u001b[F" || data === "\u001b[4~" || data === "G") this.top = last;
		else return;
		this.tui.requestRender();
	}

	invalidate(): void {}
}

/** The report in the TUI's themed view, or as plain text in every other mode. */
export async function showReport(
	ctx: Pick<ExtensionCommandContext, "hasUI" | "mode" | "ui">,
	lines: readonly ReportLine[],
	level: OutputLevel = "info",
): Promise<void> {
	if (ctx.mode !== "tui" || !ctx.hasUI) return showOutput(ctx, plainReport(lines), level);
	await ctx.ui.custom<void>((tui, theme, _keybindings, done) => new ReportView(tui, theme, lines, () => done()));
}

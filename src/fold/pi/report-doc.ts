/**
 * A person-facing report as styled lines: the one shape `/context` and its
 * subcommands build, shown two ways. In Pi's TUI a themed, scrollable view
 * draws it (report-view.ts: headings bold, values bright, hints dim); in
 * print, json and RPC mode the same lines are plain text, so what a script
 * reads is what the TUI shows, without colour.
 */

export type ReportStyle = "title" | "heading" | "text" | "muted" | "warning";

export interface ReportLine {
	style: ReportStyle;
	text: string;
	/** A bright value after the text (`Window: ` + `42% of 128k`); plain text joins them. */
	value?: string;
	/** Indent in steps of two spaces. */
	indent?: number;
}

export const title = (text: string): ReportLine => ({ style: "title", text });
export const heading = (text: string): ReportLine => ({ style: "heading", text });
export const line = (text: string, indent = 0): ReportLine => ({ style: "text", text, indent });
export const muted = (text: string, indent = 0): ReportLine => ({ style: "muted", text, indent });
export const warning = (text: string, indent = 0): ReportLine => ({ style: "warning", text, indent });
/** `text` then a bright `value`, exactly as given. */
export const valued = (text: string, value: string, indent = 0): ReportLine => ({ style: "text", text, value, indent });
/** `label: ` then a bright `value`. */
export const field = (label: string, value: string, indent = 0): ReportLine => valued(`${label}: `, value, indent);

/** The lines as plain text (print, json and RPC mode; tests). */
export function plainReport(lines: readonly ReportLine[]): string {
	return lines.map((item) => `${"  ".repeat(item.indent ?? 0)}${item.text}${item.value ?? ""}`).join("\n");
}

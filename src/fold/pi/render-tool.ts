/**
 * How the context tool looks in Pi's TUI: one line per call and one line per
 * result, the result's first line whole (sizes readable) unless it is longer
 * than a row; the full text, refusals included, and a peek's source show when
 * the person expands the tool row. The line formatting is pure (tested
 * directly); `renderCall` / `renderResult` only wrap it in themed `Text`.
 * Nothing here changes what the model reads.
 */

import type { AgentToolResult } from "@earendil-works/pi-agent-core";
import type { Theme, ToolDefinition, ToolRenderResultOptions } from "@earendil-works/pi-coding-agent";
import { type Component, Text } from "@earendil-works/pi-tui";
import type { StatusDetails } from "../engine/status-facts.ts";
import { readableBytes } from "./context-report.ts";
import { describeSourceEntry } from "./peek-report.ts";
import { personText } from "./person-text.ts";

/** What a context tool result carries besides its text (also what the renderer reads). */
export interface ToolDetails {
	action: string;
	ok: boolean;
	code?: string;
	foldId?: string;
	status: StatusDetails;
}

/** Pi's render context (not exported by name from the package root). */
type ToolRenderContext = Parameters<NonNullable<ToolDefinition["renderCall"]>>[2];

/** Characters of a result's first line on the collapsed row; a longer line is cut at a word and shown whole on expand. */
export const RESULT_LINE_CHARS = 160;
/** Source entries an expanded peek shows; the model's result holds them all. */
export const EXPANDED_PEEK_ENTRIES = 200;

/** The call's arguments as the renderer receives them (possibly still streaming, so all optional). */
export interface CallArgs {
	action?: unknown;
	id?: unknown;
	ids?: unknown;
	detail?: unknown;
	offset?: unknown;
	brief?: unknown;
	query?: unknown;
	children?: unknown;
}

function span(ids: unknown): string {
	if (!Array.isArray(ids) || ids.length === 0) return "";
	const names = ids.map(String);
	return names.length === 1 ? (names[0] ?? "") : `${names[0]}…${names.at(-1)}`;
}

/** `fold e1…e9 (brief)`, `peek f-abc`, `status tree`: what the call asks, in one line. */
export function callLine(args: CallArgs): string {
	const action = typeof args.action === "string" ? args.action : "…";
	const id = typeof args.id === "string" ? args.id : "";
	switch (action) {
		case "status":
			return typeof args.detail === "string" ? `status ${args.detail}` : "status";
		case "fold":
			return `fold ${span(args.ids)}${typeof args.brief === "string" ? " with a brief" : ""}`.trim();
		case "peek":
			if (args.children === true) return `list the folds inside ${id}`;
			return `peek ${id}${typeof args.offset === "number" && args.offset > 0 ? ` from byte ${args.offset}` : ""}`;
		case "search":
			return `search ${typeof args.query === "string" ? JSON.stringify(args.query) : ""}`.trim();
		case "protect":
		case "unprotect":
			return `${action} ${span(args.ids)}`.trim();
		case "reboundary":
			return `reboundary ${id}${Array.isArray(args.ids) ? ` → ${span(args.ids)}` : ""}`;
		default:
			return `${action} ${id}`.trim();
	}
}

export interface ResultView {
	line: string;
	level: "success" | "error" | "muted";
	/** Shown only when the row is expanded. */
	body: string[];
}

/**
 * The collapsed line: the text's first line, sizes readable, cut only when
 * longer than a row (at a word, with "…"). `whole` says whether the line
 * already holds all of the text, so expanding has nothing to add.
 */
function summaryLine(text: string): { line: string; whole: boolean } {
	const trimmed = text.trim();
	const first = personText(trimmed.split("\n", 1)[0] ?? "");
	const single = !trimmed.includes("\n");
	if (first.length <= RESULT_LINE_CHARS) return { line: first, whole: single };
	const cut = first.slice(0, RESULT_LINE_CHARS - 1);
	const space = cut.lastIndexOf(" ");
	return { line: `${(space > RESULT_LINE_CHARS / 2 ? cut.slice(0, space) : cut).trimEnd()}…`, whole: false };
}

/** The full text as expanding shows it: every line, sizes readable. */
function fullBody(text: string): string[] {
	return personText(text.trim()).split("\n");
}

function peekBody(text: string): string[] {
	const at = text.indexOf("\n\n");
	const lines = at === -1 ? [] : text.slice(at + 2).split("\n");
	const entries = lines.filter((line) => line.trim() !== "").slice(0, EXPANDED_PEEK_ENTRIES);
	return entries.map((line) => {
		try {
			return describeSourceEntry(JSON.parse(line));
		} catch {
			return "… (cut at the end of this slice)";
		}
	});
}

/** The one result line and what expanding shows. */
export function resultView(details: ToolDetails | undefined, text: string): ResultView {
	if (!details) {
		const { line, whole } = summaryLine(text);
		return { line, level: "muted", body: whole ? [] : fullBody(text) };
	}
	if (!details.ok) {
		// The tool's text is `Error (code): reason… Nothing changed.`; the row leads with the code once.
		const code = details.code ?? "refused";
		const reason = text.trim().replace(/^Error \([^)]*\):\s*/, "");
		const { line, whole } = summaryLine(reason);
		return { line: `${code}: ${line}`, level: "error", body: whole ? [] : fullBody(reason) };
	}
	if (details.action === "search") {
		const count =
			/^Search "(?:[^"\\]|\\.)*"(?: \(regex\))?: ((?:no|at least [\d,]+|[\d,]+) hits?)/.exec(text)?.[1] ??
			summaryLine(text).line;
		return { line: `search: ${count}, sources sha256 verified`, level: "success", body: text.split("\n") };
	}
	const range = /Bytes (\d+)–(\d+) of (\d+)/.exec(text);
	if (details.action === "peek" && range) {
		const size = ` ${readableBytes(Number(range[2]) - Number(range[1]))} of ${readableBytes(Number(range[3]))}`;
		const what = details.foldId ? `fold ${details.foldId}` : "entry";
		return { line: `read ${what}:${size}, sha256 verified`, level: "success", body: peekBody(text) };
	}
	if (details.action === "status") {
		const { counts, budget, automatic } = details.status;
		const share = budget.occupancy === null ? "" : `${(100 * budget.occupancy).toFixed(0)}% of the budget, `;
		const marks = automatic.scheduling.pendingMarks.length;
		return {
			line: `${share}${counts.folds} folds (${counts.collapsed} collapsed)${marks > 0 ? `, ${marks} marks pending` : ""}`,
			level: "success",
			body: text.split("\n"),
		};
	}
	const { line, whole } = summaryLine(text);
	return { line, level: "success", body: whole ? [] : fullBody(text) };
}

export function renderContextCall(label: string) {
	return (args: CallArgs, theme: Theme, context: ToolRenderContext): Component => {
		const text = (context.lastComponent as Text | undefined) ?? new Text("", 0, 0);
		text.setText(`${theme.fg("toolTitle", theme.bold(label))} ${theme.fg("muted", callLine(args))}`);
		return text;
	};
}

export function renderContextResult(
	result: AgentToolResult<ToolDetails>,
	options: ToolRenderResultOptions,
	theme: Theme,
	context: ToolRenderContext,
): Component {
	if (options.isPartial) return new Text(theme.fg("muted", "…"), 0, 0);
	const first = result.content.find((part) => part.type === "text");
	const view = resultView(result.details, first?.type === "text" ? first.text : "");
	let line = theme.fg(view.level, view.line);
	if (view.body.length > 0 && !options.expanded)
		line += ` ${theme.fg("dim", `(${context.keyHint("app.tools.expand", "to expand")})`)}`;
	const body = options.expanded ? view.body.map((item) => theme.fg("dim", item)) : [];
	return new Text([line, ...body].join("\n"), 0, 0);
}

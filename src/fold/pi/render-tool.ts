/**
 * How the context tool looks in Pi's TUI: one line per call and one line per
 * result, the result's first line (sizes readable) as the complete sentences
 * that fit a row; expanding the row shows the whole text once, refusals
 * included, and a peek's source. The line formatting is pure (tested
 * directly); `renderCall` / `renderResult` only wrap it in themed `Text`.
 * Nothing here changes what the model reads.
 */

import type { AgentToolResult } from "@earendil-works/pi-agent-core";
import type { Theme, ToolDefinition, ToolRenderResultOptions } from "@earendil-works/pi-coding-agent";
import { type Component, Text } from "@earendil-works/pi-tui";
import type { StatusDetails } from "../engine/status-facts.ts";
import { marksInWindow, readableBytes } from "./context-report.ts";
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

/** Characters of a result's first line on the collapsed row; a longer line shows its sentences that fit, and whole on expand. */
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
	/** What the row's line reads when expanded, when that says more than `line` (the whole first line). */
	expandedLine?: string;
}

/** A sentence ends at `.`, `!` or `?` before a space and a capital, a quote, a bracket or a digit. */
const SENTENCE_END = /(?<=[.!?])\s+(?=[A-Z0-9"'`([{])/;
/** Where a sentence too long for a row may end early, best first: a clause it can stand without. */
const CLAUSE_ENDS = ["; ", ": ", ", "];

/**
 * A line too long for a row, as a complete sentence that fits: its first
 * sentences while they fit, else the first sentence up to its last clause
 * that fits, with a full stop; a cut at a word with "…" only when no clause
 * does.
 */
function wholeSentences(first: string, width: number): string {
	let line = "";
	for (const sentence of first.split(SENTENCE_END)) {
		const next = line === "" ? sentence : `${line} ${sentence}`;
		if (next.length > width) break;
		line = next;
	}
	if (line !== "") return line;
	const room = first.slice(0, width - 1);
	for (const clause of CLAUSE_ENDS) {
		const at = room.lastIndexOf(clause);
		if (at > width / 3) return `${room.slice(0, at).replace(/[\s.,;:]+$/, "")}.`;
	}
	const space = room.lastIndexOf(" ");
	return `${(space > width / 2 ? room.slice(0, space) : room).trimEnd()}…`;
}

/**
 * The collapsed line: the text's first line, sizes readable, as complete
 * sentences that fit a row. `whole` says whether the line already holds all
 * of the text, so expanding has nothing to add; `first` is the whole first
 * line, which the expanded row reads in its place.
 */
function summaryLine(text: string, width = RESULT_LINE_CHARS): { line: string; whole: boolean; first: string } {
	const trimmed = text.trim();
	const first = personText(trimmed.split("\n", 1)[0] ?? "");
	const single = !trimmed.includes("\n");
	if (first.length <= width) return { line: first, whole: single, first };
	return { line: wholeSentences(first, width), whole: false, first };
}

/** The text after its first line, as expanding shows it below the whole first line: sizes readable. */
function restBody(text: string): string[] {
	const trimmed = personText(text.trim());
	const at = trimmed.indexOf("\n");
	return at === -1 ? [] : trimmed.slice(at + 1).split("\n");
}

/** A row made from the text itself: complete sentences collapsed, the whole text (once) expanded. */
function textView(text: string, level: ResultView["level"], prefix = ""): ResultView {
	const { line, whole, first } = summaryLine(text, RESULT_LINE_CHARS - prefix.length);
	const view: ResultView = { line: `${prefix}${line}`, level, body: whole ? [] : restBody(text) };
	if (!whole && first !== line) view.expandedLine = `${prefix}${first}`;
	return view;
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
	if (!details) return textView(text, "muted");
	if (!details.ok) {
		// The tool's text is `Error (code): reason… Nothing changed.`; the row leads with the code once.
		const code = details.code ?? "refused";
		const reason = text.trim().replace(/^Error \([^)]*\):\s*/, "");
		return textView(reason, "error", `${code}: `);
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
		const { counts, budget } = details.status;
		const share = budget.occupancy === null ? "" : `${(100 * budget.occupancy).toFixed(0)}% of the budget, `;
		const marks = marksInWindow(details.status).length;
		return {
			line: `${share}${counts.folds} folds (${counts.collapsed} collapsed)${marks > 0 ? `, ${marks} marks pending` : ""}`,
			level: "success",
			body: text.split("\n"),
		};
	}
	return textView(text, "success");
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
	// Expanded, the row reads the whole first line in place of its summary: nothing shows twice.
	let line = theme.fg(view.level, options.expanded ? (view.expandedLine ?? view.line) : view.line);
	if ((view.body.length > 0 || view.expandedLine !== undefined) && !options.expanded)
		line += ` ${theme.fg("dim", `(${context.keyHint("app.tools.expand", "to expand")})`)}`;
	const body = options.expanded ? view.body.map((item) => theme.fg("dim", item)) : [];
	return new Text([line, ...body].join("\n"), 0, 0);
}

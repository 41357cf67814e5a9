/**
 * The plan and decisions an agent stated in a span: what the compactor keeps
 * of a turn it cuts in the middle, so the agent still knows what it set out
 * to do. Deterministic and bounded; read from typed events only.
 *
 * A plan line is, in source order:
 * - typed: each item of the latest tool call in the span whose arguments
 *   carry a plan list (`PLAN_LIST_KEYS`: an array of strings, or of objects
 *   with a string item field, `PLAN_ITEM_KEYS`, and an optional string
 *   `status`), as todo and plan tools write them;
 * - in assistant text (never thinking), after leading markdown markers
 *   (`#`, `>`, `*`, `_`, backticks) are set aside:
 *   - a numbered item (`1.`, `2)`) or a task item (`- [ ]`, `- [x]`): the
 *     form agents write steps in;
 *   - a line whose first words name a plan or a decision with a colon
 *     (`Plan:`, `Next steps:`, `Decision:`, `**Best solution**: …`;
 *     `PLAN_LABELS`, `DECISION_LABELS`), the one vocabulary rule here;
 *   - a line ending with a colon right before a numbered or task item: the
 *     list's introduction ("Now I need to:").
 * Identical lines count once (the first). Every bound is a named constant.
 */

import { oneLine, shrinkText } from "../text/lines.ts";
import type { NormalizedEvent } from "./events.ts";

/** Argument keys whose array value is a plan (todo and plan tools). */
export const PLAN_LIST_KEYS = ["plan", "todos", "steps", "tasks"] as const;
/** Fields that name one item of a typed plan list. */
export const PLAN_ITEM_KEYS = ["step", "content", "title", "task", "text", "description"] as const;
/** Items read from one typed plan list. */
export const PLAN_LIST_MAX_ITEMS = 32;
/** Characters of one assistant text scanned for plan lines (its start). */
export const PLAN_SCAN_MAX_CHARS = 32 * 1024;
/** UTF-8 bytes of one plan line as returned (one line, cut with an ellipsis). */
export const PLAN_LINE_MAX_BYTES = 320;
/** Words a plan or decision label may follow ("Best solution:", "Our plan:"). */
const LABEL_LEAD_WORDS = 2;
export const PLAN_LABELS = ["plan", "next step", "next steps", "steps", "todo", "goal"] as const;
export const DECISION_LABELS = ["decision", "decided", "approach", "solution", "strategy"] as const;

export type PlanLineKind = "plan" | "decision" | "todo";

export interface PlanLine {
	entryId: string;
	address: string;
	ordinal: number;
	kind: PlanLineKind;
	/** One line, bounded to `PLAN_LINE_MAX_BYTES`. */
	text: string;
}

/** Leading markdown that only decorates a line: headings, quotes, emphasis, code ticks. */
const DECORATION = /^[\s#>*_`]+/;
const NUMBERED_ITEM = /^\d{1,3}[.)]\s+\S/;
const TASK_ITEM = /^[-*+]\s+\[[ xX]\]\s+\S/;
const LABEL_WORDS = new RegExp(
	`^(?:[\\p{L}\\p{N}'’-]+\\s+){0,${LABEL_LEAD_WORDS}}?(${[...PLAN_LABELS, ...DECISION_LABELS].join("|")})\\b[^:\\n]{0,40}:`,
	"iu",
);
const DECISIONS: ReadonlySet<string> = new Set(DECISION_LABELS);

function undecorated(line: string): string {
	// Task items keep their bullet; emphasis around a label ("**Plan**:") is dropped.
	const trimmed = line.trim();
	if (TASK_ITEM.test(trimmed)) return trimmed;
	return trimmed.replace(DECORATION, "").replace(/[*_`]+(?=\s*:)/g, "");
}

function isListItem(line: string): boolean {
	return NUMBERED_ITEM.test(line) || TASK_ITEM.test(line);
}

/** Plan lines of one assistant text, in order; see the module comment. */
export function textPlanLines(text: string): { kind: PlanLineKind; text: string }[] {
	const lines = text.slice(0, PLAN_SCAN_MAX_CHARS).split("\n").map(undecorated);
	const found: { kind: PlanLineKind; text: string }[] = [];
	lines.forEach((line, index) => {
		if (!line) return;
		const label = LABEL_WORDS.exec(line)?.[1]?.toLowerCase();
		const next = lines.slice(index + 1).find((candidate) => candidate !== "");
		const introduces = line.endsWith(":") && next !== undefined && isListItem(next);
		if (label !== undefined) found.push({ kind: DECISIONS.has(label) ? "decision" : "plan", text: line });
		else if (isListItem(line) || introduces) found.push({ kind: "plan", text: line });
	});
	return found;
}

/** Items of a typed plan list in a call's arguments, or undefined when it carries none. */
export function typedPlanItems(args: Record<string, unknown> | undefined): string[] | undefined {
	for (const key of PLAN_LIST_KEYS) {
		const list = args?.[key];
		if (!Array.isArray(list) || list.length === 0) continue;
		const items: string[] = [];
		for (const item of list.slice(0, PLAN_LIST_MAX_ITEMS)) {
			if (typeof item === "string" && item.trim()) {
				items.push(item);
				continue;
			}
			if (typeof item !== "object" || item === null || Array.isArray(item)) continue;
			const record = item as Record<string, unknown>;
			const name = PLAN_ITEM_KEYS.map((field) => record[field]).find((value) => typeof value === "string");
			if (typeof name !== "string" || !name.trim()) continue;
			items.push(typeof record.status === "string" ? `[${record.status}] ${name}` : name);
		}
		if (items.length > 0) return items;
	}
	return undefined;
}

/** The plan lines of a span of events; see the module comment. */
export function planLines(events: readonly NormalizedEvent[]): PlanLine[] {
	const lines: PlanLine[] = [];
	const seen = new Set<string>();
	const add = (event: NormalizedEvent, kind: PlanLineKind, text: string): void => {
		const line = shrinkText(oneLine(text), PLAN_LINE_MAX_BYTES);
		if (!line || seen.has(line)) return;
		seen.add(line);
		lines.push({ entryId: event.entryId, address: event.address, ordinal: event.ordinal, kind, text: line });
	};
	const typed = events.findLast((event) => event.kind === "toolCall" && typedPlanItems(event.args) !== undefined);
	for (const event of events) {
		if (event.kind === "assistant") {
			for (const line of textPlanLines(event.text)) add(event, line.kind, line.text);
		} else if (event === typed && event.kind === "toolCall") {
			for (const item of typedPlanItems(event.args) ?? []) add(event, "todo", item);
		}
	}
	return lines;
}

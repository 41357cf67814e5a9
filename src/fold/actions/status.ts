/**
 * The `status` action and `/context`: occupancy of the serving budget, the
 * fold index, and the append-only instrument's counts. Pure formatting over
 * a snapshot; `details` carries the same facts structured for tools and UIs.
 *
 * Bounded. A status result lands in the window as a tool result, so its
 * text never exceeds `STATUS_MAX_CHARS` whatever the fold count: totals,
 * then the largest and the most recent folds (plain status) or one page of
 * the fold tree (`detail: "tree"`, paged by `offset`/`limit`), and a line
 * saying how to get the rest. `boundedDetails` trims the structured fold
 * list to the rows the text shows, since every tool result is persisted.
 */

import type { FoldDetail, StatusDetails } from "../engine/status-facts.ts";
import { PI_DEFAULT_RESERVE_TOKENS } from "../policy/budget.ts";
import { formatEvidence } from "../store/evidence.ts";
import { formatSummarizerStatus } from "../summarizer/summary-spans.ts";

/** Rewrite events shown in status text. */
export const STATUS_REWRITE_EVENTS = 5;
/** Most characters of one status text: 4 KiB, about 1k tokens, whatever the fold count. */
export const STATUS_MAX_CHARS = 4096;
/** Largest and most recent folds listed by a plain status, each. */
export const STATUS_TOP_FOLDS = 5;
/** Tree rows per page when `limit` is not given. */
export const STATUS_TREE_PAGE = 25;
/** Most tree rows one page may ask for (the character bound may stop it earlier). */
export const STATUS_TREE_MAX_LIMIT = 100;
/** Pending marks listed by name; the rest are counted. */
export const STATUS_MARKS_LISTED = 5;
/** Longest single line; an id or a reason never widens status past it. */
const STATUS_LINE_MAX_CHARS = 400;

const integer = new Intl.NumberFormat("en-US");
const num = (value: number | undefined | null) =>
	value === undefined || value === null ? "unknown" : integer.format(value);

export interface StatusTextOptions {
	tree: boolean;
	toolName: string;
	/** Tree page start (row index in transcript order). */
	offset?: number;
	/** Tree page size, at most STATUS_TREE_MAX_LIMIT. */
	limit?: number;
}

const clip = (line: string): string =>
	line.length > STATUS_LINE_MAX_CHARS ? `${line.slice(0, STATUS_LINE_MAX_CHARS - 1)}…` : line;

function foldLine(fold: FoldDetail, indent: string): string {
	const parent = fold.parent ? ` parent ${fold.parent}` : "";
	return clip(
		`${indent}${fold.id} ${fold.kind} ${fold.state} ${fold.firstEntryId}…${fold.lastEntryId} (${fold.entryCount} entries, ${integer.format(fold.sourceBytes)} → ${integer.format(fold.briefBytes)} bytes)${parent}`,
	);
}

/**
 * Where fold sources are kept, said truthfully: a session without a file, a
 * session id no store can use as a path (the reason), or the store's path.
 */
export function storeLine(store: StatusDetails["store"]): string {
	return `Store: ${storeWhere(store)}.`;
}

/** Where the fold sources live, or why only in memory (the status line and the person's `/context`). */
export function storeWhere(store: StatusDetails["store"]): string {
	if (store.kind !== "memory") return store.location;
	const why =
		store.location === "memory" ? "this session has no file" : store.location.replace(/^memory \((.*)\)$/, "$1");
	return `in memory (${why}; sources are lost when Pi exits)`;
}

/** The totals and instrument lines every status starts with. */
function headLines(details: StatusDetails): string[] {
	const { budget, counts, instrument } = details;
	const occupancy = budget.occupancy === null ? "unknown" : `${(100 * budget.occupancy).toFixed(1)}%`;
	const lines = [
		`Window: ~${num(budget.tokens)} tokens, ${occupancy} of the serving budget ${num(budget.servingBudget)} (descriptor ${num(budget.descriptor)} less Pi's reserve ${num(budget.reserveTokens ?? PI_DEFAULT_RESERVE_TOKENS)}${budget.providerTotalWindow === undefined ? "" : `, provider total ${num(budget.providerTotalWindow)} less ${num(budget.outputReservation)} output`}).`,
		`Folds: ${counts.folds} (${counts.collapsed} collapsed, ${counts.expanded} expanded, ${counts.hidden} inside collapsed folds); ${counts.protectedEntries} protected entries; ${details.pendingEdits} edits pending for the next turn boundary.`,
		storeLine(details.store),
		`Requests: ${instrument.requests} (${instrument.appends} appends, ${instrument.identical} identical, ${instrument.rewrites} rewrites, ${instrument.unattributed} unattributed, ${instrument.byOtherExtensions} by other extensions). Provider cache misses: ${instrument.cacheMissesProviderSide} on unrewritten windows, ${instrument.cacheMissesAfterRewrite} after rewrites.`,
	];
	const loadout = instrument.loadout;
	if (loadout.promptChanges + loadout.toolChanges > 0)
		lines.push(
			`Loadout: the system prompt changed ${loadout.promptChanges} times and the tool set ${loadout.toolChanges} times between requests (${loadout.unattributed} with no change in Pi's own loadout behind them).`,
		);
	const auto = details.automatic;
	lines.push(
		`Automatic: ${auto.scheduling.mode} scheduling; ${auto.commits} commits this run${auto.cancelledCompactions > 0 ? `, ${auto.cancelledCompactions} Pi threshold compactions cancelled for lossless folds` : ""}${auto.fenceRefusals > 0 ? `, ${auto.fenceRefusals} over-budget requests refused` : ""}.`,
	);
	if (auto.lastCommit) lines.push(`  last ${auto.lastCommit.text}.`);
	if (auto.declined) lines.push(`  no commit at the last boundary: ${auto.declined}.`);
	const marks = auto.scheduling.pendingMarks;
	if (marks.length > 0) {
		lines.push(`  pending marks (${marks.length}):`);
		for (const mark of marks.slice(0, STATUS_MARKS_LISTED)) {
			const share = mark.freedShare === null ? "unknown" : `${(100 * mark.freedShare).toFixed(1)}%`;
			lines.push(
				`    ${mark.id} (${mark.origin}): frees ~${share} of the window, rewrites ~${num(mark.prefixTokensRewritten)} tokens`,
			);
		}
		if (marks.length > STATUS_MARKS_LISTED) lines.push(`    and ${marks.length - STATUS_MARKS_LISTED} more`);
	}
	for (const event of instrument.history.slice(-STATUS_REWRITE_EVENTS)) {
		const where = event.loadout
			? `the ${[event.loadout.prompt ? "system prompt" : "", event.loadout.tools ? "tool set" : ""].filter(Boolean).join(" and ")} changed`
			: `first change at message ${event.firstDivergentIndex}`;
		lines.push(`  rewrite at request ${event.request}: ${where} (${event.causes.join(", ") || "UNATTRIBUTED"})`);
	}
	if (details.skippedStateEntries > 0)
		lines.push(`Skipped ${details.skippedStateEntries} unreadable fold state entries.`);
	const evidence = details.evidence ? formatEvidence(details.evidence) : undefined;
	if (evidence) lines.push(evidence);
	if (details.summarizer) lines.push(formatSummarizerStatus(details.summarizer));
	return lines.map(clip);
}

/** The fold rows a status text shows, and where the tree page stopped. */
interface FoldSection {
	lines: string[];
	shown: FoldDetail[];
	offset: number;
}

/** Plain status: the largest and the most recent visible folds. */
function topSection(details: StatusDetails): FoldSection {
	const visible = details.folds.filter((fold) => fold.state !== "hidden");
	if (visible.length === 0) return { lines: [], shown: [], offset: 0 };
	const largest = [...visible].sort((a, b) => b.sourceBytes - a.sourceBytes).slice(0, STATUS_TOP_FOLDS);
	const recent = [...visible].sort((a, b) => b.created - a.created).slice(0, STATUS_TOP_FOLDS);
	const lines = [
		`Largest visible folds (${largest.length} of ${visible.length}):`,
		...largest.map((fold) => foldLine(fold, "  ")),
		"Most recent visible folds:",
		...recent.map((fold) => foldLine(fold, "  ")),
	];
	const shown = [...new Map([...largest, ...recent].map((fold) => [fold.id, fold])).values()];
	return { lines, shown, offset: 0 };
}

/** Human- and model-readable status text, at most STATUS_MAX_CHARS. */
export function formatStatus(details: StatusDetails, options: StatusTextOptions): string {
	return statusText(details, options).text;
}

/** The text and the fold rows it shows (for `boundedDetails`). */
export function statusText(
	details: StatusDetails,
	options: StatusTextOptions,
): { text: string; shown: FoldDetail[]; offset: number } {
	const tool = options.toolName;
	const head = headLines(details);
	const total = details.folds.length;
	const help = `Peek: ${tool} {"action":"peek","id":"<fold id>"}. Tree: ${tool} {"action":"status","detail":"tree","offset":0,"limit":${STATUS_TREE_PAGE}}.`;
	if (!options.tree) {
		const section = topSection(details);
		return fitBound([...head, ...section.lines], help, section.shown, 0);
	}
	const offset = Math.min(Math.max(0, options.offset ?? 0), total);
	const limit = Math.min(Math.max(1, options.limit ?? STATUS_TREE_PAGE), STATUS_TREE_MAX_LIMIT);
	const rows = details.folds.slice(offset, offset + limit);
	// The page is cut where the character bound is reached; the "next" line then starts from there.
	const fixed = [...head, `Fold tree (transcript order), rows ${offset + 1}–${offset + rows.length} of ${total}:`];
	const nextLine = (end: number) =>
		end < total
			? `${total - end} more rows: ${tool} ${JSON.stringify({ action: "status", detail: "tree", offset: end, limit })}.`
			: "End of the fold tree.";
	let used = fixed.join("\n").length + nextLine(offset).length + help.length + 2;
	const lines: string[] = [];
	for (const fold of rows) {
		const line = foldLine(fold, "  ".repeat(fold.depth + 1));
		if (used + line.length + 1 > STATUS_MAX_CHARS) break;
		lines.push(line);
		used += line.length + 1;
	}
	const end = offset + lines.length;
	fixed[fixed.length - 1] =
		`Fold tree (transcript order), rows ${lines.length > 0 ? `${offset + 1}–${end}` : "none"} of ${total}:`;
	return fitBound([...fixed, ...lines, nextLine(end)], help, rows.slice(0, lines.length), offset);
}

/** Join lines, dropping from the end of the middle until the text fits; the help line always stays. */
function fitBound(
	lines: string[],
	help: string,
	shown: FoldDetail[],
	offset: number,
): { text: string; shown: FoldDetail[]; offset: number } {
	const kept = [...lines];
	let text = [...kept, help].join("\n");
	while (text.length > STATUS_MAX_CHARS && kept.length > 1) {
		kept.splice(kept.length - 1, 1);
		text = [...kept, "[status cut at its size bound]", help].join("\n");
	}
	return { text: text.slice(0, STATUS_MAX_CHARS), shown, offset };
}

/** Status details as a tool result carries them: the fold list trimmed to the rows the text shows. */
export function boundedDetails(details: StatusDetails, shown: readonly FoldDetail[], offset: number): StatusDetails {
	return { ...details, folds: [...shown], foldsShown: { offset, count: shown.length, total: details.folds.length } };
}

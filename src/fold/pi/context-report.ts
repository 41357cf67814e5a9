/**
 * What the person at the keyboard reads: the `/context` report, the
 * one-line summary after `/fold-context`, and the footer status. Pure
 * formatting over facts the command shell gathers (status details, the
 * next request's window, briefs, which folds a compaction removed).
 *
 * The window figure is the next request's (pending edits applied), not
 * Pi's reading of the last request, so a fold shows the moment it is made.
 * The model-facing status text stays in `status.ts`.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { keptFromIndex } from "../../compaction/records/recall.ts";
import { PRODUCT_NAME } from "../../product.ts";
import { readableBytes } from "../../text/bytes.ts";
import { storeWhere } from "../actions/status.ts";
import { briefWhat } from "../briefs/brief.ts";
import type { FoldDetail, StatusDetails } from "../engine/status-facts.ts";
import { PI_DEFAULT_RESERVE_TOKENS, servingBudget } from "../policy/budget.ts";
import { commitReasonText, PENDING_MARKS_COMMIT_TEXT } from "./commit-reasons.ts";
import { field, heading, line, muted, plainReport, type ReportLine, title, valued, warning } from "./report-doc.ts";

export { readableBytes };

/** Folds the default report lists; older ones are counted (`/context tree` lists all). */
export const REPORT_FOLDS_LISTED = 20;
/** Characters of a brief shown under its fold in the list; `/context peek` shows it whole. */
export const REPORT_BRIEF_CHARS = 160;
/** Characters of the session id in the title: enough to tell sessions apart (the full id is in the session file name). */
export const SESSION_ID_CHARS = 8;
/**
 * Occupancy at which the report and the footer warn: the next request no
 * longer fits the budget. "Budget" is what a person reads for the serving
 * budget (Pi's compaction line), each time with what it is measured from.
 */
export const OVER_BUDGET = 1;

export interface WindowFacts {
	/** Estimated tokens of the next request (system prompt and tools included). */
	tokens: number;
	/** Serving budget (Pi's compaction line); undefined when no model is selected. */
	budget: number | undefined;
}

export interface ContextReportInput {
	sessionId: string;
	/** Entries on the active branch. */
	branchEntries: number;
	status: StatusDetails;
	next: WindowFacts;
	/** Pi's own reading of the last request (`ctx.getContextUsage()`), when it has one. */
	hostTokens: number | null;
	/** Brief text by fold id. */
	briefs: ReadonlyMap<string, string>;
	/** Folds whose whole span a compaction removed from the window. */
	compacted: ReadonlySet<string>;
	commands: { status: string; fold: string };
	/** List every fold, hidden ones included, indented by depth. */
	tree: boolean;
}

const integer = new Intl.NumberFormat("en-US");

/** Tokens in a footer: 950, 12.3k, 1.2M. */
export function shortTokens(tokens: number): string {
	if (tokens < 1000) return String(tokens);
	if (tokens < 1_000_000) return `${(tokens / 1000).toFixed(tokens < 10_000 ? 1 : 0)}k`;
	return `${(tokens / 1_000_000).toFixed(1)}M`;
}

export function occupancy(next: WindowFacts): number | null {
	return next.budget ? next.tokens / next.budget : null;
}

const percent = (share: number) => `${(100 * share).toFixed(1)}%`;

/** Folds whose whole span lies before the latest compaction's first kept entry. */
export function compactedFolds(branch: readonly SessionEntry[], folds: readonly FoldDetail[]): Set<string> {
	const keptFrom = keptFromIndex(branch);
	return new Set(folds.filter((fold) => fold.range[1] <= keptFrom).map((fold) => fold.id));
}

/** What the folds hold out of the window: collapsed folds still in it, as source and brief bytes. */
export function heldOut(status: StatusDetails, compacted: ReadonlySet<string>) {
	const collapsed = status.folds.filter((fold) => fold.state === "collapsed" && !compacted.has(fold.id));
	return {
		collapsed: collapsed.length,
		sourceBytes: collapsed.reduce((sum, fold) => sum + fold.sourceBytes, 0),
		briefBytes: collapsed.reduce((sum, fold) => sum + fold.briefBytes, 0),
	};
}

/** The brief's first line as the fold's second line: what tells it from the next (its call, or its ranges). */
function briefFirstLine(brief: string, id: string, max: number): string {
	const what = briefWhat(brief, id);
	return what.length > max ? `${what.slice(0, max - 1)}…` : what;
}

/**
 * What the budget is, in the person's words: the smaller of Pi's compaction
 * line (the window less Pi's reserve, kept for the answer and the summary)
 * and, when set, the provider's total less the output reservation, as
 * `servingBudget` decides it.
 */
export function budgetSource(budget: StatusDetails["budget"]): string {
	const reserve = budget.reserveTokens ?? PI_DEFAULT_RESERVE_TOKENS;
	const line = servingBudget({ ...budget, providerTotalWindow: undefined });
	if (budget.providerTotalWindow !== undefined && (line === undefined || servingBudget(budget) !== line))
		return `provider total ${integer.format(budget.providerTotalWindow)} less ${integer.format(budget.outputReservation ?? 0)} for output`;
	if (budget.descriptor !== undefined && budget.descriptor <= reserve)
		return `the model's whole window: it is no larger than Pi's reserve of ${integer.format(reserve)}`;
	return `the model's window less Pi's reserve of ${integer.format(reserve)} for the answer and compaction, where Pi compacts`;
}

/** The window section: the next request against the budget, Pi's reading when they differ, the warning. */
function windowLines(input: Pick<ContextReportInput, "status" | "next" | "hostTokens" | "commands">): ReportLine[] {
	const { budget } = input.status;
	const share = occupancy(input.next);
	const source = budgetSource(budget);
	const against =
		input.next.budget === undefined
			? "no model selected, so no budget to measure it against"
			: `${percent(share ?? 0)} of the ${integer.format(input.next.budget)}-token budget (${source})`;
	const lines: ReportLine[] = [
		heading("Window"),
		field("Window for the next request", `~${integer.format(input.next.tokens)} tokens`, 1),
		line(`${against}; system prompt and tool declarations included.`, 2),
	];
	const pending = input.status.pendingEdits;
	if (input.hostTokens !== null && pending > 0)
		lines.push(
			muted(
				`Pi's reading of the last request was ~${integer.format(input.hostTokens)} tokens; ${pending} pending edit${pending === 1 ? "" : "s"} land${pending === 1 ? "s" : ""} with the next request.`,
				2,
			),
		);
	if (share !== null && share > OVER_BUDGET)
		lines.push(
			warning(
				`Warning: the next request is over the budget (${percent(share)}). Fold finished work (/${input.commands.fold}) or compact (/compact); pi-fold refuses a request that does not fit.`,
				1,
			),
		);
	return lines;
}

function foldLines(fold: FoldDetail, input: ContextReportInput): ReportLine[] {
	const state = input.compacted.has(fold.id) ? "removed by a compaction" : fold.state;
	const indent = input.tree ? fold.depth + 1 : 1;
	// `f-…  chapter, …` in plain text: the id and its facts, two spaces apart.
	const head = valued(
		`${fold.id}  `,
		`${fold.kind}, ${state}, ${fold.firstEntryId}…${fold.lastEntryId} (${fold.entryCount} entries, ${readableBytes(fold.sourceBytes)} → ${readableBytes(fold.briefBytes)} brief)`,
		indent,
	);
	const brief = input.briefs.get(fold.id);
	// The default list shows visible folds only; the tree shows every fold's line, nested ones too.
	if (!brief || (fold.state === "hidden" && !input.tree)) return [head];
	return [head, line(`“${briefFirstLine(brief, fold.id, REPORT_BRIEF_CHARS)}”`, indent + 1)];
}

/**
 * Pending marks that still hold text in the window: landing them changes the
 * next request. A mark whose entries a later fold or a compaction already took
 * out of the window frees nothing (its share reads 0); the next commit clears
 * it, but until then it is not something pending for the person. An unknown
 * share (no reading yet) counts as pending.
 */
export function marksInWindow(status: StatusDetails): StatusDetails["automatic"]["scheduling"]["pendingMarks"] {
	return status.automatic.scheduling.pendingMarks.filter((mark) => mark.freedShare !== 0);
}

/** Scheduling, pending marks and when they land, the last commit in words. */
function schedulingLines(status: StatusDetails): ReportLine[] {
	const auto = status.automatic;
	const marks = auto.scheduling.pendingMarks;
	const lines: ReportLine[] = [
		field(
			"Scheduling",
			auto.scheduling.mode === "epoch"
				? 'batched (foldScheduling "epoch"): folds wait as marks and land together in one rewrite, so the provider\'s cache survives'
				: 'immediate (foldScheduling "immediate"): each fold lands when it is made',
			1,
		),
	];
	const live = marksInWindow(status);
	if (live.length > 0)
		lines.push(
			field(
				"Pending marks",
				`${live.length} (${live.map((mark) => mark.id).join(", ")}); the window is unchanged until they commit`,
				1,
			),
			muted(PENDING_MARKS_COMMIT_TEXT, 2),
		);
	const moot = marks.filter((mark) => !live.includes(mark));
	if (moot.length > 0)
		lines.push(
			field(
				"Marks already out of the window",
				`${moot.length} (${moot.map((mark) => mark.id).join(", ")}): a later fold or a compaction took their entries out, so landing them changes nothing; the next commit clears them`,
				1,
			),
		);
	const last = auto.lastCommit;
	lines.push(field("Commits this run", String(auto.commits), 1));
	if (last)
		lines.push(
			line(
				`Last: folded ${last.folds.length} span${last.folds.length === 1 ? "" : "s"} because ${commitReasonText(last.reason)}; ~${integer.format(last.freedTokens)} tokens freed, ~${integer.format(last.rewrittenTokens)} re-read once.`,
				2,
			),
		);
	return lines;
}

/** The full `/context` report as styled lines (report-doc.ts): the TUI draws them, print mode joins them. */
export function contextReportLines(input: ContextReportInput): ReportLine[] {
	const { status } = input;
	const compactedCount = status.folds.filter((fold) => input.compacted.has(fold.id)).length;
	const held = heldOut(status, input.compacted);
	const lines: ReportLine[] = [
		title(
			`pi-fold context · session ${input.sessionId.slice(0, SESSION_ID_CHARS)} (${integer.format(input.branchEntries)} entries on this branch)`,
		),
		...windowLines(input),
		heading("Folds"),
	];
	const parts = [
		`${held.collapsed} collapsed, holding ${readableBytes(held.sourceBytes)} out of the window as ${readableBytes(held.briefBytes)} of briefs`,
		...(status.counts.expanded > 0 ? [`${status.counts.expanded} expanded`] : []),
		...(status.counts.hidden > 0 ? [`${status.counts.hidden} inside collapsed folds`] : []),
		...(compactedCount > 0 ? [`${compactedCount} removed by a compaction`] : []),
	];
	lines.push(
		status.counts.folds === 0
			? field("Folds", "none yet", 1)
			: field("Folds", `${status.counts.folds} (${parts.join("; ")}).`, 1),
	);
	lines.push(...schedulingLines(status));
	if (status.counts.protectedEntries > 0)
		lines.push(field("Protected entries", String(status.counts.protectedEntries), 1));
	const shown = status.folds.filter((fold) => input.tree || fold.state !== "hidden");
	const listed = input.tree ? shown : shown.slice(-REPORT_FOLDS_LISTED);
	if (listed.length > 0) {
		const more = shown.length - listed.length;
		lines.push(
			heading(
				input.tree
					? "Fold tree, in transcript order"
					: `Fold list, oldest first${more > 0 ? `, the newest ${listed.length} (${more} older: /${input.commands.status} tree)` : ""}`,
			),
		);
		for (const fold of listed) lines.push(...foldLines(fold, input));
	}
	const { instrument } = status;
	lines.push(
		heading("Store and requests"),
		field("Store", `${storeWhere(status.store)}.`, 1),
		field(
			"Requests",
			`${instrument.requests} (${instrument.appends} appends, ${instrument.identical} identical, ${instrument.rewrites} rewrites, ${instrument.unattributed} unattributed, ${instrument.byOtherExtensions} by other extensions).`,
			1,
		),
	);
	if (status.skippedStateEntries > 0)
		lines.push(warning(`Skipped ${status.skippedStateEntries} unreadable fold state entries.`, 1));
	lines.push(muted(contextHints(input.commands)));
	return lines;
}

/** The full `/context` report as plain text. */
export function formatContextReport(input: ContextReportInput): string {
	return plainReport(contextReportLines(input));
}

/** The subcommands, as one hint line. */
export function contextHints(commands: { status: string; fold: string }): string {
	const c = `/${commands.status}`;
	return `More: ${c} peek <fold id> (brief and source) · ${c} search <text> · ${c} tree · ${c} window (entry ids) · /${commands.fold} [first id] [last id]`;
}

/** The line shown right after a fold: the window the next request will hold. */
export function formatAfterFold(next: WindowFacts, held: ReturnType<typeof heldOut>): string {
	const share = occupancy(next);
	const of = share === null ? "" : `, ${percent(share)} of the budget`;
	const warn = share !== null && share > OVER_BUDGET ? " Still over the budget." : "";
	return `Window for the next request: ~${integer.format(next.tokens)} tokens${of}; ${held.collapsed} collapsed fold${held.collapsed === 1 ? " holds" : "s hold"} ${readableBytes(held.sourceBytes)} out.${warn}`;
}

/** The footer status: occupancy, folds, bytes held out, pending marks. */
export function formatFooter(next: WindowFacts, held: ReturnType<typeof heldOut>, pendingMarks: number): string {
	const share = occupancy(next);
	const window =
		share === null || next.budget === undefined
			? `~${shortTokens(next.tokens)} tok`
			: `${share > OVER_BUDGET ? "⚠ " : ""}${Math.round(100 * share)}% of ${shortTokens(next.budget)}`;
	const parts = [`${PRODUCT_NAME} ${window}`];
	if (held.collapsed > 0)
		parts.push(`${held.collapsed} fold${held.collapsed === 1 ? "" : "s"} (${readableBytes(held.sourceBytes)} out)`);
	if (pendingMarks > 0) parts.push(`${pendingMarks} mark${pendingMarks === 1 ? "" : "s"} pending`);
	return parts.join(" · ");
}

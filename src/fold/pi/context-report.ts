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
import { readableBytes } from "../../text/bytes.ts";
import { type FoldDetail, type StatusDetails, storeLine } from "../actions/status.ts";
import { briefWhat } from "../briefs/brief.ts";

export { readableBytes };

/** Folds the default report lists; older ones are counted (`/context tree` lists all). */
export const REPORT_FOLDS_LISTED = 20;
/** Characters of a brief shown under its fold in the list; `/context peek` shows it whole. */
export const REPORT_BRIEF_CHARS = 160;
/** Occupancy at which the report and the footer warn: the next request no longer fits the serving budget. */
export const OVER_BUDGET = 1;

export interface WindowFacts {
	/** Estimated tokens of the next request (system prompt and tools included). */
	tokens: number;
	/** Serving budget; undefined when no model is selected. */
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

/** The window line and, above the budget, the warning. */
function windowLines(input: Pick<ContextReportInput, "status" | "next" | "hostTokens" | "commands">): string[] {
	const { budget } = input.status;
	const share = occupancy(input.next);
	const source =
		budget.providerTotalWindow === undefined
			? "the model's window"
			: `provider total ${integer.format(budget.providerTotalWindow)} less ${integer.format(budget.outputReservation ?? 0)} for output`;
	const against =
		input.next.budget === undefined
			? "no model selected, so no serving budget"
			: `${percent(share ?? 0)} of the ${integer.format(input.next.budget)}-token serving budget (${source})`;
	const lines = [`Window for the next request: ~${integer.format(input.next.tokens)} tokens, ${against}.`];
	const pending = input.status.pendingEdits;
	if (input.hostTokens !== null && pending > 0)
		lines.push(
			`  Pi's reading of the last request was ~${integer.format(input.hostTokens)} tokens; ${pending} pending edit${pending === 1 ? "" : "s"} land${pending === 1 ? "s" : ""} with the next request.`,
		);
	if (share !== null && share > OVER_BUDGET)
		lines.push(
			`Warning: the next request is over the serving budget (${percent(share)}). Fold finished work (/${input.commands.fold}) or compact (/compact); pi-fold refuses a request that does not fit.`,
		);
	return lines;
}

function foldLine(fold: FoldDetail, input: ContextReportInput): string[] {
	const state = input.compacted.has(fold.id) ? "removed by a compaction" : fold.state;
	const indent = input.tree ? "  ".repeat(fold.depth + 1) : "  ";
	const head = `${indent}${fold.id}  ${fold.kind}, ${state}, ${fold.firstEntryId}…${fold.lastEntryId} (${fold.entryCount} entries, ${readableBytes(fold.sourceBytes)} → ${readableBytes(fold.briefBytes)} brief)`;
	const brief = input.briefs.get(fold.id);
	// The default list shows visible folds only; the tree shows every fold's line, nested ones too.
	if (!brief || (fold.state === "hidden" && !input.tree)) return [head];
	return [head, `${indent}  “${briefFirstLine(brief, fold.id, REPORT_BRIEF_CHARS)}”`];
}

/** The full `/context` report. */
export function formatContextReport(input: ContextReportInput): string {
	const { status } = input;
	const compactedCount = status.folds.filter((fold) => input.compacted.has(fold.id)).length;
	const held = heldOut(status, input.compacted);
	const marks = status.automatic.scheduling.pendingMarks;
	const lines = [
		`pi-fold context, session ${input.sessionId} (${integer.format(input.branchEntries)} entries on this branch)`,
		...windowLines(input),
	];
	const parts = [
		`${held.collapsed} collapsed, holding ${readableBytes(held.sourceBytes)} out of the window as ${readableBytes(held.briefBytes)} of briefs`,
		...(status.counts.expanded > 0 ? [`${status.counts.expanded} expanded`] : []),
		...(status.counts.hidden > 0 ? [`${status.counts.hidden} inside collapsed folds`] : []),
		...(compactedCount > 0 ? [`${compactedCount} removed by a compaction`] : []),
	];
	lines.push(status.counts.folds === 0 ? "Folds: none yet." : `Folds: ${status.counts.folds} (${parts.join("; ")}).`);
	const auto = status.automatic;
	lines.push(
		`Scheduling: ${auto.scheduling.mode}; ${marks.length} pending mark${marks.length === 1 ? "" : "s"}${marks.length > 0 ? ` (${marks.map((mark) => mark.id).join(", ")}), folded together at the next commit` : ""}; ${auto.commits} commit${auto.commits === 1 ? "" : "s"} this run.`,
	);
	if (auto.lastCommit) lines.push(`  Last ${auto.lastCommit.text}.`);
	if (status.counts.protectedEntries > 0) lines.push(`Protected entries: ${status.counts.protectedEntries}.`);
	const shown = status.folds.filter((fold) => input.tree || fold.state !== "hidden");
	const listed = input.tree ? shown : shown.slice(-REPORT_FOLDS_LISTED);
	if (listed.length > 0) {
		const more = shown.length - listed.length;
		lines.push(
			input.tree
				? "Fold tree, in transcript order:"
				: `Fold list, oldest first${more > 0 ? `, the newest ${listed.length} (${more} older: /${input.commands.status} tree)` : ""}:`,
		);
		for (const fold of listed) lines.push(...foldLine(fold, input));
	}
	const { instrument } = status;
	lines.push(
		storeLine(status.store),
		`Requests: ${instrument.requests} (${instrument.appends} appends, ${instrument.identical} identical, ${instrument.rewrites} rewrites, ${instrument.unattributed} unattributed).`,
	);
	if (status.skippedStateEntries > 0)
		lines.push(`Skipped ${status.skippedStateEntries} unreadable fold state entries.`);
	lines.push(contextHints(input.commands));
	return lines.join("\n");
}

/** The subcommands, as one hint line. */
export function contextHints(commands: { status: string; fold: string }): string {
	const c = `/${commands.status}`;
	return `More: ${c} peek <fold id> (brief and source) · ${c} search <text> · ${c} tree · ${c} window (entry ids) · /${commands.fold} [first id] [last id]`;
}

/** The line shown right after a fold: the window the next request will hold. */
export function formatAfterFold(next: WindowFacts, held: ReturnType<typeof heldOut>): string {
	const share = occupancy(next);
	const of = share === null ? "" : `, ${percent(share)} of the serving budget`;
	const warn = share !== null && share > OVER_BUDGET ? " Still over the serving budget." : "";
	return `Window for the next request: ~${integer.format(next.tokens)} tokens${of}; ${held.collapsed} collapsed fold${held.collapsed === 1 ? " holds" : "s hold"} ${readableBytes(held.sourceBytes)} out.${warn}`;
}

/** The footer status: occupancy, folds, bytes held out, pending marks. */
export function formatFooter(next: WindowFacts, held: ReturnType<typeof heldOut>, pendingMarks: number): string {
	const share = occupancy(next);
	const window =
		share === null || next.budget === undefined
			? `~${shortTokens(next.tokens)} tok`
			: `${share > OVER_BUDGET ? "⚠ " : ""}${Math.round(100 * share)}% of ${shortTokens(next.budget)}`;
	const parts = [`fold ${window}`];
	if (held.collapsed > 0)
		parts.push(`${held.collapsed} fold${held.collapsed === 1 ? "" : "s"} (${readableBytes(held.sourceBytes)} out)`);
	if (pendingMarks > 0) parts.push(`${pendingMarks} mark${pendingMarks === 1 ? "" : "s"} pending`);
	return parts.join(" · ");
}

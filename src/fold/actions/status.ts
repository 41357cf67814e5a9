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

import { formatSummarizerStatus, type SummarizerStatus } from "../briefs/summary-spans.ts";
import type { CommitSummary } from "../engine/commit.ts";
import type { InstrumentState } from "../engine/instrument.ts";
import { type FoldTreeRow, foldTree } from "../lattice/lattice-view.ts";
import type { FoldLattice } from "../lattice/records.ts";
import type { BranchView } from "../lattice/units.ts";
import type { FoldScheduling } from "../options.ts";
import { type BudgetFacts, PI_DEFAULT_RESERVE_TOKENS, servingBudget, type WindowReading } from "../policy/budget.ts";
import type { FoldState } from "../state/state.ts";
import type { PendingMark } from "../state/state-schema.ts";
import { type EvidenceFacts, formatEvidence } from "../store/evidence.ts";

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

export interface FoldDetail {
	id: string;
	kind: string;
	state: FoldTreeRow["state"];
	parent: string | null;
	depth: number;
	firstEntryId: string;
	lastEntryId: string;
	range: [number, number];
	entryCount: number;
	sourceBytes: number;
	briefBytes: number;
	sourceHash: string;
	/** Position in creation order (the lattice's order): higher is more recent. */
	created: number;
}

export interface StatusDetails {
	store: { kind: "file" | "memory"; location: string };
	budget: BudgetFacts & { servingBudget: number | undefined; occupancy: number | null };
	folds: FoldDetail[];
	counts: { folds: number; collapsed: number; expanded: number; hidden: number; protectedEntries: number };
	/** Context edits decided but not yet persisted (they land at the next turn boundary). */
	pendingEdits: number;
	instrument: Omit<InstrumentState, "digests" | "ownDigests" | "pendingCauses"> & { pendingCauses: readonly string[] };
	/** Digest of each message of the last request, in order. */
	digests: readonly string[];
	skippedStateEntries: number;
	automatic: AutomaticStatus;
	evidence?: EvidenceFacts;
	/** Model briefs: mode, cache, and what summary requests cost in this session file (set by the runtime). */
	summarizer?: SummarizerStatus;
	/** Present on tool results: which slice of the fold list `folds` holds. */
	foldsShown?: { offset: number; count: number; total: number };
}

/** What the runtime knows about its own folding, as the runtime hands it to status. */
export interface AutomaticFacts {
	scheduling: FoldScheduling;
	marks: readonly PendingMark[];
	/** The window as the next request will hold it; present when marks are pending. */
	reading: WindowReading | undefined;
	view: BranchView;
	lastCommit: CommitSummary | undefined;
	lastCommitText: string | undefined;
	/** Why the last boundary did not commit, when it did not. */
	declined: string | undefined;
	commits: number;
	cancelledCompactions: number;
	fenceRefusals: number;
}

export interface PendingMarkStatus {
	id: string;
	origin: PendingMark["origin"];
	/** Estimated share of the window committing this mark frees. */
	freedShare: number | null;
	/** Estimated already-sent tokens a commit of this mark alone would rewrite (from its first entry on). */
	prefixTokensRewritten: number | null;
}

export interface AutomaticStatus {
	scheduling: { mode: FoldScheduling; pendingMarks: PendingMarkStatus[] };
	lastCommit: (CommitSummary & { text: string }) | null;
	declined: string | null;
	commits: number;
	cancelledCompactions: number;
	fenceRefusals: number;
}

export interface StatusInput {
	lattice: FoldLattice;
	view: BranchView;
	state: FoldState;
	instrument: InstrumentState;
	budget: BudgetFacts;
	store: { kind: "file" | "memory"; location: string };
	pendingEdits: number;
	automatic: AutomaticFacts;
	evidence?: EvidenceFacts;
}

/** Pending marks with what committing each would free and rewrite. */
function pendingMarkStatus(facts: AutomaticFacts): PendingMarkStatus[] {
	const { reading, view } = facts;
	return facts.marks.map((mark) => {
		const ids = new Set(mark.record.parts.flatMap((part) => (part.type === "entry" ? [part.entryId] : [])));
		if (!reading || reading.total === 0)
			return { id: mark.record.id, origin: mark.origin, freedShare: null, prefixTokensRewritten: null };
		let first = -1;
		let freed = 0;
		let after = 0;
		view.entries.forEach((entry, index) => {
			const tokens = reading.entryTokens.get(entry.id) ?? 0;
			if (ids.has(entry.id)) {
				if (first === -1) first = index;
				freed += tokens;
			}
			if (first !== -1) after += tokens;
		});
		return {
			id: mark.record.id,
			origin: mark.origin,
			freedShare: freed / reading.total,
			prefixTokensRewritten: first === -1 ? null : after - freed,
		};
	});
}

function automaticStatus(facts: AutomaticFacts): AutomaticStatus {
	return {
		scheduling: { mode: facts.scheduling, pendingMarks: pendingMarkStatus(facts) },
		lastCommit: facts.lastCommit ? { ...facts.lastCommit, text: facts.lastCommitText ?? "" } : null,
		declined: facts.declined ?? null,
		commits: facts.commits,
		cancelledCompactions: facts.cancelledCompactions,
		fenceRefusals: facts.fenceRefusals,
	};
}

export function statusDetails(input: StatusInput): StatusDetails {
	const rows = foldTree(input.lattice, input.view, new Set(input.state.data.expanded));
	const created = new Map([...input.lattice.folds.keys()].map((id, index) => [id, index]));
	const folds = rows.map((row) => ({
		id: row.id,
		kind: row.kind,
		state: row.state,
		parent: row.parentId,
		depth: row.depth,
		firstEntryId: row.firstEntryId,
		lastEntryId: row.lastEntryId,
		range: [row.start, row.end] as [number, number],
		entryCount: row.entryCount,
		sourceBytes: row.sourceBytes,
		briefBytes: row.briefBytes,
		sourceHash: input.lattice.folds.get(row.id)?.sourceHash ?? "",
		created: created.get(row.id) ?? 0,
	}));
	const budget = servingBudget(input.budget);
	const count = (state: FoldTreeRow["state"]) => rows.filter((row) => row.state === state).length;
	const { digests, ownDigests: _own, ...instrument } = input.instrument;
	return {
		store: input.store,
		budget: {
			...input.budget,
			servingBudget: budget,
			occupancy: input.budget.tokens !== null && budget ? input.budget.tokens / budget : null,
		},
		folds,
		counts: {
			folds: rows.length,
			collapsed: count("collapsed"),
			expanded: count("expanded"),
			hidden: count("hidden"),
			protectedEntries: input.state.data.protected.length,
		},
		pendingEdits: input.pendingEdits,
		instrument,
		digests,
		skippedStateEntries: input.state.skipped,
		automatic: automaticStatus(input.automatic),
		...(input.evidence ? { evidence: input.evidence } : {}),
	};
}

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

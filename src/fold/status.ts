/**
 * The `status` action and `/context`: occupancy of the serving budget, the
 * fold index, and the append-only instrument's counts. Pure formatting over
 * a snapshot; `details` carries the same facts structured for tools and UIs.
 */

import type { InstrumentState } from "./instrument.ts";
import { type FoldTreeRow, foldTree } from "./lattice-view.ts";
import type { FoldLattice } from "./records.ts";
import type { FoldState } from "./state.ts";
import type { BranchView } from "./units.ts";

/** Rewrite events shown in status text. */
export const STATUS_REWRITE_EVENTS = 5;

export interface BudgetFacts {
	/** Estimated tokens of the current window (Pi's reading when it has one). */
	tokens: number | null;
	/** The transport's per-request max-input descriptor (model.contextWindow). */
	descriptor: number | undefined;
	/** `providerTotalWindow` when configured. */
	providerTotalWindow: number | undefined;
	/** Output tokens reserved per request (model.maxTokens). */
	outputReservation: number | undefined;
}

/** Serving budget: the total window less the output reservation, or the descriptor when no total is known. */
export function servingBudget(facts: BudgetFacts): number | undefined {
	if (facts.providerTotalWindow !== undefined) return facts.providerTotalWindow - (facts.outputReservation ?? 0);
	return facts.descriptor;
}

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
}

export interface StatusDetails {
	store: { kind: "file" | "memory"; location: string };
	budget: BudgetFacts & { servingBudget: number | undefined; occupancy: number | null };
	folds: FoldDetail[];
	counts: { folds: number; collapsed: number; expanded: number; hidden: number; protectedEntries: number };
	/** Context edits decided but not yet persisted (they land at the next turn boundary). */
	pendingEdits: number;
	instrument: Omit<InstrumentState, "digests" | "pendingCauses"> & { pendingCauses: readonly string[] };
	/** Digest of each message of the last request, in order. */
	digests: readonly string[];
	skippedStateEntries: number;
}

export interface StatusInput {
	lattice: FoldLattice;
	view: BranchView;
	state: FoldState;
	instrument: InstrumentState;
	budget: BudgetFacts;
	store: { kind: "file" | "memory"; location: string };
	pendingEdits: number;
}

export function statusDetails(input: StatusInput): StatusDetails {
	const rows = foldTree(input.lattice, input.view, new Set(input.state.data.expanded));
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
	}));
	const budget = servingBudget(input.budget);
	const count = (state: FoldTreeRow["state"]) => rows.filter((row) => row.state === state).length;
	const { digests, ...instrument } = input.instrument;
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
	};
}

const integer = new Intl.NumberFormat("en-US");
const num = (value: number | undefined | null) =>
	value === undefined || value === null ? "unknown" : integer.format(value);

/** Human- and model-readable status text. */
export function formatStatus(details: StatusDetails, options: { tree: boolean; toolName: string }): string {
	const { budget, counts, instrument } = details;
	const occupancy = budget.occupancy === null ? "unknown" : `${(100 * budget.occupancy).toFixed(1)}%`;
	const lines = [
		`Window: ~${num(budget.tokens)} tokens, ${occupancy} of the serving budget ${num(budget.servingBudget)} (descriptor ${num(budget.descriptor)}${budget.providerTotalWindow === undefined ? "" : `, provider total ${num(budget.providerTotalWindow)} less ${num(budget.outputReservation)} output`}).`,
		`Folds: ${counts.folds} (${counts.collapsed} collapsed, ${counts.expanded} expanded, ${counts.hidden} inside collapsed folds); ${counts.protectedEntries} protected entries; ${details.pendingEdits} edits pending for the next turn boundary.`,
		`Store: ${details.store.kind === "memory" ? "in memory (this session has no file; sources are lost when Pi exits)" : details.store.location}.`,
		`Requests: ${instrument.requests} (${instrument.appends} appends, ${instrument.identical} identical, ${instrument.rewrites} rewrites, ${instrument.unattributed} unattributed). Provider cache misses: ${instrument.cacheMissesProviderSide} on unrewritten windows, ${instrument.cacheMissesAfterRewrite} after rewrites.`,
	];
	for (const event of instrument.history.slice(-STATUS_REWRITE_EVENTS)) {
		lines.push(
			`  rewrite at request ${event.request}: first change at message ${event.firstDivergentIndex} (${event.causes.join(", ") || "UNATTRIBUTED"})`,
		);
	}
	if (details.skippedStateEntries > 0)
		lines.push(`Skipped ${details.skippedStateEntries} unreadable fold state entries.`);
	const visible = details.folds.filter((fold) => options.tree || fold.state !== "hidden");
	if (visible.length > 0) {
		lines.push(options.tree ? "Fold tree (transcript order):" : "Top folds:");
		for (const fold of visible) {
			const indent = "  ".repeat(fold.depth + 1);
			const parent = fold.parent ? ` parent ${fold.parent}` : "";
			lines.push(
				`${indent}${fold.id} ${fold.kind} ${fold.state} ${fold.firstEntryId}…${fold.lastEntryId} (${fold.entryCount} entries, ${integer.format(fold.sourceBytes)} → ${integer.format(fold.briefBytes)} bytes)${parent}`,
			);
		}
	}
	lines.push(
		`Peek: ${options.toolName} {"action":"peek","id":"<fold id>"}. Tree: ${options.toolName} {"action":"status","detail":"tree"}.`,
	);
	return lines.join("\n");
}

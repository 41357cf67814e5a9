/**
 * The `status` action and `/context`: occupancy of the serving budget, the
 * fold index, and the append-only instrument's counts. Pure formatting over
 * a snapshot; `details` carries the same facts structured for tools and UIs.
 */

import type { CommitSummary } from "./commit.ts";
import type { InstrumentState } from "./instrument.ts";
import { type FoldTreeRow, foldTree } from "./lattice-view.ts";
import type { FoldScheduling } from "./options.ts";
import { type BudgetFacts, servingBudget, type WindowReading } from "./policy/budget.ts";
import type { FoldLattice } from "./records.ts";
import type { FoldState, PendingMark } from "./state.ts";
import type { BranchView } from "./units.ts";

/** Rewrite events shown in status text. */
export const STATUS_REWRITE_EVENTS = 5;

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
	automatic: AutomaticStatus;
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
		automatic: automaticStatus(input.automatic),
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
	const auto = details.automatic;
	lines.push(
		`Automatic: ${auto.scheduling.mode} scheduling; ${auto.commits} commits this run${auto.cancelledCompactions > 0 ? `, ${auto.cancelledCompactions} Pi threshold compactions cancelled for lossless folds` : ""}${auto.fenceRefusals > 0 ? `, ${auto.fenceRefusals} over-budget requests refused` : ""}.`,
	);
	if (auto.lastCommit) lines.push(`  last ${auto.lastCommit.text}.`);
	if (auto.declined) lines.push(`  no commit at the last boundary: ${auto.declined}.`);
	if (auto.scheduling.pendingMarks.length > 0) {
		lines.push(`  pending marks (${auto.scheduling.pendingMarks.length}):`);
		for (const mark of auto.scheduling.pendingMarks) {
			const share = mark.freedShare === null ? "unknown" : `${(100 * mark.freedShare).toFixed(1)}%`;
			lines.push(
				`    ${mark.id} (${mark.origin}): frees ~${share} of the window, rewrites ~${num(mark.prefixTokensRewritten)} tokens`,
			);
		}
	}
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

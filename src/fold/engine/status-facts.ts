/**
 * Status facts: what the engine knows about its folds, its budget, its
 * instrument and its automatic commits, structured for the `status` action,
 * `/context`, tools and UIs. Pure: the engine hands over a snapshot
 * (`StatusInput`); the text the model and the person read is written above
 * the engine (src/fold/actions/status.ts, src/fold/pi/context-report.ts).
 */

import { type FoldTreeRow, foldTree } from "../lattice/lattice-view.ts";
import type { FoldLattice } from "../lattice/records.ts";
import type { BranchView } from "../lattice/units.ts";
import type { FoldScheduling } from "../options.ts";
import { type BudgetFacts, servingBudget, type WindowReading } from "../policy/budget.ts";
import type { FoldState } from "../state/state.ts";
import type { PendingMark } from "../state/state-schema.ts";
import type { EvidenceFacts } from "../store/evidence.ts";
import type { SummarizerStatus } from "../summarizer/summary-spans.ts";
import type { CommitSummary } from "./commit.ts";
import type { InstrumentState } from "./instrument.ts";

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

/**
 * Folded branches for the runtime benchmark: a generated session
 * (bench/generate.ts) in the shape the ladder leaves a long session in, with
 * the fold state's persisted entries and the `context_edit`s that show it.
 *
 * Shape: every completed tool batch and closed chapter folded (tool batches
 * nest inside their chapter), then all chapter folds but the newest
 * `RECENT_ROOTS` consolidated into one fold: the ladder consolidates the
 * oldest adjacent run whenever more than `MAX_VISIBLE_FOLDS` are visible, so
 * a long session settles at one large consolidation plus a few recent folds.
 * The newest `RAW_TAIL_CHAPTERS` turns stay raw (the fresh tail and what has
 * not paid for a commit yet). The drafts are the engine's own, persisted as
 * a boundary would.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { appendSink } from "../../src/cost/fold-replay.ts";
import { FoldEngine } from "../../src/fold/engine/engine.ts";
import { consolidateFolds, createFold } from "../../src/fold/lattice/lattice.ts";
import { MIN_CHAPTER_UNITS } from "../../src/fold/lattice/lattice-rules.ts";
import { emptyLattice, type FoldLattice, type FoldRecord, isRefusal } from "../../src/fold/lattice/records.ts";
import { analyzeBranch, type BranchView, closedChapters } from "../../src/fold/lattice/units.ts";
import type { ResolvedOptions } from "../../src/fold/options.ts";
import { MAX_VISIBLE_FOLDS } from "../../src/fold/policy/ladder.ts";
import { emptyFoldState, persistChange } from "../../src/fold/state/state.ts";
import { canonicalJson } from "../../src/session/canonical.ts";
import { generateSession } from "../generate.ts";

/** Chapter folds left beside the consolidation: one fewer than makes consolidation eligible again. */
export const RECENT_ROOTS = MAX_VISIBLE_FOLDS - 1;
/** Newest closed chapters left unfolded: more than the ladder's 8,192-token fresh tail holds, so a forced commit has batches to fold. */
export const RAW_TAIL_CHAPTERS = 12;

export interface FoldedFixture {
	/** Generated entries plus the persisted custom entries and context edits. */
	branch: SessionEntry[];
	generatedEntries: number;
	/** Canonical JSONL bytes of the generated entries. */
	bytes: number;
	folds: number;
	/** Collapsed folds whose brief shows. */
	visibleFolds: number;
}

/**
 * Fold every completed tool batch, then every closed chapter (batches nest
 * inside), among the spans that end at or before entry index `before`.
 */
export function foldEverything(view: BranchView, before = view.entries.length): FoldLattice {
	let lattice = emptyLattice();
	const spans = [
		...view.units
			.filter((unit) => unit.kind === "tool-batch" && unit.completed)
			.map((unit) => ({ ...unit, kind: "tool-batch" as const })),
		...closedChapters(view, MIN_CHAPTER_UNITS).map((chapter) => ({ ...chapter, kind: "chapter" as const })),
	].filter((span) => span.end <= before);
	for (const span of spans) {
		const first = view.entries[span.start]?.id ?? "";
		const last = view.entries[span.end - 1]?.id ?? "";
		const made = createFold(lattice, view, { kind: span.kind, first, last }, { origin: "ladder" });
		if (!isRefusal(made)) lattice = made.lattice;
	}
	return lattice;
}

/** Fold a generated session of `entries` entries into the ladder's long-session shape. */
export function foldedFixture(entries: number, options: ResolvedOptions, cwd = "/project"): FoldedFixture {
	const raw = generateSession(entries);
	const view = analyzeBranch(raw, { readOnlyTools: options.readOnlyTools });
	const chapters = closedChapters(view, MIN_CHAPTER_UNITS);
	const cut = chapters.at(-RAW_TAIL_CHAPTERS - 1)?.end ?? 0;
	let lattice: FoldLattice = foldEverything(view, cut);
	const roots = chapters
		.filter((chapter) => chapter.end <= cut)
		.map((chapter) =>
			[...lattice.folds.values()].find((fold) => fold.kind === "chapter" && startsAt(fold, raw, chapter.start)),
		)
		.flatMap((fold) => (fold ? [fold.id] : []));
	const consolidated = roots.slice(0, Math.max(0, roots.length - RECENT_ROOTS));
	if (consolidated.length >= 2) {
		const made = consolidateFolds(lattice, view, consolidated, { origin: "ladder", cwd });
		if (isRefusal(made)) throw new Error(`runtime fixture: consolidation refused: ${made.message}`);
		lattice = made.lattice;
	}
	const state = persistChange(emptyFoldState(), options.entryTypePrefix, [...lattice.folds.values()], []);
	const sink = appendSink();
	const withState = [...raw, ...sink.persist(state.entries, [], raw.at(-1))];
	const engine = new FoldEngine(options);
	engine.reset(withState);
	const branch = [...withState, ...sink.persist([], engine.pendingDrafts(), withState.at(-1))];
	engine.reset(branch);
	const bytes = raw.reduce((sum, entry) => sum + Buffer.byteLength(canonicalJson(entry)) + 1, 0);
	const children = new Set(
		[...lattice.folds.values()].flatMap((fold) =>
			fold.parts.flatMap((part) => (part.type === "fold" ? [part.foldId] : [])),
		),
	);
	return {
		branch,
		generatedEntries: raw.length,
		bytes,
		folds: lattice.folds.size,
		visibleFolds: [...lattice.folds.keys()].filter((id) => !children.has(id)).length,
	};
}

function startsAt(fold: FoldRecord, raw: readonly SessionEntry[], start: number): boolean {
	const first = fold.parts[0];
	return first?.type === "entry" && first.entryId === raw[start]?.id;
}

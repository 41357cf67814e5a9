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
import {
	emptyLattice,
	type FoldLattice,
	type FoldRecord,
	isRefusal,
	leafEntryIds,
	sourcePieces,
} from "../../src/fold/lattice/records.ts";
import { analyzeBranch, type BranchView, closedChapters } from "../../src/fold/lattice/units.ts";
import type { ResolvedOptions } from "../../src/fold/options.ts";
import { MAX_VISIBLE_FOLDS } from "../../src/fold/policy/ladder.ts";
import { emptyFoldState, persistChange } from "../../src/fold/state/state.ts";
import { type FoldStore, putFoldSource } from "../../src/fold/store/store.ts";
import { canonicalJson, canonicalPieces } from "../../src/session/canonical.ts";
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
	/**
	 * Store every fold's source as the runtime does (children first; a fold
	 * with children as a part list over theirs), so a resumed session finds
	 * the store a real one has. Returns the bytes written.
	 */
	writeStore(store: FoldStore): Promise<number>;
}

/**
 * Fold every completed tool batch, then every closed chapter (batches nest
 * inside), among the spans that end at or before entry index `before`.
 *
 * The lattice is what creating those folds one by one on one growing lattice
 * gives (batches in order, then chapters in order), built a chapter at a
 * time: each chapter's batches and the chapter itself are planned on a
 * lattice holding only that chapter's folds, and the records are joined in
 * the one-by-one order at the end. Planning a fold reads only the folds its
 * span touches, and chapters are disjoint runs of whole units (a batch is one
 * unit, so it lies inside one chapter or outside all), so every record comes
 * out the same. Growing one lattice by thousands of folds costs time and
 * memory with the square of the count (each grown lattice keeps the one it
 * grew from and the index built on it), which is what kept the runtime
 * fixtures from reaching 50,000 entries. A fold id is the only thing that
 * reads every fold (`deriveFoldId` lengthens an id another fold holds), so a
 * repeated id fails the build instead of giving a different lattice.
 */
export function foldEverything(view: BranchView, before = view.entries.length): FoldLattice {
	const batches = view.units.filter((unit) => unit.kind === "tool-batch" && unit.completed && unit.end <= before);
	const chapters = closedChapters(view, MIN_CHAPTER_UNITS).filter((chapter) => chapter.end <= before);
	const batchRecords: (FoldRecord | undefined)[] = [];
	const chapterRecords: (FoldRecord | undefined)[] = [];
	const fold = (lattice: FoldLattice, span: { start: number; end: number }, kind: "tool-batch" | "chapter") => {
		const first = view.entries[span.start]?.id ?? "";
		const last = view.entries[span.end - 1]?.id ?? "";
		const made = createFold(lattice, view, { kind, first, last }, { origin: "ladder" });
		return isRefusal(made) ? { lattice, record: undefined } : { lattice: made.lattice, record: made.record };
	};
	let next = 0;
	for (const chapter of chapters) {
		for (; next < batches.length && (batches[next]?.start ?? 0) < chapter.start; next++) {
			const batch = batches[next];
			if (batch) batchRecords.push(fold(emptyLattice(), batch, "tool-batch").record);
		}
		let lattice = emptyLattice();
		for (; next < batches.length && (batches[next]?.end ?? 0) <= chapter.end; next++) {
			const batch = batches[next];
			if (!batch) continue;
			const made = fold(lattice, batch, "tool-batch");
			lattice = made.lattice;
			batchRecords.push(made.record);
		}
		chapterRecords.push(fold(lattice, chapter, "chapter").record);
	}
	for (; next < batches.length; next++) {
		const batch = batches[next];
		if (batch) batchRecords.push(fold(emptyLattice(), batch, "tool-batch").record);
	}
	const folds = new Map<string, FoldRecord>();
	for (const record of [...batchRecords, ...chapterRecords]) {
		if (!record) continue;
		if (folds.has(record.id)) throw new Error(`runtime fixture: two folds share the id ${record.id}`);
		folds.set(record.id, record);
	}
	return { folds };
}

/** Fold a generated session of `entries` entries into the ladder's long-session shape. */
export function foldedFixture(entries: number, options: ResolvedOptions, cwd = "/project"): FoldedFixture {
	const raw = generateSession(entries);
	const view = analyzeBranch(raw, { readOnlyTools: options.readOnlyTools });
	const chapters = closedChapters(view, MIN_CHAPTER_UNITS);
	const cut = chapters.at(-RAW_TAIL_CHAPTERS - 1)?.end ?? 0;
	let lattice: FoldLattice = foldEverything(view, cut);
	// The first chapter fold (in lattice order) starting at each entry: one pass, not one search per chapter.
	const chapterFoldAt = new Map<string, string>();
	for (const fold of lattice.folds.values()) {
		const first = fold.parts[0];
		if (fold.kind === "chapter" && first?.type === "entry" && !chapterFoldAt.has(first.entryId))
			chapterFoldAt.set(first.entryId, fold.id);
	}
	const roots = chapters
		.filter((chapter) => chapter.end <= cut)
		.flatMap((chapter) => {
			const id = chapterFoldAt.get(raw[chapter.start]?.id ?? "");
			return id === undefined ? [] : [id];
		});
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
	const folded = lattice;
	const writeStore = async (store: FoldStore): Promise<number> => {
		let written = 0;
		const entryAt = (id: string) => raw[view.indexById.get(id) ?? -1];
		const leaves = (id: string) => {
			const ids = leafEntryIds(folded, id);
			return isRefusal(ids) ? undefined : ids.map((leaf) => entryAt(leaf) as SessionEntry);
		};
		for (const record of folded.folds.values()) {
			const pieces = sourcePieces(record.parts, leaves, entryAt);
			if (!pieces) throw new Error(`runtime fixture: fold ${record.id} does not resolve`);
			const { bytes: source, cuts } = canonicalPieces(pieces);
			written += (await putFoldSource(store, record.sourceHash, { source, sourceCuts: cuts })).written;
		}
		return written;
	};
	return {
		branch,
		generatedEntries: raw.length,
		bytes,
		folds: lattice.folds.size,
		visibleFolds: [...lattice.folds.keys()].filter((id) => !children.has(id)).length,
		writeStore,
	};
}

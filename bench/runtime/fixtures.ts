/**
 * Folded branches for the runtime benchmark: a generated session
 * (bench/generate.ts) in the shape the ladder leaves a long session in, with
 * the fold state and its persisted entries, and the shell primed as the
 * runtime holds it after a session start and one request.
 *
 * Shape: every completed tool batch and closed chapter folded (tool batches
 * nest inside their chapter), then all chapter folds but the newest
 * `RECENT_ROOTS` consolidated into one fold: the ladder consolidates the
 * oldest adjacent run whenever more than `MAX_VISIBLE_FOLDS` are visible, so
 * a long session settles at one large consolidation plus a few recent folds.
 * The newest `RAW_TAIL_CHAPTERS` turns stay raw (the fresh tail and what has
 * not paid for a commit yet). Every fold's `context_edit` drafts and custom
 * state entries are appended, as the boundaries would have persisted them.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import {
	appendLinked,
	contextHook,
	type HostFacts,
	pendingDrafts,
	type ShellState,
	shellWith,
} from "../../src/cost/fold-shell.ts";
import { consolidateFolds } from "../../src/fold/lattice/lattice.ts";
import { MIN_CHAPTER_UNITS } from "../../src/fold/lattice/lattice-rules.ts";
import { type FoldLattice, type FoldRecord, isRefusal } from "../../src/fold/lattice/records.ts";
import { analyzeBranch, closedChapters } from "../../src/fold/lattice/units.ts";
import type { ResolvedOptions } from "../../src/fold/options.ts";
import { MAX_VISIBLE_FOLDS } from "../../src/fold/policy/ladder.ts";
import { emptyFoldState, persistChange } from "../../src/fold/state/state.ts";
import { canonicalJson } from "../../src/session/canonical.ts";
import { generateSession } from "../generate.ts";
import { foldEverything } from "../suites/fold.ts";

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
	/** The shell after session start and one observed request. */
	shell: ShellState;
}

/** Fold a generated session of `entries` entries into the ladder's long-session shape. */
export function foldedFixture(entries: number, options: ResolvedOptions, host: HostFacts): FoldedFixture {
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
		const made = consolidateFolds(lattice, view, consolidated, { origin: "ladder", cwd: host.cwd });
		if (isRefusal(made)) throw new Error(`runtime fixture: consolidation refused: ${made.message}`);
		lattice = made.lattice;
	}
	const state = persistChange(emptyFoldState(), options.entryTypePrefix, [...lattice.folds.values()], []);
	let shell = shellWith(state.state);
	const custom = state.entries.map((entry) => ({ type: "custom", customType: entry.customType, data: entry.data }));
	let branch = appendLinked(raw, custom);
	branch = appendLinked(
		branch,
		pendingDrafts(branch, shell, options).map((draft) => ({ ...draft })),
	);
	shell = contextHook(branch, shell, options, host).shell;
	const bytes = raw.reduce((sum, entry) => sum + Buffer.byteLength(canonicalJson(entry)) + 1, 0);
	return {
		branch,
		generatedEntries: raw.length,
		bytes,
		folds: shell.lattice.folds.size,
		visibleFolds: shell.fold.records.length === 0 ? 0 : countVisible(shell),
		shell,
	};
}

function startsAt(fold: FoldRecord, raw: readonly SessionEntry[], start: number): boolean {
	const first = fold.parts[0];
	return first?.type === "entry" && first.entryId === raw[start]?.id;
}

function countVisible(shell: ShellState): number {
	const children = new Set<string>();
	for (const record of shell.lattice.folds.values())
		for (const part of record.parts) if (part.type === "fold") children.add(part.foldId);
	return [...shell.lattice.folds.keys()].filter((id) => !children.has(id)).length;
}

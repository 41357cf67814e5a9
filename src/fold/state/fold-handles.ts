/**
 * The compaction summary's line naming the folds inside the range it
 * summarizes. Pi drops those entries from the window, but every fold over
 * them still serves its exact source, so the summary says which handles to
 * peek.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { boundedList } from "../briefs/brief.ts";
import { indexLattice } from "../lattice/lattice-index.ts";
import { analyzeBranch } from "../lattice/units.ts";
import { liveLattice, rebuildState } from "./state.ts";

/** Characters of fold ids the line lists before it counts the rest. */
export const FOLDS_NOTE_LIST_CHARS = 400;

/**
 * "Folds in this range keep their exact source one peek away (e.g. …): f-…,
 * f-… (+n more)", top-level
 * folds only (a peek of one names its children), or undefined when the
 * summarized entries hold none.
 */
export function foldsNote(summarized: readonly SessionEntry[], prefix: string, toolName: string): string | undefined {
	const state = rebuildState(summarized, prefix);
	if (state.records.length === 0) return undefined;
	const lattice = liveLattice(state);
	const index = indexLattice(lattice, analyzeBranch(summarized));
	const roots = index.ordered.filter((fold) => fold.parentId === undefined).map((fold) => fold.id);
	if (roots.length === 0) return undefined;
	const list = boundedList(roots, ", ", FOLDS_NOTE_LIST_CHARS);
	const example = `${toolName} ${JSON.stringify({ action: "peek", id: roots[0] })}`;
	return `Folds in this range keep their exact source one peek away (e.g. ${example}): ${list}.`;
}

/**
 * What pi-fold did in a recorded session, read back from the log alone: the
 * fold state its custom entries rebuild (`<prefix>:fold`, `:delta`,
 * `:checkpoint`), the `:commit` summaries of the ladder, the `context_edit`
 * entries that carried folds into the window, and which engine wrote each
 * compaction. Pure over the session's entries; the store's size on disk is
 * measured by the CLI shell and passed in.
 */

import type { SessionEntry, SessionProjection } from "@earendil-works/pi-coding-agent";
import { parseCompactionDetails } from "../compaction/records/details.ts";
import type { CommitSummary } from "../fold/engine/commit.ts";
import { parentMap } from "../fold/lattice/records.ts";
import { DEFAULT_ENTRY_TYPE_PREFIX } from "../fold/options.ts";
import { liveLattice, rebuildState, stateEntryTypes } from "../fold/state/state.ts";
import {
	SUMMARIZER_ENTRY_SUFFIX,
	type SummarizerUsage,
	summarizerUsage,
} from "../fold/summarizer/summarizer-prompt.ts";

/** Suffix of the custom entry a ladder commit writes (src/fold/commit.ts). */
export const COMMIT_ENTRY_SUFFIX = ":commit";

export interface FoldActivity {
	/** True when the branch holds any pi-fold entry under the default prefix. */
	present: boolean;
	/** Fold records on the active branch, and those dissolved by reboundary. */
	folds: number;
	dissolved: number;
	/** Folds shown as briefs now (not expanded, every ancestor expanded) whose source is still in Pi's window. */
	collapsedInWindow: number;
	/** UTF-8 bytes those folds hold out of the window (source minus brief). */
	heldOutBytes: number;
	/** Exact source bytes of every fold (what the store keeps, before deduplication). */
	sourceBytes: number;
	/** Ladder commits on the branch, by reason, and the tokens they freed. */
	commits: number;
	/** Commit entries whose summary could not be read (counted in `commits`, not in the reasons). */
	unreadableCommits: number;
	commitReasons: Record<string, number>;
	freedTokens: number;
	/** Entry ids of the commit entries, in order (the chart marks them). */
	commitEntryIds: string[];
	/** `context_edit` entries in the whole file (any writer). */
	contextEdits: number;
	/** Compactions in the file: by pi-fold's deterministic compactor ("fabric" details) or by Pi's summarizer. */
	compactions: { deterministic: number; pi: number };
	/** Persisted fold entries the rebuild skipped as unreadable. */
	skipped: number;
	/** Model brief requests in the whole file (`<prefix>:summarizer`), with their tokens and cost. */
	summarizer: SummarizerUsage;
}

/** Read what pi-fold did from the file's entries and the active branch with its projection. */
export function foldActivity(
	entries: readonly SessionEntry[],
	branch: readonly SessionEntry[],
	projection: SessionProjection,
	prefix: string = DEFAULT_ENTRY_TYPE_PREFIX,
): FoldActivity {
	const types = stateEntryTypes(prefix);
	const commitType = `${prefix}${COMMIT_ENTRY_SUFFIX}`;
	const summarizerType = `${prefix}${SUMMARIZER_ENTRY_SUFFIX}`;
	const ownTypes = new Set<string>([types.fold, types.delta, types.checkpoint, commitType, summarizerType]);
	const state = rebuildState(branch, prefix);
	const lattice = liveLattice(state);
	const parents = parentMap(lattice);
	const expanded = new Set(state.data.expanded);
	const inWindow = new Set(projection.entries.map((entry) => entry.sourceEntry.id));
	let collapsedInWindow = 0;
	let heldOutBytes = 0;
	let sourceBytes = 0;
	for (const record of state.records) sourceBytes += record.sizes.sourceBytes;
	for (const record of lattice.folds.values()) {
		if (expanded.has(record.id) || !ancestorsExpanded(record.id, parents, expanded)) continue;
		if (!foldReachesWindow(record.id, lattice, inWindow)) continue;
		collapsedInWindow++;
		heldOutBytes += Math.max(0, record.sizes.sourceBytes - record.sizes.briefBytes);
	}
	const activity: FoldActivity = {
		present: false,
		folds: state.records.length,
		dissolved: state.data.dissolved.length,
		collapsedInWindow,
		heldOutBytes,
		sourceBytes,
		commits: 0,
		unreadableCommits: 0,
		commitReasons: {},
		freedTokens: 0,
		commitEntryIds: [],
		contextEdits: 0,
		compactions: { deterministic: 0, pi: 0 },
		skipped: state.skipped,
		summarizer: summarizerUsage(entries, prefix),
	};
	for (const entry of branch) {
		if (entry.type !== "custom" || entry.customType !== commitType) continue;
		activity.commits++;
		activity.commitEntryIds.push(entry.id);
		const summary = commitSummaryOf(entry.data);
		if (!summary) {
			activity.unreadableCommits++;
			continue;
		}
		activity.commitReasons[summary.reason] = (activity.commitReasons[summary.reason] ?? 0) + 1;
		activity.freedTokens += summary.freedTokens;
	}
	for (const entry of entries) {
		if (entry.type === "custom" && ownTypes.has(entry.customType)) activity.present = true;
		else if (entry.type === "context_edit") activity.contextEdits++;
		else if (entry.type === "compaction") {
			if (parseCompactionDetails(entry.details).ok) activity.compactions.deterministic++;
			else activity.compactions.pi++;
		}
	}
	return activity;
}

/**
 * The summary of a `<prefix>:commit` entry as the runtime writes it
 * (`persistChange` in fold/state.ts: `{v, records, ops, summary}`), or
 * undefined when it is not one.
 */
export function commitSummaryOf(data: unknown): Pick<CommitSummary, "reason" | "freedTokens"> | undefined {
	if (typeof data !== "object" || data === null) return undefined;
	const summary = (data as { summary?: unknown }).summary;
	if (typeof summary !== "object" || summary === null) return undefined;
	const { reason, freedTokens } = summary as Partial<CommitSummary>;
	if (typeof reason !== "string" || typeof freedTokens !== "number" || !Number.isFinite(freedTokens)) return undefined;
	return { reason, freedTokens };
}

function ancestorsExpanded(id: string, parents: ReadonlyMap<string, string>, expanded: ReadonlySet<string>): boolean {
	const seen = new Set<string>();
	for (let parent = parents.get(id); parent !== undefined; parent = parents.get(parent)) {
		if (seen.has(parent) || !expanded.has(parent)) return false;
		seen.add(parent);
	}
	return true;
}

/** A fold is still in Pi's window when any of its leaf entries is (a compaction may have dropped it). */
function foldReachesWindow(
	id: string,
	lattice: ReturnType<typeof liveLattice>,
	inWindow: ReadonlySet<string>,
	depth = 0,
): boolean {
	const record = lattice.folds.get(id);
	if (!record || depth > lattice.folds.size) return false;
	return record.parts.some((part) =>
		part.type === "entry" ? inWindow.has(part.entryId) : foldReachesWindow(part.foldId, lattice, inWindow, depth + 1),
	);
}

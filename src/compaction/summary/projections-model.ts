/**
 * Projection model shared by rendering and QA: one-line view items, view
 * blocks, projection limits, and deterministic earliest-plus-latest sampling.
 *
 * Sampling keeps the earliest and latest items and omits one contiguous
 * middle run (or, for the transcript, the oldest run), so every omission is a
 * count plus a first..last source entry-id range.
 */

/** Projection limits (items per collection). */
export const HISTORICAL_REQUEST_LIMIT = 24;
export const FILE_LIMIT_PER_KIND = 24;
export const OPERATION_STATE_LIMIT = 32;
export const FABRIC_ACTIVITY_LIMIT = 48;
export const EARLIER_TURN_LIMIT = 32;
export const TRANSCRIPT_EVENT_LIMIT = 40;

/** Omission counters, keyed as the details record names them (`goal` is the historical-request key). */
export type OmissionKey =
	| "goal"
	| "filesCreated"
	| "filesWritten"
	| "filesModified"
	| "filesRead"
	| "operations"
	| "activity"
	| "turns"
	| "transcript"
	| "annotations"
	| "status"
	| "plan"
	| "work"
	| "decisions";

export type BlockKey =
	| "plan"
	| "work"
	| "decisions"
	| "historical"
	| "files"
	| "activity"
	| "outstanding"
	| "turns"
	| "status"
	| "annotations"
	| "transcript";

/** `earliest-latest`: keep both ends; `latest`: keep the newest; `all`: never sampled. */
export type SampleMode = "earliest-latest" | "latest" | "all";

/** One rendered line: `- ` + lead + (shrinkable) text + trail. */
export interface ViewItem {
	/** Supplied-branch entry id of the item, used for omission ranges. */
	entryId: string;
	/** Fixed start; carries the `@address`. */
	lead: string;
	/** Shrinkable middle. */
	text: string;
	/** Fixed end. */
	trail: string;
	/** Which end of `text` survives shrinking. */
	keep: "start" | "end";
	/** Required text keeps at least `MIN_TEXT_BYTES`; optional text may vanish first. */
	textRequired: boolean;
}

export interface ViewGroup {
	key: OmissionKey;
	/** Optional label line (e.g. `Modified:`) shown when the group has items. */
	label?: string;
	/** The complete ordered collection. */
	items: ViewItem[];
	limit: number;
	mode: SampleMode;
	/** Upper bound for one item's text, in UTF-8 bytes. */
	maxTextBytes: number;
	/**
	 * Listed only when every earlier group of the block is listed whole;
	 * otherwise its omission marker alone counts it. Open failures come
	 * before resolved ones this way: a resolved failure is never listed while
	 * an open one is sampled out.
	 */
	afterCompleteGroups?: boolean;
}

export interface ViewBlock {
	key: BlockKey;
	header: string;
	/** Fixed lines after the header (e.g. the files display root). */
	prelude: string[];
	groups: ViewGroup[];
}

export interface Sample {
	/** Indices of kept items in order. */
	kept: number[];
	/** Half-open range of omitted indices, when any. */
	omitted?: { start: number; end: number };
}

/**
 * Items each group of a block keeps for a common per-group limit `k`: at
 * most its own limit, all of them for `all`, none for an
 * `afterCompleteGroups` group while an earlier group is sampled.
 */
export function groupSampleSizes(groups: readonly ViewGroup[], k: number): number[] {
	let earlierComplete = true;
	return groups.map((group) => {
		const size =
			group.mode === "all"
				? group.items.length
				: group.afterCompleteGroups && !earlierComplete
					? 0
					: Math.min(group.limit, k, group.items.length);
		if (size < group.items.length) earlierComplete = false;
		return size;
	});
}

/** Deterministic sample of `k` out of `n` items. Earliest-plus-latest favours the latest on odd `k`. */
export function sampleIndices(n: number, k: number, mode: SampleMode): Sample {
	const keep = mode === "all" ? n : Math.max(0, Math.min(n, k));
	if (keep >= n) return { kept: Array.from({ length: n }, (_, index) => index) };
	const head = mode === "latest" ? 0 : Math.floor(keep / 2);
	const tail = keep - head;
	const kept: number[] = [];
	for (let index = 0; index < head; index++) kept.push(index);
	for (let index = n - tail; index < n; index++) kept.push(index);
	return { kept, omitted: { start: head, end: n - tail } };
}

/** True when a block has anything to show. */
export function blockHasContent(block: ViewBlock): boolean {
	return block.prelude.length > 0 || block.groups.some((group) => group.items.length > 0);
}

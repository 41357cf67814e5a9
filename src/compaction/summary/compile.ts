/**
 * The deterministic compactor's pure entry point: raw active-branch entries →
 * bounded summary text plus everything the details v2 record and QA need.
 *
 * `entries` is the raw summarized prefix (before the new kept boundary);
 * `keptEntries` is the kept raw tail, read only to address dialogue exchanges
 * that cross the cut. The request block arrives already rendered (the
 * instruction decoder owns it); the carry-forward list arrives as plain
 * strings. No clock, randomness or host state is read: identical input gives
 * byte-identical output.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { NormalizationCounts } from "../../session/events.ts";
import { normalizeBranch } from "../../session/normalize.ts";
import type { QaInput } from "../qa/qa.ts";
import { BUILT_IN_ENRICHERS, type CompactionEnricher, runEnrichers } from "./enrichers.ts";
import { projectSummary } from "./projections.ts";
import { type FooterInput, type OmittedCounts, renderSummary } from "./render.ts";

export interface CompileSummaryInput {
	/** Raw active-branch prefix to summarize, in branch order. */
	entries: readonly SessionEntry[];
	/** Raw kept tail after the cut, in branch order (dialogue crossing only). */
	keptEntries?: readonly SessionEntry[];
	/** Already-rendered `[Compaction Request]` block, if any. */
	requestBlock?: string;
	/** Persistent carry-forward items, rendered under `[Carry Forward]`. */
	carryForward?: readonly string[];
	/** Optional deterministic enrichers; the package ships none. */
	enrichers?: readonly CompactionEnricher[];
	/** Tool the footer names for exact recall (`peek` by entry id). Default: DEFAULT_RECALL_TOOL. */
	recallTool?: string;
	/** One footer line saying what stays raw after the summary (compact-all says so). */
	keptNote?: string;
	/** One footer line naming the folds inside the summarized range. */
	foldsNote?: string;
}

export interface CompileSummaryResult {
	text: string;
	/** UTF-8 size of `text` (≤ 32,768). */
	bytes: number;
	/** Normalized events from the summarized prefix. */
	eventCount: number;
	/** Normalized events from the kept tail (dialogue addressing only). */
	keptEventCount: number;
	sourceEntryCount: number;
	keptEntryCount: number;
	/** Omitted items per projection, plus `dialogueBytes` (UTF-8 bytes, not events). */
	omittedCounts: OmittedCounts;
	/** Assistant thinking blocks in the summarized prefix that never became events. */
	erasedThinkingCount: number;
	/** First and last summarized entry ids. */
	sourceRange?: { firstEntryId: string; lastEntryId: string };
	/** Timestamp of the last summarized entry (from the entries, never the clock). */
	sourceTimestamp?: string;
	/** Bytes lost when guarding the request block / excerpting carry-forward items. */
	requestOmittedBytes: number;
	carryForwardOmittedBytes: number;
	normalization: NormalizationCounts;
	enrichment: { failed: number; dropped: number };
	/** Everything `runQa` needs to check `text` against its source. */
	qa: QaInput;
}

export function compileSummary(input: CompileSummaryInput): CompileSummaryResult {
	const branch = normalizeBranch(input.entries, input.keptEntries ?? []);
	const projection = projectSummary(branch.events, branch.cutEventIndex);
	const sourceEvents = branch.events.slice(0, branch.cutEventIndex);
	const enrichment = runEnrichers(input.enrichers ?? BUILT_IN_ENRICHERS, sourceEvents);
	const firstEntryId = branch.sourceEntryIds[0];
	const lastEntryId = branch.sourceEntryIds.at(-1);
	const footer: FooterInput = {
		...(branch.sourceTimestamp !== undefined ? { sourceTimestamp: branch.sourceTimestamp } : {}),
		...(firstEntryId !== undefined && lastEntryId !== undefined ? { firstEntryId, lastEntryId } : {}),
		entryCount: branch.counts.sourceEntries,
		eventCount: branch.counts.sourceEvents,
		thinkingErased: branch.counts.thinkingErased,
		...(input.recallTool !== undefined ? { recallTool: input.recallTool } : {}),
		...(input.keptNote !== undefined ? { keptNote: input.keptNote } : {}),
		...(input.foldsNote !== undefined ? { foldsNote: input.foldsNote } : {}),
	};
	const rendered = renderSummary({
		dialogue: projection.dialogue,
		plan: projection.plan,
		work: projection.work,
		blocks: [...projection.blocks, enrichment.block],
		...(input.requestBlock !== undefined ? { requestBlock: input.requestBlock } : {}),
		...(input.carryForward !== undefined ? { carryForward: input.carryForward } : {}),
		footer,
	});
	return {
		text: rendered.text,
		bytes: rendered.bytes,
		eventCount: branch.cutEventIndex,
		keptEventCount: branch.events.length - branch.cutEventIndex,
		sourceEntryCount: branch.counts.sourceEntries,
		keptEntryCount: branch.counts.keptEntries,
		omittedCounts: rendered.omittedCounts,
		erasedThinkingCount: branch.counts.thinkingErased,
		...(firstEntryId !== undefined && lastEntryId !== undefined ? { sourceRange: { firstEntryId, lastEntryId } } : {}),
		...(branch.sourceTimestamp !== undefined ? { sourceTimestamp: branch.sourceTimestamp } : {}),
		requestOmittedBytes: rendered.requestOmittedBytes,
		carryForwardOmittedBytes: rendered.carryForwardOmittedBytes,
		normalization: branch.counts,
		enrichment: { failed: enrichment.failed, dropped: enrichment.dropped },
		qa: {
			events: branch.events,
			cutEventIndex: branch.cutEventIndex,
			sourceEntryIds: branch.sourceEntryIds,
			keptEntryIds: input.keptEntries?.flatMap((entry) => (typeof entry.id === "string" ? [entry.id] : [])) ?? [],
			footer,
			...(input.requestBlock !== undefined ? { requestBlock: input.requestBlock } : {}),
			...(input.carryForward !== undefined ? { carryForward: input.carryForward } : {}),
		},
	};
}

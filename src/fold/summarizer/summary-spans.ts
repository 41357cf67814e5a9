/**
 * Which spans get a model brief, and how the summarizer's state reads in
 * status. Pure: the background requests (src/fold/pi/summarizer.ts) and the
 * commit (which asks for a ready brief by kind and source hash) share these.
 *
 * A span is worth a summary when it may fold at a later commit: every
 * pending chapter or consolidation mark, the ladder's consolidation
 * candidate and, from `PREPARE_OCCUPANCY`, its closed chapters, each planned
 * exactly as the commit will plan it. Tool batches keep their deterministic
 * brief (the ladder folds them by the dozen; a request each costs more than
 * it saves), and so do the ladder's deep spans (each boundary grows one, so a
 * brief prepared for it would rarely be the one its commit asks for).
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { planConsolidation, planFold } from "../lattice/lattice.ts";
import type { FoldKind, FoldLattice } from "../lattice/records.ts";
import type { BranchView } from "../lattice/units.ts";
import { type LadderInput, ladderCandidates } from "../policy/ladder.ts";
import { recordRange } from "../policy/record-range.ts";
import type { PendingMark } from "../state/state-schema.ts";
import { describeUsage, type SummarizerUsage } from "./summarizer-prompt.ts";

/**
 * Chapters are prepared from this occupancy of the serving budget: they fold
 * only under pressure (80%), so a few boundaries early has the brief ready,
 * and below it a request for a chapter that never folds would be wasted.
 */
export const PREPARE_OCCUPANCY = 0.6;
/** One span worth a summary: the commit will plan it with this kind and source hash. */
export interface SummarySpan {
	kind: FoldKind;
	sourceHash: string;
	entries: readonly SessionEntry[];
	/** The candidate's ends, so a boundary that sees it again skips the planning. */
	memo: string;
}

/** Cache key of a summary: what the brief is about, whatever id the fold ends up with. */
export const summaryKey = (kind: FoldKind, sourceHash: string) => `${kind}:${sourceHash}`;

/** Leaf entry range of a pending mark on this view, or undefined when its entries are gone. */
function markSpan(view: BranchView, lattice: FoldLattice, mark: PendingMark): SummarySpan | undefined {
	const range = recordRange(view, lattice, mark.record);
	if (!range) return undefined;
	const { kind, sourceHash, id } = mark.record;
	return { kind, sourceHash, entries: view.entries.slice(range.start, range.end), memo: `mark:${id}` };
}

/**
 * The spans to summarize at this decision, marks first: every pending
 * chapter or consolidation mark, the ladder's consolidation candidate and,
 * from `PREPARE_OCCUPANCY`, its chapters, each planned as the commit will
 * plan it. Spans `known` already are skipped.
 */
export function summarySpans(
	input: LadderInput,
	tailStart: number,
	known: (memo: string) => boolean = () => false,
): SummarySpan[] {
	const occupancy = input.budget ? input.reading.total / input.budget : 0;
	const pressure = input.force !== undefined || occupancy >= PREPARE_OCCUPANCY;
	const { candidates, held } = ladderCandidates(input, tailStart, pressure);
	const guards = { protectedEntryIds: input.protectedIds, freshTailStart: tailStart };
	const spans: SummarySpan[] = [];
	const add = (span: SummarySpan | undefined) => {
		if (span && span.kind !== "tool-batch") spans.push(span);
	};
	for (const mark of held)
		if (mark.record.kind !== "tool-batch" && !known(`mark:${mark.record.id}`))
			add(markSpan(input.view, input.lattice, mark));
	for (const candidate of candidates) {
		// A deep span grows with every boundary until it commits, so a brief prepared for it would
		// rarely match at commit: it keeps the deterministic brief, like a tool batch.
		if (candidate.kind === "tool-batch" || candidate.rung === "span") continue;
		if (candidate.mark) {
			if (!known(`mark:${candidate.mark.record.id}`)) add(markSpan(input.view, input.lattice, candidate.mark));
			continue;
		}
		const memo = `${candidate.kind}:${candidate.ids.join(",")}`;
		if (known(memo)) continue;
		const [first = "", last] = candidate.ids;
		const plan =
			candidate.kind === "consolidation"
				? planConsolidation(input.lattice, input.view, candidate.ids, guards)
				: planFold(input.lattice, input.view, { kind: "chapter", first, last }, guards);
		if (plan.ok) add({ kind: plan.kind, sourceHash: plan.sourceHash, entries: plan.leafEntries, memo });
	}
	// Marks first (they will fold), then the consolidation, then chapters oldest first.
	const order = (span: SummarySpan) => (span.memo.startsWith("mark:") ? 0 : span.kind === "consolidation" ? 1 : 2);
	return spans.sort((a, b) => order(a) - order(b));
}

/** For status: the mode in force, what is cached, and what requests cost so far in this session file. */
export interface SummarizerStatus {
	mode: "deterministic" | "session" | "model" | "host";
	/** provider/model of a configured model. */
	target?: string;
	problem?: string;
	pending: number;
	ready: number;
	usage: SummarizerUsage;
}

/** One status line: "Summarizer: session model; 3 requests (2 briefs, 1 fallback), …; 1 pending, 2 ready." */
export function formatSummarizerStatus(status: SummarizerStatus): string {
	const mode =
		status.mode === "deterministic"
			? `deterministic briefs${status.target ? ` (${status.target} unavailable)` : ""}`
			: status.mode === "session"
				? "session model for chapter and consolidation briefs"
				: status.mode === "model"
					? `${status.target} for chapter and consolidation briefs`
					: "summarizeContextSpan for chapter and consolidation briefs";
	const cache = status.pending + status.ready > 0 ? `; ${status.pending} pending, ${status.ready} ready` : "";
	return `Summarizer: ${mode}; ${describeUsage(status.usage)}${cache}.`;
}

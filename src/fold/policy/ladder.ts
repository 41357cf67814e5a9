/**
 * The automatic ladder: which spans the runtime may fold on its own, and
 * whether a commit now pays for itself.
 *
 * Rungs, stalest first: pending marks (epoch), completed read-only tool
 * batches, any other completed tool batch (every fold is lossless), peek
 * batches when `foldPeekResults` is on, and, under pressure only, closed
 * chapters; consolidation of existing folds once more than ten are visible
 * or the window passes 85%. Nothing in the fresh tail ever folds.
 *
 * A commit re-bills, uncached, every already-sent token after its first
 * changed byte; a stale token kept costs its cached price on every request.
 * The decision is rent-or-buy: commit once the cached price already paid for
 * carrying the foldable mass reaches the price of the rewrite. That schedule
 * never pays more than twice the best schedule chosen in hindsight, and it
 * folds large stale outputs within a request or two while small ones wait
 * until enough of them accumulate. The occupancy backstop and the
 * long-context guard override the price.
 *
 * A fold the agent expanded is its own: no rung folds over it (deep spans,
 * chapters and consolidations are cut at it), so an expand is never undone
 * behind the agent's back; it stays until the agent refolds it. What keeps
 * an expand from crowding the window is its admission check
 * (`expandRoom`, src/fold/actions/expand-room.ts). A span the agent
 * dissolved (`reboundary`) is never folded again as it was (record-range.ts).
 */

import { batchesOutsideRoots, indexLattice, type LatticeIndex } from "../lattice/lattice-index.ts";
import { MIN_CHAPTER_UNITS } from "../lattice/lattice-rules.ts";
import type { FoldLattice, FoldRecord } from "../lattice/records.ts";
import { type BranchView, closedChapters, type StructuralUnit } from "../lattice/units.ts";
import type { PendingMark } from "../state/state-schema.ts";
import { rangeTokens, type TokenPrices, type WindowReading } from "./budget.ts";
import { dissolvedAt, recordRange } from "./record-range.ts";
import { deepSpans } from "./spans.ts";
import {
	type ExpectedMisses,
	expectedRefetchCost,
	type WorkingSet,
	workingSetOf,
	workingSetTokens,
} from "./working-set.ts";

/** The fresh tail holds at least this many of the newest context units (the result the model is about to read). */
export const FRESH_TAIL_MIN_UNITS = 1;
/** …and extends back over whole units until it holds this many tokens, so small recent results stay raw. */
export const FRESH_TAIL_MIN_TOKENS = 8_192;
/** At or above this occupancy of the serving budget the ladder commits whatever the price (the spec's line). */
export const BACKSTOP_OCCUPANCY = 0.8;
/** Past this occupancy consolidation of existing folds is allowed regardless of how many are visible. */
export const CONSOLIDATION_OCCUPANCY = 0.85;
/** More visible collapsed folds than this makes consolidation eligible (keeps the brief index tidy). */
export const MAX_VISIBLE_FOLDS = 10;
/** Commit before a request crosses this share of a long-context price tier: past it every token costs more. */
export const LONG_CONTEXT_GUARD = 0.9;
/** Estimated window tokens of one brief with its header: a brief is at most 1,200 characters. */
export const BRIEF_TOKENS_ESTIMATE = 325;
/** A candidate must free at least this much to be worth a brief. */
export const MIN_CANDIDATE_FREED_TOKENS = 256;
/** A commit below this is not worth its rewrite: providers cache in blocks of about 1,024 tokens. */
export const MIN_COMMIT_FREED_TOKENS = 1_024;

export type Rung = "mark" | "read-only" | "tool" | "peek" | "span" | "chapter" | "consolidation";

/** One span the ladder proposes, with what folding it would free. */
export interface LadderCandidate {
	rung: Rung;
	kind: "tool-batch" | "chapter" | "consolidation";
	/** Entry range `[start, end)` on the branch. */
	start: number;
	end: number;
	/** Request ends (entry ids) or, for a consolidation, the fold ids. */
	ids: string[];
	freedTokens: number;
	/** Requests that already carried it (assistant responses after it). */
	age: number;
	/** What hiding it risks: the sources a later reply is expected to need again, and what peeking them brings back. */
	misses: ExpectedMisses;
	/** The pending mark this candidate commits, when it is one. */
	mark?: PendingMark;
}

export type CommitReason = "priced" | "backstop" | "long-context" | "free-rewrite" | "threshold" | "overflow" | "fence";

export interface LadderInput {
	view: BranchView;
	lattice: FoldLattice;
	protectedIds: ReadonlySet<string>;
	reading: WindowReading;
	budget: number | undefined;
	prices: TokenPrices;
	contextToolName: string;
	foldPeekResults: boolean;
	marks: readonly PendingMark[];
	/** Folds the agent expanded: no automatic fold covers them. */
	expanded: ReadonlySet<string>;
	/**
	 * Records the agent dissolved (`reboundary`): it said that cut was wrong,
	 * so the ladder never folds exactly that span again. Default: none.
	 */
	dissolved?: readonly FoldRecord[];
	/**
	 * A dissolve is part of this boundary's rewrite: its entries were promised
	 * raw from the next request on, so nothing overlapping a dissolved span
	 * folds here (the agent's own marks excepted).
	 */
	justDissolved?: boolean;
	/**
	 * The working-set horizon's share of the serving budget. Default
	 * `WORKING_SET_BUDGET_SHARE`; no user option sets it (the ladder's
	 * thresholds are constants): only the tuning front
	 * (`npm run bench -- host-replay-front`) varies it, to draw the trade the
	 * constant picks a point on.
	 */
	workingSetShare?: number;
	/** A rewrite happens at this boundary anyway (expand, refold, …) or the cache is cold: committing adds no re-read. */
	freeRewrite: boolean;
	/**
	 * Pi is about to compact ("threshold"), the provider refused a request as
	 * too long ("overflow") or a request is over budget ("fence"): fold
	 * everything eligible.
	 */
	force?: "threshold" | "overflow" | "fence";
}

export interface CommitDecision {
	commit: boolean;
	reason?: CommitReason;
	/** Why no commit happened, for status. */
	declined?: string;
	selected: LadderCandidate[];
	/** Marks left pending because they reach into the fresh tail. */
	held: PendingMark[];
	freshTailStart: number;
	occupancy: number | null;
	freedTokens: number;
	/** Already-sent tokens after the first changed byte: re-read uncached after the commit. */
	rewrittenTokens: number;
	/** Cached price already paid for carrying the selected mass (rent). */
	carriedCost: number;
	/** Extra price of the re-read (buy). */
	rewriteCost: number;
	/** Expected price of the searches and peeks a later reply needs for what the commit hides (buy, too). */
	refetchCost: number;
	/** Price saved on each later request by not carrying the freed tokens. */
	savingsPerRequest: number;
}

/**
 * Where the ladder's fresh tail starts: the newest `FRESH_TAIL_MIN_UNITS`
 * context units, extended back over whole units until the tail holds
 * `FRESH_TAIL_MIN_TOKENS`. Inside one long turn too: it counts units, not turns.
 */
export function ladderFreshTailStart(view: BranchView, reading: WindowReading): number {
	let units = 0;
	let tokens = 0;
	let start = view.entries.length;
	for (let u = view.units.length - 1; u >= 0; u--) {
		const unit = view.units[u];
		if (!unit) break;
		if (unit.kind === "barrier") break;
		start = unit.start;
		if (!unit.context) continue;
		units++;
		tokens += rangeTokens(view, reading, unit.start, unit.end);
		if (units >= FRESH_TAIL_MIN_UNITS && tokens >= FRESH_TAIL_MIN_TOKENS) break;
	}
	return start;
}

/** Index of the first entry the provider has not yet seen in a prompt: the newest assistant response. */
export function firstUnsentIndex(view: BranchView): number {
	for (let i = view.entries.length - 1; i >= 0; i--) {
		const entry = view.entries[i];
		if (entry?.type === "message" && entry.message.role === "assistant") return i;
	}
	return 0;
}

/** Assistant responses after an entry index: how many requests carried what sits there. */
function responsesAfter(view: BranchView): (index: number) => number {
	const before = view.responsesBefore;
	const total = before[view.entries.length] ?? 0;
	return (index) => total - (before[index] ?? total);
}

/**
 * Entry ranges covered by any placed fold, collapsed or expanded: never
 * proposed again. Root folds never overlap, so a sorted list and a binary
 * search answer each query in log time.
 */
function coveredBy(index: LatticeIndex): (start: number, end: number) => boolean {
	const roots = index.roots;
	return (start, end) => {
		let lo = 0;
		let hi = roots.length;
		// First root that ends after `start`.
		while (lo < hi) {
			const mid = (lo + hi) >> 1;
			if ((roots[mid]?.end ?? 0) <= start) lo = mid + 1;
			else hi = mid;
		}
		const root = roots[lo];
		return root !== undefined && root.start < end;
	};
}

/**
 * How the context tool's calls classify a batch. A peek brings back source
 * the agent may be about to work from, so a batch with one is a completed
 * read only with `foldPeekResults`. Other context-tool calls (fold receipts,
 * status) ride along with whatever else the batch holds; a batch of nothing
 * but those is bookkeeping and stays.
 */
/** Context-tool actions whose result brings back stored text: a batch of them is a completed read. */
const READ_ACTIONS: ReadonlySet<string> = new Set(["peek", "search"]);

function contextToolRung(view: BranchView, unit: StructuralUnit, toolName: string): "peek" | "bookkeeping" | "none" {
	if (!unit.toolNames.includes(toolName)) return "none";
	const call = view.entries[unit.start];
	if (call?.type !== "message" || call.message.role !== "assistant") return "bookkeeping";
	let peek = false;
	let other = false;
	for (const part of call.message.content) {
		if (part.type !== "toolCall") continue;
		if (part.name !== toolName) other = true;
		// A search is a read like a peek: its result is bounded text the agent may be about to work from.
		else if (READ_ACTIONS.has(String((part.arguments as { action?: unknown }).action))) peek = true;
	}
	return peek ? "peek" : other ? "none" : "bookkeeping";
}

/** True for a unit no automatic fold may take: a protected entry, context-tool bookkeeping, a peek without `foldPeekResults`. */
function keepsRaw(input: LadderInput, unit: StructuralUnit, play: WorkingSet, marked: boolean): boolean {
	// What the agent marked folds whatever the working set says.
	if (!marked && play.inPlay(unit)) return true;
	if (hasProtected(input.view, input.protectedIds, unit.start, unit.end)) return true;
	if (unit.kind !== "tool-batch") return false;
	const contextTool = contextToolRung(input.view, unit, input.contextToolName);
	return contextTool === "bookkeeping" || (contextTool === "peek" && !input.foldPeekResults);
}

function hasProtected(view: BranchView, protectedIds: ReadonlySet<string>, start: number, end: number): boolean {
	if (protectedIds.size === 0) return false;
	for (let i = start; i < end; i++) if (protectedIds.has(view.entries[i]?.id ?? "")) return true;
	return false;
}

/** Tokens a tool batch frees: its results' window tokens less the brief that replaces them. */
function batchFreed(view: BranchView, reading: WindowReading, unit: StructuralUnit): number {
	let results = 0;
	for (let i = unit.start; i < unit.end; i++) {
		const entry = view.entries[i];
		if (entry?.type === "message" && entry.message.role === "toolResult")
			results += reading.entryTokens.get(entry.id) ?? 0;
	}
	return results - BRIEF_TOKENS_ESTIMATE;
}

/** Every span the ladder could fold now, stalest first, with the marks held back by the fresh tail. */
export function ladderCandidates(
	input: LadderInput,
	tailStart: number,
	pressure: boolean,
): { candidates: LadderCandidate[]; held: PendingMark[] } {
	const { view, reading } = input;
	// Pi is about to compact or the provider refused: everything outside the fresh tail may go (horizon 0).
	const occupancy = input.budget ? reading.total / input.budget : null;
	const play = workingSetOf({
		view,
		reading,
		horizon: input.force
			? 0
			: workingSetTokens(
					input.budget,
					pressure ? BACKSTOP_OCCUPANCY : occupancy,
					BACKSTOP_OCCUPANCY,
					input.workingSetShare,
				),
	});
	const index = indexLattice(input.lattice, view);
	const covered = coveredBy(index);
	const after = responsesAfter(view);
	const held: PendingMark[] = [];
	const marked: LadderCandidate[] = [];
	for (const mark of input.marks) {
		const range = recordRange(view, input.lattice, mark.record);
		if (!range) continue;
		if (range.end > tailStart) {
			held.push(mark);
			continue;
		}
		const first = view.entries[range.start]?.id ?? "";
		const last = view.entries[range.end - 1]?.id ?? "";
		marked.push({
			rung: "mark",
			kind: mark.record.kind,
			start: range.start,
			end: range.end,
			ids: mark.record.kind === "consolidation" ? childIds(mark) : [first, last],
			freedTokens: Math.max(0, rangeTokens(view, reading, range.start, range.end) - BRIEF_TOKENS_ESTIMATE),
			age: after(range.end),
			misses: play.misses(range.start, range.end),
			mark,
		});
	}
	const overlapsMark = (start: number, end: number) => marked.some((m) => start < m.end && m.start < end);
	const dissolved = dissolvedAt(view, input.lattice, input.dissolved ?? [], input.justDissolved ?? false);

	const spans: LadderCandidate[] = deepSpans({
		view,
		index,
		reading,
		tailStart,
		keepRaw: (unit, marked) => keepsRaw(input, unit, play, marked),
		overlapsMark,
		// The agent's own collapsed folds join a span as folds inside it; the ladder's and expanded ones cut it.
		joins: (fold) => fold.record.provenance.origin === "agent" && !input.expanded.has(fold.id),
		carriedUnused: (unit) => play.carriedUnused(unit),
	})
		.map(
			(span): LadderCandidate => ({
				rung: "span",
				kind: "chapter",
				start: span.start,
				end: span.end,
				ids: [view.entries[span.start]?.id ?? "", view.entries[span.end - 1]?.id ?? ""],
				freedTokens: span.tokens - BRIEF_TOKENS_ESTIMATE,
				// The token-weighted age: freed × age is the rent the span's tokens have paid.
				age: span.tokens > 0 ? span.tokenRequests / span.tokens : 0,
				misses: play.misses(span.start, span.end),
			}),
		)
		.filter((span) => !dissolved(span.start, span.end));
	const overlapsSpan = (start: number, end: number) => spans.some((s) => start < s.end && s.start < end);

	const batches: LadderCandidate[] = [];
	for (const unit of batchesOutsideRoots(index, view)) {
		if (unit.kind !== "tool-batch" || !unit.completed || unit.end > tailStart) continue;
		if (covered(unit.start, unit.end) || overlapsMark(unit.start, unit.end) || overlapsSpan(unit.start, unit.end))
			continue;
		if (dissolved(unit.start, unit.end)) continue;
		if (hasProtected(view, input.protectedIds, unit.start, unit.end) || play.inPlay(unit)) continue;
		const contextTool = contextToolRung(view, unit, input.contextToolName);
		if (contextTool === "bookkeeping" || (contextTool === "peek" && !input.foldPeekResults)) continue;
		const freed = batchFreed(view, reading, unit);
		if (freed < MIN_CANDIDATE_FREED_TOKENS) continue;
		const id = view.entries[unit.start]?.id ?? "";
		batches.push({
			rung: contextTool === "peek" ? "peek" : unit.readOnly ? "read-only" : "tool",
			kind: "tool-batch",
			start: unit.start,
			end: unit.end,
			ids: [id, id],
			freedTokens: freed,
			age: play.carriedUnused(unit),
			misses: play.misses(unit.start, unit.end),
		});
	}
	// Read-only batches first: they are the spec's own rung; the rest follow, stalest first within each.
	const rungOrder: Record<Rung, number> = {
		mark: 0,
		"read-only": 1,
		peek: 1,
		tool: 2,
		span: 3,
		chapter: 3,
		consolidation: 4,
	};
	batches.sort((a, b) => rungOrder[a.rung] - rungOrder[b.rung] || a.start - b.start);

	const chapters: LadderCandidate[] = [];
	if (pressure) {
		const holdsExpanded = expandedWithin(index, input.expanded);
		for (const chapter of closedChapters(view, MIN_CHAPTER_UNITS)) {
			if (chapter.end > tailStart) break;
			const root = index.rootAt.get(chapter.start);
			if (root && root.end >= chapter.end) continue;
			if (overlapsSpan(chapter.start, chapter.end) || holdsExpanded(chapter.start, chapter.end)) continue;
			if (dissolved(chapter.start, chapter.end)) continue;
			if (hasProtected(view, input.protectedIds, chapter.start, chapter.end)) continue;
			const inner = [...marked, ...batches].filter((c) => c.start >= chapter.start && c.end <= chapter.end);
			const innerFreed = inner.reduce((total, c) => total + c.freedTokens, 0);
			const freed = rangeTokens(view, reading, chapter.start, chapter.end) - innerFreed - BRIEF_TOKENS_ESTIMATE;
			if (freed < MIN_CANDIDATE_FREED_TOKENS) continue;
			chapters.push({
				rung: "chapter",
				kind: "chapter",
				start: chapter.start,
				end: chapter.end,
				ids: [view.entries[chapter.start]?.id ?? "", view.entries[chapter.end - 1]?.id ?? ""],
				freedTokens: freed,
				age: after(chapter.end),
				misses: play.misses(chapter.start, chapter.end),
			});
		}
	}
	const consolidation = consolidationCandidate(input, index, tailStart, after, pressure);
	const candidates = [...marked, ...spans, ...batches, ...chapters];
	if (
		consolidation &&
		!dissolved(consolidation.start, consolidation.end) &&
		!candidates.some((c) => c.start < consolidation.end && consolidation.start < c.end)
	) {
		candidates.push(consolidation);
	}
	return { candidates, held };
}

/** True when a placed fold the agent expanded lies inside `[start, end)`. */
function expandedWithin(index: LatticeIndex, expanded: ReadonlySet<string>): (start: number, end: number) => boolean {
	const spans = [...expanded].flatMap((id) => {
		const fold = index.placed.get(id);
		return fold ? [fold] : [];
	});
	return (start, end) => spans.some((fold) => start <= fold.start && fold.end <= end);
}

function childIds(mark: PendingMark): string[] {
	return mark.record.parts.flatMap((part) => (part.type === "fold" ? [part.foldId] : []));
}

/**
 * The oldest run of two or more adjacent collapsed top-level folds, once
 * more than `MAX_VISIBLE_FOLDS` are visible or occupancy passes
 * `CONSOLIDATION_OCCUPANCY`. An expanded fold ends a run: it stays the agent's.
 */
function consolidationCandidate(
	input: LadderInput,
	index: LatticeIndex,
	tailStart: number,
	after: (index: number) => number,
	pressure: boolean,
): LadderCandidate | undefined {
	const roots = index.roots.filter((fold) => fold.end <= tailStart);
	const occupancy = input.budget ? input.reading.total / input.budget : 0;
	if (roots.length <= MAX_VISIBLE_FOLDS && !(pressure && occupancy >= CONSOLIDATION_OCCUPANCY)) return undefined;
	const { view, reading } = input;
	let run: typeof roots = [];
	for (const fold of roots) {
		if (input.expanded.has(fold.id)) {
			if (run.length >= 2) break;
			run = [];
			continue;
		}
		const previous = run.at(-1);
		const adjacent = previous !== undefined && rangeTokens(view, reading, previous.end, fold.start) === 0;
		if (previous && !adjacent) {
			if (run.length >= 2) break;
			run = [];
		}
		run.push(fold);
	}
	if (run.length < 2) return undefined;
	const first = run[0];
	const last = run.at(-1);
	if (!first || !last) return undefined;
	const freed = rangeTokens(view, reading, first.start, last.end) - BRIEF_TOKENS_ESTIMATE;
	if (freed < MIN_CANDIDATE_FREED_TOKENS) return undefined;
	return {
		rung: "consolidation",
		kind: "consolidation",
		start: first.start,
		end: last.end,
		ids: run.map((fold) => fold.id),
		freedTokens: freed,
		age: after(last.end),
		// Its spans are hidden already; consolidating them hides only their briefs.
		misses: { sources: 0, tokens: 0 },
	};
}

/** Closed chapters not yet folded as a whole that end before `tailStart`, oldest first, by their end entry ids. */
export function unfoldedChapters(
	view: BranchView,
	lattice: FoldLattice,
	tailStart: number,
): { first: string; last: string }[] {
	const index = indexLattice(lattice, view);
	const out: { first: string; last: string }[] = [];
	for (const chapter of closedChapters(view, MIN_CHAPTER_UNITS)) {
		if (chapter.end > tailStart) break;
		if (index.rootAt.get(chapter.start)?.end === chapter.end) continue;
		const first = view.entries[chapter.start]?.id;
		const last = view.entries[chapter.end - 1]?.id;
		if (first && last) out.push({ first, last });
	}
	return out;
}

/** Decide whether this boundary commits, and what. */
export function decideCommit(input: LadderInput): CommitDecision {
	const { view, reading, prices } = input;
	const tailStart = ladderFreshTailStart(view, reading);
	const occupancy = input.budget ? reading.total / input.budget : null;
	const pressure = input.force !== undefined || (occupancy !== null && occupancy >= BACKSTOP_OCCUPANCY);
	const eligible = ladderCandidates(input, tailStart, pressure);
	const held = eligible.held;
	// A candidate whose expected re-fetches cost more than the rent it has paid stays raw (unless forced).
	const refetch = (candidate: LadderCandidate) => expectedRefetchCost(candidate.misses, reading.total, prices);
	const longAbove = prices.longContextAbove;
	const longContext = longAbove !== null && reading.total >= LONG_CONTEXT_GUARD * longAbove;
	// Past the backstop or near a price tier, room comes first: whatever is out of the working set may go.
	const candidates =
		pressure || longContext
			? eligible.candidates
			: eligible.candidates.filter(
					(candidate) =>
						candidate.mark !== undefined || prices.cached * candidate.freedTokens * candidate.age >= refetch(candidate),
				);
	// A mark inside a selected span folds as a fold inside it: the span's figures already count its tokens.
	const outermost = candidates.filter(
		(c) =>
			!candidates.some((o) => o !== c && o.start <= c.start && c.end <= o.end && o.end - o.start > c.end - c.start),
	);
	const freedTokens = outermost.reduce((total, c) => total + c.freedTokens, 0);
	const firstChange = candidates.reduce((min, c) => Math.min(min, c.start), view.entries.length);
	const sent = rangeTokens(view, reading, firstChange, Math.max(firstChange, firstUnsentIndex(view)));
	const rewrittenTokens = Math.max(0, sent - freedTokens);
	const carriedCost = prices.cached * outermost.reduce((total, c) => total + c.freedTokens * c.age, 0);
	const rewriteCost = input.freeRewrite ? 0 : (prices.uncached - prices.cached) * rewrittenTokens;
	const refetchCost = candidates.reduce((total, c) => total + (c.mark ? 0 : refetch(c)), 0);
	const base = {
		selected: candidates,
		held,
		freshTailStart: tailStart,
		occupancy,
		freedTokens,
		rewrittenTokens,
		carriedCost,
		rewriteCost,
		refetchCost,
		savingsPerRequest: prices.cached * freedTokens,
	};
	const decline = (declined: string): CommitDecision => ({ ...base, commit: false, declined, selected: [] });
	const commit = (reason: CommitReason): CommitDecision => ({ ...base, commit: true, reason });
	if (candidates.length === 0) {
		return decline(
			eligible.candidates.length === 0
				? "nothing eligible outside the fresh tail"
				: `the eligible spans have not yet paid, unused, for the re-fetches hiding them would cost (${eligible.candidates.length} waiting)`,
		);
	}
	if (input.force) return commit(input.force);
	if (pressure) return commit("backstop");
	if (freedTokens < MIN_COMMIT_FREED_TOKENS)
		return decline(`eligible spans free ~${freedTokens} tokens, under ${MIN_COMMIT_FREED_TOKENS}`);
	if (longContext) return commit("long-context");
	if (input.freeRewrite) return commit("free-rewrite");
	if (carriedCost >= rewriteCost + refetchCost) return commit("priced");
	return decline(
		`carrying the eligible ~${freedTokens} tokens has cost ${carriedCost.toFixed(0)} so far; the rewrite would cost ${rewriteCost.toFixed(0)} and the expected re-fetches ${refetchCost.toFixed(0)} (price units)`,
	);
}

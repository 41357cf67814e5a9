/**
 * The fold runtime's work between one response and the next request, as pure
 * functions over plain data, step for step as src/fold/runtime.ts does it in
 * Pi's `turn_end` boundary and `context` hook (same calls, same order, same
 * redundant projections), so a replay exercises the shipping code path
 * without a Pi host. This module owns that mirror and the bookkeeping the
 * runtime keeps in memory (fold state, live lattice, instrument, cold-cache
 * flag); it decides nothing the runtime would not. Written for the replay
 * benchmark (bench/replay/) and moved here, API unchanged, so `pi-fold report`
 * can project what the ladder would have sent; the replay and runtime
 * benchmarks (bench/replay/, bench/runtime/) use it from here.
 *
 * Left out, because nothing here can trigger them: actions and their causes
 * (no agent or command folds in a replay), baselines (the logs hold no other
 * extension's context edits), the store write (the runtime benchmark times it
 * on its own), requeueing lost entries (every boundary here persists).
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { ContextEditEntryDraft, SessionEntry, SessionProjection } from "@earendil-works/pi-coding-agent";
import { buildSessionProjection } from "@earendil-works/pi-coding-agent";
import { type CommitSummary, planCommit } from "../fold/commit.ts";
import {
	announce,
	emptyInstrument,
	firstDivergence,
	type InstrumentState,
	messageDigest,
	observeRequest,
	type RewriteEvent,
} from "../fold/instrument.ts";
import { editDrafts, planWindow, projectionWithDrafts, projectWithDrafts } from "../fold/materialize.ts";
import type { ResolvedOptions } from "../fold/options.ts";
import { readWindow, type TokenPrices, type WindowReading } from "../fold/policy/budget.ts";
import { type CommitDecision, decideCommit } from "../fold/policy/ladder.ts";
import type { FoldLattice, FoldRecord } from "../fold/records.ts";
import { emptyFoldState, type FoldOp, type FoldState, liveLattice, persistChange } from "../fold/state.ts";
import { analyzeBranch, type BranchView } from "../fold/units.ts";
import { estimateMessagesTokens, PI_CHARS_PER_TOKEN } from "../session/tokens.ts";

/** What the runtime holds in memory between events. */
export interface ShellState {
	fold: FoldState;
	/** `liveLattice(fold)`, rebuilt only when `fold` changes (the runtime's lattice cache). */
	lattice: FoldLattice;
	instrument: InstrumentState;
	/** A blocking tool ran since the last commit: the next commit costs no extra re-read. */
	coldCache: boolean;
}

export function emptyShell(): ShellState {
	const fold = emptyFoldState();
	return { fold, lattice: liveLattice(fold), instrument: emptyInstrument(), coldCache: false };
}

/** A shell whose fold state is `fold` (e.g. rebuilt from a branch at session start). */
export function shellWith(fold: FoldState): ShellState {
	return { ...emptyShell(), fold, lattice: liveLattice(fold) };
}

/** What the host tells the runtime at a boundary: Pi's model, its budget and prices, the system prompt. */
export interface HostFacts {
	budget: number | undefined;
	prices: TokenPrices;
	/** The system prompt and tool declarations, as text (only its length is read). */
	fixedText: string;
	cwd: string;
}

/** Pi's projection of a whole linear branch (what `sessionManager.buildSessionProjection()` returns). */
export function projectBranch(branch: readonly SessionEntry[]): SessionProjection {
	return buildSessionProjection(branch as SessionEntry[], branch.at(-1)?.id ?? null);
}

/** Entries some fold record has covered (`managedEntries` in the runtime). */
function managedEntries(fold: FoldState): Set<string> {
	return new Set(
		fold.records.flatMap((record) => record.parts.flatMap((part) => (part.type === "entry" ? [part.entryId] : []))),
	);
}

/** `pendingDrafts`: edits that move the persisted window to the fold state. */
export function pendingDrafts(
	branch: readonly SessionEntry[],
	shell: ShellState,
	options: ResolvedOptions,
	projection: SessionProjection = projectBranch(branch),
): ContextEditEntryDraft[] {
	if (shell.fold.records.length === 0) return [];
	const projected = new Set(projection.entries.map((entry) => entry.sourceEntry.id));
	const plan = planWindow(branch, {
		lattice: shell.lattice,
		expanded: new Set(shell.fold.data.expanded),
		brandNoun: options.brandNoun,
		inWindow: (id) => projected.has(id),
	});
	const managed = managedEntries(shell.fold);
	const baselines = shell.fold.data.baselines;
	return editDrafts(branch, plan, {
		inWindow: (id) => projected.has(id),
		managed: (id) => managed.has(id),
		baseline: (id) => (Object.hasOwn(baselines, id) ? baselines[id] : undefined),
	});
}

/** The runtime's `readWindow`: what the next request will hold once every decided edit is persisted. */
export function windowReading(
	branch: readonly SessionEntry[],
	shell: ShellState,
	options: ResolvedOptions,
	fixedText: string,
): WindowReading {
	const drafts = pendingDrafts(branch, shell, options);
	const projection = drafts.length > 0 ? projectionWithDrafts(branch, drafts) : projectBranch(branch);
	return readWindow(projection, fixedText);
}

/** One ladder decision with the view and reading it was made on. */
export interface BoundaryDecision {
	decision: CommitDecision;
	view: BranchView;
	reading: WindowReading;
}

/** `autoCommit`'s decision half: read the window, analyze the branch, ask the ladder. */
export function ladderDecision(
	branch: readonly SessionEntry[],
	shell: ShellState,
	options: ResolvedOptions,
	host: HostFacts,
	force?: "threshold" | "fence",
): BoundaryDecision {
	const reading = windowReading(branch, shell, options, host.fixedText);
	const view = analyzeBranch(branch, { readOnlyTools: options.readOnlyTools });
	const decision = decideCommit({
		view,
		lattice: shell.lattice,
		protectedIds: new Set(shell.fold.data.protected),
		reading,
		budget: host.budget,
		prices: host.prices,
		contextToolName: options.toolName,
		foldPeekResults: options.foldPeekResults,
		marks: shell.fold.data.marks,
		freeRewrite: shell.coldCache,
		force,
	});
	return { decision, view, reading };
}

/** A change applied to the shell, with the custom entries it queues for the boundary. */
export interface AppliedChange {
	shell: ShellState;
	/** Custom entries to persist (`<prefix>:fold`, `:delta` / `:checkpoint`, `:commit`). */
	custom: { customType: string; data: unknown }[];
	records: FoldRecord[];
	/** Exact source of every new record by source hash (what the store would receive). */
	sources: Map<string, Uint8Array>;
}

/** `apply`: new records and ops into the fold state (no baselines: see the module note). */
export function applyRecords(
	shell: ShellState,
	options: ResolvedOptions,
	records: FoldRecord[],
	ops: FoldOp[],
	commit?: CommitSummary,
) {
	// A commit persists as the runtime writes it: one `:commit` line holding the records, ops and summary.
	const plan = persistChange(shell.fold, options.entryTypePrefix, records, ops, commit);
	return { shell: { ...shell, fold: plan.state, lattice: liveLattice(plan.state) }, entries: plan.entries };
}

/** `autoCommit`'s commit half: plan the decided folds and apply them; undefined when nothing lands. */
export function commitDecision(
	made: BoundaryDecision,
	shell: ShellState,
	options: ResolvedOptions,
	host: HostFacts,
): AppliedChange | undefined {
	if (!made.decision.commit) return undefined;
	const planned = planCommit(made.decision, {
		view: made.view,
		lattice: shell.lattice,
		protectedIds: new Set(shell.fold.data.protected),
		freshTailStart: made.decision.freshTailStart,
		toolName: options.toolName,
		cwd: host.cwd,
	});
	if (!planned) return undefined;
	const applied = applyRecords(shell, options, planned.change.records, planned.change.ops, planned.summary);
	return {
		shell: { ...applied.shell, coldCache: false },
		custom: applied.entries,
		records: planned.change.records,
		sources: planned.sources,
	};
}

/** True when persisting `drafts` changes a message the last request already sent (`wouldRewrite`). */
export function wouldRewrite(
	branch: readonly SessionEntry[],
	instrument: InstrumentState,
	drafts: readonly ContextEditEntryDraft[],
): boolean {
	const next = withoutSystem(projectWithDrafts(branch, drafts)).map(messageDigest);
	return firstDivergence(instrument.digests, next) !== -1;
}

/** Id prefix of entries the replay appends (boundary custom entries and context edits). */
export const APPENDED_ID_PREFIX = "replay-";

/** Append entries to a linear branch, each linked to the one before. Returns a new array. */
export function appendLinked(
	branch: readonly SessionEntry[],
	bodies: readonly Record<string, unknown>[],
): SessionEntry[] {
	const out = [...branch];
	const timestamp = branch.at(-1)?.timestamp ?? "1970-01-01T00:00:00.000Z";
	for (const body of bodies) {
		const id = `${APPENDED_ID_PREFIX}${out.length}`;
		out.push({ ...body, id, parentId: out.at(-1)?.id ?? null, timestamp } as SessionEntry);
	}
	return out;
}

/** What the boundary hands back to Pi, and the shell after it. */
export interface BoundaryOutcome {
	branch: SessionEntry[];
	shell: ShellState;
	drafts: number;
	/** The drafts change something the provider already saw: a rewrite was announced. */
	rewrite: boolean;
}

/**
 * The tail of `onBoundary` after the decision: compute the drafts, persist
 * them with the queued custom entries, announce the rewrite when there is one.
 */
export function persistBoundary(
	branch: readonly SessionEntry[],
	shell: ShellState,
	options: ResolvedOptions,
	custom: readonly { customType: string; data: unknown }[],
): BoundaryOutcome {
	const drafts = pendingDrafts(branch, shell, options);
	if (drafts.length === 0 && custom.length === 0) return { branch: [...branch], shell, drafts: 0, rewrite: false };
	const rewrite = drafts.length > 0 && wouldRewrite(branch, shell.instrument, drafts);
	const instrument = rewrite ? announce(shell.instrument, "commit") : shell.instrument;
	const bodies = [
		...custom.map((entry) => ({ type: "custom", customType: entry.customType, data: entry.data })),
		...drafts.map((draft) => ({ ...draft })),
	];
	return { branch: appendLinked(branch, bodies), shell: { ...shell, instrument }, drafts: drafts.length, rewrite };
}

/** Estimated prompt tokens of a request: its messages plus the system prompt (`requestTokens`). */
export function requestTokens(messages: readonly AgentMessage[], fixedText: string): number {
	return estimateMessagesTokens(messages) + Math.ceil(fixedText.length / PI_CHARS_PER_TOKEN);
}

/** What the `context` hook sent and observed. */
export interface ContextOutcome {
	/** Messages of the request (system messages excluded, as in the context event). */
	messages: AgentMessage[];
	shell: ShellState;
	event: RewriteEvent | undefined;
	/** Estimated prompt tokens, system prompt included (what the fence compares). */
	tokens: number;
}

/**
 * The `context` hook after any fence commit: Pi's messages are the persisted
 * projection; pending drafts (if any) are previewed; the request's size is
 * estimated twice (the budget check on Pi's messages, the fence verdict on
 * what goes out) as the runtime does when a budget is known; the instrument
 * observes what goes out.
 */
export function contextHook(
	branch: readonly SessionEntry[],
	shell: ShellState,
	options: ResolvedOptions,
	host: Pick<HostFacts, "budget" | "fixedText">,
): ContextOutcome {
	const piMessages = withoutSystem(projectBranch(branch).messages);
	if (host.budget !== undefined) requestTokens(piMessages, host.fixedText);
	const projection = projectBranch(branch);
	const drafts = pendingDrafts(branch, shell, options, projection);
	const persisted = withoutSystem(projection.messages);
	let sent = piMessages;
	let instrument = shell.instrument;
	if (drafts.length > 0) {
		sent = withoutSystem(projectWithDrafts(branch, drafts));
		instrument = announce(instrument, "commit");
	}
	const tokens = requestTokens(sent, host.fixedText);
	const observed = observeRequest(instrument, drafts.length > 0 ? sent : persisted);
	return { messages: sent, shell: { ...shell, instrument: observed.state }, event: observed.event, tokens };
}

export function withoutSystem(messages: readonly AgentMessage[]): AgentMessage[] {
	return messages.filter((message) => message.role !== "system");
}

/**
 * The fold engine: every decision pi-fold makes about the window, as one
 * state machine over plain data. It knows nothing of Pi: a host (the Pi
 * adapter in src/fold/pi/, or the headless driver that replays a recorded
 * branch) tells it what changed (entries appended to the branch, a new
 * branch, the host's facts, tool calls, usage, agent and command actions)
 * and carries out what it decides (custom entries to persist, `context_edit`
 * drafts, the request to send, the status to show).
 *
 * Work per request is proportional to what changed since the last one: the
 * branch view, Pi's projection with its token reading, the lattice index and
 * the drafts are kept current as entries are appended (branch.ts,
 * window.ts, drafts.ts), and rebuilt only when the branch is replaced.
 *
 * Decisions change the state at once; their custom entries wait in a queue
 * for the next boundary (or for the host to flush them while Pi is idle).
 * Automatic commits come in two steps (`planAutoCommit`, then `applyCommit`
 * or `declineCommit`) so the host can write the new folds' sources to the
 * store in between: a fold whose source is not stored is never applied.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { ContextEditEntryDraft, SessionEntry } from "@earendil-works/pi-coding-agent";
import { repairToolPairing } from "../../compaction/pi/repair.ts";
import { type StatusDetails, statusDetails } from "../actions/status.ts";
import type { ActionOutcome, FoldWorkspace } from "../actions/workspace.ts";
import type { FoldOptions } from "../lattice/lattice.ts";
import { indexLattice } from "../lattice/lattice-index.ts";
import type { FoldLattice, FoldOrigin, FoldRecord } from "../lattice/records.ts";
import type { BranchView } from "../lattice/units.ts";
import type { ResolvedOptions } from "../options.ts";
import { type BudgetFacts, fenceVerdict, type WindowReading } from "../policy/budget.ts";
import type { CommitDecision } from "../policy/ladder.ts";
import {
	emptyFoldState,
	type FoldState,
	type LiveLattice,
	liveLatticeAfter,
	persistChange,
	rebuildState,
} from "../state/state.ts";
import type { EvidenceFacts } from "../store/evidence.ts";
import { createMemoryFoldStore, type FoldStore } from "../store/store.ts";
import { type AutomaticPlan, automaticFacts, type ForcedBy, type PrepareHint, planAutomatic } from "./automatic.ts";
import { BranchTracker } from "./branch.ts";
import type { CommitSummary, EngineCounters, QueuedEntry } from "./commit.ts";
import type { HostFacts } from "./host-facts.ts";
import {
	announce,
	emptyInstrument,
	firstDivergence,
	type InstrumentState,
	type LoadoutDigests,
	messageDigest,
	observeLoadout,
	observeRequest,
	observeUsage,
	type RewriteCause,
	type RewriteEvent,
} from "./instrument.ts";
import { NextWindow } from "./next-window.ts";
import { EntryQueue } from "./queue.ts";
import { lostAnnouncements } from "./recovery.ts";
import { RequestDigests, type RequestOutcome } from "./request-digests.ts";
import { baselineOp, freshTailStart, lastCommitOn, startsWith } from "./session-facts.ts";
import { strayBriefEntries } from "./stray-briefs.ts";

export class FoldEngine {
	readonly options: ResolvedOptions;
	/** The branch view and Pi's projection of it; read through `tracker` / `next`, which build them first. */
	private readonly branchTracker: BranchTracker;
	/** What the next request holds: Pi's projection, its reading, the pending drafts. */
	private readonly nextWindow: NextWindow;
	/**
	 * The branch a reset named, not built yet into the view, the window and
	 * the lattice (`build`): a resumed long session's first request does not
	 * wait for them (`request`); the first thing that needs them builds them.
	 */
	private unbuilt: SessionEntry[] | undefined;
	/** No request since the last reset: only the first may go out before the branch is built. */
	private firstRequest = true;
	private state: FoldState = emptyFoldState();
	private live: LiveLattice | undefined;
	/** Entries some fold record (live or dissolved) has covered: only these are ever restored. */
	private managed = new Set<string>();
	private instrumentState: InstrumentState = emptyInstrument();
	private storeOf: FoldStore = createMemoryFoldStore();
	/** Custom entries decided and not yet persisted. */
	private readonly queued = new EntryQueue();
	/** Why the next window rewrite happens; handed to the instrument when edits land. */
	private causes = new Set<RewriteCause>();
	/** A blocking tool ran since the last commit: the prefix cache is presumed cold, a commit costs no extra re-read. */
	private coldCache = false;
	/** Set once another process is seen appending to the session file: automatic folding stops. */
	private otherWriterId: string | undefined;
	readonly counters: EngineCounters = { lastCommit: undefined, commits: 0, cancelledCompactions: 0, fenceRefusals: 0 };
	/** The ladder's last decision (for status: why a boundary did not commit). */
	private lastDecision: CommitDecision | undefined;
	/**
	 * A change was applied since the ladder last decided (its own commit, an
	 * action, a threshold commit). Without one, the settle boundary after a
	 * run's last turn would decide exactly what that turn's boundary did, from
	 * the same branch and state, so it is skipped: a boundary listener costs
	 * Pi a projection of the whole branch before and after each handler.
	 */
	private changedSinceDecision = true;
	/** Briefs prepared ahead of a commit (the model summarizer's); undefined: deterministic briefs. */
	briefSource: ((cwd: string) => FoldOptions["briefSource"]) | undefined;
	/** Each request's digests (memoized), and pi-fold's own list until `sent` observes what went out. */
	private readonly digests = new RequestDigests();

	constructor(options: ResolvedOptions) {
		this.options = options;
		this.branchTracker = new BranchTracker(options.readOnlyTools);
		this.nextWindow = new NextWindow(this.branchTracker);
	}

	private get tracker(): BranchTracker {
		this.build();
		return this.branchTracker;
	}

	private get next(): NextWindow {
		this.build();
		return this.nextWindow;
	}

	// --- The branch ---

	/**
	 * A new session or branch (start, resume, reload, tree navigation): the
	 * fold state is rebuilt from it now (a linear pass over its custom
	 * entries); the view, window and lattice when first needed (`build`).
	 */
	reset(branch: readonly SessionEntry[], store: FoldStore = createMemoryFoldStore()): void {
		const prefix = this.options.entryTypePrefix;
		this.state = rebuildState(branch, prefix);
		this.managed = new Set();
		this.storeOf = store;
		this.queued.clear();
		this.causes.clear();
		this.coldCache = false;
		this.otherWriterId = undefined;
		this.counters.lastCommit = lastCommitOn(branch, prefix);
		this.lastDecision = undefined;
		this.changedSinceDecision = true;
		this.unbuilt = [...branch];
		this.firstRequest = true;
	}

	/** Whether the branch a reset named is still to be built (the host may build it when the request has gone). */
	get built(): boolean {
		return this.unbuilt === undefined;
	}

	/**
	 * Build what the last reset deferred: the view, Pi's projection with its
	 * token counts, and the briefs left without a record. Linear in the
	 * branch; a no-op once built.
	 */
	build(): void {
		const branch = this.unbuilt;
		if (branch === undefined) return;
		this.unbuilt = undefined;
		this.replaceBranch(branch);
		this.noteManaged(this.state.records);
		// A brief whose record was skipped on load (or rejected with it: a fold naming a skipped child) goes back to
		// raw: it must not advertise an id peek and expand do not answer.
		const known = this.lattice().folds;
		const stray = strayBriefEntries(branch, this.branchTracker.latestEdits, this.options.brandNoun, (id) =>
			known.has(id),
		);
		for (const id of stray) this.managed.add(id);
	}

	/** The branch is not the last one grown (a host could not tell what was appended): view and window are rebuilt, the fold state stays. */
	replaceBranch(branch: readonly SessionEntry[]): void {
		if (this.unbuilt !== undefined) {
			this.unbuilt = [...branch];
			return;
		}
		this.branchTracker.reset(branch, this.options.readOnlyTools);
		this.nextWindow.reset();
		this.queued.branchReplaced();
	}

	/** Entries appended to the end of the active branch, oldest first. */
	append(fresh: readonly SessionEntry[]): void {
		if (fresh.length === 0) return;
		if (this.unbuilt !== undefined) {
			for (const entry of fresh) this.unbuilt.push(entry);
			return;
		}
		const detachedBefore = indexLattice(this.lattice(), this.tracker.view).detached.size > 0;
		this.tracker.append(fresh);
		this.next.append(fresh);
		// A fold whose entries were not all on the branch may be placeable now: index it again.
		if (detachedBefore) this.tracker.renew();
	}

	get entries(): readonly SessionEntry[] {
		return this.tracker.entries;
	}

	get view(): BranchView {
		return this.tracker.view;
	}

	get foldState(): FoldState {
		return this.state;
	}

	get store(): FoldStore {
		return this.storeOf;
	}

	get instrument(): InstrumentState {
		return this.instrumentState;
	}

	/** The live lattice of the state (dissolved folds removed, rebriefs applied), rebuilt only when the state changes. */
	lattice(): FoldLattice {
		if (this.live?.state !== this.state) this.live = liveLatticeAfter(this.live, this.state);
		return this.live.lattice;
	}

	// --- Host events ---

	/** The human moved to another branch with `/tree`: the next window is another branch's. */
	navigated(): void {
		this.instrumentState = announce(this.instrumentState, "navigation");
	}

	/** Pi compacted: the next window is rewritten by it. */
	compacted(): void {
		this.instrumentState = announce(this.instrumentState, "compaction");
	}

	/** A tool is about to run; a blocking one leaves the provider's prefix cache cold. */
	toolCalled(toolName: string): void {
		if (this.options.blockingTools.includes(toolName)) this.coldCache = true;
	}

	/** The provider's usage of the last request. */
	usage(promptTokens: number, cacheRead: number): void {
		this.instrumentState = observeUsage(this.instrumentState, promptTokens, cacheRead);
	}

	/** The system prompt and tool set the request carried, and Pi's own loadout then. */
	loadout(sent: LoadoutDigests, host: LoadoutDigests): void {
		this.instrumentState = observeLoadout(this.instrumentState, sent, host).state;
	}

	/** Another process appends to this session file (entry `id` is not ours): automatic folding stops. True the first time. */
	otherWriter(id: string): boolean {
		if (this.otherWriterId !== undefined) return false;
		this.otherWriterId = id;
		return true;
	}

	get otherWriterSeen(): boolean {
		return this.otherWriterId !== undefined;
	}

	/** Folds the model was told of (a fold or reboundary result) that never landed, and no notice explained yet. */
	lostFolds(): string[] {
		const { toolName, entryTypePrefix } = this.options;
		// Before the first request: read off the branch as named, without building it.
		return lostAnnouncements(this.unbuilt ?? this.branchTracker.entries, this.state, toolName, entryTypePrefix);
	}

	// --- The queue of custom entries ---

	/** A custom entry to persist at the next boundary (or when the host flushes while idle). */
	queue(customType: string, data: unknown): void {
		this.queued.push({ customType, data });
	}

	/** Everything queued, for a host that persists it now (Pi idle, or a settled run). */
	takeQueued(): QueuedEntry[] {
		return this.queued.take();
	}

	/** Queue again whatever the last boundary handed over that the branch does not hold. */
	reconcile(): void {
		this.queued.reconcile(this.tracker.entries);
	}

	// --- Actions ---

	/**
	 * A snapshot for an action. The fresh tail starts at the in-flight response (agent) or the latest user turn
	 * (command). With the host's facts, an expand is admitted against what the next request holds and its budget.
	 */
	workspace(
		origin: FoldOrigin,
		cwd: string,
		sessionEntry?: (id: string) => SessionEntry | undefined,
		host?: HostFacts,
	): FoldWorkspace {
		const branch = this.tracker.entries;
		return {
			branch,
			view: this.tracker.view,
			state: this.state,
			lattice: this.lattice(),
			store: this.storeOf,
			options: this.options,
			cwd,
			freshTailStart: freshTailStart(branch, origin),
			origin,
			...(sessionEntry ? { sessionEntry } : {}),
			...(host ? { room: () => ({ reading: this.reading(host), budget: host.budget }) } : {}),
		};
	}

	/** Apply an action's (or a commit's) change to the state and queue the entries that make it durable. */
	apply(outcome: ActionOutcome, commit?: CommitSummary): void {
		const change = outcome.change;
		if (!outcome.ok || !change) return;
		const baselines = baselineOp(change.records, this.tracker.latestEdits, this.managed);
		const ops = baselines ? [...change.ops, baselines] : change.ops;
		const plan = persistChange(this.state, this.options.entryTypePrefix, change.records, ops, commit);
		this.state = plan.state;
		this.changedSinceDecision = true;
		this.noteManaged(change.records);
		for (const cause of change.causes) this.causes.add(cause);
		this.queued.push(...plan.entries);
	}

	private noteManaged(records: readonly FoldRecord[]): void {
		for (const record of records)
			for (const part of record.parts) if (part.type === "entry") this.managed.add(part.entryId);
	}

	// --- The automatic commit ---

	/**
	 * Let the ladder decide a commit and plan it. Nothing changes until
	 * `applyCommit` (after the host stored the sources) or `declineCommit`.
	 * `under`: commit only if the window ends at or under it (Pi's compaction
	 * line; otherwise Pi compacts anyway).
	 */
	planAutoCommit(host: HostFacts, force?: ForcedBy, under?: number): AutomaticPlan {
		if (this.otherWriterId !== undefined) return { kind: "off" };
		const plan = planAutomatic({
			view: this.tracker.view,
			lattice: this.lattice(),
			state: this.state,
			reading: this.reading(host),
			host,
			options: this.options,
			freeRewrite: this.causes.size > 0 || this.coldCache,
			justDissolved: this.causes.has("reboundary"),
			...(force ? { force } : {}),
			...(under === undefined ? {} : { under }),
			briefSource: this.briefSource?.(host.cwd),
		});
		this.lastDecision = plan.kind === "off" ? this.lastDecision : plan.decision;
		if (plan.kind !== "off") this.changedSinceDecision = false;
		return plan;
	}

	/** Whether the boundary before a run settles can decide anything new (see `changedSinceDecision`). */
	settleBoundaryWanted(): boolean {
		return this.changedSinceDecision;
	}

	/** Apply a planned commit; returns whether it created folds and what the ladder may propose next. */
	applyCommit(plan: Extract<AutomaticPlan, { kind: "planned" }>): { folded: boolean; prepare: PrepareHint } {
		const { planned, input, decision } = plan;
		this.apply({ ok: true, text: "", change: planned.change }, planned.summary);
		this.counters.lastCommit = planned.summary;
		this.counters.commits++;
		this.coldCache = false;
		return {
			folded: planned.change.records.length > 0,
			prepare: {
				input: { ...input, lattice: this.lattice(), marks: this.state.data.marks },
				tailStart: decision.freshTailStart,
			},
		};
	}

	/** A planned commit the host could not carry out (its sources could not be stored): nothing is applied. */
	declineCommit(plan: Extract<AutomaticPlan, { kind: "planned" }>, why: string): void {
		this.lastDecision = { ...plan.decision, commit: false, declined: why };
	}

	/** A forced commit stood in for Pi's threshold compaction. */
	cancelledCompaction(): void {
		this.counters.cancelledCompactions++;
	}

	// --- What the host shows ---

	/** Status details: folds, budget, instrument, the automatic commits, pending edits. */
	status(budget: BudgetFacts, host: HostFacts, evidence?: EvidenceFacts): StatusDetails {
		return statusDetails({
			lattice: this.lattice(),
			view: this.tracker.view,
			state: this.state,
			instrument: this.instrumentState,
			budget,
			store: { kind: this.storeOf.kind, location: this.storeOf.location },
			pendingEdits: this.pendingDrafts().length,
			automatic: automaticFacts({
				options: this.options,
				marks: this.state.data.marks,
				reading: () => this.reading(host),
				view: this.tracker.view,
				counters: this.counters,
				lastDecision: this.lastDecision,
			}),
			...(evidence ? { evidence } : {}),
		});
	}

	// --- The window ---

	/** Edits that move the persisted window to the current fold state. */
	pendingDrafts(): ContextEditEntryDraft[] {
		const lattice = this.lattice();
		return this.next.drafts({
			state: this.state,
			lattice,
			parents: this.live?.parents ?? new Map(),
			brandNoun: this.options.brandNoun,
			managed: this.managed,
		});
	}

	/** What the next request will hold once every decided edit is persisted, with range sums by branch position. */
	reading(host: Pick<HostFacts, "fixedTokens">): WindowReading {
		return this.next.reading(host.fixedTokens, this.pendingDrafts());
	}

	/** Announce the causes of the rewrite about to happen (a commit when none was recorded). */
	private announceCauses(): void {
		if (this.causes.size === 0) this.causes.add("commit");
		for (const cause of this.causes) this.instrumentState = announce(this.instrumentState, cause);
		this.causes.clear();
	}

	/**
	 * What a turn boundary hands Pi after any commit: the queued custom
	 * entries and the drafts, or nothing. Drafts that change what the last
	 * request sent announce their causes; drafts the `context` hook already
	 * previewed change nothing the provider has not seen.
	 */
	boundaryEntries(): { custom: QueuedEntry[]; drafts: ContextEditEntryDraft[] } | undefined {
		const drafts = this.pendingDrafts();
		if (drafts.length === 0 && this.queued.size === 0) return undefined;
		const custom = this.queued.handOff(this.tracker.entries.length);
		if (drafts.length > 0 && this.wouldRewrite(drafts)) this.announceCauses();
		else this.causes.clear();
		return { custom, drafts };
	}

	private wouldRewrite(drafts: readonly ContextEditEntryDraft[]): boolean {
		const next = this.next.withDrafts(drafts).messages().map(messageDigest);
		return firstDivergence(this.instrumentState.ownDigests, next) !== -1;
	}

	/** The request's messages as Pi builds them from the session (system messages excluded). */
	requestMessages(): readonly AgentMessage[] {
		return this.next.messages();
	}

	/** True when the request (the host's messages, or Pi's projection of the session) is over the serving budget. */
	overBudget(host: HostFacts, messages?: readonly AgentMessage[]): boolean {
		return host.budget !== undefined && this.requestTokens(messages, host.fixedTokens) > host.budget;
	}

	/**
	 * Estimated prompt tokens of a request: Pi's projection of the session
	 * (built first), or the host's own list, which the window measures once
	 * per list without needing a deferred branch built.
	 */
	private requestTokens(messages: readonly AgentMessage[] | undefined, fixedTokens: number): number {
		if (messages === undefined) return this.next.requestTokens(this.next.messages(), fixedTokens);
		return this.nextWindow.requestTokens(messages, fixedTokens);
	}

	/**
	 * The `context` hook after any fence commit: preview drafts not yet
	 * persisted (only over what Pi built from the session; anything another
	 * handler appended stays after it), refuse a request still over the
	 * serving budget, and observe what goes out. `messages` default to Pi's
	 * projection of the session (a host without Pi). With `awaitSent`, the
	 * request is observed by `sent` once the host shows the final list
	 * (other extensions' handlers may still change it).
	 *
	 * The first request after a reset may go out before the branch is built
	 * (`goesAsPersisted`): a resumed long session reaches the provider without
	 * waiting for a linear pass over its branch; the host builds it while the
	 * provider answers.
	 */
	request(host: HostFacts, messages?: readonly AgentMessage[], awaitSent = false): RequestOutcome {
		this.digests.await(undefined);
		const first = this.firstRequest;
		this.firstRequest = false;
		if (first && messages !== undefined && this.goesAsPersisted(host, messages))
			return this.observe(host, messages, messages, undefined, awaitSent);
		const persisted = this.next.messages();
		const hostList = messages ?? persisted;
		const drafts = this.pendingDrafts();
		let preview: AgentMessage[] | undefined;
		if (drafts.length > 0 && startsWith(hostList, persisted)) {
			// Other handlers (orphan repair among them) ran on the host's list; the preview replaces it, so it is
			// held to the same pairing rule: whatever the drafts do, no request goes out with an orphan result.
			const drafted = [...this.next.withDrafts(drafts).messages(), ...hostList.slice(persisted.length)];
			preview = repairToolPairing(drafted).messages;
			this.announceCauses();
		}
		// pi-fold's own list: the preview, or Pi's projection (its objects' digests memoized) when nothing was
		// previewed and no handler added or removed messages. Whether a handler changed one is `sent`'s question.
		const own = !preview && hostList.length === persisted.length ? persisted : (preview ?? hostList);
		return this.observe(host, preview ?? hostList, own, preview, awaitSent);
	}

	/**
	 * Whether the first request after a reset may go out as the host built it
	 * from the session while the branch is still unbuilt: Pi projects the persisted window,
	 * every committed fold in it. Only when every fold entry on the branch
	 * decoded (a skipped record may have left a brief whose id nothing
	 * answers: the build restores it first) and the request is under the
	 * serving budget (the fence may have to fold). What a stopped session
	 * left unpersisted (a commit's edits) waits for the next request.
	 */
	private goesAsPersisted(host: HostFacts, messages: readonly AgentMessage[]): boolean {
		return this.unbuilt !== undefined && this.state.skipped === 0 && !this.overBudget(host, messages);
	}

	/** Measure what goes out (`sent`), refuse it past the limit, and observe pi-fold's own list (`own`) now or at `sent`. */
	private observe(
		host: HostFacts,
		sent: readonly AgentMessage[],
		own: readonly AgentMessage[],
		preview: AgentMessage[] | undefined,
		awaitSent: boolean,
	): RequestOutcome {
		const tokens = this.requestTokens(sent, host.fixedTokens);
		// Past Pi's line (the budget) Pi compacts; only past the provider's own limit is a request refused.
		const verdict = fenceVerdict(tokens, host.limit ?? host.budget, this.options.brandNoun);
		if (!verdict.ok) {
			this.counters.fenceRefusals++;
			return { sent: undefined, refused: verdict, rewrite: undefined, tokens };
		}
		const digests = this.digests.of(own);
		if (awaitSent) {
			this.digests.await({ messages: own, digests });
			return { sent: preview, refused: undefined, rewrite: undefined, tokens };
		}
		const observed = observeRequest(this.instrumentState, own, digests);
		this.instrumentState = observed.state;
		return { sent: preview, refused: undefined, rewrite: observed.event, tokens };
	}

	/**
	 * What the request `request` prepared actually sent, after every
	 * handler ran (system messages excluded): compared with the previous
	 * request's, and with pi-fold's own list to tell another extension's
	 * rewrite from ours. Nothing when no request is awaiting (it was refused).
	 */
	sent(messages: readonly AgentMessage[]): RewriteEvent | undefined {
		const observed = this.digests.sent(this.instrumentState, messages);
		if (!observed) return undefined;
		this.instrumentState = observed.state;
		return observed.event;
	}
}

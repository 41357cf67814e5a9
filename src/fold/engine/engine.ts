/**
 * The fold engine: every decision pi-fold makes about the window, as one
 * state machine over plain data. A host (the Pi adapter in src/fold/pi/, the
 * headless player that replays a recorded branch, the report's replay, the
 * benchmarks) tells it what changed (entries appended to the branch, a new
 * branch, the host's facts, tool calls, usage, agent and command actions)
 * and carries out what it decides (custom entries to persist, `context_edit`
 * drafts, the request to send, the status to show).
 *
 * Pi: the engine knows Pi's data, never Pi's runtime. It imports Pi's types
 * (session entries, messages, drafts) and Pi's own pure projection functions
 * (window.ts, materialize.ts: the window must be what Pi builds, byte for
 * byte), never the extension API, a context, the session manager or a
 * registry; so does every fold layer below it. `scripts/check-cycles.ts`
 * enforces it (`PI_RUNTIME_FREE`).
 *
 * The commit sequence is here, once, for every host: plan, store, apply,
 * hand off (`commit`, `boundary`, `prepareRequest`). A fold whose source is
 * not stored is never applied. Decisions change the state at once; their
 * custom entries wait for the next boundary (or a host's flush while idle).
 *
 * Work per request is proportional to what changed since the last one: the
 * view, Pi's projection and its reading, the lattice index and the drafts
 * are kept current as entries are appended (branch.ts, window.ts, drafts.ts)
 * and rebuilt only when the branch is replaced. Options are a value: a host
 * passes new ones with `configure`.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { ContextEditEntryDraft, SessionEntry } from "@earendil-works/pi-coding-agent";
import { indexLattice } from "../lattice/lattice-index.ts";
import type { FoldLattice, FoldOrigin } from "../lattice/records.ts";
import type { BranchView } from "../lattice/units.ts";
import type { ResolvedOptions } from "../options.ts";
import type { BudgetFacts, WindowReading } from "../policy/budget.ts";
import type { FoldState } from "../state/state.ts";
import type { EvidenceFacts } from "../store/evidence.ts";
import { createMemoryFoldStore, type FoldStore, FoldStoreError, putFoldSource } from "../store/store.ts";
import {
	type AutomaticPlan,
	automaticFacts,
	type BoundaryOutcome,
	CommitBook,
	type CommitOutcome,
	type CommitRequest,
	type EngineHost,
	type PrepareHint,
	planAutomatic,
} from "./automatic.ts";
import { BranchTracker } from "./branch.ts";
import type { CommitSummary, PlannedCommit, QueuedEntry } from "./commit.ts";
import type { HostFacts } from "./host-facts.ts";
import type { InstrumentState, LoadoutDigests, RewriteEvent } from "./instrument.ts";
import { FoldLedger } from "./ledger.ts";
import { NextWindow } from "./next-window.ts";
import { lostAnnouncements } from "./recovery.ts";
import type { RequestOutcome } from "./request-digests.ts";
import { Requests, type RequestWindow } from "./requests.ts";
import { freshTailStart, lastCommitOn } from "./session-facts.ts";
import { type StatusDetails, statusDetails } from "./status-facts.ts";
import { persistedBriefsHold, strayBriefEntries } from "./stray-briefs.ts";
import type { ActionOutcome, FoldWorkspace } from "./workspace.ts";

/** What decides at a boundary: the automatic ladder (the product), nothing, or a reference policy. */
export type BoundaryDecider = "ladder" | "none" | ((engine: FoldEngine, host: HostFacts) => void);

export class FoldEngine {
	private current: ResolvedOptions;
	private readonly host: EngineHost;
	/** The branch view and Pi's projection of it; read through `tracker` / `next`, which build them first. */
	private readonly branchTracker: BranchTracker;
	/** What the next request holds: Pi's projection, its reading, the pending drafts. */
	private readonly nextWindow: NextWindow;
	/**
	 * The branch a reset named, not built yet into the view, the window and
	 * the lattice (`build`): a resumed long session's first request does not
	 * wait for them; the first thing that needs them builds them.
	 */
	private unbuilt: SessionEntry[] | undefined;
	/** The fold state, its live lattice, the queued custom entries, the entries folds covered. */
	private readonly ledger = new FoldLedger();
	private storeOf: FoldStore = createMemoryFoldStore();
	/** The request path: causes, the instrument, each request's digests. */
	private readonly requests = new Requests();
	/** Counters, the last decision, cold cache, another writer, change since the last decision. */
	private readonly book = new CommitBook();

	constructor(options: ResolvedOptions, host: EngineHost = {}) {
		this.current = options;
		this.host = host;
		this.branchTracker = new BranchTracker(options.readOnlyTools);
		this.nextWindow = new NextWindow(this.branchTracker);
	}

	/** The options in force (a value: `configure` replaces it, nothing mutates it). */
	get options(): ResolvedOptions {
		return this.current;
	}

	/** New options (a session's settings read at its start); the branch view follows at the next reset. */
	configure(options: ResolvedOptions): void {
		this.current = options;
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
		this.ledger.reset(branch, prefix);
		this.storeOf = store;
		this.requests.reset();
		this.book.reset(lastCommitOn(branch, prefix));
		this.unbuilt = [...branch];
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
		// A brief whose record was skipped on load (or rejected with it: a fold naming a skipped child) goes back to
		// raw: it must not advertise an id peek and expand do not answer.
		const known = this.lattice().folds;
		const stray = strayBriefEntries(branch, this.branchTracker.latestEdits, this.options.brandNoun, (id) =>
			known.has(id),
		);
		this.ledger.cover(this.ledger.state.records, stray);
	}

	/** The branch is not the last one grown (a host could not tell what was appended): view and window are rebuilt, the fold state stays. */
	replaceBranch(branch: readonly SessionEntry[]): void {
		if (this.unbuilt !== undefined) {
			this.unbuilt = [...branch];
			return;
		}
		this.branchTracker.reset(branch, this.options.readOnlyTools);
		this.nextWindow.reset();
		this.ledger.queued.branchReplaced();
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
		return this.ledger.state;
	}

	get store(): FoldStore {
		return this.storeOf;
	}

	get instrument(): InstrumentState {
		return this.requests.instrument;
	}

	/** The live lattice of the state (dissolved folds removed, rebriefs applied), rebuilt only when the state changes. */
	lattice(): FoldLattice {
		return this.ledger.lattice();
	}

	// --- Host events ---

	/** The human moved to another branch with `/tree`: the next window is another branch's. */
	navigated(): void {
		this.requests.hostRewrite("navigation");
	}

	/** Pi compacted: the next window is rewritten by it. */
	compacted(): void {
		this.requests.hostRewrite("compaction");
	}

	/** A tool is about to run; a blocking one leaves the provider's prefix cache cold. */
	toolCalled(toolName: string): void {
		if (this.options.blockingTools.includes(toolName)) this.book.coldCache = true;
	}

	/** A commit stood in for Pi's compaction (threshold or overflow), which the host cancelled. */
	cancelledCompaction(): void {
		this.book.counters.cancelledCompactions++;
	}

	/** The provider's usage of the last request. */
	usage(promptTokens: number, cacheRead: number): void {
		this.requests.usage(promptTokens, cacheRead);
	}

	/** The system prompt and tool set the request carried, and Pi's own loadout then. */
	loadout(sent: LoadoutDigests, host: LoadoutDigests): void {
		this.requests.loadout(sent, host);
	}

	/** Folds the model was told of (a fold or reboundary result) that never landed, and no notice explained yet. */
	lostFolds(): string[] {
		const { toolName, entryTypePrefix } = this.options;
		// Before the first request: read off the branch as named, without building it.
		return lostAnnouncements(this.unbuilt ?? this.branchTracker.entries, this.ledger.state, toolName, entryTypePrefix);
	}

	// --- The queue of custom entries ---

	/** A custom entry to persist at the next boundary (or when the host flushes while idle). */
	queue(customType: string, data: unknown): void {
		this.ledger.queued.push({ customType, data });
	}

	/** Everything queued, for a host that persists it now (Pi idle, or a settled run). */
	takeQueued(): QueuedEntry[] {
		return this.ledger.queued.take();
	}

	/** Queue again whatever the last boundary handed over that the branch does not hold. */
	reconcile(): void {
		this.ledger.queued.reconcile(this.tracker.entries);
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
			state: this.ledger.state,
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
		this.ledger.apply(change, this.options.entryTypePrefix, this.tracker.latestEdits, commit);
		this.book.changedSinceDecision = true;
		this.requests.note(change.causes);
	}

	// --- The commit sequence ---

	/**
	 * One automatic commit: plan (the ladder decides; every decided fold is
	 * planned against one evolving lattice), store (every new fold's exact
	 * source, verified against its hash), apply (state, queue, counters).
	 * Returns what the summarizer may prepare next.
	 */
	async commit(host: HostFacts, request: CommitRequest = {}): Promise<CommitOutcome> {
		const plan = this.plan(host, request);
		if (plan.kind === "off") return { kind: "off", folded: false };
		if (plan.kind !== "planned") {
			const prepare = plan.kind === "declined" ? { prepare: plan.prepare } : {};
			return { kind: "declined", folded: false, decision: plan.decision, ...prepare };
		}
		const stored = await this.storeSources(plan.planned);
		if ("storeError" in stored) {
			// Nothing is applied: a fold whose source is not stored would not be one peek away.
			this.book.declined(plan.decision, stored.storeError);
			return { kind: "store-failed", folded: false, ...stored };
		}
		const prepare = this.applyCommit(plan);
		const folds = plan.planned.change.records.length;
		return { kind: "committed", folded: folds > 0, folds, summary: plan.planned.summary, prepare, ...stored };
	}

	/** The plan step: the ladder's decision over one input value, and the commit planned when it decides one. */
	private plan(host: HostFacts, request: CommitRequest): AutomaticPlan {
		// Another process appending to the session file stops automatic folding: its entries are invisible here.
		this.book.otherWriter ??= this.host.foreignEntry?.();
		if (this.book.otherWriter !== undefined) return { kind: "off" };
		const pending = this.requests.pending;
		const plan = planAutomatic({
			view: this.tracker.view,
			lattice: this.lattice(),
			state: this.ledger.state,
			reading: this.reading(host),
			host,
			options: this.options,
			freeRewrite: pending.any || this.book.coldCache,
			justDissolved: pending.reboundary,
			...(request.force ? { force: request.force } : {}),
			...(request.under === undefined ? {} : { under: request.under }),
			briefSource: this.host.briefSource?.(host.cwd),
		});
		this.book.decided(plan);
		return plan;
	}

	/**
	 * The store step: every new fold's source written from the log's bytes
	 * (cut at its children, so only what it adds is written; a corrupt stored
	 * copy replaced and kept aside), or why a write failed.
	 */
	private async storeSources(
		planned: PlannedCommit,
	): Promise<
		| { repaired: { foldId: string; quarantined: string }[] }
		| { storeError: string; storeCode: string | undefined; storeProblem: string }
	> {
		const repaired: { foldId: string; quarantined: string }[] = [];
		for (const [hash, source] of planned.sources) {
			try {
				const put = await putFoldSource(this.storeOf, hash, source);
				const foldId = planned.change.records.find((record) => record.sourceHash === hash)?.id ?? hash;
				if (put.repaired) repaired.push({ foldId, quarantined: put.quarantined ?? "" });
			} catch (error) {
				const storeCode = error instanceof FoldStoreError ? error.code : undefined;
				const storeProblem = error instanceof Error ? error.message : String(error);
				return { storeError: `store write failed: ${String(error)}`, storeCode, storeProblem };
			}
		}
		return { repaired };
	}

	/** The apply step: the change, the counters, and what the ladder may propose next. */
	private applyCommit(plan: Extract<AutomaticPlan, { kind: "planned" }>): PrepareHint {
		const { planned, input, decision } = plan;
		this.apply({ ok: true, text: "", change: planned.change }, planned.summary);
		this.book.committed(planned.summary);
		const marks = this.ledger.state.data.marks;
		return { input: { ...input, lattice: this.lattice(), marks }, tailStart: decision.freshTailStart };
	}

	/**
	 * A turn boundary (`turn_end`, `agent_before_settle`): reconcile the queue
	 * with the branch, let `decide` act (the ladder commits), and hand off the
	 * custom entries and drafts the host persists.
	 */
	async boundary(host: HostFacts, decide: BoundaryDecider = "ladder"): Promise<BoundaryOutcome> {
		this.reconcile();
		const commit = decide === "ladder" ? await this.commit(host) : undefined;
		if (typeof decide === "function") decide(this, host);
		return { commit, handed: this.boundaryEntries() };
	}

	/**
	 * The `context` hook: a request over the serving budget first gets a
	 * forced commit (the fence; off for a reference policy), then the request
	 * goes out with any preview. `messages`: the host's list (default: Pi's
	 * projection of the session); `awaitSent`: the host shows the final list
	 * to `sent` once every other handler ran.
	 */
	async prepareRequest(
		host: HostFacts,
		messages?: readonly AgentMessage[],
		options: { awaitSent?: boolean; fence?: boolean } = {},
	): Promise<RequestOutcome & { commit?: CommitOutcome }> {
		const fence = options.fence !== false && this.overBudget(host, messages);
		const commit = fence ? await this.commit(host, { force: "fence" }) : undefined;
		const outcome = this.request(host, messages, options.awaitSent);
		return commit ? { ...outcome, commit } : outcome;
	}

	/** Whether the boundary before a run settles can decide anything new (`CommitBook.changedSinceDecision`). */
	settleBoundaryWanted(): boolean {
		return this.book.changedSinceDecision;
	}

	/**
	 * The hand-off at a boundary: the queued custom entries and the drafts, or
	 * nothing. A next window that differs from what the last request sent
	 * announces the causes of the changes applied since (with or without
	 * drafts); drafts the `context` hook already previewed change nothing.
	 */
	boundaryEntries(): BoundaryOutcome["handed"] {
		const drafts = this.pendingDrafts();
		const { queued } = this.ledger;
		if (drafts.length === 0 && queued.size === 0) return undefined;
		const custom = queued.handOff(this.tracker.entries.length);
		// With no drafts the persisted window is the next request, and an announced change may still rewrite what
		// the last request sent: a dissolve of a fold only ever previewed, never persisted, leaves nothing to draft.
		const next =
			drafts.length > 0
				? this.next.withDrafts(drafts).messages()
				: this.requests.pending.any
					? this.next.messages()
					: undefined;
		this.requests.landing(next);
		return { custom, drafts };
	}

	// --- What the host shows ---

	/** Status details: folds, budget, instrument, the automatic commits, pending edits. */
	status(budget: BudgetFacts, host: HostFacts, evidence?: EvidenceFacts): StatusDetails {
		return statusDetails({
			lattice: this.lattice(),
			view: this.tracker.view,
			state: this.ledger.state,
			instrument: this.requests.instrument,
			budget,
			store: { kind: this.storeOf.kind, location: this.storeOf.location },
			pendingEdits: this.pendingDrafts().length,
			automatic: automaticFacts({
				options: this.options,
				marks: this.ledger.state.data.marks,
				reading: () => this.reading(host),
				view: this.tracker.view,
				counters: { ...this.book.counters, fenceRefusals: this.requests.fenceRefusals },
				lastDecision: this.book.lastDecision,
			}),
			...(evidence ? { evidence } : {}),
		});
	}

	// --- The window and the request ---

	/** Edits that move the persisted window to the current fold state. */
	pendingDrafts(): ContextEditEntryDraft[] {
		return this.next.drafts({
			state: this.ledger.state,
			lattice: this.lattice(),
			parents: this.ledger.parents(),
			brandNoun: this.options.brandNoun,
			managed: this.ledger.managed,
		});
	}

	/** What the next request will hold once every decided edit is persisted, with range sums by branch position. */
	reading(host: Pick<HostFacts, "fixedTokens">): WindowReading {
		return this.next.reading(host.fixedTokens, this.pendingDrafts());
	}

	/** The request's messages as Pi builds them from the session (system messages excluded). */
	requestMessages(): readonly AgentMessage[] {
		return this.next.messages();
	}

	/** True when the request (the host's messages, or Pi's projection of the session) is over the serving budget. */
	overBudget(host: HostFacts, messages?: readonly AgentMessage[]): boolean {
		return host.budget !== undefined && this.window.tokens(messages, host.fixedTokens) > host.budget;
	}

	/** The window as the request path reads it (requests.ts). */
	private readonly window: RequestWindow = {
		persisted: () => this.next.messages(),
		drafts: () => this.pendingDrafts(),
		drafted: (drafts) => this.next.withDrafts(drafts).messages(),
		// A host's own list is measured without building a deferred branch; Pi's projection needs it built.
		tokens: (messages, fixed) =>
			messages === undefined
				? this.next.requestTokens(this.next.messages(), fixed)
				: this.nextWindow.requestTokens(messages, fixed),
		deferred: () =>
			this.unbuilt !== undefined &&
			this.ledger.state.skipped === 0 &&
			persistedBriefsHold(this.unbuilt, this.lattice(), this.options.brandNoun),
	};

	/** The request after any fence commit (requests.ts): preview, fence verdict, observation. */
	request(host: HostFacts, messages?: readonly AgentMessage[], awaitSent = false): RequestOutcome {
		return this.requests.request(this.window, host, this.options.brandNoun, messages, awaitSent);
	}

	/** What the prepared request actually sent, after every handler ran (system messages excluded). */
	sent(messages: readonly AgentMessage[]): RewriteEvent | undefined {
		return this.requests.sent(messages);
	}
}

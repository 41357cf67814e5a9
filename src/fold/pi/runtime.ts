/**
 * The fold runtime's host shell: Pi events in, durable state and
 * `context_edit` drafts out.
 *
 * Decisions (folds, expansions, …) change the in-memory fold state at once;
 * their custom entries persist at the next turn boundary (or immediately when
 * Pi is idle). The window changes only through `context_edit` drafts returned
 * from `turn_end` / `agent_before_settle`, so Pi's own projection, token
 * accounting, compaction and `/tree` see the folded window. When a request
 * goes out before the edits are persisted (a `/fold-context` typed while
 * idle), the `context` hook sends exactly the projection Pi will build once
 * they are, so the bytes match. Every request feeds the append-only
 * instrument.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type {
	ContextEditEntry,
	ContextEditEntryDraft,
	ExtensionAPI,
	ExtensionContext,
	SessionBoundaryDraft,
	SessionEntry,
	SessionProjection,
} from "@earendil-works/pi-coding-agent";
import { rateCardFromModelCost } from "../../cost/rate-card.ts";
import { latestEdits } from "../../session/projection.ts";
import { estimateMessagesTokens, PI_CHARS_PER_TOKEN, promptTokensOf } from "../../session/tokens.ts";
import type { ActionOutcome, FoldChange, FoldWorkspace } from "../actions/actions.ts";
import { type AutomaticFacts, type StatusDetails, statusDetails } from "../actions/status.ts";
import { formatWindowListing } from "../actions/window-listing.ts";
import { type CommitSummary, describeCommit, planCommit, type QueuedEntry, requeueLost } from "../engine/commit.ts";
import {
	announce,
	emptyInstrument,
	firstDivergence,
	hostLoadout,
	type InstrumentState,
	messageDigest,
	observeLoadout,
	observeRequest,
	observeUsage,
	type RewriteCause,
	requestLoadout,
} from "../engine/instrument.ts";
import { editDrafts, planWindow, projectionWithDrafts, projectWithDrafts } from "../engine/materialize.ts";
import { type ProjectionCandidate, projectionCandidates } from "../engine/projection-candidates.ts";
import { lostAnnouncements, lostNoticeText, noticeType } from "../engine/recovery.ts";
import { SuggestionRegistry, suggestionEntryType } from "../engine/suggestions.ts";
import type { FoldLattice, FoldOrigin, FoldRecord } from "../lattice/records.ts";
import { analyzeBranch, type BranchView } from "../lattice/units.ts";
import type { ResolvedOptions } from "../options.ts";
import { fenceVerdict, readWindow, servingBudget, tokenPrices, type WindowReading } from "../policy/budget.ts";
import { type CommitDecision, decideCommit, type LadderInput } from "../policy/ladder.ts";
import { emptyFoldState, type FoldState, liveLattice, persistChange, rebuildState } from "../state/state.ts";
import type { FoldOp } from "../state/state-schema.ts";
import { createMemoryFoldStore, type FoldStore } from "../store/store.ts";
import { EvidenceHost } from "./evidence-host.ts";
import { foreignTail } from "./other-writer.ts";
import {
	branchKey,
	editFingerprint,
	freshTailStart,
	lastCommitOn,
	openSessionStore,
	STRICT_APPEND_ONLY_ENV,
	startsWith,
	strictAppendOnly,
	withoutSystem,
} from "./runtime-support.ts";
import { FoldSummarizer } from "./summarizer.ts";

export class FoldRuntime {
	readonly options: ResolvedOptions;
	private readonly pi: ExtensionAPI;
	private state: FoldState = emptyFoldState();
	/** The live lattice of `state`, rebuilt only when the state changes. */
	private latticeCache: { state: FoldState; lattice: FoldLattice } | undefined;
	private instrumentState: InstrumentState = emptyInstrument();
	private store: FoldStore = createMemoryFoldStore();
	/** Custom entries decided mid-turn, persisted at the next boundary. */
	private queued: QueuedEntry[] = [];
	/** Entries handed to the last boundary; Pi drops a whole boundary when any draft in it is invalid. */
	private inFlight: QueuedEntry[] = [];
	/** The ladder's last commit and its last decision, for status. */
	private lastCommit: CommitSummary | undefined;
	private lastDecision: CommitDecision | undefined;
	private commits = 0;
	private cancelledCompactions = 0;
	private fenceRefusals = 0;
	/** A blocking tool ran since the last boundary: the prefix cache is presumed cold, a commit costs no extra re-read. */
	private coldCache = false;
	private viewMemo: { key: string; view: BranchView } | undefined;
	/** The last window reading, valid while the state, the branch and the system prompt are unchanged. */
	private readingMemo: { state: FoldState; key: string; reading: WindowReading } | undefined;
	/** The last drafts computed, valid while the state and the branch's edits and compactions are unchanged. */
	private draftsMemo: { state: FoldState; key: string; drafts: ContextEditEntryDraft[] } | undefined;
	/** Set once another process is seen appending to the session file: automatic folding stops. */
	private otherWriter: string | undefined;
	/** Why the next window rewrite happens; handed to the instrument when edits land. */
	private causes = new Set<RewriteCause>();
	/** Oversized MCP results as verified artifacts (evidence-host.ts). */
	readonly evidence: EvidenceHost;
	/** The last session context, for host callbacks that get none (projection provider, suggestion reports). */
	private hostCtx: ExtensionContext | undefined;
	/** Suggestion sources a host registered; their reports persist as custom entries, nothing renders. */
	readonly suggestions: SuggestionRegistry;
	/** Model briefs (summarizer.ts): requested in the background, used by a commit only when ready. */
	readonly summarizer: FoldSummarizer;

	constructor(pi: ExtensionAPI, options: ResolvedOptions) {
		this.pi = pi;
		this.options = options;
		this.evidence = new EvidenceHost(options);
		this.suggestions = new SuggestionRegistry((data) => {
			this.queued.push({ customType: suggestionEntryType(this.options.entryTypePrefix), data });
			if (this.hostIdle()) this.flushQueued();
		});
		// --- summarizer: its usage records ride the same queue as every other custom entry ---
		this.summarizer = new FoldSummarizer(options, {
			record: (customType, data) => {
				this.queued.push({ customType, data });
				if (this.hostIdle()) this.flushQueued();
			},
		});
	}

	/** Wire the runtime to Pi's events. */
	register(): void {
		const pi = this.pi;
		pi.on("session_start", (_event, ctx) => {
			this.reset(ctx);
			this.explainLostFolds(ctx);
			this.summarizer.start(ctx); // --- summarizer: resolve its model, one notice if it cannot ---
		});
		pi.on("session_tree", (_event, ctx) => {
			this.reset(ctx);
			this.instrumentState = announce(this.instrumentState, "navigation");
		});
		pi.on("context", (event, ctx) => this.onContext(event.messages, ctx));
		// Observation only: returning nothing leaves the prompt and tool declarations to Pi.
		pi.on("context_with_system", (event, ctx) => {
			const host = hostLoadout(ctx.getSystemPrompt(), pi.getActiveTools());
			this.instrumentState = observeLoadout(this.instrumentState, requestLoadout(event.messages), host).state;
			return undefined;
		});
		// evidenceIngestion: false registers no hook at all, so nothing is ever written.
		if (this.options.evidenceIngestion) pi.on("tool_result", (event) => this.evidence.onToolResult(event));
		this.options.setProjectionProvider?.(() => this.projectionCandidates());
		this.options.setSuggestionSourceRegistrar?.(this.suggestions.register);
		pi.on("turn_end", (event, ctx) => this.onBoundary(event.entries, ctx, event.context?.contextEntries));
		pi.on("agent_before_settle", (event, ctx) => this.onBoundary(event.entries, ctx, event.context?.contextEntries));
		pi.on("tool_call", (event) => {
			if (this.options.blockingTools.includes(event.toolName)) this.coldCache = true;
		});
		pi.on("session_before_compact", async (event, ctx) => {
			if (event.reason !== "threshold" || !ctx.model) return undefined;
			// Pi compacts above contextWindow − reserveTokens; a lossless fold that gets under that line wins.
			const line = ctx.model.contextWindow - event.preparation.settings.reserveTokens;
			const committed = await this.autoCommit(
				ctx,
				"threshold",
				(reading, decision) => reading.total - decision.freedTokens <= line,
			);
			if (!committed) return undefined;
			this.cancelledCompactions++;
			return { cancel: true };
		});
		pi.on("agent_settled", (_event, ctx) => {
			this.reconcile(ctx.sessionManager.getBranch());
			this.flushQueued();
		});
		pi.on("session_compact", () => {
			this.instrumentState = announce(this.instrumentState, "compaction");
		});
		pi.on("message_end", (event) => {
			const message = event.message;
			if (message.role !== "assistant" || !message.usage) return;
			this.instrumentState = observeUsage(
				this.instrumentState,
				promptTokensOf(message.usage),
				message.usage.cacheRead ?? 0,
			);
		});
	}

	/** Rebuild everything from the active branch (start, resume, reload, tree navigation). */
	private reset(ctx: ExtensionContext): void {
		const manager = ctx.sessionManager;
		this.state = rebuildState(manager.getBranch(), this.options.entryTypePrefix);
		this.queued = [];
		this.inFlight = [];
		this.causes.clear();
		this.lastCommit = lastCommitOn(manager.getBranch(), this.options.entryTypePrefix);
		this.lastDecision = undefined;
		this.coldCache = false;
		this.otherWriter = undefined;
		this.store = openSessionStore(manager.getSessionFile(), manager.getSessionDir(), manager.getSessionId());
		this.evidence.open(manager.getSessionFile(), manager.getSessionDir(), manager.getSessionId());
		this.hostCtx = ctx;
	}

	private hostIdle(): boolean {
		try {
			return this.hostCtx?.isIdle() ?? false;
		} catch {
			return false; // a stale context (after a reload): the next boundary persists the queue
		}
	}

	/** One projection candidate per visible collapsed fold (the provider `setProjectionProvider` receives). */
	projectionCandidates(): ProjectionCandidate[] {
		let branch: readonly SessionEntry[];
		try {
			branch = this.hostCtx?.sessionManager.getBranch() ?? [];
		} catch {
			return [];
		}
		return projectionCandidates({
			lattice: this.lattice(),
			view: this.viewOf(branch),
			expanded: new Set(this.state.data.expanded),
			toolName: this.options.toolName,
		});
	}

	/** Tell the model, appended at its next turn, about folds it was told of that never landed. */
	private explainLostFolds(ctx: ExtensionContext): void {
		const { toolName, entryTypePrefix } = this.options;
		const lost = lostAnnouncements(ctx.sessionManager.getBranch(), this.state, toolName, entryTypePrefix);
		if (lost.length === 0) return;
		this.pi.sendMessage(
			{
				customType: noticeType(entryTypePrefix),
				content: lostNoticeText(lost, toolName),
				display: true,
				details: { foldIds: lost },
			},
			{ deliverAs: "nextTurn" },
		);
	}

	private lattice(): FoldLattice {
		if (this.latticeCache?.state !== this.state)
			this.latticeCache = { state: this.state, lattice: liveLattice(this.state) };
		return this.latticeCache.lattice;
	}

	/** The branch's structural view, reused while the branch is the same (same length, same ends). */
	private viewOf(branch: readonly SessionEntry[]): BranchView {
		const key = branchKey(branch);
		if (this.viewMemo?.key !== key) {
			this.viewMemo = { key, view: analyzeBranch(branch, { readOnlyTools: this.options.readOnlyTools }) };
		}
		return this.viewMemo.view;
	}

	/** A snapshot for actions. The fresh tail starts at the in-flight response (agent) or the latest user turn (command). */
	workspace(
		ctx: ExtensionContext,
		origin: FoldOrigin,
		branch: readonly SessionEntry[] = ctx.sessionManager.getBranch(),
	): FoldWorkspace {
		return {
			branch,
			view: this.viewOf(branch),
			state: this.state,
			lattice: this.lattice(),
			store: this.store,
			options: this.options,
			cwd: ctx.cwd,
			freshTailStart: freshTailStart(branch, origin),
			origin,
			// Recall of entries compacted on earlier branches of the same file.
			sessionEntry: (id) => ctx.sessionManager.getEntry(id),
		};
	}

	/** Apply an action's change to the state and make it durable. */
	apply(outcome: ActionOutcome, ctx: ExtensionContext, commit?: CommitSummary): void {
		const change: FoldChange | undefined = outcome.change;
		if (!outcome.ok || !change) return;
		const baselines = this.baselinesFor(change.records, ctx.sessionManager.getBranch());
		const ops = baselines ? [...change.ops, baselines] : change.ops;
		const plan = persistChange(this.state, this.options.entryTypePrefix, change.records, ops, commit);
		this.state = plan.state;
		for (const cause of change.causes) this.causes.add(cause);
		this.queued.push(...plan.entries);
		if (ctx.isIdle()) this.flushQueued();
	}

	/** Entries a new fold covers for the first time that another extension had already edited. */
	private baselinesFor(records: readonly FoldRecord[], branch: readonly SessionEntry[]): FoldOp | undefined {
		const managed = this.managedEntries();
		const edits = latestEdits(branch);
		const entries: Record<string, ContextEditEntry["replacement"]> = {};
		for (const record of records) {
			for (const part of record.parts) {
				const edit = part.type === "entry" && !managed.has(part.entryId) ? edits.get(part.entryId) : undefined;
				if (edit) entries[edit.targetId] = edit.replacement;
			}
		}
		return Object.keys(entries).length > 0 ? { op: "baseline", entries } : undefined;
	}

	/** Entries some fold record, live or dissolved, has covered. */
	private managedEntries(): Set<string> {
		return new Set(
			this.state.records.flatMap((record) =>
				record.parts.flatMap((part) => (part.type === "entry" ? [part.entryId] : [])),
			),
		);
	}

	private flushQueued(): void {
		const queued = this.queued;
		this.queued = [];
		for (const entry of queued) this.pi.appendEntry(entry.customType, entry.data);
	}

	/** Edits that move the persisted window to the current fold state. */
	pendingDrafts(
		ctx: ExtensionContext,
		branch: readonly SessionEntry[] = ctx.sessionManager.getBranch(),
		projection?: SessionProjection,
	): ContextEditEntryDraft[] {
		// A branch pi-fold never folded needs no edits: skip the planning on every request.
		if (this.state.records.length === 0) return [];
		const key = editFingerprint(branch);
		if (this.draftsMemo?.state === this.state && this.draftsMemo.key === key) return this.draftsMemo.drafts;
		const projected = new Set(
			(projection ?? ctx.sessionManager.buildSessionProjection()).entries.map((entry) => entry.sourceEntry.id),
		);
		const plan = planWindow(branch, {
			lattice: this.lattice(),
			expanded: new Set(this.state.data.expanded),
			brandNoun: this.options.brandNoun,
			inWindow: (id) => projected.has(id),
		});
		const managed = this.managedEntries();
		const baselines = this.state.data.baselines;
		const drafts = editDrafts(branch, plan, {
			inWindow: (id) => projected.has(id),
			managed: (id) => managed.has(id),
			baseline: (id) => (Object.hasOwn(baselines, id) ? baselines[id] : undefined),
		});
		this.draftsMemo = { state: this.state, key, drafts };
		return drafts;
	}

	/** Hand the causes of the rewrite about to happen to the instrument. */
	private announceCauses(): void {
		if (this.causes.size === 0) this.causes.add("commit");
		for (const cause of this.causes) this.instrumentState = announce(this.instrumentState, cause);
		this.causes.clear();
	}

	/**
	 * True once another process has appended to this session file: its entries
	 * are invisible here, so folding would act on a stale branch. Said once.
	 */
	private sawOtherWriter(ctx: ExtensionContext): boolean {
		if (this.otherWriter !== undefined) return true;
		const file = ctx.sessionManager.getSessionFile();
		const foreign = file ? foreignTail(file, (id) => ctx.sessionManager.getEntry(id) !== undefined) : undefined;
		if (foreign === undefined) return false;
		this.otherWriter = foreign;
		ctx.ui.notify(
			`${this.options.brandNoun}: another process is writing this session file (entry ${foreign} is not this process's); automatic folding is off until the session is reopened. Close the other Pi, then /resume.`,
			"warning",
		);
		return true;
	}

	/** Queue again whatever the last boundary did not persist. */
	private reconcile(branch: readonly SessionEntry[]): void {
		this.queued = requeueLost(this.inFlight, this.queued, branch);
		this.inFlight = [];
	}

	/**
	 * What the next request will hold once every decided edit is persisted.
	 * `preview` is a projection Pi already built for this branch (a
	 * boundary's context preview), used when no edit of ours is pending.
	 */
	private readWindow(
		ctx: ExtensionContext,
		branch: readonly SessionEntry[],
		preview?: SessionProjection["entries"],
	): WindowReading {
		const drafts = this.pendingDrafts(ctx, branch);
		const system = ctx.getSystemPrompt();
		// The boundary and the footer after it read the same window: one projection serves both.
		const key = `${branchKey(branch)}|${editFingerprint(branch)}|${system.length}`;
		if (this.readingMemo?.state === this.state && this.readingMemo.key === key) return this.readingMemo.reading;
		const projection =
			drafts.length === 0 && preview
				? { entries: preview }
				: drafts.length > 0
					? projectionWithDrafts(branch, drafts)
					: ctx.sessionManager.buildSessionProjection();
		const reading = readWindow(projection, system);
		this.readingMemo = { state: this.state, key, reading };
		return reading;
	}

	private budget(ctx: ExtensionContext): number | undefined {
		return servingBudget({
			tokens: null,
			descriptor: ctx.model?.contextWindow,
			providerTotalWindow: this.options.providerTotalWindow,
			outputReservation: ctx.model?.maxTokens,
		});
	}

	/**
	 * Let the ladder decide a commit and apply it: every pending mark and
	 * every fold the ladder picks land in the state at once, so the next
	 * boundary (or the `context` preview) shows them as one rewrite.
	 * `accept` may veto a forced commit that would not be enough.
	 */
	private async autoCommit(
		ctx: ExtensionContext,
		force?: "threshold" | "fence",
		accept: (reading: WindowReading, decision: CommitDecision) => boolean = () => true,
		known?: { branch: readonly SessionEntry[]; preview?: SessionProjection["entries"] },
	): Promise<boolean> {
		if (this.sawOtherWriter(ctx)) return false;
		const branch = known?.branch ?? ctx.sessionManager.getBranch();
		const reading = this.readWindow(ctx, branch, known?.preview);
		const ws = this.workspace(ctx, "command", branch);
		const model = ctx.model;
		const input: LadderInput = {
			view: ws.view,
			lattice: ws.lattice,
			protectedIds: new Set(this.state.data.protected),
			reading,
			budget: this.budget(ctx),
			prices: tokenPrices(model ? rateCardFromModelCost(model.id, model.cost, { api: model.api }) : undefined),
			contextToolName: this.options.toolName,
			foldPeekResults: this.options.foldPeekResults,
			marks: this.state.data.marks,
			freeRewrite: this.causes.size > 0 || this.coldCache,
			force,
		};
		const decision = decideCommit(input);
		this.lastDecision = decision;
		if (!decision.commit || !accept(reading, decision)) {
			this.summarizer.prepare(ctx, input, decision.freshTailStart); // --- summarizer: what may fold later ---
			return false;
		}
		const planned = planCommit(decision, {
			view: ws.view,
			lattice: ws.lattice,
			protectedIds: new Set(this.state.data.protected),
			freshTailStart: decision.freshTailStart,
			toolName: this.options.toolName,
			cwd: ctx.cwd,
			briefSource: this.summarizer.briefSource(ctx.cwd), // --- summarizer: a ready brief, else deterministic ---
		});
		if (!planned) return false;
		for (const [hash, source] of planned.sources) {
			try {
				await this.store.put(source, { expectedHash: hash });
			} catch (error) {
				// Nothing is applied: a fold whose source is not stored would not be one peek away.
				this.lastDecision = { ...decision, commit: false, declined: `store write failed: ${String(error)}` };
				return false;
			}
		}
		this.apply({ ok: true, text: "", change: planned.change }, ctx, planned.summary);
		// --- summarizer: what the ladder may propose next, on the lattice this commit leaves ---
		this.summarizer.prepare(
			ctx,
			{ ...input, lattice: this.lattice(), marks: this.state.data.marks },
			decision.freshTailStart,
		);
		this.lastCommit = planned.summary;
		this.commits++;
		this.coldCache = false;
		return planned.change.records.length > 0;
	}

	private async onBoundary(
		proposed: readonly SessionBoundaryDraft[],
		ctx: ExtensionContext,
		preview?: SessionProjection["entries"],
	): Promise<{ entries: SessionBoundaryDraft[] } | undefined> {
		const branch = ctx.sessionManager.getBranch();
		this.reconcile(branch);
		// Pi's preview holds drafts other handlers proposed; ours come on top, so it only stands in when none are.
		await this.autoCommit(ctx, undefined, undefined, { branch, preview: proposed.length === 0 ? preview : undefined });
		const drafts = this.pendingDrafts(ctx, branch);
		if (drafts.length === 0 && this.queued.length === 0) return undefined;
		const custom: SessionBoundaryDraft[] = this.queued.map((entry) => ({ type: "custom", ...entry }));
		this.inFlight.push(...this.queued);
		this.queued = [];
		// Edits the context hook already previewed change nothing the provider has not seen.
		if (drafts.length > 0 && this.wouldRewrite(branch, drafts)) this.announceCauses();
		else this.causes.clear();
		return { entries: [...proposed, ...custom, ...drafts] };
	}

	/** True when persisting `drafts` changes a message the last request already sent. */
	private wouldRewrite(branch: readonly SessionEntry[], drafts: readonly ContextEditEntryDraft[]): boolean {
		const next = withoutSystem(projectWithDrafts(branch, drafts)).map(messageDigest);
		return firstDivergence(this.instrumentState.digests, next) !== -1;
	}

	private async onContext(
		messages: AgentMessage[],
		ctx: ExtensionContext,
	): Promise<{ messages: AgentMessage[] } | undefined> {
		const budget = this.budget(ctx);
		if (budget !== undefined && this.requestTokens(messages, ctx) > budget) {
			// Over budget: fold whatever is eligible now; the preview below sends it.
			await this.autoCommit(ctx, "fence");
		}
		const branch = ctx.sessionManager.getBranch();
		const projection = ctx.sessionManager.buildSessionProjection();
		const drafts = this.pendingDrafts(ctx, branch, projection);
		let sent = messages;
		// The context event carries no system messages; compare and replace like for like.
		const persisted = withoutSystem(projection.messages);
		if (drafts.length > 0) {
			// Only replace what Pi built from the session; anything another handler appended stays after it.
			if (startsWith(messages, persisted)) {
				sent = [...withoutSystem(projectWithDrafts(branch, drafts)), ...messages.slice(persisted.length)];
				this.announceCauses();
			}
		}
		// Pi structured-clones the event's messages, so hashing them would cost a full pass per request.
		// When nothing was previewed and no handler added or removed messages, the persisted projection's
		// own (memoized) objects stand for them.
		const verdict = fenceVerdict(this.requestTokens(sent, ctx), budget, this.options.brandNoun);
		if (!verdict.ok) {
			// Out of band only: the window never carries the refusal.
			this.fenceRefusals++;
			ctx.ui.notify(verdict.message, "error");
			ctx.abort();
			return undefined;
		}
		const observedList = sent === messages && messages.length === persisted.length ? persisted : sent;
		const observed = observeRequest(this.instrumentState, observedList);
		this.instrumentState = observed.state;
		if (observed.event && observed.event.causes.length === 0 && strictAppendOnly()) {
			throw new Error(
				`pi-fold: unattributed rewrite at request ${observed.event.request}: message ${observed.event.firstDivergentIndex} changed with no commit, expand, refold, rebrief, reboundary, compaction or navigation behind it (${STRICT_APPEND_ONLY_ENV} is set)`,
			);
		}
		return sent === messages ? undefined : { messages: sent };
	}

	/** Estimated prompt tokens of a request: its messages plus the system prompt. */
	private requestTokens(messages: readonly AgentMessage[], ctx: ExtensionContext): number {
		return estimateMessagesTokens(messages) + Math.ceil(ctx.getSystemPrompt().length / PI_CHARS_PER_TOKEN);
	}

	/** The window's entries and folds with their ids (status detail "window"). */
	windowListing(ctx: ExtensionContext): string {
		const ws = this.workspace(ctx, "command");
		return formatWindowListing(ws.lattice, ws.view, new Set(this.state.data.expanded));
	}

	status(ctx: ExtensionContext): StatusDetails {
		const ws = this.workspace(ctx, "command");
		const usage = ctx.getContextUsage();
		const details = statusDetails({
			lattice: ws.lattice,
			view: ws.view,
			state: this.state,
			instrument: this.instrumentState,
			budget: {
				tokens: usage?.tokens ?? null,
				descriptor: ctx.model?.contextWindow ?? usage?.contextWindow,
				providerTotalWindow: this.options.providerTotalWindow,
				outputReservation: ctx.model?.maxTokens,
			},
			store: { kind: this.store.kind, location: this.store.location },
			pendingEdits: this.pendingDrafts(ctx, ws.branch).length,
			automatic: this.automaticFacts(ctx, ws),
			evidence: this.evidence.facts(),
		});
		details.summarizer = this.summarizer.status(); // --- summarizer: its counts in status ---
		return details;
	}

	// --- Read-only view for the human UI (footer status, /context); changes nothing. ---

	/** The window the next request will hold (decided edits applied) and the serving budget it is measured against. */
	nextWindow(ctx: ExtensionContext): { reading: WindowReading; budget: number | undefined } {
		return { reading: this.readWindow(ctx, ctx.sessionManager.getBranch()), budget: this.budget(ctx) };
	}

	private automaticFacts(ctx: ExtensionContext, ws: FoldWorkspace): AutomaticFacts {
		const marks = this.state.data.marks;
		const reading = marks.length > 0 ? this.readWindow(ctx, ws.branch) : undefined;
		return {
			scheduling: this.options.foldScheduling,
			marks,
			reading,
			view: ws.view,
			lastCommit: this.lastCommit,
			lastCommitText: this.lastCommit ? describeCommit(this.lastCommit) : undefined,
			declined: this.lastDecision?.commit === false ? this.lastDecision.declined : undefined,
			commits: this.commits,
			cancelledCompactions: this.cancelledCompactions,
			fenceRefusals: this.fenceRefusals,
		};
	}
}

export { freshTailStart, STRICT_APPEND_ONLY_ENV };

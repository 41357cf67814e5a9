/**
 * The Pi adapter: Pi's events in, the fold engine's decisions carried out.
 * It decides nothing and orders no steps: src/fold/engine/ decides, and runs
 * the commit sequence (plan, store, apply, hand off) for every host alike.
 * The adapter tells the engine what Pi appended to the branch (walking back
 * from the leaf to the last entry the engine knows, so a request costs what
 * changed, not a walk of the whole branch), reads the host facts off Pi's
 * context, opens the session's fold store, answers the engine's questions
 * (prepared briefs, another process on the session file), persists custom
 * entries (at the boundary, or at once while Pi is idle), returns
 * `context_edit` drafts from `turn_end` / `agent_before_settle`, sends the
 * `context` hook's preview, refuses a request over budget out of band,
 * cancels Pi's threshold compaction when a lossless commit gets under Pi's
 * line, answers a provider's overflow refusal with a lossless fold and a
 * retry when that fits (overflow.ts), and runs the summarizer's requests in
 * the background.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type {
	AgentBeforeSettleEvent,
	AgentBeforeSettleEventResult,
	ExtensionAPI,
	ExtensionContext,
	SessionBoundaryDraft,
	SessionEntry,
} from "@earendil-works/pi-coding-agent";
import { promptTokensOf } from "../../session/tokens.ts";
import { formatWindowListing } from "../actions/window-listing.ts";
import type { CommitOutcome, CommitRequest } from "../engine/automatic.ts";
import { FoldEngine } from "../engine/engine.ts";
import { type HostFacts, modelHostFacts, toolDeclarationTokens } from "../engine/host-facts.ts";
import { hostLoadout, requestLoadout, strictFailure } from "../engine/instrument.ts";
import { lostNoticeText, noticeType } from "../engine/recovery.ts";
import type { StatusDetails } from "../engine/status-facts.ts";
import type { ActionOutcome, FoldWorkspace } from "../engine/workspace.ts";
import type { FoldOrigin } from "../lattice/records.ts";
import type { ResolvedOptions } from "../options.ts";
import type { WindowReading } from "../policy/budget.ts";
import { type ProjectionCandidate, projectionCandidates } from "../projection-candidates.ts";
import { SuggestionRegistry, suggestionEntryType } from "../suggestions.ts";
import { ListenerWhileWanted, QuietFirstTurn } from "./boundary-listeners.ts";
import { EvidenceHost } from "./evidence-host.ts";
import { OtherWriterWatch } from "./other-writer.ts";
import { OverflowRecovery } from "./overflow-recovery.ts";
import {
	openSessionStore,
	STRICT_APPEND_ONLY_ENV,
	StoreTrouble,
	strictAppendOnly,
	strictFailureText,
} from "./runtime-support.ts";
import { FoldSummarizer } from "./summarizer.ts";

export class FoldRuntime {
	readonly engine: FoldEngine;
	readonly pi: ExtensionAPI;
	/** The provider's overflow refusals, answered with a fold and a retry when that fits. */
	private readonly overflow: OverflowRecovery;
	/** The leaf the engine's branch ends at; a different leaf means entries were appended (or the branch moved). */
	private syncedLeaf: string | null | undefined;
	/** Oversized MCP results as verified artifacts (evidence-host.ts). */
	readonly evidence: EvidenceHost;
	/** The last session context, for host callbacks that get none (projection provider, suggestion reports). */
	private hostCtx: ExtensionContext | undefined;
	/** Suggestion sources a host registered; their reports persist as custom entries, nothing renders. */
	readonly suggestions: SuggestionRegistry;
	/** Model briefs: requested in the background, used by a commit only when ready. */
	readonly summarizer: FoldSummarizer;
	/** What this process last saw of the session file: entries appended since must be ones it knows. */
	private readonly writers = new OtherWriterWatch();
	/** A store that cannot be written: the person is told once. */
	private readonly storeTrouble: StoreTrouble;

	constructor(pi: ExtensionAPI, options: ResolvedOptions) {
		this.pi = pi;
		this.engine = new FoldEngine(options, {
			briefSource: (cwd) => this.summarizer.briefSource(cwd),
			foreignEntry: () => this.foreignEntry(),
		});
		this.overflow = new OverflowRecovery(this);
		this.evidence = new EvidenceHost(options);
		this.storeTrouble = new StoreTrouble(options.brandNoun);
		const persist = (customType: string, data: unknown) => {
			this.engine.queue(customType, data);
			if (this.hostIdle()) this.flushQueued();
		};
		this.suggestions = new SuggestionRegistry((data) =>
			persist(suggestionEntryType(this.options.entryTypePrefix), data),
		);
		this.summarizer = new FoldSummarizer(options, { record: persist });
	}

	/** The options in force: a value, replaced (never mutated) by `configure`. */
	get options(): ResolvedOptions {
		return this.engine.options;
	}

	/** New options for the engine and everything that reads them (a session's settings, a saved setting). */
	configure(options: ResolvedOptions): void {
		this.engine.configure(options);
		this.summarizer.configure(options);
		this.evidence.configure(options);
	}

	/** Wire the runtime to Pi's events. */
	register(): void {
		const pi = this.pi;
		pi.on("session_start", (_event, ctx) => {
			this.reset(ctx);
			this.explainLostFolds();
			this.summarizer.start(ctx);
		});
		pi.on("session_tree", (_event, ctx) => {
			this.reset(ctx);
			this.engine.navigated();
		});
		pi.on("context", (event, ctx) => this.onContext(event.messages, ctx));
		// Observation only: returning nothing leaves the messages, prompt and tool declarations to Pi.
		pi.on("context_with_system", (event, ctx) => {
			this.onSent(event.messages, ctx);
			return undefined;
		});
		// evidenceIngestion: false registers no hook at all, so nothing is ever written.
		if (this.options.evidenceIngestion) pi.on("tool_result", (event) => this.evidence.onToolResult(event));
		this.options.setProjectionProvider?.(() => this.projectionCandidates());
		this.options.setSuggestionSourceRegistrar?.(this.suggestions.register);
		this.listenAtBoundaries();
		pi.on("tool_call", (event) => this.engine.toolCalled(event.toolName));
		pi.on("session_before_compact", async (event, ctx) => {
			if (event.reason !== "threshold" || !ctx.model) return undefined;
			// Pi compacts above contextWindow − reserveTokens; a lossless fold that gets under that line wins.
			this.reserveTokens = event.preparation.settings.reserveTokens;
			const line = ctx.model.contextWindow - event.preparation.settings.reserveTokens;
			const { folded } = await this.autoCommit(ctx, { force: "threshold", under: line });
			this.listenAtBoundaries();
			if (!folded) return undefined;
			this.engine.cancelledCompaction();
			return { cancel: true };
		});
		pi.on("agent_settled", (_event, ctx) => {
			// An aborted run skips agent_before_settle: the retry it would have asked for is not owed any more.
			this.overflow.takeRetry();
			this.sync(ctx);
			this.engine.reconcile();
			this.flushQueued();
		});
		pi.on("session_compact", () => this.engine.compacted());
		pi.on("message_end", (event) => {
			const message = event.message;
			if (message.role !== "assistant") return;
			// A quiet turn has no turn_end handler to see it fail: the settle boundary must look for an overflow.
			if (message.stopReason === "error" && this.firstTurn.quiet) {
				this.lastTurnFailed = true;
				this.listenAtBoundaries();
			}
			if (!message.usage) return;
			this.engine.usage(promptTokensOf(message.usage), message.usage.cacheRead ?? 0);
		});
	}

	/** One handler per boundary event, each only while wanted (boundary-listeners.ts: Pi projects the branch around each). */
	private readonly turnEnd = new ListenerWhileWanted(() =>
		this.pi.on("turn_end", async (event, ctx) => {
			const handed = await this.onBoundary(event.entries, ctx);
			// A failed turn may be an overflow Pi found nothing to compact for: the settle boundary looks (overflowPiGaveUp).
			this.lastTurnFailed = event.outcome === "error";
			this.listenAtBoundaries();
			this.turnObserved(ctx);
			return handed;
		}),
	);
	private readonly settle = new ListenerWhileWanted(() =>
		this.pi.on("agent_before_settle", (event, ctx) => this.onSettle(event, ctx)),
	);
	private readonly firstTurn = new QuietFirstTurn();

	/**
	 * Listen at a turn's end unless the turn is the quiet first one after a
	 * reset with nothing changed in it; before a run settles only while that
	 * boundary can decide something the last turn's did not: a commit after
	 * the last turn (threshold, action), the ladder's follow-up consolidation,
	 * an overflow fold's retry (overflow.ts).
	 */
	private listenAtBoundaries(): void {
		// After a reset the ladder has not decided yet (`settleBoundaryWanted`); the quiet turn leaves that to the next one.
		const { quiet } = this.firstTurn;
		const changed = quiet ? this.firstTurn.changed : this.engine.settleBoundaryWanted();
		this.turnEnd.want(!quiet || changed);
		this.settle.want(changed || this.overflow.retryOwed || this.lastTurnFailed);
	}

	/** The last turn ended in an error (its boundary keeps the settle listener for the overflow check). */
	private lastTurnFailed = false;

	private async onSettle(
		event: AgentBeforeSettleEvent,
		ctx: ExtensionContext,
	): Promise<AgentBeforeSettleEventResult | undefined> {
		if (event.outcome === "error") await this.overflow.afterFailedRun(ctx);
		const handed = await this.onBoundary(event.entries, ctx);
		// The overflow's fold replaced Pi's recovery compaction, so Pi schedules no retry: this is it.
		return this.overflow.takeRetry() ? { ...handed, continue: true } : handed;
	}

	/**
	 * The overflow attempt (overflow-recovery.ts), registered before the
	 * compactor's handler (index.ts): a lossless fold comes before any
	 * summary, and a compactor that cancels never keeps it from being tried.
	 */
	registerOverflow(): void {
		this.pi.on("session_before_compact", async (event, ctx) => {
			if (event.reason !== "overflow") return undefined;
			const result = await this.overflow.onCompact(event, ctx);
			this.listenAtBoundaries();
			return result;
		});
	}

	/** Called after each turn boundary (the footer's refresh), inside the runtime's own handler. */
	private readonly turnObservers: ((ctx: ExtensionContext) => void)[] = [];

	/** Run `observer` after every turn boundary the runtime handled (not a handler of its own: see `register`). */
	afterTurn(observer: (ctx: ExtensionContext) => void): void {
		this.turnObservers.push(observer);
	}

	/** UI work after a boundary must not cost the boundary its entries: a failure is reported, not thrown. */
	private turnObserved(ctx: ExtensionContext): void {
		for (const observer of this.turnObservers) {
			try {
				observer(ctx);
			} catch (error) {
				ctx.ui.notify(`${this.options.brandNoun}: refresh after the turn failed: ${String(error)}`, "error");
			}
		}
	}

	/** Rebuild everything from the active branch (start, resume, reload, tree navigation). */
	private reset(ctx: ExtensionContext): void {
		const manager = ctx.sessionManager;
		const store = openSessionStore(manager.getSessionFile(), manager.getSessionDir(), manager.getSessionId());
		this.engine.reset(manager.getBranch(), store);
		this.overflow.takeRetry();
		this.lastTurnFailed = false;
		this.firstTurn.reset();
		this.listenAtBoundaries();
		this.writers.start(manager.getSessionFile());
		this.syncedLeaf = manager.getLeafId();
		this.evidence.open(manager.getSessionFile(), manager.getSessionDir(), manager.getSessionId());
		this.hostCtx = ctx;
		this.buildWhenAnswered();
	}

	/** Unsubscribes the handler that builds the engine's deferred branch, while it is registered. */
	private buildListener: (() => void) | undefined;

	/**
	 * The engine builds a reset's branch at first need, and the first request
	 * does not need it (engine `request`): build it once the provider answers
	 * that request, while the model's reply is still being generated, rather
	 * than making the person wait before it is sent. Anything that needs the
	 * branch sooner builds it then.
	 */
	private buildWhenAnswered(): void {
		if (this.engine.built || this.buildListener) return;
		this.buildListener = this.pi.on("after_provider_response", () => {
			this.buildListener?.();
			this.buildListener = undefined;
			this.engine.build();
		});
	}

	/**
	 * Tell the engine what Pi appended since it last looked: walk from the
	 * leaf back to the last entry it knows. A walk that never meets it (the
	 * branch moved without an event) hands over the whole branch instead.
	 */
	sync(ctx: ExtensionContext): void {
		this.hostCtx = ctx;
		const manager = ctx.sessionManager;
		const leaf = manager.getLeafId();
		if (leaf === this.syncedLeaf) return;
		const fresh: SessionEntry[] = [];
		let at = leaf === null ? undefined : manager.getEntry(leaf);
		while (at && at.id !== this.syncedLeaf) {
			fresh.push(at);
			at = at.parentId === null ? undefined : manager.getEntry(at.parentId);
		}
		if (at !== undefined || this.syncedLeaf === null) this.engine.append(fresh.reverse());
		else this.engine.replaceBranch(manager.getBranch());
		this.syncedLeaf = leaf;
	}

	private hostIdle(): boolean {
		try {
			return this.hostCtx?.isIdle() ?? false;
		} catch {
			return false; // a stale context (after a reload): the next boundary persists the queue
		}
	}

	private flushQueued(): void {
		for (const entry of this.engine.takeQueued()) this.pi.appendEntry(entry.customType, entry.data);
	}

	/** The facts of the request about to be made: Pi's model, its budget and prices, the system prompt, the cwd. */
	hostFacts(ctx: ExtensionContext): HostFacts {
		return modelHostFacts(ctx.model, this.options, ctx.getSystemPrompt(), ctx.cwd, {
			toolTokens: this.toolTokens(),
			...(this.reserveTokens === undefined ? {} : { reserveTokens: this.reserveTokens }),
		});
	}

	/** Pi's `compaction.reserveTokens`, once a compaction event showed it (Pi's default until then). */
	reserveTokens: number | undefined;

	/** Declared tools' estimated tokens, recounted only when the active set changes. */
	private toolTokensMemo: { key: string; tokens: number } | undefined;

	private toolTokens(): number {
		const active = this.pi.getActiveTools();
		const key = active.join("\n");
		if (this.toolTokensMemo?.key !== key) {
			const names = new Set(active);
			const declared = this.pi.getAllTools().filter((tool) => names.has(tool.name));
			this.toolTokensMemo = { key, tokens: toolDeclarationTokens(declared) };
		}
		return this.toolTokensMemo.tokens;
	}

	/** One projection candidate per visible collapsed fold (the provider `setProjectionProvider` receives). */
	projectionCandidates(): ProjectionCandidate[] {
		try {
			if (this.hostCtx) this.sync(this.hostCtx);
		} catch {
			return [];
		}
		return projectionCandidates({
			lattice: this.engine.lattice(),
			view: this.engine.view,
			expanded: new Set(this.engine.foldState.data.expanded),
			toolName: this.options.toolName,
		});
	}

	/** Tell the model, appended at its next turn, about folds it was told of that never landed. */
	private explainLostFolds(): void {
		const { toolName, entryTypePrefix } = this.options;
		const lost = this.engine.lostFolds();
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

	/** A snapshot for actions. The fresh tail starts at the in-flight response (agent) or the latest user turn (command). */
	workspace(ctx: ExtensionContext, origin: FoldOrigin): FoldWorkspace {
		this.sync(ctx);
		// Recall of entries compacted on earlier branches of the same file.
		return this.engine.workspace(origin, ctx.cwd, (id) => ctx.sessionManager.getEntry(id), this.hostFacts(ctx));
	}

	/** Apply an action's change and make it durable (at once when Pi is idle). */
	apply(outcome: ActionOutcome, ctx: ExtensionContext): void {
		if (!outcome.ok) this.storeTrouble.failed(ctx, outcome.code, outcome.text);
		else if (outcome.change && outcome.change.records.length + outcome.change.ops.length > 0) this.storeTrouble.ended();
		this.sync(ctx);
		this.engine.apply(outcome);
		this.firstTurn.changed = true;
		this.listenAtBoundaries();
		if (ctx.isIdle()) this.flushQueued();
	}

	/**
	 * An entry another process appended to this session file, told once: its
	 * entries are invisible here, so folding would act on a stale branch. The
	 * engine asks before every commit and stops committing once told.
	 */
	private foreignEntry(): string | undefined {
		const ctx = this.hostCtx;
		const file = ctx?.sessionManager.getSessionFile();
		if (!ctx || !file) return undefined;
		const foreign = this.writers.foreignSince(file, (id) => ctx.sessionManager.getEntry(id) !== undefined);
		if (foreign === undefined) return undefined;
		ctx.ui.notify(
			`${this.options.brandNoun}: another process is writing this session file (entry ${foreign} is not this process's); automatic folding is off until the session is reopened. Close the other Pi, then /resume.`,
			"warning",
		);
		return foreign;
	}

	/** An out-of-turn commit (threshold, overflow): the engine's commit sequence, then what the adapter owes it. */
	async autoCommit(ctx: ExtensionContext, request: CommitRequest): Promise<CommitOutcome> {
		this.sync(ctx);
		return this.committed(ctx, await this.engine.commit(this.hostFacts(ctx), request));
	}

	/** After a commit: persist at once while Pi is idle, and let the summarizer prepare what may fold next. */
	private committed(ctx: ExtensionContext, outcome: CommitOutcome): CommitOutcome {
		if (outcome.kind === "store-failed") this.storeTrouble.failed(ctx, outcome.storeCode, outcome.storeProblem);
		if (outcome.kind === "committed") {
			this.firstTurn.changed = true;
			this.storeTrouble.ended();
			for (const { foldId, quarantined } of outcome.repaired)
				ctx.ui.notify(
					`${this.options.brandNoun}: the stored source of ${foldId} was corrupt; the commit rebuilt it from the session log, whose bytes hash to the fold (the corrupt copy is kept at ${quarantined}).`,
					"warning",
				);
		}
		if (ctx.isIdle()) this.flushQueued();
		if (outcome.prepare) this.summarizer.prepare(ctx, outcome.prepare.input, outcome.prepare.tailStart);
		return outcome;
	}

	private async onBoundary(
		proposed: readonly SessionBoundaryDraft[],
		ctx: ExtensionContext,
	): Promise<{ entries: SessionBoundaryDraft[] } | undefined> {
		this.sync(ctx);
		const { commit, handed } = await this.engine.boundary(this.hostFacts(ctx));
		if (commit) this.committed(ctx, commit);
		if (!handed) return undefined;
		const custom: SessionBoundaryDraft[] = handed.custom.map((entry) => ({ type: "custom", ...entry }));
		return { entries: [...proposed, ...custom, ...handed.drafts] };
	}

	private async onContext(
		messages: AgentMessage[],
		ctx: ExtensionContext,
	): Promise<{ messages: AgentMessage[] } | undefined> {
		this.sync(ctx);
		// Any request after an overflow's fold carries it (queued messages went first): no second retry.
		this.overflow.takeRetry();
		// Over budget, the engine folds whatever is eligible first (the fence); observed in `onSent`.
		const outcome = await this.engine.prepareRequest(this.hostFacts(ctx), messages, { awaitSent: true });
		if (outcome.commit) this.committed(ctx, outcome.commit);
		this.firstTurn.request(this.engine.built, outcome.commit !== undefined);
		this.listenAtBoundaries();
		if (outcome.refused) {
			// Out of band only: the window never carries the refusal.
			ctx.ui.notify(outcome.refused.message, "error");
			ctx.abort();
			return undefined;
		}
		return outcome.sent ? { messages: outcome.sent } : undefined;
	}

	/**
	 * The request as it goes out, after every extension's `context` handler
	 * (Pi runs `context_with_system` after all of them): what the instrument
	 * compares, so a rewrite another extension made is seen and named.
	 */
	private onSent(messages: readonly AgentMessage[], ctx: ExtensionContext): void {
		const event = this.engine.sent(messages.filter((message) => message.role !== "system"));
		this.engine.loadout(requestLoadout(messages), hostLoadout(ctx.getSystemPrompt(), this.pi.getActiveTools()));
		if (event && strictFailure(event) && strictAppendOnly()) throw new Error(strictFailureText(event));
	}

	/** The window's entries and folds with their ids (status detail "window"). */
	windowListing(ctx: ExtensionContext, maxChars?: number): string {
		this.sync(ctx);
		const expanded = new Set(this.engine.foldState.data.expanded);
		return formatWindowListing(this.engine.lattice(), this.engine.view, expanded, maxChars);
	}

	status(ctx: ExtensionContext): StatusDetails {
		this.sync(ctx);
		const usage = ctx.getContextUsage();
		const details = this.engine.status(
			{
				tokens: usage?.tokens ?? null,
				descriptor: ctx.model?.contextWindow ?? usage?.contextWindow,
				providerTotalWindow: this.options.providerTotalWindow,
				outputReservation: ctx.model?.maxTokens,
			},
			this.hostFacts(ctx),
			this.evidence.facts(),
		);
		details.summarizer = this.summarizer.status();
		return details;
	}

	/** The window the next request will hold (decided edits applied) and the serving budget it is measured against. */
	nextWindow(ctx: ExtensionContext): { reading: WindowReading; budget: number | undefined } {
		this.sync(ctx);
		const host = this.hostFacts(ctx);
		return { reading: this.engine.reading(host), budget: host.budget };
	}
}

export { STRICT_APPEND_ONLY_ENV };

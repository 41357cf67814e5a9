/**
 * The deterministic compactor's Pi adapter: event registration, precedence,
 * user notices and per-session state (owner claim, back-off, last results)
 * that the compaction API (api/controller.ts) reads. Every decision is
 * delegated to a pure module (compact-event.ts, branch.ts, session/tool-pairing.ts,
 * api/trigger.ts, api/owner.ts, api/carry.ts); settings are read at each use
 * (settings/settings-source.ts) and their problems reported once per session.
 *
 * Precedence on `session_before_compact`:
 * 1. the exact `__pi_vcc__` instruction: the compactor returns nothing;
 * 2. an owner claim (api/claim.ts): nothing, before any threshold deferral;
 * 3. engine "pi": nothing (Pi's summarizer or another handler);
 * 4. engine "fabric" (default): the compactor compacts and marks the event
 *    `_fabricCompaction`, or cancels when it cannot produce a summary. A
 *    cancellation that would erase an earlier pi-vcc result (event marked
 *    `_piVccOverriding`) is not returned; a rejected typed request still
 *    cancels (fail closed). A `compact.cancel()` armed for a requested
 *    compaction cancels it before anything is computed.
 * An unexpected exception inside the pure compactor never becomes an
 * extension error: it is a cancellation ("internal-error") like any other, so
 * the session keeps its uncompacted context and the user sees why.
 * The calibration's fixed-context estimate is the system prompt plus the
 * tools declared to the model (cut/budget.ts attributes only that to fixed
 * overhead; the rest of Pi's excess over the entries is tokenizer density).
 * Cancellation notices: a rejected typed request is always reported (error);
 * other manual and overflow cancellations warn; threshold ones, and those of
 * compactions the compactor itself triggered, stay quiet because they recur,
 * and a cancelled one backs off (api/trigger.ts) until the context grows.
 *
 * Pi runs `session_before_*` handlers in extension load order and keeps the
 * last non-cancelling result, so an extension loaded later can still replace
 * this result; `session_compact` then classifies the owner and warns once
 * per session (never under an owner claim, which asked for exactly that).
 */

import type {
	ExtensionAPI,
	ExtensionContext,
	SessionBeforeCompactEvent,
	SessionBeforeCompactResult,
	SessionBeforeTreeEvent,
	SessionBeforeTreeResult,
	SessionCompactEvent,
	SessionEntry,
} from "@earendil-works/pi-coding-agent";
import type { SettingsProblem } from "../../host/settings-notice.ts";
import { repairToolPairing } from "../../session/tool-pairing.ts";
import { latestCarry } from "../api/carry.ts";
import { type ClaimResult, type OwnerClaimRequest, OwnerClaims } from "../api/claim.ts";
import {
	COMPACTION_READY_CHANNEL,
	type CompactorState,
	createCompactionApi,
	serveCompactionApi,
} from "../api/controller.ts";
import { compactionOwnerOf } from "../api/owner.ts";
import {
	type AutoTrigger,
	autoTrigger,
	backoffAfterCancel,
	backoffHolds,
	mayTrigger,
	type PressureInput,
	shouldDeferThreshold,
	type TriggerBackoff,
} from "../api/trigger.ts";
import type { CompactionApi, CompactionStatus, LastAutoCompaction, LastCompactionResult } from "../api/types.ts";
import { buildDeterministicBranchSummary } from "../branch.ts";
import {
	buildDeterministicCompaction,
	type CompactionOutcome,
	internalErrorCancel,
	internalErrorMessage,
	keptNote,
} from "../compact-event.ts";
import {
	COMPACTOR_CLAIM_MARKER,
	DETERMINISTIC_ENGINE,
	DETERMINISTIC_OWNER,
	PI_VCC_OVERRIDE_MARKER,
	PI_VCC_SENTINEL,
} from "../records/wire.ts";
import { compactionSettingsProblems } from "../settings/notices.ts";
import type { CompactorSettings } from "../settings/settings.ts";
import {
	type CompactionOptions,
	type CompactionSettingsSources,
	NODE_SETTINGS_IO,
	readCompactionSettings,
	type SettingsFileIo,
} from "../settings/settings-source.ts";
import { declaredToolsEstimate, defaultLog, fixedContextEstimateOf, notify, systemPromptEstimate } from "./host.ts";

export type { LastAutoCompaction } from "../api/types.ts";
export type { CompactionOptions } from "../settings/settings-source.ts";
export {
	declaredToolsEstimate,
	LOG_PREFIX,
	type NoticeLevel,
	notify,
} from "./host.ts";
export { COMPACTOR_CLAIM_MARKER, PI_VCC_OVERRIDE_MARKER };

export interface RegisterCompactionDeps {
	/** Settings file access; tests substitute their own. */
	io?: SettingsFileIo;
	/** Where notices go without a UI; default: one line on stderr. */
	log?: (line: string) => void;
	/** The context tool whose `peek` re-reads an entry's exact source; summaries name it for recall. */
	recallTool?: string;
	/** The fold runtime's line naming the folds inside a summarized range (see CompactionInput). */
	foldsNote?: (summarized: readonly SessionEntry[]) => string | undefined;
	/** Structural estimate of the declared tools; `registerCompaction` reads it from Pi at each compaction. */
	toolsEstimate?: () => number | undefined;
}

/** Per-registration state and the event handlers. Exported for tests that drive events directly. */
export class CompactionHooks implements CompactorState {
	/** Sessions that already saw the "another compactor won" warning. */
	private readonly warnedSessions = new Set<string>();
	/** Set when the compactor deliberately yielded the compaction in flight (pi-vcc). */
	private yielded = false;
	/** A compaction the compactor triggered itself and has not seen finish. */
	private autoPending: AutoTrigger | undefined;
	lastAuto: LastAutoCompaction | undefined;
	lastResult: LastCompactionResult | undefined;
	/** Set after a cancelled threshold compaction: the trigger waits for usage to grow. */
	backoff: TriggerBackoff | undefined;
	readonly claims = new OwnerClaims();
	/** The `compact.*` API over this state; set by `registerCompaction`. */
	api: CompactionApi | undefined;
	/** A compaction requested through the API that has not reached `session_before_compact`. */
	private requestPending = false;
	/** `compact.cancel()` armed: the next compaction this compactor sees is cancelled. */
	private cancelArmed = false;
	private readonly options: unknown;
	readonly io: SettingsFileIo;
	private readonly log: (line: string) => void;
	private readonly recallTool: string | undefined;
	private readonly foldsNote: RegisterCompactionDeps["foldsNote"];
	private readonly toolsEstimate: () => number | undefined;

	constructor(options: unknown, deps: RegisterCompactionDeps = {}) {
		this.options = options;
		this.io = deps.io ?? NODE_SETTINGS_IO;
		this.log = deps.log ?? defaultLog;
		this.recallTool = deps.recallTool;
		this.foldsNote = deps.foldsNote;
		this.toolsEstimate = deps.toolsEstimate ?? (() => undefined);
	}

	/** Effective settings for this use (options, then global, then trusted project file). */
	settings(ctx: Pick<ExtensionContext, "cwd" | "isProjectTrusted">): CompactorSettings {
		return this.sources(ctx).settings.settings;
	}

	/** The whole read: settings, files and problems. */
	sources(ctx: Pick<ExtensionContext, "cwd" | "isProjectTrusted">): CompactionSettingsSources {
		return readCompactionSettings(ctx, this.options, this.io);
	}

	/** What the settings files asked for that the compactor could not use (the package entry tells the person, once). */
	settingsProblems(ctx: Pick<ExtensionContext, "cwd" | "isProjectTrusted">): SettingsProblem[] {
		return compactionSettingsProblems(this.sources(ctx));
	}

	beforeCompact(event: SessionBeforeCompactEvent, ctx: ExtensionContext): SessionBeforeCompactResult | undefined {
		this.yielded = false;
		const auto = this.autoPending;
		this.requestPending = false;
		if (event.customInstructions === PI_VCC_SENTINEL) {
			this.yielded = true;
			return this.record(event.reason, { outcome: "yielded", code: "pi-vcc-sentinel" });
		}
		if (this.claims.held) {
			// Under an owner claim the compactor neither compacts, cancels nor defers.
			this.yielded = true;
			return this.record(event.reason, { outcome: "yielded", code: "owner-claim" });
		}
		if (this.cancelArmed) {
			this.cancelArmed = false;
			this.record(event.reason, { outcome: "cancelled", code: "cancelled-by-api" });
			return { cancel: true };
		}
		const settings = this.settings(ctx);
		if (settings.engine === "pi") return this.record(event.reason, { outcome: "yielded", code: "engine-pi" });
		const marked = event as unknown as Record<string, unknown>;
		const piVccResult = marked[PI_VCC_OVERRIDE_MARKER] === true;
		const quiet = event.reason === "threshold" || auto !== undefined;
		const { preparation } = event;
		const contextWindow = ctx.model?.contextWindow;

		if (event.reason === "threshold" && auto === undefined && backoffHolds(this.backoff, preparation.tokensBefore)) {
			// The last threshold compaction could not produce a summary at about this size; wait for growth.
			if (piVccResult) this.yielded = true;
			return piVccResult ? undefined : { cancel: true };
		}
		if (event.reason === "threshold" && auto === undefined) {
			const pressure = this.pressure(ctx, settings, preparation.tokensBefore, contextWindow);
			if (pressure && shouldDeferThreshold(pressure)) {
				if (piVccResult) this.yielded = true;
				return piVccResult ? undefined : { cancel: true };
			}
		}

		const fixedContextEstimate = fixedContextEstimateOf(systemPromptEstimate(ctx), this.toolsEstimate());
		let outcome: CompactionOutcome;
		try {
			outcome = buildDeterministicCompaction({
				branchEntries: event.branchEntries,
				tokensBefore: preparation.tokensBefore,
				reserveTokens: preparation.settings.reserveTokens,
				keepRecentTokens: preparation.settings.keepRecentTokens,
				...(contextWindow !== undefined && contextWindow > 0 ? { contextWindow } : {}),
				targetContextRatio: settings.targetContextRatio,
				reason: event.reason,
				...(event.customInstructions !== undefined ? { customInstructions: event.customInstructions } : {}),
				...(fixedContextEstimate !== undefined ? { fixedContextEstimate } : {}),
				...(this.recallTool !== undefined ? { recallTool: this.recallTool } : {}),
				...(this.foldsNote !== undefined ? { foldsNote: this.foldsNote } : {}),
				carryForward: latestCarry(event.branchEntries),
			});
		} catch (error) {
			outcome = internalErrorCancel(error);
		}
		if (outcome.kind === "cancel") {
			this.record(event.reason, { outcome: "cancelled", code: outcome.code, message: outcome.message });
			if ((event.reason === "threshold" || auto !== undefined) && outcome.code !== "instruction-rejected")
				this.backoff = backoffAfterCancel(preparation.tokensBefore, contextWindow, outcome.code);
		} else if (outcome.kind === "compaction") {
			this.record(event.reason, { outcome: "compacted" });
			this.backoff = undefined;
		}
		switch (outcome.kind) {
			case "defer":
				this.yielded = true;
				return undefined;
			case "cancel":
				// Fail closed: a rejected typed request cancels even over an earlier pi-vcc
				// result. The request named what to preserve; letting pi-vcc's summary
				// stand would silently drop that, so the user must fix the request.
				if (outcome.code === "instruction-rejected") {
					notify(ctx, outcome.message, "error", this.log);
					return { cancel: true };
				}
				if (piVccResult) {
					this.yielded = true;
					return undefined;
				}
				if (!quiet) notify(ctx, outcome.message, "warning", this.log);
				return { cancel: true };
			case "compaction":
				marked[COMPACTOR_CLAIM_MARKER] = true;
				if (!quiet && (outcome.notice !== undefined || outcome.plan.compactAll))
					notify(ctx, outcome.notice ?? keptNote(outcome.plan, event.branchEntries), "warning", this.log);
				return { compaction: outcome.result };
		}
	}

	beforeTree(event: SessionBeforeTreeEvent, ctx: ExtensionContext): SessionBeforeTreeResult | undefined {
		if (!event.preparation.userWantsSummary) return undefined;
		if (this.claims.held?.branchSummary) return undefined;
		if (this.settings(ctx).engine === "pi") return undefined;
		let outcome: ReturnType<typeof buildDeterministicBranchSummary>;
		try {
			outcome = buildDeterministicBranchSummary(event.preparation, this.recallTool);
		} catch (error) {
			// Like compaction: an unexpected exception cancels with a bounded notice, never an extension error.
			notify(ctx, internalErrorMessage("branch summary", error), "warning", this.log);
			return { cancel: true };
		}
		if (outcome.kind === "none") {
			if (outcome.why === "qa-failed") notify(ctx, outcome.message, "warning", this.log);
			return undefined;
		}
		if (outcome.kind === "cancel") {
			notify(ctx, outcome.message, "error", this.log);
			return { cancel: true };
		}
		return { summary: { summary: outcome.summary, details: outcome.details } };
	}

	context(messages: Parameters<typeof repairToolPairing>[0], ctx: ExtensionContext) {
		if (!this.settings(ctx).repairOrphans) return undefined;
		const repaired = repairToolPairing(messages);
		return repaired.messages === messages ? undefined : { messages: repaired.messages };
	}

	afterCompact(event: SessionCompactEvent, ctx: ExtensionContext): void {
		const yielded = this.yielded;
		this.yielded = false;
		this.finishAuto("compacted");
		const owner = compactionOwnerOf(event.compactionEntry);
		if (owner === DETERMINISTIC_OWNER || yielded || this.settings(ctx).engine !== DETERMINISTIC_ENGINE) return;
		const sessionId = ctx.sessionManager.getSessionId();
		if (this.warnedSessions.has(sessionId)) return;
		this.warnedSessions.add(sessionId);
		const who = owner === "external" ? "another extension" : "Pi's own summarizer";
		notify(
			ctx,
			`The deterministic compactor (pi-fold) is the configured engine, but ${who} produced this compaction. ` +
				'Load pi-fold after other compaction extensions, or set compaction.engine to "pi" to hand compaction over.',
			"warning",
			this.log,
		);
	}

	compactFailed(): void {
		this.yielded = false;
		this.finishAuto("failed");
	}

	/** At a settled boundary: compact when a configured threshold or the headroom rule asks for it. */
	settled(aborted: boolean, ctx: ExtensionContext): void {
		if (aborted || this.autoPending !== undefined || this.claims.held) return;
		const settings = this.settings(ctx);
		if (settings.engine !== DETERMINISTIC_ENGINE) return;
		// Nothing configured could fire at any size: skip Pi's usage reading, a projection of the whole branch.
		if (!mayTrigger(settings, ctx.model)) return;
		const usage = ctx.getContextUsage();
		if (!usage || usage.tokens === null) return;
		if (ctx.sessionManager.getBranch().at(-1)?.type === "compaction") return;
		const pressure = this.pressure(ctx, settings, usage.tokens, usage.contextWindow);
		const trigger = pressure ? autoTrigger(pressure) : undefined;
		if (!trigger || backoffHolds(this.backoff, usage.tokens)) return;
		this.autoPending = trigger;
		this.lastAuto = { trigger, tokens: usage.tokens, contextWindow: usage.contextWindow, outcome: "pending" };
		ctx.compact({
			onComplete: () => this.finishAuto("compacted"),
			onError: () => this.finishAuto("failed"),
		});
	}

	resetSession(): void {
		this.yielded = false;
		this.autoPending = undefined;
		this.backoff = undefined;
		this.requestPending = false;
		this.cancelArmed = false;
	}

	/** Session shutdown: the owner claim ends with the session. */
	shutdown(): void {
		this.claims.releaseAll();
		this.resetSession();
	}

	claim(request: OwnerClaimRequest): ClaimResult {
		return this.claims.claim(request);
	}

	requested(): void {
		this.requestPending = true;
	}

	requestEnded(): void {
		this.requestPending = false;
		if (this.autoPending === undefined) this.cancelArmed = false;
	}

	cancelPending(): boolean {
		if (!this.requestPending && this.autoPending === undefined) return false;
		this.cancelArmed = true;
		return true;
	}

	settingsBands(ctx: Pick<ExtensionContext, "cwd" | "isProjectTrusted">) {
		return this.settings(ctx).pressureBands;
	}

	/** Engine, claim, last results and why the trigger waits, if it does. */
	status(
		ctx: Pick<ExtensionContext, "cwd" | "isProjectTrusted" | "getContextUsage">,
	): Omit<CompactionStatus, "owner" | "carry"> {
		const settings = this.settings(ctx);
		const held = this.claims.held;
		const usage = ctx.getContextUsage();
		const tokens = usage?.tokens ?? undefined;
		let waiting: CompactionStatus["waiting"];
		if (held) waiting = { why: "owner-claim", holder: held.holder };
		else if (settings.engine !== DETERMINISTIC_ENGINE) waiting = { why: "engine-pi" };
		else if (this.backoff && (tokens === undefined || backoffHolds(this.backoff, tokens))) {
			const b = this.backoff;
			waiting = {
				why: "backoff",
				...b,
				text:
					`the last threshold compaction was cancelled (${b.cause}) at ${b.cancelledAtTokens} tokens; ` +
					`automatic compaction waits until the context reaches ${b.resumeAtTokens} tokens`,
			};
		}
		return {
			engine: settings.engine,
			...(held ? { claim: { holder: held.holder, branchSummary: held.branchSummary } } : {}),
			...(this.lastAuto ? { lastAuto: this.lastAuto } : {}),
			...(this.lastResult ? { lastResult: this.lastResult } : {}),
			...(waiting ? { waiting } : {}),
		};
	}

	private record(reason: SessionBeforeCompactEvent["reason"], result: Omit<LastCompactionResult, "reason">): undefined {
		this.lastResult = { reason, ...result };
		return undefined;
	}

	private finishAuto(outcome: "compacted" | "failed"): void {
		if (this.autoPending === undefined) return;
		this.autoPending = undefined;
		// A cancel armed for this compaction ends with it (Pi may refuse it before any handler runs).
		if (!this.requestPending) this.cancelArmed = false;
		if (this.lastAuto?.outcome === "pending") this.lastAuto = { ...this.lastAuto, outcome };
	}

	private pressure(
		ctx: ExtensionContext,
		settings: CompactorSettings,
		tokens: number,
		contextWindow: number | undefined,
	): PressureInput | undefined {
		if (contextWindow === undefined || !(contextWindow > 0)) return undefined;
		const model = ctx.model;
		return {
			tokens,
			contextWindow,
			settings,
			...(model ? { model: { provider: model.provider, id: model.id } } : {}),
		};
	}
}

/**
 * Register the deterministic compactor on `pi`. `options` is the raw
 * `compaction` section a host passes (see `CompactionOptions`); Pi's settings
 * files are read on top of it at each use.
 */
export function registerCompaction(
	pi: ExtensionAPI,
	options?: CompactionOptions | unknown,
	deps: RegisterCompactionDeps = {},
): CompactionHooks {
	const hooks = new CompactionHooks(options, { toolsEstimate: () => declaredToolsEstimate(pi), ...deps });
	hooks.api = createCompactionApi(pi, hooks);
	const api = hooks.api;
	serveCompactionApi(pi.events, api);
	pi.on("session_start", (_event, _ctx) => {
		hooks.resetSession();
		pi.events.emit(COMPACTION_READY_CHANNEL, api);
	});
	pi.on("session_shutdown", () => hooks.shutdown());
	pi.on("session_before_compact", (event, ctx) => hooks.beforeCompact(event, ctx));
	pi.on("session_compact", (event, ctx) => hooks.afterCompact(event, ctx));
	pi.on("session_compact_failed", () => hooks.compactFailed());
	pi.on("session_before_tree", (event, ctx) => hooks.beforeTree(event, ctx));
	pi.on("context", (event, ctx) => hooks.context(event.messages, ctx));
	pi.on("agent_settled", (event, ctx) => hooks.settled(event.aborted, ctx));
	return hooks;
}

/**
 * The deterministic compactor's Pi adapter: event registration, precedence,
 * user notices and per-session state. Every decision is delegated to a pure
 * module (compact-event.ts, branch.ts, repair.ts, trigger.ts, owner.ts);
 * settings are read at each use (settings-source.ts).
 *
 * Precedence on `session_before_compact`:
 * 1. the exact `__pi_vcc__` instruction: Fabric returns nothing;
 * 2. engine "pi": Fabric returns nothing (Pi's summarizer or another handler);
 * 3. engine "fabric" (default): Fabric compacts and marks the event
 *    `_fabricCompaction`, or cancels when it cannot produce a summary. A
 *    cancellation that would erase an earlier pi-vcc result (event marked
 *    `_piVccOverriding`) is not returned; a rejected typed request still
 *    cancels (fail closed).
 * An unexpected exception inside the pure compactor never becomes an
 * extension error: it is a cancellation ("internal-error") like any other, so
 * the session keeps its uncompacted context and the user sees why.
 * The calibration's fixed-context estimate is the system prompt plus the
 * tools declared to the model (budget.ts attributes only that to fixed
 * overhead; the rest of Pi's excess over the entries is tokenizer density).
 * Cancellation notices: a rejected typed request is always reported (error);
 * other manual and overflow cancellations warn; threshold ones, and those of
 * compactions Fabric itself triggered, stay quiet because they recur.
 *
 * Pi runs `session_before_*` handlers in extension load order and keeps the
 * last non-cancelling result, so an extension loaded later can still replace
 * Fabric's result; `session_compact` then classifies the owner and warns once
 * per session.
 */

import type {
	ExtensionAPI,
	ExtensionContext,
	SessionBeforeCompactEvent,
	SessionBeforeCompactResult,
	SessionBeforeTreeEvent,
	SessionBeforeTreeResult,
	SessionCompactEvent,
} from "@earendil-works/pi-coding-agent";
import { buildFabricBranchSummary } from "./branch.ts";
import {
	buildFabricCompaction,
	type FabricCompactionOutcome,
	internalErrorCancel,
	internalErrorMessage,
	keptNote,
} from "./compact-event.ts";
import { PI_VCC_SENTINEL } from "./instructions.ts";
import { compactionOwnerOf } from "./owner.ts";
import { repairToolPairing } from "./repair.ts";
import type { FabricCompactionSettings } from "./settings.ts";
import {
	type CompactionOptions,
	NODE_SETTINGS_IO,
	readCompactionSettings,
	type SettingsFileIo,
} from "./settings-source.ts";
import { type AutoTrigger, autoTrigger, type PressureInput, shouldDeferThreshold } from "./trigger.ts";

export type { CompactionOptions } from "./settings-source.ts";

/** Marker Fabric sets on a `session_before_compact` event it claimed. */
export const FABRIC_CLAIM_MARKER = "_fabricCompaction";
/** Marker an earlier pi-vcc handler sets when it supplied the result. */
export const PI_VCC_OVERRIDE_MARKER = "_piVccOverriding";
/** Pi's structural heuristic for context outside the entries (system prompt, tool declarations). */
const CHARS_PER_TOKEN = 4;
/** Prefix of log lines written when no UI is available. */
export const LOG_PREFIX = "[pi-fold]";

export type NoticeLevel = "warning" | "error";

/** The last compaction Fabric triggered itself, for status readers. */
export interface LastAutoCompaction {
	trigger: AutoTrigger;
	tokens: number;
	contextWindow: number;
	outcome: "pending" | "compacted" | "failed";
}

export interface RegisterCompactionDeps {
	/** Settings file access; tests substitute their own. */
	io?: SettingsFileIo;
	/** Where notices go without a UI; default: one line on stderr. */
	log?: (line: string) => void;
	/** The context tool whose `peek` re-reads an entry's exact source; summaries name it for recall. */
	recallTool?: string;
	/** Structural estimate of the declared tools; `registerCompaction` reads it from Pi at each compaction. */
	toolsEstimate?: () => number | undefined;
}

/** Show a bounded notice: the UI when there is one, otherwise a log line. */
export function notify(
	ctx: Pick<ExtensionContext, "hasUI" | "ui">,
	text: string,
	level: NoticeLevel,
	log: (line: string) => void,
): void {
	if (ctx.hasUI) ctx.ui.notify(text, level);
	else log(`${LOG_PREFIX} ${level}: ${text}`);
}

function defaultLog(line: string): void {
	process.stderr.write(`${line}\n`);
}

function systemPromptEstimate(ctx: ExtensionContext): number | undefined {
	try {
		return Math.ceil(ctx.getSystemPrompt().length / CHARS_PER_TOKEN);
	} catch {
		return undefined;
	}
}

/**
 * Structural estimate of the tools declared to the model (the active set):
 * name, description and parameter schema as JSON, at Pi's heuristic. It is
 * fixed context a compaction cannot shrink, so the calibration must not read
 * it as tokenizer density. Undefined when the host cannot list tools.
 */
export function declaredToolsEstimate(pi: Pick<ExtensionAPI, "getActiveTools" | "getAllTools">): number | undefined {
	try {
		const active = new Set(pi.getActiveTools());
		let characters = 0;
		for (const tool of pi.getAllTools()) {
			if (!active.has(tool.name)) continue;
			characters += JSON.stringify({
				name: tool.name,
				description: tool.description,
				parameters: tool.parameters,
			}).length;
		}
		return Math.ceil(characters / CHARS_PER_TOKEN);
	} catch {
		return undefined;
	}
}

/** System prompt plus declared tools; undefined only when neither is known. */
function fixedContextEstimateOf(promptTokens: number | undefined, toolTokens: number | undefined): number | undefined {
	return promptTokens === undefined && toolTokens === undefined ? undefined : (promptTokens ?? 0) + (toolTokens ?? 0);
}

/** Per-registration state and the event handlers. Exported for tests that drive events directly. */
export class CompactionHooks {
	/** Sessions that already saw the "another compactor won" warning. */
	private readonly warnedSessions = new Set<string>();
	/** Set when Fabric deliberately yielded the compaction in flight (pi-vcc). */
	private yielded = false;
	/** A compaction Fabric triggered itself and has not seen finish. */
	private autoPending: AutoTrigger | undefined;
	lastAuto: LastAutoCompaction | undefined;
	private readonly options: unknown;
	private readonly io: SettingsFileIo;
	private readonly log: (line: string) => void;
	private readonly recallTool: string | undefined;
	private readonly toolsEstimate: () => number | undefined;

	constructor(options: unknown, deps: RegisterCompactionDeps = {}) {
		this.options = options;
		this.io = deps.io ?? NODE_SETTINGS_IO;
		this.log = deps.log ?? defaultLog;
		this.recallTool = deps.recallTool;
		this.toolsEstimate = deps.toolsEstimate ?? (() => undefined);
	}

	/** Effective settings for this use (options, then global, then trusted project file). */
	settings(ctx: Pick<ExtensionContext, "cwd" | "isProjectTrusted">): FabricCompactionSettings {
		return readCompactionSettings(ctx, this.options, this.io).settings.settings;
	}

	beforeCompact(event: SessionBeforeCompactEvent, ctx: ExtensionContext): SessionBeforeCompactResult | undefined {
		this.yielded = false;
		const auto = this.autoPending;
		if (event.customInstructions === PI_VCC_SENTINEL) {
			this.yielded = true;
			return undefined;
		}
		const settings = this.settings(ctx);
		if (settings.engine === "pi") return undefined;
		const marked = event as unknown as Record<string, unknown>;
		const piVccResult = marked[PI_VCC_OVERRIDE_MARKER] === true;
		const quiet = event.reason === "threshold" || auto !== undefined;
		const { preparation } = event;
		const contextWindow = ctx.model?.contextWindow;

		if (event.reason === "threshold" && auto === undefined) {
			const pressure = this.pressure(ctx, settings, preparation.tokensBefore, contextWindow);
			if (pressure && shouldDeferThreshold(pressure)) {
				if (piVccResult) this.yielded = true;
				return piVccResult ? undefined : { cancel: true };
			}
		}

		const fixedContextEstimate = fixedContextEstimateOf(systemPromptEstimate(ctx), this.toolsEstimate());
		let outcome: FabricCompactionOutcome;
		try {
			outcome = buildFabricCompaction({
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
			});
		} catch (error) {
			outcome = internalErrorCancel(error);
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
				marked[FABRIC_CLAIM_MARKER] = true;
				if (outcome.plan.compactAll && !quiet)
					notify(ctx, keptNote(outcome.plan, event.branchEntries), "warning", this.log);
				return { compaction: outcome.result };
		}
	}

	beforeTree(event: SessionBeforeTreeEvent, ctx: ExtensionContext): SessionBeforeTreeResult | undefined {
		if (!event.preparation.userWantsSummary) return undefined;
		if (this.settings(ctx).engine === "pi") return undefined;
		let outcome: ReturnType<typeof buildFabricBranchSummary>;
		try {
			outcome = buildFabricBranchSummary(event.preparation, this.recallTool);
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
		if (owner === "fabric" || yielded || this.settings(ctx).engine !== "fabric") return;
		const sessionId = ctx.sessionManager.getSessionId();
		if (this.warnedSessions.has(sessionId)) return;
		this.warnedSessions.add(sessionId);
		const who = owner === "external" ? "another extension" : "Pi's own summarizer";
		notify(
			ctx,
			`Fabric compaction is the configured engine, but ${who} produced this compaction. ` +
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
		if (aborted || this.autoPending !== undefined) return;
		const settings = this.settings(ctx);
		if (settings.engine !== "fabric") return;
		const usage = ctx.getContextUsage();
		if (!usage || usage.tokens === null) return;
		if (ctx.sessionManager.getBranch().at(-1)?.type === "compaction") return;
		const pressure = this.pressure(ctx, settings, usage.tokens, usage.contextWindow);
		const trigger = pressure ? autoTrigger(pressure) : undefined;
		if (!trigger) return;
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
	}

	private finishAuto(outcome: "compacted" | "failed"): void {
		if (this.autoPending === undefined) return;
		this.autoPending = undefined;
		if (this.lastAuto?.outcome === "pending") this.lastAuto = { ...this.lastAuto, outcome };
	}

	private pressure(
		ctx: ExtensionContext,
		settings: FabricCompactionSettings,
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
	pi.on("session_start", () => hooks.resetSession());
	pi.on("session_before_compact", (event, ctx) => hooks.beforeCompact(event, ctx));
	pi.on("session_compact", (event, ctx) => hooks.afterCompact(event, ctx));
	pi.on("session_compact_failed", () => hooks.compactFailed());
	pi.on("session_before_tree", (event, ctx) => hooks.beforeTree(event, ctx));
	pi.on("context", (event, ctx) => hooks.context(event.messages, ctx));
	pi.on("agent_settled", (event, ctx) => hooks.settled(event.aborted, ctx));
	return hooks;
}

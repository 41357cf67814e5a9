/**
 * The overflow attempt in Pi: the provider refused a request as too long.
 * Fold what is eligible if that brings the window under the overflow line
 * (overflow.ts) and have Pi retry; otherwise fold nothing and let Pi's
 * recovery compaction run. Either way the person is told which.
 *
 * Two events carry it. `session_before_compact` (reason "overflow") folds
 * and cancels the compaction, which also cancels Pi's retry: the retry is
 * then owed, and the settle boundary asks for it (`continue: true`). When
 * Pi found nothing to compact and asked no handler, the settle boundary
 * after the failed run finds the unanswered overflow on the branch and does
 * the same. The runtime owns the events; this module owns what they decide.
 */

import type {
	ExtensionAPI,
	ExtensionContext,
	SessionBeforeCompactEvent,
	SessionBeforeCompactResult,
} from "@earendil-works/pi-coding-agent";
import type { CommitOutcome, CommitRequest } from "../engine/automatic.ts";
import type { FoldEngine } from "../engine/engine.ts";
import type { HostFacts } from "../engine/host-facts.ts";
import type { ResolvedOptions } from "../options.ts";
import { PI_DEFAULT_RESERVE_TOKENS } from "../policy/budget.ts";
import {
	overflowFoldedText,
	overflowLine,
	overflowNotEnoughText,
	piReserveTokens,
	unrecoveredOverflow,
} from "./overflow.ts";

/** What the attempt needs of the runtime: its engine and options, and the commit it carries out. */
export interface OverflowHost {
	readonly pi: ExtensionAPI;
	readonly engine: FoldEngine;
	readonly options: ResolvedOptions;
	sync(ctx: ExtensionContext): void;
	hostFacts(ctx: ExtensionContext): HostFacts;
	autoCommit(ctx: ExtensionContext, request: CommitRequest): Promise<CommitOutcome>;
	/** Pi's `compaction.reserveTokens` as last seen in a compaction event. */
	reserveTokens: number | undefined;
}

export class OverflowRecovery {
	private readonly host: OverflowHost;
	/** Set when an overflow's fold replaced Pi's recovery: the next settle boundary asks for the retry. */
	private owed = false;
	/** The failed reply whose overflow was already answered (folded, or left to Pi's compaction). */
	private seen: string | undefined;

	constructor(host: OverflowHost) {
		this.host = host;
	}

	/** A retry is owed to Pi's run (the settle boundary must be listened to). */
	get retryOwed(): boolean {
		return this.owed;
	}

	/** Whether a retry is owed, clearing it: the settle boundary asks for it once, and a settled run owes none. */
	takeRetry(): boolean {
		const owed = this.owed;
		this.owed = false;
		return owed;
	}

	/** The provider refused the request as too long and Pi asks to compact: fold instead when that fits. */
	async onCompact(
		event: SessionBeforeCompactEvent,
		ctx: ExtensionContext,
	): Promise<SessionBeforeCompactResult | undefined> {
		const { host } = this;
		host.reserveTokens = event.preparation.settings.reserveTokens;
		host.sync(ctx);
		this.seen = host.engine.entries.findLast(
			(entry) => entry.type === "message" && entry.message.role === "assistant",
		)?.id;
		if (!(await this.fold(ctx, host.reserveTokens, event.willRetry, true))) return undefined;
		host.engine.cancelledCompaction();
		this.owed = event.willRetry;
		return { cancel: true };
	}

	/**
	 * Pi found nothing to compact after an overflow and asked no one
	 * (overflow.ts): the same fold and retry. Only after a run that ended in
	 * an error, and over the engine's synced branch, not a walk of Pi's.
	 */
	async afterFailedRun(ctx: ExtensionContext): Promise<void> {
		const { host } = this;
		host.sync(ctx);
		const failed = unrecoveredOverflow(host.engine.entries);
		if (!failed || failed.id === this.seen || !ctx.model) return;
		this.seen = failed.id;
		const reserveTokens =
			piReserveTokens(host.pi.getSettings(), ctx.model) ?? host.reserveTokens ?? PI_DEFAULT_RESERVE_TOKENS;
		this.owed = await this.fold(ctx, reserveTokens, true, false);
	}

	/**
	 * Fold everything eligible if that brings the window under the overflow
	 * line (overflow.ts), else nothing; either way the person is told. True
	 * when folds landed. `compacts`: Pi's recovery compaction runs otherwise.
	 * The engine must be synced with Pi's branch (the callers do it).
	 */
	private async fold(
		ctx: ExtensionContext,
		reserveTokens: number,
		retry: boolean,
		compacts: boolean,
	): Promise<boolean> {
		const { host } = this;
		if (!ctx.model) return false;
		// What failed is what the next request holds: Pi omitted the failed reply, nothing else changed.
		const failedTokens = host.engine.reading(host.hostFacts(ctx)).total;
		const line = overflowLine(failedTokens, ctx.model.contextWindow, reserveTokens);
		const committed = await host.autoCommit(ctx, { force: "overflow", under: line });
		const brand = host.options.brandNoun;
		if (committed.kind === "committed" && committed.folded) {
			const { folds, freedTokens } = committed.summary;
			const command = host.options.commandNames.status;
			const text = overflowFoldedText({ brand, failedTokens, folds: folds.length, freedTokens, retry, command });
			ctx.ui.notify(text, "info");
		} else if (committed.kind === "store-failed") {
			const then = compacts ? "Pi's recovery compaction goes ahead" : "the request is unanswered";
			const text = `${brand}: the provider refused the request as too long; folding failed (${committed.storeError}), so nothing was folded and ${then}.`;
			ctx.ui.notify(text, "warning");
		} else if (committed.kind === "declined") {
			// (Off: another process writes the session, which was said when it was seen.)
			const { freedTokens } = committed.decision;
			const text = overflowNotEnoughText({ brand, failedTokens, freedTokens, line, reserveTokens, compacts });
			ctx.ui.notify(text, "warning");
		}
		return committed.folded;
	}
}

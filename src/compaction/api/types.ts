/**
 * The public shapes of the compaction API (`compact.*` and the owner claim),
 * as other extensions and hosts see them. No behaviour lives here.
 */

import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { CompactionEngine } from "../settings/settings.ts";
import type { ClaimResult, OwnerClaimRequest } from "./claim.ts";
import type { CompactionOwner } from "./owner.ts";
import type { PressureReading } from "./pressure.ts";
import type { AutoTrigger, TriggerBackoff } from "./trigger.ts";

/** Version of the API object; bumped only on an incompatible change. */
export const COMPACTION_API_VERSION = 1;

/** The context an API call reads: any extension's own handler or command context. */
export type ApiContext = Pick<
	ExtensionContext,
	"sessionManager" | "getContextUsage" | "compact" | "model" | "cwd" | "isProjectTrusted"
>;

export interface CompactRequest {
	/** Plain instructions, rendered under `[Compaction Request]`. */
	instructions?: string;
	/** Typed items to keep verbatim (one-shot; forwarded as the strict v1 typed request). */
	preserve?: readonly string[];
	onComplete?: () => void;
	onError?: (error: Error) => void;
}

export type CompactRequestResult = { ok: true; customInstructions?: string } | { ok: false; error: string };

/** The last compaction the compactor triggered itself. */
export interface LastAutoCompaction {
	trigger: AutoTrigger;
	tokens: number;
	contextWindow: number;
	outcome: "pending" | "compacted" | "failed";
}

/** How the last `session_before_compact` this compactor saw ended. */
export interface LastCompactionResult {
	reason: "manual" | "threshold" | "overflow";
	outcome: "compacted" | "cancelled" | "yielded";
	/** Cancel code, when cancelled (e.g. "summary-does-not-fit", "cancelled-by-api"). */
	code?: string;
	message?: string;
}

/** Why the compactor is not triggering right now, when it is holding back. */
export type CompactionWaiting =
	| { why: "owner-claim"; holder: string }
	| { why: "engine-pi" }
	| ({ why: "backoff"; text: string } & TriggerBackoff);

export interface CompactionStatus {
	engine: CompactionEngine;
	/** Owner of the latest compaction on the active branch. */
	owner: CompactionOwner;
	claim?: { holder: string; branchSummary: boolean };
	lastAuto?: LastAutoCompaction;
	lastResult?: LastCompactionResult;
	waiting?: CompactionWaiting;
	/** The carry-forward list the next summary restates. */
	carry: string[];
}

export type CarryResult = { ok: true; items: string[] } | { ok: false; error: string };

export interface CompactionApi {
	readonly version: typeof COMPACTION_API_VERSION;
	/** Ask for a compaction now; `preserve` travels as the typed v1 request. */
	request(ctx: ApiContext, request?: CompactRequest): CompactRequestResult;
	status(ctx: ApiContext): CompactionStatus;
	pressure(ctx: ApiContext): PressureReading & { owner: CompactionOwner };
	/** Cancel the next compaction this compactor sees (a requested one not yet started); true when one was armed. */
	cancel(): boolean;
	/** Read the carry-forward list, or replace it when `items` is given (an empty list clears it). */
	carry(ctx: ApiContext, items?: readonly string[]): CarryResult;
	/** Take compaction alone; see `OwnerClaimRequest`. */
	claim(request: OwnerClaimRequest): ClaimResult;
}

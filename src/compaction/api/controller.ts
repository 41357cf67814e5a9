/**
 * The compaction API object (`compact.*`, owner claim) and its publication
 * on `pi.events`. A thin shell: every decision is in the pure modules
 * (carry.ts, pressure.ts, trigger.ts, owner.ts) or in the compactor's hook
 * state it reads; this file only calls the host.
 *
 * Publication: Pi's event bus runs a handler's synchronous part inside
 * `emit`, so a caller emits `{ reply }` on `COMPACTION_API_CHANNEL` and gets
 * the API object back before `emit` returns, whatever the load order. The
 * object is also announced once per session on `COMPACTION_READY_CHANNEL`.
 */

import type { EventBus, ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { encodePreserveRequest } from "../records/instructions.ts";
import type { PressureBands } from "../settings/settings.ts";
import { CARRY_ENTRY_TYPE, CARRY_VERSION, type CarryData, checkCarry, latestCarry } from "./carry.ts";
import { latestCompactionOwner } from "./owner.ts";
import { pressureBand } from "./pressure.ts";
import { COMPACTION_API_VERSION, type CompactionApi, type CompactionStatus } from "./types.ts";

/** Channel a caller emits `{ reply(api) }` on to get the API object. */
export const COMPACTION_API_CHANNEL = "pi-fold:compaction-api";
/** Channel the API object is announced on at each session start. */
export const COMPACTION_READY_CHANNEL = "pi-fold:compaction-ready";

/** What the controller needs from the compactor's hook state (CompactionHooks implements it). */
export interface CompactorState {
	status(ctx: Parameters<CompactionApi["status"]>[0]): Omit<CompactionStatus, "owner" | "carry">;
	settingsBands(ctx: Parameters<CompactionApi["status"]>[0]): PressureBands;
	claim: CompactionApi["claim"];
	/** Mark a requested compaction as in flight (cancellable until it starts). */
	requested(): void;
	/**
	 * The requested compaction ended (done, cancelled, or refused by Pi before
	 * any handler saw it): nothing of it is pending, and a cancel armed for it
	 * is dropped, so it never cancels a later compaction.
	 */
	requestEnded(): void;
	/** Cancel a requested or automatic compaction that has not started; true when there was one. */
	cancelPending(): boolean;
}

/** The API object over the compactor's state and `pi`'s entry log. */
export function createCompactionApi(pi: Pick<ExtensionAPI, "appendEntry">, state: CompactorState): CompactionApi {
	return {
		version: COMPACTION_API_VERSION,
		request(ctx, request = {}) {
			let customInstructions: string | undefined;
			if (request.preserve !== undefined) {
				const encoded = encodePreserveRequest({
					...(request.instructions !== undefined ? { instructions: request.instructions } : {}),
					preserve: request.preserve,
				});
				if (!encoded.ok) return { ok: false, error: encoded.error.message };
				customInstructions = encoded.text;
			} else if (request.instructions !== undefined) {
				customInstructions = request.instructions;
			}
			state.requested();
			ctx.compact({
				...(customInstructions !== undefined ? { customInstructions } : {}),
				onComplete: () => {
					state.requestEnded();
					request.onComplete?.();
				},
				onError: (error: Error) => {
					state.requestEnded();
					request.onError?.(error);
				},
			});
			return { ok: true, ...(customInstructions !== undefined ? { customInstructions } : {}) };
		},
		status(ctx) {
			const branch = ctx.sessionManager.getBranch();
			return { ...state.status(ctx), owner: latestCompactionOwner(branch), carry: latestCarry(branch) };
		},
		pressure(ctx) {
			const usage = ctx.getContextUsage();
			const reading = pressureBand(
				usage?.tokens,
				usage?.contextWindow ?? ctx.model?.contextWindow,
				state.settingsBands(ctx),
			);
			return { ...reading, owner: latestCompactionOwner(ctx.sessionManager.getBranch()) };
		},
		cancel: () => state.cancelPending(),
		carry(ctx, items) {
			if (items === undefined) return { ok: true, items: latestCarry(ctx.sessionManager.getBranch()) };
			const checked = checkCarry([...items]);
			if (!checked.ok) return checked;
			const data: CarryData = { version: CARRY_VERSION, items: checked.items };
			pi.appendEntry(CARRY_ENTRY_TYPE, data);
			return { ok: true, items: checked.items };
		},
		claim: (request) => state.claim(request),
	};
}

/** Answer API look-ups on the bus; returns the unsubscribe function. */
export function serveCompactionApi(events: EventBus, api: CompactionApi): () => void {
	return events.on(COMPACTION_API_CHANNEL, (data) => {
		if (typeof data !== "object" || data === null) return;
		const reply = (data as { reply?: unknown }).reply;
		if (typeof reply === "function") reply(api);
	});
}

/** Look the API up on the bus: the object when pi-fold is loaded in this session, else undefined. */
export function compactionApiFrom(events: EventBus): CompactionApi | undefined {
	let found: CompactionApi | undefined;
	events.emit(COMPACTION_API_CHANNEL, {
		reply: (api: CompactionApi) => {
			found ??= api;
		},
	});
	return found;
}

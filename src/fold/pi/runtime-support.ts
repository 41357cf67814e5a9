/**
 * The Pi adapter's plain helpers: opening the session's fold store, and the
 * strict append-only switch the `context` hook reads. No state; the adapter
 * (runtime.ts) owns that.
 */

import type { RewriteEvent } from "../engine/instrument.ts";
import { createMemoryFoldStore, type FoldStore, FoldStoreError } from "../store/store.ts";
import { openFileFoldStore } from "../store/store-file.ts";

/**
 * The session's fold store. A session id the store cannot use as a path is
 * an explicit "no durable store" state, shown in status and fold results,
 * never a silent downgrade.
 */
export function openSessionStore(file: string | undefined, sessionDir: string, sessionId: string): FoldStore {
	if (!file) return createMemoryFoldStore();
	try {
		return openFileFoldStore({ sessionDir, sessionId });
	} catch (error) {
		if (!(error instanceof FoldStoreError)) throw error;
		return createMemoryFoldStore({ noDurableStore: error.message });
	}
}

/**
 * Development tripwire: with this variable set to "1", an unattributed
 * rewrite, or one another extension made, throws from the request hook
 * (`context_with_system`), so Pi reports it as an extension error instead of
 * it only being counted. The e2e suite runs with it on.
 */
export const STRICT_APPEND_ONLY_ENV = "PI_FOLD_STRICT_APPEND_ONLY";

export function strictAppendOnly(): boolean {
	return process.env[STRICT_APPEND_ONLY_ENV] === "1";
}

/** The strict-mode error for a rewrite nobody announced or another extension made. */
export function strictFailureText(event: RewriteEvent): string {
	const where = `at request ${event.request}: message ${event.firstDivergentIndex} changed`;
	return event.causes.includes("another-extension")
		? `pi-fold: rewrite by another extension ${where} in what the provider is sent, though pi-fold's own list did not change there (another extension's context handler edited an earlier message; ${STRICT_APPEND_ONLY_ENV} is set)`
		: `pi-fold: unattributed rewrite ${where} with no commit, expand, refold, rebrief, reboundary, compaction or navigation behind it (${STRICT_APPEND_ONLY_ENV} is set)`;
}

/**
 * The Pi adapter's plain helpers: opening the session's fold store, and the
 * strict append-only switch the `context` hook reads. No state; the adapter
 * (runtime.ts) owns that.
 */

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
 * rewrite throws from the `context` hook, so Pi reports it as an extension
 * error instead of it only being counted. The e2e suite runs with it on.
 */
export const STRICT_APPEND_ONLY_ENV = "PI_FOLD_STRICT_APPEND_ONLY";

export function strictAppendOnly(): boolean {
	return process.env[STRICT_APPEND_ONLY_ENV] === "1";
}

/**
 * The Pi adapter's plain helpers: opening the session's fold store, the
 * strict append-only switch the `context` hook reads, and saying once that
 * the store cannot be written. The adapter (runtime.ts) owns the rest.
 */

import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
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

/** Store errors that mean the store cannot be written now (a full disk, a read-only directory): told once. */
export const STORE_WRITE_FAILURES: ReadonlySet<string> = new Set(["no-space", "read-only", "io"]);

/**
 * A store that cannot be written stops every fold until it can (the fold is
 * not made, pending marks wait): the person is told once, not at every
 * boundary, and again only after a fold stored its source in between.
 */
export class StoreTrouble {
	private told = false;
	private readonly brandNoun: string;
	constructor(brandNoun: string) {
		this.brandNoun = brandNoun;
	}

	failed(ctx: ExtensionContext, code: string | undefined, problem: string): void {
		if (this.told || !STORE_WRITE_FAILURES.has(code ?? "")) return;
		this.told = true;
		ctx.ui.notify(
			`${this.brandNoun}: the fold store cannot be written: ${problem} Folds are not made until it can be (pending marks wait); nothing is lost, the session log holds every entry, and Pi keeps running.`,
			"warning",
		);
	}

	/** A fold stored its source: the store can be written again. */
	ended(): void {
		this.told = false;
	}
}

/**
 * The fold runtime's per-request work on a fixed branch, split the way the
 * runtime spends it (src/cost/fold-shell.ts holds the steps): the
 * boundary after a response (window reading, branch analysis, ladder
 * decision, `planCommit` and the state change when it commits, the drafts
 * the boundary returns) and the `context` hook before the next request
 * (drafts preview, request size, instrument). Each function is pure over its
 * inputs, so repeated runs do the same work.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import {
	commitDecision,
	contextHook,
	type HostFacts,
	ladderDecision,
	persistBoundary,
	type ShellState,
} from "../../src/cost/fold-shell.ts";
import type { ResolvedOptions } from "../../src/fold/options.ts";

/** What one boundary did, for the facts and to keep the work observable. */
export interface BoundaryRun {
	committed: boolean;
	folds: number;
	drafts: number;
	declined: string | undefined;
	/** Branch and shell after the boundary (what the next request sees). */
	branch: SessionEntry[];
	shell: ShellState;
}

/** `onBoundary`: decide, commit when decided, compute and persist the drafts. */
export function boundaryStep(
	branch: readonly SessionEntry[],
	shell: ShellState,
	options: ResolvedOptions,
	host: HostFacts,
	force?: "threshold",
): BoundaryRun {
	const made = ladderDecision(branch, shell, options, host, force);
	const change = commitDecision(made, shell, options, host);
	const persisted = persistBoundary(branch, change?.shell ?? shell, options, change?.custom ?? []);
	return {
		committed: change !== undefined,
		folds: change?.records.length ?? 0,
		drafts: persisted.drafts,
		declined: made.decision.declined,
		branch: persisted.branch,
		shell: persisted.shell,
	};
}

/** The `context` hook for the next request; returns the number of messages sent. */
export function contextStep(
	branch: readonly SessionEntry[],
	shell: ShellState,
	options: ResolvedOptions,
	host: HostFacts,
): number {
	return contextHook(branch, shell, options, host).messages.length;
}

/** Everything between one response and the next request. */
export function requestPath(
	branch: readonly SessionEntry[],
	shell: ShellState,
	options: ResolvedOptions,
	host: HostFacts,
): number {
	const boundary = boundaryStep(branch, shell, options, host);
	return contextStep(boundary.branch, boundary.shell, options, host);
}

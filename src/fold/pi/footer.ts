/**
 * The footer status (`ctx.ui.setStatus`): occupancy of the serving budget,
 * folds, bytes held out of the window and pending marks, refreshed at
 * session start, after every action and at turn boundaries. It is UI only:
 * nothing here reaches the model's window. Also gathers the facts the
 * human-facing views share, so the footer and `/context` agree.
 */

import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { StatusDetails } from "../engine/status-facts.ts";
import { compactedFolds, formatFooter, heldOut, marksInWindow, type WindowFacts } from "./context-report.ts";
import type { FoldRuntime } from "./runtime.ts";

/** Footer status key; Pi shows statuses of all extensions side by side, ordered by key. */
export const FOOTER_STATUS_KEY = "pi-fold";

export interface HumanView {
	status: StatusDetails;
	next: WindowFacts;
	compacted: Set<string>;
	held: ReturnType<typeof heldOut>;
	/** Every fold with its brief, in transcript order (for briefs in reports and completions). */
	folds: { id: string; brief: string }[];
}

/** The latest view per runtime: argument completions get no context, so they read this. */
const latest = new WeakMap<FoldRuntime, HumanView>();

export function lastView(runtime: FoldRuntime): HumanView | undefined {
	return latest.get(runtime);
}

/** One consistent reading of the runtime for the footer and the commands. */
export function humanView(runtime: FoldRuntime, ctx: ExtensionContext): HumanView {
	const status = runtime.status(ctx);
	const { reading, budget } = runtime.nextWindow(ctx);
	const compacted = compactedFolds(runtime.engine.entries, status.folds);
	const lattice = runtime.engine.lattice();
	const folds = status.folds.map((fold) => ({ id: fold.id, brief: lattice.folds.get(fold.id)?.brief ?? "" }));
	const view = { status, next: { tokens: reading.total, budget }, compacted, held: heldOut(status, compacted), folds };
	latest.set(runtime, view);
	return view;
}

export function updateFooter(runtime: FoldRuntime, ctx: ExtensionContext, view?: HumanView): void {
	// Print and json mode have no footer; skip the reading.
	if (!ctx.hasUI) return;
	const seen = view ?? humanView(runtime, ctx);
	ctx.ui.setStatus(FOOTER_STATUS_KEY, formatFooter(seen.next, seen.held, marksInWindow(seen.status).length));
}

/** Refresh the footer at the moments the window can change. Registered after the runtime, so its handlers ran. */
export function registerFooter(pi: ExtensionAPI, runtime: FoldRuntime): void {
	const refresh = (_event: unknown, ctx: ExtensionContext): void => updateFooter(runtime, ctx);
	pi.on("session_start", refresh);
	pi.on("session_tree", refresh);
	pi.on("session_compact", refresh);
	// Not a turn_end handler of its own: Pi projects the whole branch once more per boundary handler.
	runtime.afterTurn((ctx) => updateFooter(runtime, ctx));
	pi.on("agent_settled", refresh);
}

/**
 * The human's commands: `/context` (status) and `/fold-context` (fold a named
 * span, or the oldest eligible closed chapter). Output reaches the human in
 * every mode through `showOutput`.
 */

import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { showOutput } from "../host/output.ts";
import { sessionStats } from "../session/stats.ts";
import { type ActionOutcome, foldSpan } from "./actions.ts";
import { formatContextReport } from "./context-report.ts";
import { unfoldedChapters } from "./policy/ladder.ts";
import type { FoldRuntime } from "./runtime.ts";
import { formatStatus } from "./status.ts";

export function registerCommands(pi: ExtensionAPI, runtime: FoldRuntime): void {
	const { commandNames, toolName } = runtime.options;
	pi.registerCommand(commandNames.status, {
		description:
			"Show the model window: entries, tokens, occupancy, folds, append-only counts (/context tree | window)",
		handler: async (args, ctx) => {
			const detail = args.trim();
			const status = formatStatus(runtime.status(ctx), { tree: detail === "tree", toolName });
			const listing = detail === "window" ? `\n${runtime.windowListing(ctx)}` : "";
			showOutput(ctx, `${contextHeader(ctx)}\n${status}${listing}`);
		},
	});
	pi.registerCommand(commandNames.fold, {
		description: "Fold a span (/fold-context <first id> [last id]) or the oldest eligible closed chapter",
		handler: async (args, ctx) => {
			const ids = args.split(/\s+/).filter(Boolean);
			const outcome =
				ids.length > 0 ? await foldSpan(runtime.workspace(ctx, "command"), ids) : await foldOldest(runtime, ctx);
			runtime.apply(outcome, ctx);
			showOutput(
				ctx,
				outcome.ok ? outcome.text : `Nothing folded (${outcome.code}): ${outcome.text}`,
				outcome.ok ? "info" : "warning",
			);
		},
	});
}

function contextHeader(ctx: ExtensionContext): string {
	const manager = ctx.sessionManager;
	const usage = ctx.getContextUsage();
	return formatContextReport({
		sessionId: manager.getSessionId(),
		branchEntries: manager.getBranch().length,
		stats: sessionStats(manager.getEntries(), manager.buildSessionProjection()),
		hostTokens: usage?.tokens ?? null,
	});
}

/** Fold the oldest closed chapter that is not already folded and ends before the fresh tail. */
async function foldOldest(runtime: FoldRuntime, ctx: ExtensionContext): Promise<ActionOutcome> {
	const ws = runtime.workspace(ctx, "command");
	let last: ActionOutcome | undefined;
	for (const chapter of unfoldedChapters(ws.view, ws.lattice, ws.freshTailStart)) {
		last = await foldSpan(ws, [chapter.first, chapter.last]);
		if (last.ok) return last;
	}
	return (
		last ?? {
			ok: false,
			code: "nothing-eligible",
			text: "No closed chapter before the current exchange is left unfolded. Name a span: /fold-context <first id> <last id>.",
		}
	);
}

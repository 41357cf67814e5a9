/**
 * Package entry: Pi loads the default export; hosts that want options call
 * `registerPiFold(pi, options)` themselves. Registers both engines.
 */

import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { formatContextReport } from "./fold/context-report.ts";
import { type PiFoldOptions, resolveOptions } from "./fold/options.ts";
import { showOutput } from "./host/output.ts";
import { sessionStats } from "./session/stats.ts";

export type { PiFoldOptions } from "./fold/options.ts";

export function registerPiFold(pi: ExtensionAPI, options: PiFoldOptions = {}): void {
	const resolved = resolveOptions(options);
	pi.registerCommand(resolved.commandNames.status, {
		description: "Show what the model window holds: entries, estimated tokens, occupancy, folds",
		handler: async (_args, ctx) => {
			showOutput(ctx, contextReport(ctx));
		},
	});
}

function contextReport(ctx: ExtensionContext): string {
	const manager = ctx.sessionManager;
	const branch = manager.getBranch();
	const stats = sessionStats(manager.getEntries(), manager.buildSessionProjection());
	const usage = ctx.getContextUsage();
	return formatContextReport({
		sessionId: manager.getSessionId(),
		branchEntries: branch.length,
		stats,
		hostTokens: usage?.tokens ?? null,
		contextWindow: usage?.contextWindow ?? ctx.model?.contextWindow,
		storeKind: manager.getSessionFile() ? "file" : "memory",
	});
}

export default function piFold(pi: ExtensionAPI): void {
	registerPiFold(pi);
}

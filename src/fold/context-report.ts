/**
 * The head of the human-facing `/context` report: which session, how many
 * entries, messages and estimated tokens the window holds. Occupancy, folds
 * and the store follow in the status text (`status.ts`), so each figure is
 * shown once. Pure formatting over numbers the command gathers from the host.
 */

import type { SessionStats } from "../session/stats.ts";

export interface ContextReportInput {
	sessionId: string;
	/** Entries on the active branch. */
	branchEntries: number;
	stats: SessionStats;
	/** Pi's own reading (`ctx.getContextUsage()`), when it has one. */
	hostTokens: number | null;
}

const integer = new Intl.NumberFormat("en-US");

export function formatContextReport(input: ContextReportInput): string {
	const { stats } = input;
	const host = input.hostTokens === null ? "" : ` (Pi reports ${integer.format(input.hostTokens)})`;
	const lines = [
		`Context for session ${input.sessionId}`,
		`  entries on branch   ${integer.format(input.branchEntries)} (${integer.format(stats.entryCount)} in file)`,
		`  context messages    ${integer.format(stats.contextMessages)}`,
		`  estimated tokens    ~${integer.format(stats.contextTokens)}${host}`,
	];
	return `${lines.join("\n")}\n`;
}

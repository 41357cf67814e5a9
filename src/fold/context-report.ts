/**
 * The human-facing `/context` report: what the model window holds now.
 * Pure formatting over numbers the command gathers from the host.
 */

import type { SessionStats } from "../session/stats.ts";

export interface ContextReportInput {
	sessionId: string;
	/** Entries on the active branch. */
	branchEntries: number;
	stats: SessionStats;
	/** Pi's own reading (`ctx.getContextUsage()`), when it has one. */
	hostTokens: number | null;
	contextWindow: number | undefined;
	storeKind: "file" | "memory";
}

const integer = new Intl.NumberFormat("en-US");

export function formatContextReport(input: ContextReportInput): string {
	const { stats } = input;
	const tokens = input.hostTokens ?? stats.contextTokens;
	const window = input.contextWindow;
	const occupancy = window ? `${((100 * tokens) / window).toFixed(1)}% of ${integer.format(window)}` : "unknown window";
	const lines = [
		`Context for session ${input.sessionId}`,
		`  entries on branch   ${integer.format(input.branchEntries)} (${integer.format(stats.entryCount)} in file)`,
		`  context messages    ${integer.format(stats.contextMessages)}`,
		`  estimated tokens    ~${integer.format(stats.contextTokens)}${input.hostTokens === null ? "" : ` (Pi reports ${integer.format(input.hostTokens)})`}`,
		`  occupancy           ${occupancy}`,
		`  fold store          ${input.storeKind === "memory" ? "in memory (session has no file)" : "on disk"}`,
	];
	return `${lines.join("\n")}\n`;
}

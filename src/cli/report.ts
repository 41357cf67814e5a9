/**
 * `pi-fold report`: a plain-text summary of one session file.
 *
 * Formatting only; the numbers come from `session/stats.ts`. Output is a pure
 * function of the file's content (no clock, no machine facts).
 */

import type { LoadedSession } from "../session/load.ts";
import { type SessionStats, sessionStats } from "../session/stats.ts";

const integer = new Intl.NumberFormat("en-US");

function table(title: string, counts: Record<string, number>): string[] {
	const keys = Object.keys(counts).sort((a, b) => (counts[b] ?? 0) - (counts[a] ?? 0) || a.localeCompare(b));
	if (keys.length === 0) return [`${title}: none`];
	const width = Math.max(...keys.map((key) => key.length));
	return [`${title}:`, ...keys.map((key) => `  ${key.padEnd(width)}  ${integer.format(counts[key] ?? 0).padStart(7)}`)];
}

/** Render the report for a loaded session. */
export function formatReport(session: LoadedSession, stats: SessionStats = sessionStatsOf(session)): string {
	const { header } = session;
	const usage = stats.usage;
	const defects = stats.closureDefects;
	const lines = [
		`Session ${header.id}`,
		`  file      ${session.path}`,
		`  cwd       ${header.cwd}`,
		`  format    v${session.sourceVersion}${session.sourceVersion < 3 ? " (migrated as Pi migrates it)" : ""}`,
		`  entries   ${integer.format(stats.entryCount)}`,
		"",
		...table("Entries by type", stats.entriesByType),
		"",
		...table("Messages by role", stats.messagesByRole),
		"",
		...table("Tool calls by tool", stats.toolCallsByTool),
		`  calls ${integer.format(stats.toolCallCount)}, results ${integer.format(stats.toolResultCount)}, ` +
			`unanswered ${defects.missingResult}, orphan results ${defects.missingCall}, duplicate results ${defects.duplicateResult}`,
		"",
		"Model context (active branch, Pi estimate):",
		`  messages  ${integer.format(stats.contextMessages)}`,
		`  tokens    ~${integer.format(stats.contextTokens)}`,
		"",
		"Recorded provider usage:",
		`  requests    ${integer.format(usage.requests)}`,
		`  input       ${integer.format(usage.input)}`,
		`  cache read  ${integer.format(usage.cacheRead)}`,
		`  cache write ${integer.format(usage.cacheWrite)}`,
		`  output      ${integer.format(usage.output)}`,
		`  cost        $${usage.cost.toFixed(4)}`,
	];
	if (session.diagnostics.length > 0) {
		lines.push("", `Skipped lines (${session.diagnostics.length}):`);
		for (const diagnostic of session.diagnostics.slice(0, 20)) lines.push(`  ${diagnostic.message}`);
		if (session.diagnostics.length > 20) lines.push(`  … ${session.diagnostics.length - 20} more`);
	}
	return `${lines.join("\n")}\n`;
}

export function sessionStatsOf(session: LoadedSession): SessionStats {
	return sessionStats(session.entries, session.manager.buildSessionProjection());
}

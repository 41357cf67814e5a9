/**
 * `pi-fold report`: a plain-text summary of one session file.
 *
 * Formatting only; the numbers come from `session/stats.ts` and
 * `cost/session-cost.ts`. Output is a pure function of the file's content and
 * the options (no clock, no machine facts).
 */

import { catalogRateCard } from "../cost/catalog.ts";
import type { CostParts } from "../cost/price.ts";
import type { RateCard } from "../cost/rate-card.ts";
import { type SessionCost, sessionCost } from "../cost/session-cost.ts";
import type { LoadedSession } from "../session/load.ts";
import { type SessionStats, sessionStats } from "../session/stats.ts";

export interface ReportOptions {
	/** Re-price every request with this card too (`--rate-card`). */
	rateCard?: RateCard;
}

const integer = new Intl.NumberFormat("en-US");

function table(title: string, counts: Record<string, number>): string[] {
	const keys = Object.keys(counts).sort((a, b) => (counts[b] ?? 0) - (counts[a] ?? 0) || a.localeCompare(b));
	if (keys.length === 0) return [`${title}: none`];
	const width = Math.max(...keys.map((key) => key.length));
	return [`${title}:`, ...keys.map((key) => `  ${key.padEnd(width)}  ${integer.format(counts[key] ?? 0).padStart(7)}`)];
}

/** Render the report for a loaded session. */
export function formatReport(
	session: LoadedSession,
	stats: SessionStats = sessionStatsOf(session),
	options: ReportOptions = {},
): string {
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
		"",
		...costSection(
			sessionCost(session.entries, {
				cardFor: catalogRateCard,
				...(options.rateCard ? { card: options.rateCard } : {}),
			}),
		),
	];
	if (session.diagnostics.length > 0) {
		lines.push("", `Skipped lines (${session.diagnostics.length}):`);
		for (const diagnostic of session.diagnostics.slice(0, 20)) lines.push(`  ${diagnostic.message}`);
		if (session.diagnostics.length > 20) lines.push(`  … ${session.diagnostics.length - 20} more`);
	}
	return `${lines.join("\n")}\n`;
}

const money = (dollars: number): string => `$${dollars.toFixed(4)}`;
const requestCount = (n: number): string => `${integer.format(n)} request${n === 1 ? "" : "s"}`;
const priced = (cost: { tiered: CostParts; flat: CostParts }): string =>
	`${money(cost.tiered.total)} tiered, ${money(cost.flat.total)} flat`;

/** The "Cost" block: ledger, re-pricings, cache share, peak context, long-context requests. */
export function costSection(cost: SessionCost): string[] {
	const lines = ["Cost:", `  Pi's ledger            ${money(cost.recordedCost)} (as recorded on each request)`];
	for (const group of cost.catalog.groups) {
		const label = `${group.provider}/${group.model}`;
		const count = requestCount(group.requests);
		lines.push(
			group.price
				? `  catalog card           ${priced(group.price)}: ${label}, ${count}`
				: `  catalog card           none known for ${label} (${count} left unpriced)`,
		);
	}
	if (cost.catalog.groups.length > 1) lines.push(`  catalog total          ${priced(cost.catalog)}`);
	if (cost.card) {
		lines.push(`  card ${cost.card.card.padEnd(17)} ${priced(cost.card)} (every request)`);
		if (cost.card.surcharge > 0) {
			lines.push(
				`  long-context surcharge ${money(cost.card.surcharge)} on ${requestCount(cost.card.requestsAboveTier)}`,
			);
		}
	}
	lines.push(`  cache share            ${cost.cacheShare.toFixed(3)} (cache read / prompt)`);
	lines.push(
		cost.peakPrompt
			? `  peak request context   ${integer.format(cost.peakPrompt.tokens)} tokens (entry ${cost.peakPrompt.entryId})`
			: "  peak request context   none (no request recorded usage)",
	);
	lines.push(
		cost.threshold === null
			? "  above long context     no long-context tier in the cards used"
			: `  above long context     ${integer.format(cost.requestsAboveThreshold)} of ${integer.format(cost.requests.length)} requests over ${integer.format(cost.threshold)} tokens`,
	);
	return lines;
}

export function sessionStatsOf(session: LoadedSession): SessionStats {
	return sessionStats(session.entries, session.manager.buildSessionProjection());
}

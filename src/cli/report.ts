/**
 * `pi-fold report`: a plain-text summary of one session file, and the series
 * its charts draw.
 *
 * Formatting only; the numbers come from `session/stats.ts`,
 * `cost/session-cost.ts`, `cli/activity.ts` (what pi-fold did) and
 * `cost/projected-savings.ts` (what it would have saved). Output is a pure
 * function of the file's content and the options (no clock, no machine
 * facts); the store's size on disk is measured by the shell and passed in.
 */

import { catalogRateCard } from "../cost/catalog.ts";
import { FALLBACK_CARD_NAME } from "../cost/fold-replay.ts";
import type { ArmScore } from "../cost/out-of-view/arm-score.ts";
import type { CostParts } from "../cost/price.ts";
import { chargedCost, mainModel, type ProjectedSavings, projectSavings } from "../cost/projected-savings.ts";
import { promptUsageRecorded, type SessionCost, sessionCost } from "../cost/session-cost.ts";
import { commitReasonText } from "../fold/pi/commit-reasons.ts";
import { describeUsage } from "../fold/summarizer/summarizer-prompt.ts";
import type { RateCard } from "../pricing/rate-card.ts";
import type { LoadedSession } from "../session/load.ts";
import { type SessionStats, sessionStats } from "../session/stats.ts";
import { type FoldActivity, foldActivity } from "./activity.ts";
import { type ChartSeries, chartSeries, sparklineSection } from "./chart.ts";
import type { ChartPage } from "./html.ts";
import {
	estimatedSavingsSection,
	estimatesOnly,
	noPromptUsageText,
	savingLine,
	unpricedCostSection,
} from "./report-limits.ts";

/** The fold store next to a session file, as measured on disk. */
export interface StoreSize {
	dir: string;
	bytes: number;
	files: number;
}

export interface ReportOptions {
	/** Re-price every request with this card too (`--rate-card`). */
	rateCard?: RateCard;
	/** Replay a session recorded without pi-fold through its ladder (default true; `--no-replay`). */
	replay?: boolean;
	/** The session's fold store, when one exists. */
	store?: StoreSize | null;
}

/** Skipped lines listed before the rest; the count covers all. */
export const PROBLEMS_LISTED_MAX = 20;

const integer = new Intl.NumberFormat("en-US");

/** Bytes for people: B, KB, MB, GB (powers of 1,024, one decimal above 10 KB… as `du -h` reads). */
export function readableBytes(bytes: number): string {
	const units = ["B", "KB", "MB", "GB"];
	let value = bytes;
	let unit = 0;
	while (value >= 1024 && unit < units.length - 1) {
		value /= 1024;
		unit++;
	}
	return unit === 0 ? `${bytes} B` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

function table(title: string, counts: Record<string, number>): string[] {
	const keys = Object.keys(counts).sort((a, b) => (counts[b] ?? 0) - (counts[a] ?? 0) || a.localeCompare(b));
	if (keys.length === 0) return [`${title}: none`];
	const width = Math.max(...keys.map((key) => key.length));
	return [`${title}:`, ...keys.map((key) => `  ${key.padEnd(width)}  ${integer.format(counts[key] ?? 0).padStart(7)}`)];
}

export interface Report {
	text: string;
	series: ChartSeries;
	activity: FoldActivity;
	projection?: ProjectedSavings;
	/** Title and headline numbers of the HTML page. */
	page: ChartPage;
}

/** Everything the report shows, computed once: text and chart series. */
export async function buildReport(session: LoadedSession, options: ReportOptions = {}): Promise<Report> {
	const branch = session.manager.getBranch();
	const projection = session.manager.buildSessionProjection();
	const stats = sessionStats(session.entries, projection);
	const activity = foldActivity(session.entries, branch, projection);
	const series = chartSeries(session.entries, activity.commitEntryIds);
	let projected: ProjectedSavings | undefined;
	if (!activity.present && options.replay !== false && stats.usage.requests > 0) {
		projected = await projectSavings(branch, session.header.cwd || "/");
		const byEntry = new Map<string, number>();
		// Branch requests in order; the replay yields one per assistant message on the branch.
		const branchAssistants = branch.filter((entry) => entry.type === "message" && entry.message.role === "assistant");
		branchAssistants.forEach((entry, index) => {
			const request = projected?.projected.requests[index];
			if (request) byEntry.set(entry.id, request.promptTokens);
		});
		const aligned = series.points.map((point) => byEntry.get(point.entryId));
		if (aligned.every((value) => value !== undefined)) {
			const indexOf = new Map(series.points.map((point, index) => [point.entryId, index]));
			const commits = projected.commitRequests
				.map((at) => indexOf.get(branchAssistants[at]?.id ?? ""))
				.filter((at): at is number => at !== undefined);
			series.projected = { promptTokens: aligned, commits };
		}
	}
	const cost = sessionCost(session.entries, {
		cardFor: catalogRateCard,
		...(options.rateCard ? { card: options.rateCard } : {}),
	});
	const text = renderReport(session, stats, activity, options, projected, series, cost);
	const page = chartPage(session, series, cost, activity, projected);
	return projected ? { text, series, activity, projection: projected, page } : { text, series, activity, page };
}

/** The session's start date (UTC, from its header), or "undated". */
function sessionDate(timestamp: string | undefined): string {
	const time = Date.parse(timestamp ?? "");
	return Number.isFinite(time) ? new Date(time).toISOString().slice(0, 10) : "undated";
}

/** The HTML page's title (directory, model, date) and headline numbers: the same figures the text shows. */
export function chartPage(
	session: LoadedSession,
	series: ChartSeries,
	cost: SessionCost,
	activity: FoldActivity,
	projection: ProjectedSavings | undefined,
): ChartPage {
	const where = session.header.cwd || "(no directory recorded)";
	// The series names the model of the requests it charts; a log without prompt usage charts none.
	const served = mainModel(session.manager.getBranch());
	const model = series.model ?? (served === "/" ? "no model recorded" : served);
	const title = `pi-fold report: ${where} · ${model} · ${sessionDate(session.header.timestamp)}`;
	const recorded = promptUsageRecorded(cost);
	const facts: ChartPage["facts"][number][] = [
		{ label: "requests", value: integer.format(cost.requests.length) },
		{ label: "Pi's ledger (as recorded)", value: dollars(cost.recordedCost) },
		...(recorded ? [{ label: "cache share", value: `${(cost.cacheShare * 100).toFixed(1)}%` }] : []),
	];
	if (cost.peakPrompt) {
		const share = series.window ? ` (${Math.round((cost.peakPrompt.tokens / series.window) * 100)}% of window)` : "";
		facts.push({ label: "peak request", value: `${integer.format(cost.peakPrompt.tokens)} tokens${share}` });
	}
	if (activity.present) {
		facts.push(
			{
				label: "folds",
				value: `${integer.format(activity.folds)}, ${integer.format(activity.collapsedInWindow)} shown as briefs`,
			},
			{
				label: "commits",
				value: `${integer.format(activity.commits)}, ~${integer.format(activity.freedTokens)} tokens freed`,
			},
			{ label: "held out of the window", value: readableBytes(activity.heldOutBytes) },
		);
	}
	if (projection && estimatesOnly(projection)) {
		facts.push(
			{ label: "tokens sent, Pi alone (estimate)", value: integer.format(Math.round(projection.native.promptTokens)) },
			{ label: "with pi-fold (estimate)", value: integer.format(Math.round(projection.projected.promptTokens)) },
		);
		const note = `Not priced: ${noPromptUsageText(cost.requests.length)}. The estimates replay the active branch through Pi's own compaction and through pi-fold's ladder and count the transcript as Pi estimates it (characters / 4).`;
		return { title, facts, note };
	}
	if (projection) {
		const saved = projection.native.cost - projection.projected.cost;
		const share = projection.native.cost > 0 ? (saved / projection.native.cost) * 100 : 0;
		facts.push(
			{ label: "Pi alone (modelled)", value: dollars(projection.native.cost) },
			{ label: "with pi-fold (modelled)", value: dollars(projection.projected.cost) },
			saved >= 0
				? { label: "saving (modelled)", value: `${dollars(saved)} (${share.toFixed(1)}%)` }
				: { label: "pi-fold would have cost more (modelled)", value: `${dollars(-saved)} (${(-share).toFixed(1)}%)` },
			{
				label: "peak request with pi-fold",
				value: `${integer.format(Math.round(projection.projected.peakPromptTokens))} tokens`,
			},
		);
	}
	const note = projection
		? `"Modelled" figures replay the active branch through Pi's own compaction and through pi-fold's ladder, priced with the ${projection.card} card under one prefix-cache model; Pi's ledger is what Pi recorded at the time.`
		: undefined;
	return note ? { title, facts, note } : { title, facts };
}

const dollars = (value: number): string => `$${value.toFixed(2)}`;

/** Render the report text from its computed parts. */
export function renderReport(
	session: LoadedSession,
	stats: SessionStats,
	activity: FoldActivity,
	options: ReportOptions,
	projection: ProjectedSavings | undefined,
	series: ChartSeries,
	cost: SessionCost,
): string {
	const { header } = session;
	const usage = stats.usage;
	const defects = stats.closureDefects;
	const lines: string[] = [];
	if (session.diagnostics.length > 0) {
		const count = session.diagnostics.length;
		const repaired = session.diagnostics.filter((diagnostic) => diagnostic.repaired).length;
		const how = repaired === 0 ? "skipped" : `(${count - repaired} skipped, ${repaired} repaired)`;
		lines.push(`Problems: ${integer.format(count)} line${count === 1 ? "" : "s"} ${how}`);
		for (const diagnostic of session.diagnostics.slice(0, PROBLEMS_LISTED_MAX)) lines.push(`  ${diagnostic.message}`);
		if (session.diagnostics.length > PROBLEMS_LISTED_MAX)
			lines.push(`  … ${session.diagnostics.length - PROBLEMS_LISTED_MAX} more`);
		lines.push("");
	}
	lines.push(
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
		...activitySection(activity, options.store ?? null),
		"",
	);
	if (!activity.present) {
		lines.push(
			...(projection
				? estimatesOnly(projection)
					? estimatedSavingsSection(projection, cost.requests.length)
					: savingsSection(projection)
				: [
						"What pi-fold would have saved: not computed" +
							(options.replay === false ? " (--no-replay)" : " (no request recorded usage)"),
					]),
			"",
		);
	}
	lines.push(
		"Recorded provider usage:",
		`  requests    ${integer.format(usage.requests)}`,
		`  input       ${integer.format(usage.input)}`,
		`  cache read  ${integer.format(usage.cacheRead)}`,
		`  cache write ${integer.format(usage.cacheWrite)}`,
		`  output      ${integer.format(usage.output)}`,
		`  cost        $${usage.cost.toFixed(4)}`,
		"",
		...(promptUsageRecorded(cost) || cost.requests.length === 0 ? costSection(cost) : unpricedCostSection(cost)),
		"",
		...sparklineSection(series),
	);
	return `${lines.join("\n")}\n`;
}

/** "pi-fold in this session": folds, bytes held out, commits, compaction engines, the store. */
export function activitySection(activity: FoldActivity, store: StoreSize | null): string[] {
	const compactions = activity.compactions;
	const engines =
		compactions.deterministic + compactions.pi === 0
			? "none"
			: `${compactions.deterministic} by pi-fold's deterministic compactor, ${compactions.pi} by Pi's summarizer`;
	if (!activity.present) {
		return [
			"pi-fold in this session: not used (no pi-fold entries)",
			`  compactions   ${engines}`,
			`  context edits ${integer.format(activity.contextEdits)}${activity.contextEdits > 0 ? " (by another extension)" : ""}`,
		];
	}
	const reasons = Object.entries(activity.commitReasons)
		.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
		.map(([reason, count]) => `                ${integer.format(count)} because ${commitReasonText(reason)}`);
	if (activity.unreadableCommits > 0)
		reasons.push(`                ${integer.format(activity.unreadableCommits)} with a summary that could not be read`);
	const commits =
		activity.commits === 0
			? ["  commits       none by the ladder"]
			: [
					`  commits       ${integer.format(activity.commits)} (each one rewrite of the window), ~${integer.format(activity.freedTokens)} tokens freed:`,
					...reasons,
				];
	const lines = [
		"pi-fold in this session (active branch):",
		`  folds         ${integer.format(activity.folds)}${activity.dissolved > 0 ? ` (${activity.dissolved} dissolved)` : ""}, ${integer.format(activity.collapsedInWindow)} shown as briefs now`,
		`  held out      ${readableBytes(activity.heldOutBytes)} of source kept out of the window (exact copies in the store)`,
		...commits,
		`  context edits ${integer.format(activity.contextEdits)}`,
		`  compactions   ${engines}`,
		...(activity.summarizer.requests > 0 ? [`  model briefs  ${describeUsage(activity.summarizer)}`] : []),
		store
			? `  store         ${readableBytes(store.bytes)} in ${integer.format(store.files)} file${store.files === 1 ? "" : "s"} at ${store.dir}`
			: `  store         not found next to the session file (${readableBytes(activity.sourceBytes)} of fold sources recorded)`,
	];
	if (activity.skipped > 0) lines.push(`  unreadable    ${activity.skipped} pi-fold entries skipped`);
	return lines;
}

/** The saving once each column pays to fetch back what its window hid (the charged cost), or what pi-fold would cost more. */
export function chargedSavingLine(nativeCharged: number, projectedCharged: number): string {
	const saved = nativeCharged - projectedCharged;
	const share = nativeCharged > 0 ? (Math.abs(saved) / nativeCharged) * 100 : 0;
	return saved >= 0
		? `  saving, charged  ${money(saved)} (${share.toFixed(1)}%)`
		: `  saving, charged  none: pi-fold would have cost ${money(-saved)} (${share.toFixed(1)}%) more, counting the searches and peeks its hidden references need`;
}

/** "What pi-fold would have saved": Pi alone (its own compaction replayed) vs pi-fold's ladder, one cache model. */
export function savingsSection(projection: ProjectedSavings): string[] {
	const { native, projected, outOfView } = projection;
	const nativeCharged = chargedCost(native, outOfView.native);
	const projectedCharged = chargedCost(projected, outOfView.projected);
	const row = (label: string, a: string, b: string) => `  ${label.padEnd(16)} ${a.padStart(14)}  ${b.padStart(14)}`;
	const numbers = (label: string, a: number, b: number, format: (n: number) => string) =>
		row(label, format(a), format(b));
	const tokens = (n: number) => integer.format(Math.round(n));
	const hidden = (arm: ArmScore) =>
		`${integer.format(arm.summary.repliesWithAbsent)} of ${integer.format(arm.summary.replies)}`;
	const lines = [
		"What pi-fold would have saved (active branch replayed through Pi's own compaction and through pi-fold's default ladder):",
		`  ${"".padEnd(16)} ${"Pi alone".padStart(14)}  ${"with pi-fold".padStart(14)}`,
		numbers("cost", native.cost, projected.cost, money),
		numbers("charged cost", nativeCharged, projectedCharged, money),
		row("hidden from", hidden(outOfView.native), hidden(outOfView.projected)),
		numbers("prompt tokens", native.promptTokens, projected.promptTokens, tokens),
		numbers("cache reads", native.cachedTokens, projected.cachedTokens, tokens),
		numbers("uncached input", native.uncachedTokens, projected.uncachedTokens, tokens),
		numbers("peak request", native.peakPromptTokens, projected.peakPromptTokens, tokens),
		savingLine(projection),
		chargedSavingLine(nativeCharged, projectedCharged),
		`  model            ${projection.mainModelKey}, priced with the ${projection.card} card, prefix cache ${cacheText(projection)}`,
		`  Pi alone         ${nativeText(native)}`,
		`  with pi-fold     ${foldText(projected, projection.declarationTokens)}`,
		"                   (both columns modelled the same way, so they differ only in what was sent)",
		"  charged          the cost plus, for each reply that referred to something its request did not show",
		'                   ("hidden from": replies), one search and one peek per earlier message it came from,',
		"                   each a further request re-sending the prompt; the same rule for both columns",
	];
	if (native.fallbackPriced > 0)
		lines.push(
			`  note             ${native.fallbackPriced} request${native.fallbackPriced === 1 ? "" : "s"} of models Pi's catalog does not know priced with the ${FALLBACK_CARD_NAME} card`,
		);
	if (projection.unattributed > 0)
		lines.push(`  note             ${projection.unattributed} rewrites the replay could not attribute (report this)`);
	return lines;
}

/** How the "Pi alone" column was made: the compaction settings and what the replay added. */
function nativeText(native: ProjectedSavings["native"]): string {
	const { contextWindow, reserveTokens, keepRecentTokens, summaryChars } = native.settings;
	const window = Number.isFinite(contextWindow) ? `${integer.format(contextWindow)}-token window` : "no known window";
	const added =
		native.compactions === 0
			? "no compaction needed"
			: `${integer.format(native.compactions)} compaction${native.compactions === 1 ? "" : "s"} replayed (${integer.format(native.summaries)} summary requests billed)`;
	return `${added}; Pi's threshold at ${window} − ${integer.format(reserveTokens)} reserve, ${integer.format(keepRecentTokens)} tokens kept, ${integer.format(summaryChars)}-character summaries`;
}

/** What the "with pi-fold" column adds to the prompts: Pi's threshold as the runtime meets it, the summarizer's requests. */
function foldText(projected: ProjectedSavings["projected"], declarationTokens: number): string {
	const plural = (n: number, word: string) => `${integer.format(n)} ${word}${n === 1 ? "" : "s"}`;
	const threshold =
		projected.compactions + projected.cancelledCompactions === 0
			? "never reached Pi's threshold"
			: `Pi's threshold reached ${projected.compactions + projected.cancelledCompactions}×: ${plural(projected.cancelledCompactions, "ladder commit")} instead, ${plural(projected.compactions, "compaction")}`;
	return `${threshold}; ${plural(projected.summarizerRequests, "summarizer request")} and the context tool's declaration (~${integer.format(declarationTokens)} tokens a request) billed`;
}

function cacheText(projection: ProjectedSavings): string {
	const ttl = projection.cache.ttlSeconds;
	const min = projection.cache.minCachedTokens ?? 0;
	return `${ttl === undefined ? "without expiry" : `expiring after ${ttl} s idle`}, ${integer.format(min)}-token minimum`;
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
			: "  peak request context   none (no request recorded a prompt)",
	);
	lines.push(
		cost.threshold === null
			? "  above long context     no long-context tier in the cards used"
			: `  above long context     ${integer.format(cost.requestsAboveThreshold)} of ${integer.format(cost.requests.length)} requests over ${integer.format(cost.threshold)} tokens`,
	);
	return lines;
}

/**
 * The report text alone. Kept for callers that time the report (bench/suites/report.ts):
 * the replay runs only when `options.replay` is true here, whereas the CLI replays by default.
 */
export async function formatReport(
	session: LoadedSession,
	_stats: SessionStats = sessionStatsOf(session),
	options: ReportOptions = {},
): Promise<string> {
	return (await buildReport(session, { ...options, replay: options.replay === true })).text;
}

export function sessionStatsOf(session: LoadedSession): SessionStats {
	return sessionStats(session.entries, session.manager.buildSessionProjection());
}

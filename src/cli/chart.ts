/**
 * The per-request series the report charts, and its terminal sparkline.
 *
 * A series is read from the log in file order: each assistant message that
 * recorded usage is one request (prompt = fresh input + cache read + cache
 * write, as the provider billed it); a compaction or a pi-fold commit is
 * marked at the first request after it. Occupancy divides the prompt by the
 * serving model's context window from Pi's catalog, when the catalog knows
 * the model. Pure; no I/O.
 */

import type { AssistantMessage } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { catalogModel } from "../cost/catalog.ts";

/** One request as charted. */
export interface ChartPoint {
	entryId: string;
	promptTokens: number;
	cacheReadTokens: number;
	/** Prompt tokens not served from cache (fresh input plus cache writes). */
	uncachedTokens: number;
	/** promptTokens / the model's context window; null when the window is unknown. */
	occupancy: number | null;
}

export interface ChartSeries {
	points: ChartPoint[];
	/** Context window of the model that served most requests, when known. */
	window: number | null;
	/** `provider/model` that served most requests; null when no request recorded usage. */
	model: string | null;
	/** Requests left out because they recorded a zero prompt (failed or aborted). */
	unbilled: number;
	/** Request indices with a compaction / a pi-fold commit just before them. */
	compactions: number[];
	commits: number[];
	/** What pi-fold would have sent (sessions recorded without it): prompt tokens per request, commit indices. */
	projected?: { promptTokens: number[]; commits: number[] };
}

/** Build the series from the file's entries (requests with a zero prompt left out and counted); `commitEntryIds` are the `:commit` entries to mark. */
export function chartSeries(entries: readonly SessionEntry[], commitEntryIds: readonly string[] = []): ChartSeries {
	const commitIds = new Set(commitEntryIds);
	const points: ChartPoint[] = [];
	const compactions: number[] = [];
	const commits: number[] = [];
	const windows = new Map<string, number | null>();
	const served = new Map<string, number>();
	let unbilled = 0;
	const mark = (list: number[]) => {
		if (list.at(-1) !== points.length) list.push(points.length);
	};
	for (const entry of entries) {
		if (entry.type === "compaction") mark(compactions);
		else if (entry.type === "custom" && commitIds.has(entry.id)) mark(commits);
		if (entry.type !== "message" || entry.message.role !== "assistant") continue;
		const message = entry.message as AssistantMessage;
		if (!message.usage) continue;
		const cacheRead = message.usage.cacheRead ?? 0;
		const uncached = (message.usage.input ?? 0) + (message.usage.cacheWrite ?? 0);
		const prompt = cacheRead + uncached;
		// A failed or aborted request records zero usage; charting it as an empty context would mislead.
		if (prompt === 0) {
			unbilled++;
			continue;
		}
		const key = `${message.provider ?? ""}/${message.model ?? ""}`;
		if (!windows.has(key))
			windows.set(key, catalogModel(message.provider ?? "", message.model ?? "")?.contextWindow ?? null);
		served.set(key, (served.get(key) ?? 0) + 1);
		const window = windows.get(key) ?? null;
		points.push({
			entryId: entry.id,
			promptTokens: prompt,
			cacheReadTokens: cacheRead,
			uncachedTokens: uncached,
			occupancy: window ? prompt / window : null,
		});
	}
	const main = [...served].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0];
	// Marks after the last request point at nothing; drop them.
	const inRange = (list: number[]) => list.filter((index) => index < points.length);
	return {
		points,
		window: main === undefined ? null : (windows.get(main) ?? null),
		model: main ?? null,
		compactions: inRange(compactions),
		commits: inRange(commits),
		unbilled,
	};
}

/** Block characters from empty to full, one eighth apart. */
const BLOCKS = " ▁▂▃▄▅▆▇█";
/** Widest sparkline: fits an 80-column terminal after the row label. */
export const SPARKLINE_MAX_COLUMNS = 64;
/** Marker characters under the sparkline. */
export const COMPACTION_MARK = "C";
export const COMMIT_MARK = "F";
const BOTH_MARK = "*";

const integer = new Intl.NumberFormat("en-US");

/** Largest value per column when `values` are grouped `perColumn` to a column. */
function columns(values: readonly number[], perColumn: number): number[] {
	const out: number[] = [];
	for (let i = 0; i < values.length; i += perColumn) out.push(Math.max(...values.slice(i, i + perColumn)));
	return out;
}

function bars(values: readonly number[], scale: number): string {
	return values
		.map((value) => {
			if (!(scale > 0) || value <= 0) return BLOCKS[0];
			const level = Math.min(BLOCKS.length - 1, Math.max(1, Math.ceil((value / scale) * (BLOCKS.length - 1))));
			return BLOCKS[level];
		})
		.join("");
}

function markRow(count: number, perColumn: number, compactions: readonly number[], commits: readonly number[]): string {
	const row = new Array<string>(count).fill(" ");
	for (const index of compactions) row[Math.floor(index / perColumn)] = COMPACTION_MARK;
	for (const index of commits) {
		const at = Math.floor(index / perColumn);
		row[at] = row[at] === COMPACTION_MARK ? BOTH_MARK : COMMIT_MARK;
	}
	return row.join("").trimEnd();
}

/** The "Context per request" block: one sparkline per sequence, marks under each, a legend. */
export function sparklineSection(series: ChartSeries): string[] {
	const count = series.points.length;
	if (count === 0) return ["Context per request: no chart (no request recorded prompt usage)"];
	const perColumn = Math.ceil(count / SPARKLINE_MAX_COLUMNS);
	const recorded = series.points.map((point) => point.promptTokens);
	const projected = series.projected?.promptTokens ?? [];
	const peak = Math.max(...recorded, ...projected);
	const scale = series.window ?? peak;
	const scaleText = series.window
		? `full block = the ${integer.format(series.window)}-token window`
		: `full block = the peak, ${integer.format(peak)} tokens (window unknown)`;
	const grouping = perColumn === 1 ? "one request per column" : `${perColumn} requests per column, tallest shown`;
	const left = series.unbilled > 0 ? `, ${integer.format(series.unbilled)} with no usage left out` : "";
	const lines = [`Context per request (${integer.format(count)} requests${left}; ${grouping}; ${scaleText}):`];
	const recordedColumns = columns(recorded, perColumn);
	lines.push(`  recorded  ${bars(recordedColumns, scale)}`);
	const recordedMarks = markRow(recordedColumns.length, perColumn, series.compactions, series.commits);
	if (recordedMarks) lines.push(`            ${recordedMarks}`);
	if (series.projected) {
		lines.push(`  pi-fold   ${bars(columns(projected, perColumn), scale)}`);
		const projectedMarks = markRow(recordedColumns.length, perColumn, series.compactions, series.projected.commits);
		if (projectedMarks) lines.push(`            ${projectedMarks}`);
	}
	const legend = [`${COMPACTION_MARK} compaction`, `${COMMIT_MARK} pi-fold commit`, `${BOTH_MARK} both`];
	lines.push(`            ${legend.join(", ")}`);
	return lines;
}

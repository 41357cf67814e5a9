/**
 * `pi-fold report --html out.html`: one self-contained HTML file (inline SVG
 * and CSS, no script, no external asset) charting a session per request:
 * occupancy of the context window (and what pi-fold would have sent, for a
 * session recorded without it), and the prompt split into cache reads and
 * uncached input. Compactions and pi-fold commits are marked, each series
 * with its own colour and shape. Above the chart: a title naming the
 * session (its directory, model and date) and the report's headline numbers.
 * Pure: returns the document text.
 */

import type { ChartSeries } from "./chart.ts";

/** Drawing size of one panel, in SVG user units (the file scales to the page width). */
export const CHART_WIDTH = 960;
export const PANEL_HEIGHT = 240;
/** Room for axis labels left and below each panel. */
const MARGIN = { left: 72, right: 16, top: 28, bottom: 44 } as const;
/** Colours, chosen to stay apart for the common colour-vision deficiencies; no two series share one. */
export const COLORS = {
	recorded: "#1f5fbf",
	projected: "#e07b00",
	cacheRead: "#5b9bd5",
	uncached: "#d9534f",
	compaction: "#6a3d9a",
	commit: "#2e8b57",
	projectedCommit: "#8c510a",
	grid: "#d0d0d0",
	text: "#222222",
} as const;
/** About this many labelled ticks on the request axis. */
const X_TICKS = 6;

/** What the page says above the chart. */
export interface ChartPage {
	/** The page's title and heading. */
	title: string;
	/** Headline numbers, in order: a label and its value. */
	facts: readonly { label: string; value: string }[];
	/** One line under the numbers saying where they come from. */
	note?: string;
}

const integer = new Intl.NumberFormat("en-US");

function escapeXml(text: string): string {
	return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const fixed = (value: number): string => (Math.round(value * 10) / 10).toString();

/** Request numbers (1-based) to label on the x axis: 1, then round steps, never crowding the last. */
export function requestTicks(count: number): number[] {
	if (count <= 1) return [1];
	const step = niceStep((count - 1) / (X_TICKS - 1));
	const ticks = [1];
	for (let n = step; n < count; n += step) if (count - n >= step / 2) ticks.push(n);
	ticks.push(count);
	return ticks;
}

/** 1, 2 or 5 times a power of ten, at least `value` (and at least 1). */
function niceStep(value: number): number {
	if (!(value > 1)) return 1;
	const power = 10 ** Math.floor(Math.log10(value));
	for (const step of [1, 2, 5, 10]) if (value <= step * power) return step * power;
	return 10 * power;
}

/** Round a maximum up to 1, 2 or 5 times a power of ten, for axis ticks. */
function niceMax(value: number): number {
	if (!(value > 0)) return 1;
	const power = 10 ** Math.floor(Math.log10(value));
	for (const step of [1, 2, 5, 10]) if (value <= step * power) return step * power;
	return 10 * power;
}

interface Panel {
	title: string;
	/** Label of the y axis value at the top. */
	tickLabel: (value: number) => string;
	max: number;
	body: (x: (index: number) => number, y: (value: number) => number, step: number) => string;
}

function panel(series: ChartSeries, spec: Panel, top: number, projectedCommits = false): string {
	const count = Math.max(1, series.points.length);
	const plotWidth = CHART_WIDTH - MARGIN.left - MARGIN.right;
	const plotHeight = PANEL_HEIGHT - MARGIN.top - MARGIN.bottom;
	const step = plotWidth / count;
	const x = (index: number) => MARGIN.left + index * step;
	const y = (value: number) => top + MARGIN.top + plotHeight - (Math.min(value, spec.max) / spec.max) * plotHeight;
	const parts = [`<text x="${MARGIN.left}" y="${top + 18}" class="title">${escapeXml(spec.title)}</text>`];
	for (let tick = 0; tick <= 4; tick++) {
		const value = (spec.max * tick) / 4;
		const at = fixed(y(value));
		parts.push(
			`<line x1="${MARGIN.left}" x2="${CHART_WIDTH - MARGIN.right}" y1="${at}" y2="${at}" class="grid"/>`,
			`<text x="${MARGIN.left - 6}" y="${at}" class="tick" text-anchor="end" dominant-baseline="middle">${escapeXml(spec.tickLabel(value))}</text>`,
		);
	}
	const bottom = top + PANEL_HEIGHT - MARGIN.bottom;
	for (const n of requestTicks(series.points.length)) {
		const at = fixed(x(n - 1) + step / 2);
		parts.push(
			`<line x1="${at}" x2="${at}" y1="${bottom}" y2="${bottom + 4}" class="axis"/>`,
			`<text x="${at}" y="${bottom + 16}" class="tick" text-anchor="middle">${integer.format(n)}</text>`,
		);
	}
	parts.push(
		`<text x="${CHART_WIDTH - MARGIN.right}" y="${bottom + 30}" class="tick" text-anchor="end">request number (in the order they were sent)</text>`,
	);
	const line = (index: number, color: string, dash: string, label: string) =>
		`<line x1="${fixed(x(index))}" x2="${fixed(x(index))}" y1="${top + MARGIN.top}" y2="${bottom}" stroke="${color}" stroke-width="1.5" stroke-dasharray="${dash}"><title>${label} before request ${index + 1}</title></line>`;
	for (const index of series.compactions) parts.push(line(index, COLORS.compaction, DASH.compaction, "compaction"));
	for (const index of series.commits) parts.push(line(index, COLORS.commit, DASH.commit, "pi-fold commit"));
	if (projectedCommits)
		for (const index of series.projected?.commits ?? []) {
			const cx = x(index);
			const cy = top + MARGIN.top;
			parts.push(
				`<path d="${triangle(cx, cy)}" fill="${COLORS.projectedCommit}" class="projected-commit"><title>modelled pi-fold commit before request ${index + 1}</title></path>`,
			);
		}
	parts.push(spec.body(x, y, step));
	return `<g>${parts.join("")}</g>`;
}

/** Dash patterns: each marked series has its own. */
const DASH = { projected: "6 3", compaction: "4 3", commit: "1 3" } as const;

/** A small downward triangle with its tip at (cx, cy + 7): the modelled-commit marker. */
function triangle(cx: number, cy: number): string {
	return `M${fixed(cx - 4)},${fixed(cy - 1)} L${fixed(cx + 4)},${fixed(cy - 1)} L${fixed(cx)},${fixed(cy + 7)} Z`;
}

function polyline(values: readonly number[], x: (i: number) => number, y: (v: number) => number, step: number) {
	return values.map((value, index) => `${fixed(x(index) + step / 2)},${fixed(y(value))}`).join(" ");
}

interface LegendItem {
	color: string;
	label: string;
	/** A line (solid unless dashed), a bar swatch, or the triangle marker. */
	glyph: { line: string | undefined } | "bar" | "triangle";
}

function legend(items: readonly LegendItem[]): string {
	const glyph = (item: LegendItem): string => {
		if (item.glyph === "bar") return `<rect x="3" y="0" width="16" height="10" fill="${item.color}"/>`;
		if (item.glyph === "triangle") return `<path d="${triangle(11, 2)}" fill="${item.color}"/>`;
		const dash = item.glyph.line ? ` stroke-dasharray="${item.glyph.line}"` : "";
		return `<line x1="0" x2="22" y1="5" y2="5" stroke="${item.color}" stroke-width="3"${dash}/>`;
	};
	return `<ul class="legend">${items
		.map(
			(item) => `<li><svg width="22" height="10" aria-hidden="true">${glyph(item)}</svg>${escapeXml(item.label)}</li>`,
		)
		.join("")}</ul>`;
}

function factsList(page: ChartPage): string {
	const rows = page.facts
		.map((fact) => `<div><dt>${escapeXml(fact.label)}</dt><dd>${escapeXml(fact.value)}</dd></div>`)
		.join("");
	return `<dl class="facts">${rows}</dl>${page.note ? `<p class="note">${escapeXml(page.note)}</p>` : ""}`;
}

/** Said in place of the chart when no request recorded a prompt: an empty chart would read as empty requests. */
export const NO_CHART_TEXT = "No chart: no request in this log recorded prompt usage, so there is nothing to draw.";

/** The whole HTML document for one session. */
export function chartHtml(series: ChartSeries, page: ChartPage): string {
	const title = page.title;
	if (series.points.length === 0) return documentHtml(title, `${factsList(page)}\n<p>${escapeXml(NO_CHART_TEXT)}</p>`);
	const recorded = series.points.map((point) => point.promptTokens);
	const projected = series.projected?.promptTokens;
	const window = series.window;
	const peak = Math.max(1, ...recorded, ...(projected ?? []));
	const occupancyMax = window ? niceMax(Math.max(1, peak / window) * 100) : niceMax(peak);
	const asShare = (tokens: number) => (window ? (tokens / window) * 100 : tokens);
	const occupancy = panel(
		series,
		{
			title: window
				? `Context occupancy per request (% of the ${integer.format(window)}-token window)`
				: "Context per request (tokens; the model's window is unknown)",
			tickLabel: (value) => (window ? `${Math.round(value)}%` : integer.format(Math.round(value))),
			max: occupancyMax,
			body: (x, y, step) => {
				let out = `<polyline points="${polyline(recorded.map(asShare), x, y, step)}" fill="none" stroke="${COLORS.recorded}" stroke-width="2" class="recorded"/>`;
				if (projected)
					out += `<polyline points="${polyline(projected.map(asShare), x, y, step)}" fill="none" stroke="${COLORS.projected}" stroke-width="2" stroke-dasharray="${DASH.projected}" class="projected"/>`;
				return out;
			},
		},
		0,
		true,
	);
	const promptMax = niceMax(peak);
	const split = panel(
		series,
		{
			title: "Prompt per request: cache reads and uncached input (tokens)",
			tickLabel: (value) => integer.format(Math.round(value)),
			max: promptMax,
			body: (x, y, step) =>
				series.points
					.map((point, index) => {
						const left = fixed(x(index));
						const width = fixed(Math.max(step * 0.85, 0.6));
						const cacheTop = y(point.cacheReadTokens);
						const totalTop = y(point.promptTokens);
						return (
							`<rect x="${left}" y="${fixed(cacheTop)}" width="${width}" height="${fixed(y(0) - cacheTop)}" fill="${COLORS.cacheRead}"/>` +
							`<rect x="${left}" y="${fixed(totalTop)}" width="${width}" height="${fixed(cacheTop - totalTop)}" fill="${COLORS.uncached}"/>`
						);
					})
					.join(""),
		},
		PANEL_HEIGHT,
	);
	const height = PANEL_HEIGHT * 2;
	const items: LegendItem[] = [
		{ color: COLORS.recorded, label: "recorded context", glyph: { line: undefined } },
		...(projected
			? [{ color: COLORS.projected, label: "with pi-fold (modelled)", glyph: { line: DASH.projected } }]
			: []),
		{ color: COLORS.cacheRead, label: "cache read", glyph: "bar" as const },
		{ color: COLORS.uncached, label: "uncached input", glyph: "bar" as const },
		...(series.compactions.length > 0
			? [{ color: COLORS.compaction, label: "compaction", glyph: { line: DASH.compaction } }]
			: []),
		...(series.commits.length > 0
			? [{ color: COLORS.commit, label: "pi-fold commit", glyph: { line: DASH.commit } }]
			: []),
		...((series.projected?.commits.length ?? 0) > 0
			? [{ color: COLORS.projectedCommit, label: "pi-fold commit (modelled, top chart)", glyph: "triangle" as const }]
			: []),
	];
	return documentHtml(
		title,
		`${factsList(page)}
<p>${integer.format(series.points.length)} requests charted${series.unbilled > 0 ? ` (${integer.format(series.unbilled)} with no usage left out)` : ""}. Made by <code>pi-fold report --html</code>.</p>
<svg class="chart" viewBox="0 0 ${CHART_WIDTH} ${height}" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${escapeXml(title)}">
${occupancy}
${split}
</svg>
${legend(items)}`,
	);
}

/** The page around its content: head, style, the title as heading. */
function documentHtml(title: string, content: string): string {
	return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeXml(title)}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; color: ${COLORS.text}; background: #ffffff; margin: 24px; }
h1 { font-size: 18px; margin: 0 0 8px; }
svg.chart { width: 100%; max-width: ${CHART_WIDTH}px; height: auto; display: block; }
.title { font-size: 14px; font-weight: 600; fill: ${COLORS.text}; }
.tick { font-size: 11px; fill: #555555; }
.grid { stroke: ${COLORS.grid}; stroke-width: 1; }
.axis { stroke: #555555; stroke-width: 1; }
.facts { display: flex; flex-wrap: wrap; gap: 8px 28px; margin: 12px 0; }
.facts div { min-width: 9em; }
.facts dt { font-size: 12px; color: #555555; }
.facts dd { margin: 0; font-size: 18px; font-weight: 600; }
.note { font-size: 12px; color: #555555; margin: 0 0 12px; }
.legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 16px; }
.legend li { display: flex; align-items: center; gap: 6px; }
</style>
</head>
<body>
<h1>${escapeXml(title)}</h1>
${content}
</body>
</html>
`;
}

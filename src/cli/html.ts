/**
 * `pi-fold report --html out.html`: one self-contained HTML file (inline SVG
 * and CSS, no script, no external asset) charting a session per request:
 * occupancy of the context window (and what pi-fold would have sent, for a
 * session recorded without it), and the prompt split into cache reads and
 * uncached input. Compactions and pi-fold commits are marked. Pure: returns
 * the document text.
 */

import type { ChartSeries } from "./chart.ts";

/** Drawing size of one panel, in SVG user units (the file scales to the page width). */
export const CHART_WIDTH = 960;
export const PANEL_HEIGHT = 240;
/** Room for axis labels left and below each panel. */
const MARGIN = { left: 72, right: 16, top: 28, bottom: 36 } as const;
/** Colours, chosen to stay apart for the common colour-vision deficiencies. */
export const COLORS = {
	recorded: "#1f5fbf",
	projected: "#e07b00",
	cacheRead: "#5b9bd5",
	uncached: "#d9534f",
	compaction: "#6a3d9a",
	commit: "#2e8b57",
	grid: "#d0d0d0",
	text: "#222222",
} as const;

const integer = new Intl.NumberFormat("en-US");

function escapeXml(text: string): string {
	return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const fixed = (value: number): string => (Math.round(value * 10) / 10).toString();

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
	parts.push(
		`<text x="${MARGIN.left}" y="${bottom + 16}" class="tick">request 1</text>`,
		`<text x="${CHART_WIDTH - MARGIN.right}" y="${bottom + 16}" class="tick" text-anchor="end">request ${integer.format(series.points.length)}</text>`,
	);
	const marker = (index: number, color: string, label: string) =>
		`<line x1="${fixed(x(index))}" x2="${fixed(x(index))}" y1="${top + MARGIN.top}" y2="${bottom}" stroke="${color}" stroke-width="1.5" stroke-dasharray="4 3"><title>${label} before request ${index + 1}</title></line>`;
	for (const index of series.compactions) parts.push(marker(index, COLORS.compaction, "compaction"));
	for (const index of series.commits) parts.push(marker(index, COLORS.commit, "pi-fold commit"));
	if (projectedCommits)
		for (const index of series.projected?.commits ?? [])
			parts.push(marker(index, COLORS.projected, "modelled pi-fold commit"));
	parts.push(spec.body(x, y, step));
	return `<g>${parts.join("")}</g>`;
}

function polyline(values: readonly number[], x: (i: number) => number, y: (v: number) => number, step: number) {
	return values.map((value, index) => `${fixed(x(index) + step / 2)},${fixed(y(value))}`).join(" ");
}

function legend(items: readonly { color: string; label: string; dashed?: boolean }[]): string {
	return `<ul class="legend">${items
		.map(
			(item) =>
				`<li><svg width="22" height="10" aria-hidden="true"><line x1="0" x2="22" y1="5" y2="5" stroke="${item.color}" stroke-width="4"${item.dashed ? ' stroke-dasharray="4 3"' : ""}/></svg>${escapeXml(item.label)}</li>`,
		)
		.join("")}</ul>`;
}

/** The whole HTML document for one session. */
export function chartHtml(series: ChartSeries, title: string): string {
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
					out += `<polyline points="${polyline(projected.map(asShare), x, y, step)}" fill="none" stroke="${COLORS.projected}" stroke-width="2" stroke-dasharray="6 3" class="projected"/>`;
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
	const items = [
		{ color: COLORS.recorded, label: "recorded context" },
		...(projected ? [{ color: COLORS.projected, label: "with pi-fold (modelled)", dashed: true }] : []),
		{ color: COLORS.cacheRead, label: "cache read" },
		{ color: COLORS.uncached, label: "uncached input" },
		...(series.compactions.length > 0 ? [{ color: COLORS.compaction, label: "compaction", dashed: true }] : []),
		...(series.commits.length > 0 ? [{ color: COLORS.commit, label: "pi-fold commit", dashed: true }] : []),
		...((series.projected?.commits.length ?? 0) > 0
			? [{ color: COLORS.projected, label: "pi-fold commit (modelled, top chart)", dashed: true }]
			: []),
	];
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
.legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 16px; }
.legend li { display: flex; align-items: center; gap: 6px; }
</style>
</head>
<body>
<h1>${escapeXml(title)}</h1>
<p>${integer.format(series.points.length)} requests${series.unbilled > 0 ? ` (${integer.format(series.unbilled)} with no usage left out)` : ""}. Made by <code>pi-fold report --html</code>.</p>
<svg class="chart" viewBox="0 0 ${CHART_WIDTH} ${height}" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${escapeXml(title)}">
${occupancy}
${split}
</svg>
${legend(items)}
</body>
</html>
`;
}

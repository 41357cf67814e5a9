/**
 * The README's headline figures, read from the real-host replay's results
 * file (bench/results/host-replay.md, written by `npm run bench --
 * host-replay`, bench/host-replay/report.ts): per session set and window,
 * over the real sessions, pi-fold's defaults arm against Pi alone (the
 * native arm) as the median and range of the per-session cost ratios,
 * charged for what each window hid and raw; the replies whose request did
 * not show something they referred to; and the compactions each arm ran.
 *
 * Tables are found by their headings and columns by their header names, so
 * a column added to the file does not move a figure; a heading, column or
 * row the figures need that is missing (or a run that failed) throws an
 * error naming the file, the place and the command that rewrites it.
 */

/** The results file, relative to the checkout. */
export const HOST_REPLAY_RESULTS = "bench/results/host-replay.md";
const RERUN = "npm run bench -- host-replay";

export interface Table {
	heading: string;
	header: string[];
	rows: string[][];
}

/** A median and range of per-session ratios, as the file writes them ("0.93×"). */
export interface RatioFigures {
	median: string;
	low: string;
	high: string;
}

export interface HostReplayFigures {
	set: string;
	/** The model window, as the file writes it ("200,000"). */
	window: string;
	/** Real sessions in the set at this window (generated ones are not headline figures). */
	sessions: number;
	/** defaults / native with both arms charged for what their windows hid. */
	charged: RatioFigures;
	/** defaults / native as billed. */
	raw: RatioFigures;
	/** Replies with an absent reference over replies scored, summed over the sessions: native and defaults. */
	hidden: { native: { replies: number; absent: number }; defaults: { replies: number; absent: number } };
	/** Compactions summed over the set's sessions at this window. */
	compactions: { native: number; defaults: number };
}

const cells = (row: string): string[] =>
	row
		.trim()
		.replace(/^\||\|$/g, "")
		.split("|")
		.map((cell) => cell.trim());

/** Every markdown table with the `### ` heading above it. */
export function tables(markdown: string): Table[] {
	const found: Table[] = [];
	let heading = "";
	const lines = markdown.split("\n");
	for (let at = 0; at < lines.length; at++) {
		const text = lines[at] ?? "";
		if (text.startsWith("### ")) heading = text.slice(4).trim();
		if (!text.startsWith("|") || !/^\|[\s:|-]+\|$/.test(lines[at + 1]?.trim() ?? "")) continue;
		const rows: string[][] = [];
		for (at += 2; (lines[at] ?? "").startsWith("|"); at++) rows.push(cells(lines[at] ?? ""));
		found.push({ heading, header: cells(text), rows });
	}
	return found;
}

function fail(what: string): never {
	throw new Error(`${HOST_REPLAY_RESULTS}: ${what}; the README's figures need it (rerun ${RERUN}).`);
}

function column(table: Table, name: string): number {
	const at = table.header.indexOf(name);
	return at === -1 ? fail(`no "${name}" column in the table under "### ${table.heading}"`) : at;
}

function row(table: Table, first: string): string[] {
	return table.rows.find((cellsOf) => cellsOf[0] === first) ?? fail(`no "${first}" row under "### ${table.heading}"`);
}

/** "0.93×" → 0.93; a cell that is not a ratio fails naming where it is. */
function ratioOf(cell: string | undefined, where: string): number {
	const value = /^(\d+(?:\.\d+)?)×$/.exec(cell ?? "")?.[1];
	return value === undefined ? fail(`"${cell ?? ""}" is not a cost ratio (${where})`) : Number(value);
}

/** A cost-ratio table's heading: `### held-out set, 200,000-token window`. */
const SUMMARY_HEADING = /^(tuned|held-out) set, ([\d,]+)-token window$/;
/** Session rows of generated sessions: reported, never headline figures. */
const GENERATED_MARK = " (generated)";
const MEDIAN_ROW = "**median, real sessions**";

/** The median row's cell and the range of the session rows' cells in one column. */
function ratioFigures(summary: Table, sessions: readonly string[][], name: string): RatioFigures {
	const at = column(summary, name);
	const ratios = sessions.map((cellsOf) => ratioOf(cellsOf[at], `${cellsOf[0]}, "### ${summary.heading}"`));
	const median = row(summary, MEDIAN_ROW)[at] ?? "";
	ratioOf(median, `median, "### ${summary.heading}"`);
	const fixed = (value: number) => `${value.toFixed(2)}×`;
	return { median, low: fixed(Math.min(...ratios)), high: fixed(Math.max(...ratios)) };
}

/** "431" or "12 (4.1%)" → the count. */
function countOf(cell: string | undefined, where: string): number {
	const value = /^([\d,]+)(?: \(|$)/.exec(cell ?? "")?.[1];
	return value === undefined
		? fail(`"${cell ?? ""}" is not a reply count (${where})`)
		: Number(value.replaceAll(",", ""));
}

/** The figures of every `### <set> set, <window>-token window` summary in the file, in file order (real sessions). */
export function hostReplayFigures(markdown: string): HostReplayFigures[] {
	const all = tables(markdown);
	const figures: HostReplayFigures[] = [];
	for (const summary of all) {
		const named = SUMMARY_HEADING.exec(summary.heading);
		if (!named) continue;
		const [, set = "", window = ""] = named;
		const sessions = summary.rows.filter(
			(cellsOf) => !(cellsOf[0] ?? "").startsWith("**median") && !(cellsOf[0] ?? "").endsWith(GENERATED_MARK),
		);
		if (sessions.length === 0) fail(`no real session rows under "### ${summary.heading}"`);
		const charged = ratioFigures(summary, sessions, "defaults / native, charged");
		const raw = ratioFigures(summary, sessions, "defaults / native, raw");
		const compactions = { native: 0, defaults: 0 };
		const hidden = { native: { replies: 0, absent: 0 }, defaults: { replies: 0, absent: 0 } };
		const outOfView = all.find((table) => table.heading === `Out of view: ${set} set, ${window}-token window`);
		if (!outOfView) fail(`no "### Out of view: ${set} set, ${window}-token window" table`);
		for (const session of sessions) {
			const name = session[0] ?? "";
			const runs = all.find(
				(table) => table.heading.startsWith(`${name} (${set};`) && table.heading.endsWith(`, ${window} window`),
			);
			if (!runs) fail(`no "### ${name} (${set}; …), ${window} window" table`);
			const at = column(runs, "compactions");
			for (const arm of ["native", "defaults"] as const) {
				const value = row(runs, arm)[at] ?? "";
				if (!/^\d+$/.test(value))
					fail(`the ${arm} run under "### ${runs.heading}" has no compaction count (failed run?)`);
				compactions[arm] += Number(value);
				const scored = outOfView.rows.find((cellsOf) => cellsOf[0] === name && cellsOf[2] === arm);
				if (!scored) fail(`no ${arm} row for ${name} under "### ${outOfView.heading}"`);
				const where = `${name} ${arm}, "### ${outOfView.heading}"`;
				hidden[arm].replies += countOf(scored[column(outOfView, "replies")], where);
				hidden[arm].absent += countOf(scored[column(outOfView, "with an absent reference")], where);
			}
		}
		figures.push({ set, window, sessions: sessions.length, charged, raw, hidden, compactions });
	}
	if (figures.length === 0) fail('no "### <set> set, <window>-token window" cost-ratio tables');
	return figures;
}

/**
 * The results file's judgement, for docs/benchmarks.md: its target lines,
 * the sanity check and the cost-ratio tables (from "## Targets" up to
 * "## Out of view"), headings moved two levels down to sit under the docs'
 * section. Throws naming the file when a part is missing.
 */
export function hostReplayJudgement(markdown: string): string {
	const start = markdown.indexOf("\n## Targets");
	const end = markdown.indexOf("\n## Out of view");
	if (start === -1) fail('no "## Targets" section');
	if (end === -1 || end < start) fail('no "## Out of view" section after the targets');
	return markdown
		.slice(start + 1, end)
		.trimEnd()
		.replace(/^(#{2,3}) /gm, (_match, hashes: string) => `${hashes}## `);
}

/** The run's date line, when the file has one. */
export function hostReplayDate(markdown: string): string | undefined {
	return /^- Date: (\S+)/m.exec(markdown)?.[1]?.slice(0, 10);
}

/** How close the report's estimate came to the host on the real sessions' target lines. */
export interface EstimateAgreement {
	/** Session-windows whose raw and charged gaps are both within the limit. */
	within: number;
	total: number;
	/** The largest gap, raw or charged, and where. */
	worst: { session: string; window: string; gap: number };
}

/** The agreement limit issue 20 set for the report's estimate (the target lines use it too). */
const ESTIMATE_LIMIT = 0.05;

const ESTIMATE_LINE =
	/^- (?:PASS|FAIL) (\S+) @(\S+): the report's estimate − host ([−+]?[\d.]+) raw, ([−+]?[\d.]+) charged/gm;

/** The estimate's agreement with the host, read from the results file's target lines; throws when there are none. */
export function estimateAgreement(markdown: string): EstimateAgreement {
	const gaps = [...markdown.matchAll(ESTIMATE_LINE)].map((match) => ({
		session: match[1] ?? "",
		window: match[2] ?? "",
		gaps: [match[3], match[4]].map((value) => Math.abs(Number((value ?? "").replace("−", "-")))),
	}));
	if (gaps.length === 0) fail('no "the report\'s estimate − host" target lines');
	let worst = { session: "", window: "", gap: -1 };
	for (const line of gaps) {
		const gap = Math.max(...line.gaps);
		if (gap > worst.gap) worst = { session: line.session, window: line.window, gap };
	}
	const within = gaps.filter((line) => line.gaps.every((gap) => gap <= ESTIMATE_LIMIT)).length;
	return { within, total: gaps.length, worst };
}

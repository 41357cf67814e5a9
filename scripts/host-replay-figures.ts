/**
 * The README's headline figures, read from the real-host replay's results
 * file (bench/results/host-replay.md, written by `npm run bench --
 * host-replay`, bench/host-replay/report.ts): per session set and window,
 * pi-fold's defaults arm against Pi alone (the native arm) as the median and
 * range of the per-session cost ratios, and the compactions each arm ran.
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

export interface HostReplayFigures {
	set: string;
	/** The model window, as the file writes it ("200,000"). */
	window: string;
	sessions: number;
	/** defaults / native, as the file writes the median ("0.93×"). */
	median: string;
	/** Lowest and highest per-session defaults / native. */
	low: string;
	high: string;
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

/** The figures of every `### <set> set, <window>-token window` summary in the file, in file order. */
export function hostReplayFigures(markdown: string): HostReplayFigures[] {
	const all = tables(markdown);
	const figures: HostReplayFigures[] = [];
	for (const summary of all) {
		const named = /^(.+) set, ([\d,]+)-token window$/.exec(summary.heading);
		if (!named) continue;
		const [, set = "", window = ""] = named;
		const ratioAt = column(summary, "defaults / native");
		const sessions = summary.rows.filter((cellsOf) => cellsOf[0] !== "**median**");
		if (sessions.length === 0) fail(`no session rows under "### ${summary.heading}"`);
		const ratios = sessions.map((cellsOf) => ratioOf(cellsOf[ratioAt], `${cellsOf[0]}, "### ${summary.heading}"`));
		const median = row(summary, "**median**")[ratioAt] ?? "";
		ratioOf(median, `median, "### ${summary.heading}"`);
		const compactions = { native: 0, defaults: 0 };
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
			}
		}
		const fixed = (value: number) => `${value.toFixed(2)}×`;
		figures.push({
			set,
			window,
			sessions: sessions.length,
			median,
			low: fixed(Math.min(...ratios)),
			high: fixed(Math.max(...ratios)),
			compactions,
		});
	}
	if (figures.length === 0) fail('no "### <set> set, <window>-token window" cost-ratio tables');
	return figures;
}

/** The run's date line, when the file has one. */
export function hostReplayDate(markdown: string): string | undefined {
	return /^- Date: (\S+)/m.exec(markdown)?.[1]?.slice(0, 10);
}

/**
 * The README's "On the bundled real logs" figures: what `pi-fold report
 * <log>` prints under "What pi-fold would have saved" for each real log, read
 * from the report benchmark's results file (bench/results/report.md, written
 * by `npm run bench -- report`, bench/suites/report.ts). The table is found
 * by its heading and the columns by their header names; a missing one
 * throws naming the file and the command that rewrites it.
 */

import { type Table, tables } from "./host-replay-figures.ts";

/** The heading the report benchmark writes the table under (bench/suites/report.ts), and the figures are read by. */
export const WOULD_HAVE_SAVED_HEADING = "### What `pi-fold report` says pi-fold would have saved";

/** The results file, relative to the checkout. */
export const REPORT_RESULTS = "bench/results/report.md";
const RERUN = "npm run bench -- report";

export interface ReportFigures {
	log: string;
	/** Modelled cost of each column, as the report prints it ("$36.5533"). */
	aloneCost: string;
	foldCost: string;
	/** Peak request of each column, in tokens, as printed ("182,626"). */
	alonePeak: string;
	foldPeak: string;
}

function fail(what: string): never {
	throw new Error(`${REPORT_RESULTS}: ${what}; the README's figures need it (rerun ${RERUN}).`);
}

function cell(table: Table, row: string[], name: string): string {
	const at = table.header.indexOf(name);
	if (at === -1) fail(`no "${name}" column under "${WOULD_HAVE_SAVED_HEADING}"`);
	return row[at] ?? fail(`no "${name}" cell for ${row[0] ?? "a log"}`);
}

/** Each log's row of the "would have saved" table, in file order. */
export function reportFigures(markdown: string): ReportFigures[] {
	const table = tables(markdown).find((item) => `### ${item.heading}` === WOULD_HAVE_SAVED_HEADING);
	if (!table || table.rows.length === 0) fail(`no table under "${WOULD_HAVE_SAVED_HEADING}"`);
	return table.rows.map((row) => ({
		log: cell(table, row, "real log"),
		aloneCost: cell(table, row, "Pi alone"),
		foldCost: cell(table, row, "with pi-fold"),
		alonePeak: cell(table, row, "peak request, Pi alone"),
		foldPeak: cell(table, row, "peak request, with pi-fold"),
	}));
}

/**
 * The README's store figures: how large the fold store is against the
 * session file at the two scales of the store benchmark's full preset, and
 * whether issue 28's targets hold, read from its results file
 * (bench/results/store.md, written by `npm run bench -- store --preset full`,
 * bench/store/suite.ts). The table is found by its first column and cells by
 * column name; a missing one throws naming the file and the command that
 * rewrites it.
 */

import { type Table, tables } from "./host-replay-figures.ts";

/** The results file, relative to the checkout. */
export const STORE_RESULTS = "bench/results/store.md";
const RERUN = "npm run bench -- store --preset full";

export interface StoreScale {
	/** As the file writes them: "480", "3,015", "21.2 MB", "0.99×". */
	stages: string;
	entries: string;
	session: string;
	store: string;
	ratio: string;
	verify: string;
}

export interface StoreFigures {
	scales: StoreScale[];
	/** The target lines under "## Targets", as written ("Store ≤ 1.5× the session file at 480 stages: 0.99× (met)."). */
	targets: string[];
	date: string;
}

function fail(what: string): never {
	throw new Error(`${STORE_RESULTS}: ${what}; the README's store figures need it (rerun ${RERUN}).`);
}

function cell(table: Table, row: string[], column: string): string {
	const at = table.header.indexOf(column);
	if (at === -1) fail(`no "${column}" column`);
	return row[at] ?? fail(`no "${column}" cell`);
}

export function storeFigures(markdown: string): StoreFigures {
	const table = tables(markdown).find((item) => item.header[0] === "stages") ?? fail('no table of "stages"');
	if (table.rows.length < 2) fail("fewer than two scales");
	const scales = table.rows.map((row) => ({
		stages: cell(table, row, "stages"),
		entries: cell(table, row, "entries"),
		session: cell(table, row, "session file"),
		store: cell(table, row, "store"),
		ratio: cell(table, row, "store ÷ session"),
		verify: cell(table, row, "verify"),
	}));
	const targetsAt = markdown.indexOf("## Targets");
	if (targetsAt === -1) fail('no "## Targets" section');
	const section = markdown.slice(targetsAt).split("\n").slice(1);
	const end = section.findIndex((line) => line.startsWith("## "));
	const targets = (end === -1 ? section : section.slice(0, end))
		.filter((line) => line.startsWith("- "))
		.map((line) => line.slice(2));
	if (targets.length === 0) fail("no target lines");
	const date = /^- Date: (\S+)/m.exec(markdown)?.[1] ?? fail('no "- Date:" line');
	return { scales, targets, date };
}

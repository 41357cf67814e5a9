/**
 * The README's start-up figures: what pi-fold adds to a Pi start from its
 * bundle and from its sources, and what the entry's content check costs,
 * read from the start-up benchmark's results file (bench/results/startup.md,
 * written by `npm run bench -- startup`, bench/suites/startup.ts). Tables are
 * found by heading or header and columns by name; a missing one throws
 * naming the file and the command that rewrites it.
 */

import { type Table, tables } from "./host-replay-figures.ts";

/** The heading the start-up benchmark writes its table under (bench/suites/startup.ts), and the figures are read by. */
export const STARTUP_HEADING = "### Pi's start with and without pi-fold";

/** The results file, relative to the checkout. */
export const STARTUP_RESULTS = "bench/results/startup.md";
const RERUN = "npm run bench -- startup";

export interface StartupFigures {
	/** Seconds until Pi alone's first request, and what each form of pi-fold adds, as the file writes them ("0.15"). */
	alone: string;
	bundleAdds: string;
	sourcesAdds: string;
	/** The content check's median, in ms as written. */
	checkMs: string;
	runs: string;
	/** 1-minute load average when the run started. */
	load: string;
}

function fail(what: string): never {
	throw new Error(`${STARTUP_RESULTS}: ${what}; the README's figures need it (rerun ${RERUN}).`);
}

function cell(table: Table, first: string, column: string): string {
	const at = table.header.indexOf(column);
	if (at === -1) fail(`no "${column}" column`);
	const row = table.rows.find((cells) => cells[0] === first) ?? fail(`no "${first}" row`);
	return row[at] ?? fail(`no "${column}" cell in the "${first}" row`);
}

export function startupFigures(markdown: string): StartupFigures {
	const all = tables(markdown);
	const arms =
		all.find((item) => `### ${item.heading}` === STARTUP_HEADING) ?? fail(`no table under "${STARTUP_HEADING}"`);
	const cases = all.find((item) => item.header[0] === "case") ?? fail("no timing table");
	return {
		alone: cell(arms, "Pi alone", "until the first request"),
		bundleAdds: cell(arms, "pi-fold, bundle", "added to Pi alone"),
		sourcesAdds: cell(arms, "pi-fold, sources", "added to Pi alone"),
		checkMs: cell(cases, "bundle content check", "median"),
		runs: /^Medians of (\d+) runs per arm/m.exec(markdown)?.[1] ?? fail('no "Medians of N runs per arm" line'),
		load: /1-minute load average at start: ([\d.]+)/.exec(markdown)?.[1] ?? fail("no load average line"),
	};
}

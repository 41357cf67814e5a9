/**
 * `report`: loading and summarizing the real logs — parse + migrate + index
 * (`loadSessionFile`), statistics over entries and the active projection
 * (`sessionStats`), and the whole `pi-fold report` text (cost section
 * included) from an already loaded session. The results also record, per
 * log, the figures `pi-fold report <log>` prints under "What pi-fold would
 * have saved" (`wouldHaveSavedTable`, the same `projectSavings` the report
 * runs): the README quotes them from here (scripts/report-figures.ts).
 */

import { readFileSync } from "node:fs";
import { WOULD_HAVE_SAVED_HEADING } from "../../scripts/report-figures.ts";
import { formatReport, sessionStatsOf } from "../../src/cli/report.ts";
import { projectSavings } from "../../src/cost/projected-savings.ts";
import { loadSessionFile } from "../../src/session/load.ts";
import type { BenchCase, Benchmark } from "../harness.ts";
import { type RealLog, realLogs } from "../sessions.ts";

const integer = new Intl.NumberFormat("en-US");
/** Dollars as the report prints them. */
const money = (dollars: number): string => `$${dollars.toFixed(4)}`;

/** Per log, the report's "would have saved" figures: both columns' cost and peak request, the ladder's commits. */
async function wouldHaveSavedTable(logs: readonly RealLog[]): Promise<string[]> {
	const rows: string[] = [];
	for (const log of logs) {
		const session = loadSessionFile(log.path);
		const projection = await projectSavings(session.manager.getBranch(), session.header.cwd || "/");
		const { native, projected } = projection;
		rows.push(
			`| ${log.name} | ${money(native.cost)} | ${money(projected.cost)} | ${integer.format(Math.round(native.peakPromptTokens))} | ${integer.format(Math.round(projected.peakPromptTokens))} | ${integer.format(projection.commits)} | ${integer.format(projection.folds)} |`,
		);
	}
	return [
		"",
		WOULD_HAVE_SAVED_HEADING,
		"",
		"| real log | Pi alone | with pi-fold | peak request, Pi alone | peak request, with pi-fold | commits | folds |",
		"| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
		...rows,
	];
}

export const reportBench: Benchmark = {
	name: "report",
	description: "Load the real session logs and compute their report (stats, cost section).",
	async prepare() {
		const cases: BenchCase[] = [];
		const facts: string[] = [];
		for (const log of realLogs()) {
			const loaded = loadSessionFile(log.path);
			const input = { bytes: log.bytes, entries: loaded.entries.length };
			const lines = readFileSync(log.path, "utf8")
				.split("\n")
				.filter((line) => line.trim()).length;
			cases.push(
				{ label: `load ${log.name}`, input, run: () => loadSessionFile(log.path) },
				{ label: `stats ${log.name}`, input, run: () => sessionStatsOf(loaded) },
				{ label: `report text ${log.name}`, input, run: () => formatReport(loaded) },
				{
					label: `load + report ${log.name}`,
					input,
					run: () => formatReport(loadSessionFile(log.path)),
				},
			);
			facts.push(
				`- ${log.name}: ${lines} JSONL lines → ${loaded.entries.length} entries (v${loaded.sourceVersion} migrated)`,
			);
		}
		facts.push(...(await wouldHaveSavedTable(realLogs())));
		return {
			cases,
			facts,
			notes: [
				"- `load` reads and parses the file, migrates it as Pi does and builds an in-memory SessionManager.",
				"- `stats` and `report text` start from the loaded session; `load + report` is what `pi-fold report <file>` does.",
				'- The "would have saved" table is `projectSavings` on each log\'s active branch, as `pi-fold report <log>` runs it (cost and peak request of both columns, as the report prints them); the timed cases leave that replay out (`formatReport` without `replay`).',
			],
		};
	},
};

/**
 * `report`: loading and summarizing the real logs — parse + migrate + index
 * (`loadSessionFile`), statistics over entries and the active projection
 * (`sessionStats`), and the whole `pi-fold report` text (cost section
 * included) from an already loaded session.
 */

import { readFileSync } from "node:fs";
import { formatReport, sessionStatsOf } from "../../src/cli/report.ts";
import { loadSessionFile } from "../../src/session/load.ts";
import type { BenchCase, Benchmark } from "../harness.ts";
import { realLogs } from "../sessions.ts";

export const reportBench: Benchmark = {
	name: "report",
	description: "Load the real session logs and compute their report (stats, cost section).",
	prepare() {
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
		return {
			cases,
			facts,
			notes: [
				"- `load` reads and parses the file, migrates it as Pi does and builds an in-memory SessionManager.",
				"- `stats` and `report text` start from the loaded session; `load + report` is what `pi-fold report <file>` does.",
			],
		};
	},
};

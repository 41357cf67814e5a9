/**
 * `npm run bench -- search-cost [--preset full|small]` (issue 28): what one
 * `active_context` search costs on a long folded session, with the fold
 * store on disk as the runtime writes it. Search reads every placed fold at
 * every depth; the arms compare the two ways of reading them, side by side
 * in one run, arms alternating: through their root (one verified read of
 * each root, each nested fold served its run of the root's lines after its
 * own hash check: `src/fold/actions/nested-sources.ts`) and each fold on its
 * own (`readSource` per fold: what search did before). Then the whole
 * search, a query that matches nothing (every source scanned) and a common
 * word (stops at the hit count). The fixtures are the runtime benchmark's
 * (bench/runtime/fixtures.ts).
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NestedSources } from "../../src/fold/actions/nested-sources.ts";
import { searchWorkspace } from "../../src/fold/actions/search-action.ts";
import { readSource } from "../../src/fold/actions/source-read.ts";
import { FoldEngine } from "../../src/fold/engine/engine.ts";
import type { FoldWorkspace } from "../../src/fold/engine/workspace.ts";
import { indexLattice } from "../../src/fold/lattice/lattice-index.ts";
import { resolveOptions } from "../../src/fold/options.ts";
import { openFileFoldStore } from "../../src/fold/store/store-file.ts";
import { median, presetOf, type ReportBenchmark, reportContextLines } from "../harness.ts";
import { foldedFixture } from "../runtime/fixtures.ts";

interface SearchCostPreset {
	sizes: readonly number[];
	runs: number;
}

const SEARCH_COST_PRESETS: Readonly<Record<string, SearchCostPreset>> = {
	full: { sizes: [5_000, 20_000], runs: 3 },
	small: { sizes: [1_000, 5_000], runs: 3 },
};

const HOST_CWD = "/project";
/** A query no source holds: every fold is read and scanned. */
const ABSENT_QUERY = "no-source-holds-this-query";
/** A word the generated sessions' code holds everywhere: the search stops at its hit count. */
const COMMON_QUERY = "function";

const integer = new Intl.NumberFormat("en-US");
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function timed(run: () => Promise<unknown>): Promise<number> {
	const started = performance.now();
	await run();
	return performance.now() - started;
}

/** Every placed fold read, through roots or each on its own; throws on any failed read (the fixture is intact). */
async function readAll(ws: FoldWorkspace, throughRoots: boolean): Promise<number> {
	const placements = indexLattice(ws.lattice, ws.view).ordered;
	const nested = new NestedSources(ws, placements);
	let bytes = 0;
	for (const { record } of placements) {
		if (throughRoots) {
			const read = await nested.read(record);
			if (!read.ok) throw new Error(`search-cost: fold ${record.id}: ${read.message}`);
			bytes += read.bytes.length;
		} else {
			const read = await readSource(ws, record);
			if ("ok" in read) throw new Error(`search-cost: fold ${record.id}: ${read.text}`);
			bytes += read.bytes.length;
		}
	}
	return bytes;
}

export const searchCostBench: ReportBenchmark = {
	name: "search-cost",
	description: "one search on a long folded session: every fold read through its root against each on its own",
	presets: Object.keys(SEARCH_COST_PRESETS),
	defaultPreset: "full",
	async report(presetName, context) {
		const preset = presetOf(SEARCH_COST_PRESETS, presetName);
		const options = resolveOptions();
		const rows: string[] = [];
		for (const size of preset.sizes) {
			const fixture = foldedFixture(size, options, HOST_CWD);
			const dir = mkdtempSync(join(tmpdir(), "pi-fold-search-cost-"));
			try {
				const store = openFileFoldStore({ sessionDir: dir, sessionId: `search-cost-${size}` });
				await fixture.writeStore(store);
				const engine = new FoldEngine(options);
				engine.reset(fixture.branch, store);
				engine.build();
				const ws = engine.workspace("agent", HOST_CWD);
				const times = { roots: [] as number[], own: [] as number[], absent: [] as number[], common: [] as number[] };
				let readBytes = 0;
				let ownBytes = 0;
				let searched = "";
				for (let run = 0; run < preset.runs; run++) {
					times.roots.push(await timed(async () => (readBytes = await readAll(ws, true))));
					times.own.push(await timed(async () => (ownBytes = await readAll(ws, false))));
					times.absent.push(
						await timed(async () => {
							const out = await searchWorkspace(ws, { artifacts: async () => [] }, { query: ABSENT_QUERY });
							if (!("result" in out)) throw new Error(`search-cost: search refused: ${out.text}`);
							if (out.result.failures.length > 0) throw new Error("search-cost: a source failed verification");
							searched = `${integer.format(out.result.searched.fold.count)} folds, ${(out.result.searched.fold.bytes / 2 ** 20).toFixed(1)} MiB`;
						}),
					);
					times.common.push(
						await timed(() => searchWorkspace(ws, { artifacts: async () => [] }, { query: COMMON_QUERY })),
					);
				}
				if (readBytes !== ownBytes) throw new Error(`search-cost: the arms read ${readBytes} and ${ownBytes} bytes`);
				const roots = median(times.roots);
				const own = median(times.own);
				context.log(
					`   ${integer.format(size)} entries: through roots ${seconds(roots)}, each on its own ${seconds(own)}`,
				);
				rows.push(
					`| ${integer.format(size)} | ${integer.format(fixture.branch.length)} | ${searched} | ${seconds(roots)} | ${seconds(own)} | ${(roots / own).toFixed(2)}× | ${seconds(median(times.absent))} | ${seconds(median(times.common))} |`,
				);
			} finally {
				rmSync(dir, { recursive: true, force: true });
			}
		}
		const body = [
			"# Benchmark: search cost",
			"",
			"One `active_context` search on a long folded session, the fold store on disk as the runtime writes it (issue 28).",
			"",
			...reportContextLines(context),
			`- Runs per case: ${preset.runs}, arms alternating; medians`,
			"",
			"Search reads every placed fold at every depth. *Through roots*: each root read once with the full check (blob, record and log agree), each nested fold served its run of the root's lines after its own SHA-256 check (what search does). *Each on its own*: every fold read and checked on its own (what search did before, but with the store's synchronous file reads, which it now has too). Both read the same bytes. The searches: a query no source holds (every fold read and scanned) and a common word (the count stops at 1,000 hits).",
			"",
			"| entries (generated) | branch entries | searched | reads through roots | reads each on its own | ratio | search, no hit | search, common word |",
			"| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |",
			...rows,
			"",
		].join("\n");
		return { body, file: presetName === "full" ? "search-cost.md" : `search-cost-${presetName}.md` };
	},
};

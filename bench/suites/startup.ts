/**
 * `startup`: what pi-fold costs each Pi start, per form the package entry
 * loads (bench/runtime/startup.ts: Pi alone, the bundle, the sources), and
 * the one piece of the choice that grows with the package: the entry's
 * content check (`bundleState`: read and hash every file under src/, read
 * the bundle's header), timed in process on this checkout.
 */

import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { STARTUP_HEADING } from "../../scripts/startup-figures.ts";
import { BUNDLE_PATH, bundleState, readSources, SOURCE_DIR } from "../../src/package/bundle-freshness.ts";
import { REPO_ROOT } from "../../test/harness/pi-cli.ts";
import type { Benchmark } from "../harness.ts";
import { type StartArm, timeStartup } from "../runtime/startup.ts";

/** Real Pi starts per arm (about a second each; three arms on two shared cores are noisy). */
export const STARTUP_RUNS = 9;

const ARM_LABELS: Record<StartArm, string> = {
	piAlone: "Pi alone",
	bundle: "pi-fold, bundle",
	sources: "pi-fold, sources",
};

const seconds = (value: number) => value.toFixed(2);

/** What the entry did before it read content: stat every source and the bundle, compare times. */
function newestSourceTime(root: string): boolean {
	const dir = join(root, SOURCE_DIR);
	let newest = 0;
	for (const item of readdirSync(dir, { recursive: true, withFileTypes: true }))
		if (item.isFile()) newest = Math.max(newest, statSync(join(item.parentPath, item.name)).mtimeMs);
	return newest > statSync(join(root, BUNDLE_PATH)).mtimeMs;
}

export const startupBench: Benchmark = {
	name: "startup",
	description:
		"Pi's start (`pi -p hi`, new session) alone, with pi-fold's bundle and with its sources; the package entry's content check.",
	async prepare() {
		const sources = readSources(REPO_ROOT);
		const bytes = sources.reduce((sum, file) => sum + file.bytes.byteLength, 0);
		const timings = await timeStartup(STARTUP_RUNS);
		const alone = timings.arms.piAlone;
		const rows = (Object.keys(ARM_LABELS) as StartArm[]).map((arm) => {
			const timing = timings.arms[arm];
			return `| ${ARM_LABELS[arm]} | ${seconds(timing.firstRequestSeconds)} | ${seconds(timing.firstRequestSeconds - alone.firstRequestSeconds)} | ${seconds(timing.wholeSeconds)} |`;
		});
		return {
			cases: [
				{
					label: "bundle content check",
					input: { bytes, entries: sources.length },
					run: () => bundleState(REPO_ROOT),
				},
				{
					label: "file-time check (the rule it replaced)",
					input: { bytes, entries: sources.length },
					run: () => newestSourceTime(REPO_ROOT),
				},
			],
			facts: [
				STARTUP_HEADING,
				"",
				`Medians of ${timings.runs} runs per arm, arms in turn, after one untimed run each (seconds):`,
				"",
				"| arm | until the first request | added to Pi alone | whole run |",
				"| --- | ---: | ---: | ---: |",
				...rows,
			],
			notes: [
				'- Each run is `pi -p hi` on a new session against the loopback provider (`bench/runtime/startup.ts`); "until the first request" runs from spawn until the provider receives it, "whole run" until Pi exits.',
				"- The bundle arm loads this checkout (its bundle is written before any benchmark runs); the sources arm loads a copy of `index.ts`, `package.json` and `src/` without a bundle or node_modules, as `pi install git:…` leaves the package (no notice: the sources are that install's form).",
				`- \`bundle content check\`: \`bundleState\` on this checkout, which every start pays before loading the bundle: ${sources.length} files under src/, ${bytes.toLocaleString("en-US")} bytes, read and hashed (SHA-256). \`file-time check\`: the rule it replaced (stat every source and the bundle, compare modification times), which a touched file fooled one way and a restored one the other.`,
			],
		};
	},
};

/**
 * What pi-fold adds to a Pi start, in each form the package entry can load
 * (src/package/load.ts): the real Pi CLI in print mode (`pi -p hi`, a new
 * session, one request the loopback provider answers), three arms in turn so
 * all see the same machine: Pi alone, pi-fold from its bundle (a checkout
 * after `npm ci`, or a packed install), and pi-fold from its sources (an
 * install without development dependencies, as `pi install git:…` makes).
 * Two readings per run: until the provider receives the request (what a
 * person waits for) and until Pi exits. One untimed run per arm first: jiti's
 * transform cache is warm after any first start, as for a person.
 */

import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LOOPBACK_FALLBACK_TEXT, say, startLoopbackProvider } from "../../test/harness/loopback-provider.ts";
import {
	createPiSandbox,
	node22Path,
	type PiSandbox,
	piBaseArgs,
	piCliPath,
	piEnv,
	REPO_ROOT,
} from "../../test/harness/pi-cli.ts";
import { median } from "../harness.ts";
import { runChild } from "./child.ts";

/** A start that takes longer than this is hung. */
const START_TIMEOUT_MS = 120_000;

export type StartArm = "piAlone" | "bundle" | "sources";

export interface StartTiming {
	/** Medians, seconds. */
	firstRequestSeconds: number;
	wholeSeconds: number;
}

export interface StartupTimings {
	arms: Record<StartArm, StartTiming>;
	runs: number;
}

/** What the provider saw of the run in flight. */
interface Watch {
	startedAt: number;
	firstRequestAt?: number;
}

async function startOnce(sandbox: PiSandbox, watch: Watch): Promise<{ first: number; whole: number }> {
	watch.startedAt = performance.now();
	watch.firstRequestAt = undefined;
	const args = [piCliPath(), ...piBaseArgs(sandbox), "-p", "hi"];
	const run = await runChild(node22Path(), args, { cwd: sandbox.cwd, env: piEnv(sandbox) }, START_TIMEOUT_MS);
	if (run.code !== 0 || watch.firstRequestAt === undefined)
		throw new Error(`pi -p hi exited ${run.code}${watch.firstRequestAt ? "" : " before any request"}: ${run.stderr}`);
	return { first: (watch.firstRequestAt - watch.startedAt) / 1000, whole: (run.endedAt - watch.startedAt) / 1000 };
}

/** The package as an install without development dependencies holds it: entry, manifest, sources; no bundle. */
function sourcesOnlyCopy(): string {
	const copy = mkdtempSync(join(tmpdir(), "pi-fold-startup-"));
	for (const entry of ["index.ts", "package.json", "src"])
		cpSync(join(REPO_ROOT, entry), join(copy, entry), { recursive: true });
	return copy;
}

/** Median start times of `runs` runs per arm, arms in turn. */
export async function timeStartup(runs: number): Promise<StartupTimings> {
	const watch: Watch = { startedAt: 0 };
	const provider = await startLoopbackProvider({
		respond: () => {
			watch.firstRequestAt ??= performance.now();
			return say(LOOPBACK_FALLBACK_TEXT);
		},
	});
	const sources = sourcesOnlyCopy();
	const sandboxes: Record<StartArm, PiSandbox> = {
		piAlone: createPiSandbox({ baseUrl: provider.baseUrl, extensions: [] }),
		bundle: createPiSandbox({ baseUrl: provider.baseUrl, extensions: [REPO_ROOT] }),
		sources: createPiSandbox({ baseUrl: provider.baseUrl, extensions: [sources] }),
	};
	try {
		const measured: Record<StartArm, { first: number; whole: number }[]> = { piAlone: [], bundle: [], sources: [] };
		for (let run = -1; run < runs; run++) {
			for (const arm of Object.keys(sandboxes) as StartArm[]) {
				const timing = await startOnce(sandboxes[arm], watch);
				if (run >= 0) measured[arm].push(timing);
			}
		}
		const summary = (list: { first: number; whole: number }[]): StartTiming => ({
			firstRequestSeconds: median(list.map((item) => item.first)),
			wholeSeconds: median(list.map((item) => item.whole)),
		});
		return {
			arms: {
				piAlone: summary(measured.piAlone),
				bundle: summary(measured.bundle),
				sources: summary(measured.sources),
			},
			runs,
		};
	} finally {
		for (const sandbox of Object.values(sandboxes)) sandbox.dispose();
		rmSync(sources, { recursive: true, force: true });
		await provider.close();
	}
}

/**
 * Resuming a long session in the real Pi CLI, with and without pi-fold: a
 * session file written from a folded fixture, opened with `--session` in
 * print mode for one request the loopback provider answers. Two readings per
 * run: the resume itself (from spawn until the provider receives the first
 * request, and the process's peak resident memory at that moment, read from
 * `/proc`), which is what a person waits for; and the whole run (GNU time's
 * elapsed and maximum resident set size), which adds what the first
 * boundaries do after the reply (a commit, when the ladder decides one).
 * Each run gets a fresh copy of the file (a run appends to it); the two arms
 * alternate, so both see the same machine state.
 */

import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import {
	isSummarizerRequest,
	LOOPBACK_FALLBACK_TEXT,
	LOOPBACK_SIDE_TEXT,
	say,
	startLoopbackProvider,
} from "../../test/harness/loopback-provider.ts";
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

/** GNU time, which reports a child's elapsed time and peak resident set size. */
const GNU_TIME = "/usr/bin/time";
/** The loopback model's window in these runs (a current long-context model's). */
const RESUME_CONTEXT_WINDOW = 272_000;
/** A resume of 20,000 entries takes seconds; a hung one fails the benchmark. */
const RESUME_TIMEOUT_MS = 300_000;

export interface ResumeRun {
	/** Whole run: wall seconds and peak resident memory (GNU time). */
	seconds: number;
	maxRssKiB: number;
	/** The resume: seconds from spawn until the first request reached the provider, and peak memory until then. */
	firstRequestSeconds: number;
	firstRequestRssKiB: number;
}

export interface ResumeTiming {
	withPiFold: ResumeRun;
	piAlone: ResumeRun;
	runs: number;
}

/** What the provider saw of the run in flight: when its first request came, and Pi's memory high-water mark then. */
interface FirstRequest {
	startedAt: number;
	timePid: number | undefined;
	seen?: { seconds: number; rssKiB: number };
}

/** Peak resident memory so far (VmHWM, KiB) of GNU time's one child, the Pi process. */
function piHighWater(timePid: number | undefined): number {
	if (timePid === undefined) return Number.NaN;
	try {
		const child = readFileSync(`/proc/${timePid}/task/${timePid}/children`, "utf8").trim().split(" ")[0];
		const status = readFileSync(`/proc/${child}/status`, "utf8");
		return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
	} catch {
		return Number.NaN;
	}
}

async function resumeOnce(sandbox: PiSandbox, file: string, first: FirstRequest): Promise<ResumeRun> {
	const args = ["-f", "%e %M", node22Path(), piCliPath(), ...piBaseArgs(sandbox), "--session", file, "-p", "hi"];
	first.startedAt = performance.now();
	first.seen = undefined;
	const { code, stderr } = await runChild(
		GNU_TIME,
		args,
		{ cwd: sandbox.cwd, env: piEnv(sandbox) },
		RESUME_TIMEOUT_MS,
		(child) => {
			first.timePid = child.pid;
		},
	);
	// Set by the provider while the child ran (TypeScript cannot see that assignment).
	const seen = first.seen as FirstRequest["seen"];
	const last = stderr.trim().split("\n").at(-1) ?? "";
	const [seconds, rss] = last.split(" ").map(Number);
	if (code !== 0 || !Number.isFinite(seconds) || !Number.isFinite(rss) || !seen)
		throw new Error(`pi --session exited ${code}${seen ? "" : " before any request"}: ${stderr.slice(-800)}`);
	return {
		seconds: seconds ?? 0,
		maxRssKiB: rss ?? 0,
		firstRequestSeconds: seen.seconds,
		firstRequestRssKiB: seen.rssKiB,
	};
}

/** Median wall time and peak memory of `runs` resumes of `branch` per arm, alternating arms. */
export async function timeResume(branch: readonly SessionEntry[], runs: number): Promise<ResumeTiming> {
	const first: FirstRequest = { startedAt: 0, timePid: undefined };
	const provider = await startLoopbackProvider({
		respond: (request) => {
			if (isSummarizerRequest(request.body)) return say(LOOPBACK_SIDE_TEXT);
			first.seen ??= {
				seconds: (performance.now() - first.startedAt) / 1000,
				rssKiB: piHighWater(first.timePid),
			};
			return say(LOOPBACK_FALLBACK_TEXT);
		},
	});
	// A window the fixture's folded window fits, and no threshold compaction: the runs time a resume and one request.
	const common = {
		baseUrl: provider.baseUrl,
		contextWindow: RESUME_CONTEXT_WINDOW,
		settings: { compaction: { enabled: false } },
	};
	const arms = {
		withPiFold: createPiSandbox({ ...common, extensions: [REPO_ROOT] }),
		piAlone: createPiSandbox({ ...common, extensions: [] }),
	};
	try {
		const measured: Record<keyof typeof arms, ResumeRun[]> = { withPiFold: [], piAlone: [] };
		for (const [name, sandbox] of Object.entries(arms) as [keyof typeof arms, PiSandbox][]) {
			const header = {
				type: "session",
				version: 3,
				id: `resume-${name}`,
				timestamp: "2026-01-01T00:00:00.000Z",
				cwd: sandbox.cwd,
			};
			const lines = [header, ...branch].map((entry) => JSON.stringify(entry)).join("\n");
			writeFileSync(join(sandbox.root, "original.jsonl"), `${lines}\n`);
		}
		// One untimed run per arm first: Pi's TypeScript loader caches the extension's transform, as after any first start.
		for (let run = -1; run < runs; run++) {
			for (const [name, sandbox] of Object.entries(arms) as [keyof typeof arms, PiSandbox][]) {
				mkdirSync(sandbox.sessionDir, { recursive: true });
				const file = join(sandbox.sessionDir, `run-${run + 1}.jsonl`);
				copyFileSync(join(sandbox.root, "original.jsonl"), file);
				const measuredRun = await resumeOnce(sandbox, file, first);
				if (run >= 0) measured[name].push(measuredRun);
			}
		}
		const summary = (list: ResumeRun[]): ResumeRun => ({
			seconds: median(list.map((item) => item.seconds)),
			maxRssKiB: median(list.map((item) => item.maxRssKiB)),
			firstRequestSeconds: median(list.map((item) => item.firstRequestSeconds)),
			firstRequestRssKiB: median(list.map((item) => item.firstRequestRssKiB)),
		});
		return { withPiFold: summary(measured.withPiFold), piAlone: summary(measured.piAlone), runs };
	} finally {
		arms.withPiFold.dispose();
		arms.piAlone.dispose();
		await provider.close();
	}
}

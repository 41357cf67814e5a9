/**
 * `npm run figures`: every figure the host replay feeds, regenerated from the
 * code as it is, in one command (run it under `nice -n 10`, with
 * `PI_FOLD_SESSIONS_DIR` naming the folder of the sessions from other hosts):
 *
 * 1. `npm run bench -- host-replay host-replay-quick report`: the full real-Pi
 *    host replay (bench/results/host-replay.md: targets, out of view, charged
 *    and raw cost per session and window, held-out apart from tuned), the
 *    tuning loop's scorecard (host-replay-quick-tuned.md) and what
 *    `pi-fold report` says for the bundled logs (report.md), each of which
 *    moves with the fold policy;
 * 2. `npm run readme`: the README's headline and report figures and
 *    docs/benchmarks.md's generated host-replay judgement, from those files.
 *
 * It refuses before the long run when a session the judgement needs cannot be
 * read: without the held-out real sessions the figures would judge nothing,
 * yet the benchmark alone (which leaves a missing session out and says so)
 * would still write them.
 */

import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { OTHER_HOSTS_DIR_ENV } from "../test/fixtures/real-sessions.ts";
import { availableSessions, SESSIONS } from "./host-replay/sessions.ts";

/** The benchmarks whose results files the README and docs quote, in the order they run. */
export const FIGURE_BENCHMARKS: readonly string[] = ["host-replay", "host-replay-quick", "report"];

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Runs a Node script of the checkout with the same Node, output shown; its exit code. */
function run(script: string, args: readonly string[]): number {
	process.stdout.write(`\n$ node ${script} ${args.join(" ")}\n`);
	const result = spawnSync(process.execPath, [script, ...args], { cwd: ROOT, stdio: "inherit" });
	return result.status ?? 1;
}

function main(): number {
	const { missing } = availableSessions(SESSIONS);
	if (missing.length > 0) {
		process.stderr.write(
			`figures: refused, the run would leave out sessions the figures judge:\n${missing.map((line) => `  ${line}\n`).join("")}Set ${OTHER_HOSTS_DIR_ENV} to the folder of the real sessions from other hosts and rerun npm run figures.\n`,
		);
		return 2;
	}
	if (run("bench/run.ts", FIGURE_BENCHMARKS) !== 0) {
		process.stderr.write("figures: a benchmark failed (above); README.md and docs/benchmarks.md left as they were.\n");
		return 1;
	}
	return run("scripts/readme.ts", []);
}

process.exitCode = main();

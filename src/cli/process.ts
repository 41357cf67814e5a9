/**
 * The `pi-fold` process: runs the command in a worker thread so the main
 * thread stays free to answer Ctrl-C and SIGTERM while the command is busy.
 *
 * A command is synchronous work for seconds or minutes (reading a large log,
 * replaying it); a signal listener only runs when the thread it lives on is
 * idle, and Pi's dependencies install such listeners (signal-exit), so a busy
 * single-threaded CLI ignored both signals until it finished. Here the main
 * thread imports nothing heavy: on a signal it prints one line naming what
 * happened, and exits non-zero (128 + the signal's number, as a shell
 * reports it), which stops the worker mid-command. Nothing is printed half:
 * a command's output is written only once it is complete.
 */

import { extname } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
// Type only: the main thread must not load main.ts and what it imports (see the module doc).
import type { CliResult } from "./main.ts";

/** Exit codes a shell reports for a process ended by each signal (128 + signal number). */
export const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;
type HandledSignal = keyof typeof SIGNAL_EXIT_CODES;

/** The one line printed when a signal stops a command; says what was and was not changed. */
export function interruptedMessage(signal: HandledSignal, argv: readonly string[]): string {
	const command = argv[0] ?? "help";
	const effect =
		command === "gc" && argv.includes("--apply")
			? "blobs removed before it stay removed; run gc --apply again to finish"
			: "nothing was changed or printed";
	return `pi-fold: ${command} stopped by ${signal} before it finished; ${effect}.\n`;
}

/** Run argv in a worker; write its result, or stop on SIGINT / SIGTERM. Sets the process's exit code. */
export function runCliProcess(argv: readonly string[]): Promise<void> {
	// The worker is this folder's worker module, compiled (.js) or source (.ts) like this file.
	const workerUrl = new URL(`./worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);
	const worker = new Worker(workerUrl, { workerData: { argv: [...argv] } });
	const stop = (signal: HandledSignal) => () => {
		process.stderr.write(interruptedMessage(signal, argv));
		process.exit(SIGNAL_EXIT_CODES[signal]);
	};
	const handlers = { SIGINT: stop("SIGINT"), SIGTERM: stop("SIGTERM") };
	for (const signal of Object.keys(handlers) as HandledSignal[]) process.on(signal, handlers[signal]);
	return new Promise((resolve) => {
		const done = (result: CliResult) => {
			for (const signal of Object.keys(handlers) as HandledSignal[]) process.off(signal, handlers[signal]);
			process.stdout.write(result.stdout);
			process.stderr.write(result.stderr);
			process.exitCode = result.code;
			resolve();
		};
		worker.once("message", (result: CliResult) => done(result));
		worker.once("error", (error) => {
			const message = error instanceof Error ? error.message : String(error);
			done({ code: 1, stdout: "", stderr: `pi-fold: unexpected failure: ${message}\n` });
		});
	});
}

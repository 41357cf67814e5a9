/**
 * Running a benchmark's child process (the real Pi CLI) to its end: its exit
 * code, what it wrote on stderr, and when it ended; killed after a bound, so
 * a hung run fails the benchmark instead of stalling it.
 */

import { type ChildProcess, spawn } from "node:child_process";

export interface ChildRun {
	code: number | null;
	stderr: string;
	/** `performance.now()` when the child closed. */
	endedAt: number;
}

/** Spawn `command` with stdin and stdout ignored; `started` sees the child at once (its pid, say). */
export function runChild(
	command: string,
	args: readonly string[],
	options: { cwd: string; env: NodeJS.ProcessEnv },
	timeoutMs: number,
	started?: (child: ChildProcess) => void,
): Promise<ChildRun> {
	return new Promise((resolve, reject) => {
		const child = spawn(command, args, { ...options, stdio: ["ignore", "ignore", "pipe"] });
		started?.(child);
		let stderr = "";
		child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
			stderr += chunk;
		});
		const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
		child.on("error", (error) => {
			clearTimeout(timer);
			reject(error);
		});
		child.on("close", (code) => {
			clearTimeout(timer);
			resolve({ code, stderr, endedAt: performance.now() });
		});
	});
}

/**
 * The `pi-fold` command line: argument parsing and error reporting only.
 * Every failure prints one line naming the problem and the next action and
 * exits non-zero; no stack trace reaches the user.
 */

import { fileURLToPath } from "node:url";
import { loadSessionFile, SessionLoadError } from "../session/load.ts";
import { formatReport } from "./report.ts";

/** Session reported when `pi-fold report` gets no path. */
export const SAMPLE_SESSION_PATH = fileURLToPath(new URL("../../samples/sample-session.jsonl", import.meta.url));

const USAGE = `Usage: pi-fold <command> [args]

Commands:
  report [session.jsonl]   Summarize a Pi session file (a bundled sample when no path is given)
  help                     Show this help
`;

export interface CliResult {
	code: number;
	stdout: string;
	stderr: string;
}

/** Run the CLI on argv (without node and script) and return what it would print. */
export function runCli(argv: readonly string[]): CliResult {
	const [command = "help", ...rest] = argv;
	try {
		switch (command) {
			case "report": {
				if (rest.length > 1) return usageError(`report takes one session path, got ${rest.length}`);
				const path = rest[0] ?? SAMPLE_SESSION_PATH;
				return { code: 0, stdout: formatReport(loadSessionFile(path)), stderr: "" };
			}
			case "help":
			case "--help":
			case "-h":
				return { code: 0, stdout: USAGE, stderr: "" };
			default:
				return usageError(`unknown command "${command}"`);
		}
	} catch (error) {
		if (error instanceof SessionLoadError) return { code: 1, stdout: "", stderr: `pi-fold: ${error.message}\n` };
		const message = error instanceof Error ? error.message : String(error);
		return { code: 1, stdout: "", stderr: `pi-fold: unexpected failure: ${message}\n` };
	}
}

function usageError(problem: string): CliResult {
	return { code: 2, stdout: "", stderr: `pi-fold: ${problem}. Run "pi-fold help" for usage.\n` };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
	const result = runCli(process.argv.slice(2));
	process.stdout.write(result.stdout);
	process.stderr.write(result.stderr);
	process.exitCode = result.code;
}

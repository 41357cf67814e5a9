/**
 * The `pi-fold` command line: argument parsing and error reporting only.
 * Every failure prints one line naming the problem and the next action and
 * exits non-zero; no stack trace reaches the user.
 */

import { fileURLToPath } from "node:url";
import { namedRateCardNames, resolveRateCard } from "../cost/catalog.ts";
import type { RateCard } from "../cost/rate-card.ts";
import { loadSessionFile, SessionLoadError } from "../session/load.ts";
import { formatReport, sessionStatsOf } from "./report.ts";

/** Session reported when `pi-fold report` gets no path. */
export const SAMPLE_SESSION_PATH = fileURLToPath(new URL("../../samples/sample-session.jsonl", import.meta.url));

const USAGE = `Usage: pi-fold <command> [args]

Commands:
  report [--rate-card <card>] [session.jsonl]
                           Summarize a Pi session file (a bundled sample when no path is given).
                           The Cost section shows Pi's recorded ledger and the usage re-priced with
                           each request's catalog card; --rate-card also re-prices every request with
                           <card>: ${namedRateCardNames().join(", ")}, or <provider>/<model> from Pi's catalog
  help                     Show this help
`;

/** Flag that names a rate card for `report`. */
export const RATE_CARD_FLAG = "--rate-card";

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
				const parsed = parseReportArgs(rest);
				if ("problem" in parsed) return usageError(parsed.problem);
				const session = loadSessionFile(parsed.path ?? SAMPLE_SESSION_PATH);
				const options = parsed.rateCard ? { rateCard: parsed.rateCard } : {};
				return { code: 0, stdout: formatReport(session, sessionStatsOf(session), options), stderr: "" };
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

/** `report` arguments: at most one path, at most one `--rate-card <card>` (or `--rate-card=<card>`). */
export function parseReportArgs(args: readonly string[]): { path?: string; rateCard?: RateCard } | { problem: string } {
	const paths: string[] = [];
	let cardName: string | undefined;
	for (let i = 0; i < args.length; i++) {
		const arg = args[i] ?? "";
		let value: string | undefined;
		if (arg === RATE_CARD_FLAG) {
			value = args[++i];
			if (value === undefined || value.startsWith("--")) return { problem: `${RATE_CARD_FLAG} needs a card name` };
		} else if (arg.startsWith(`${RATE_CARD_FLAG}=`)) {
			value = arg.slice(RATE_CARD_FLAG.length + 1);
			if (value === "") return { problem: `${RATE_CARD_FLAG} needs a card name` };
		} else if (arg.startsWith("-") && arg !== "-") {
			return { problem: `unknown option "${arg}" for report` };
		} else {
			paths.push(arg);
			continue;
		}
		if (cardName !== undefined) return { problem: `${RATE_CARD_FLAG} given twice` };
		cardName = value;
	}
	if (paths.length > 1) return { problem: `report takes one session path, got ${paths.length}` };
	const result: { path?: string; rateCard?: RateCard } = {};
	if (paths[0] !== undefined) result.path = paths[0];
	if (cardName !== undefined) {
		const card = resolveRateCard(cardName);
		if (!card) {
			return {
				problem: `unknown rate card "${cardName}" (known: ${namedRateCardNames().join(", ")}, or <provider>/<model> from Pi's catalog)`,
			};
		}
		result.rateCard = card;
	}
	return result;
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

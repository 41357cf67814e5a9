/**
 * The `pi-fold` command line: commands, their options (`node:util`
 * `parseArgs`), help and version, and the thin I/O shell around the pure
 * report (reading the session, measuring the fold store on disk, writing the
 * HTML chart). Every failure prints one line naming the problem and the next
 * action and exits non-zero; no stack trace reaches the user.
 */

import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { namedRateCardNames, resolveRateCard } from "../cost/catalog.ts";
import { FoldStoreError } from "../fold/store/store.ts";
import { FOLD_STORE_DIR_SUFFIX } from "../fold/store/store-file.ts";
import type { RateCard } from "../pricing/rate-card.ts";
import { loadSessionFile, SessionLoadError } from "../session/load.ts";
import { sanitizeText } from "../text/lines.ts";
import { chartHtml } from "./html.ts";
import { buildReport, type StoreSize } from "./report.ts";
import {
	formatGc,
	formatVerify,
	GC_HELP,
	parseStoreArgs,
	runGc,
	runVerify,
	skippedLines,
	VERIFY_HELP,
} from "./verify.ts";

/** Session reported when `pi-fold report` gets no path. */
export const SAMPLE_SESSION_PATH = fileURLToPath(new URL("../../samples/sample-session.jsonl", import.meta.url));
/** The package manifest, for `--version` (the same relative path from src/cli and dist/cli). */
const PACKAGE_JSON = new URL("../../package.json", import.meta.url);

/** Flag that names a rate card for `report`. */
export const RATE_CARD_FLAG = "--rate-card";

const REPORT_HELP = `Usage: pi-fold report [options] [session.jsonl]

Summarize a Pi session file (the bundled sample when no path is given):
problems first, then entries, tools, context, what pi-fold did in the session
(or, for a session recorded without it, what it would have saved), cost, and
a sparkline of the context per request.

Options:
  --rate-card <card>   Also re-price every request with <card>:
                       ${namedRateCardNames().join(", ")}, or <provider>/<model> from Pi's catalog
  --html <out.html>    Write a self-contained HTML chart (occupancy, cache reads
                       and uncached input per request) to <out.html>
  --no-replay          Skip the replay of a session recorded without pi-fold
                       (it takes seconds on long sessions)
  -h, --help           Show this help
  -v, --version        Show the version
`;

const USAGE = `Usage: pi-fold <command> [options]

Commands:
  report [options] [session.jsonl]   Summarize a Pi session file; "pi-fold report --help" for options
  verify [--json] <session.jsonl>    Check fold records, state and the fold store; exit 1 on any defect
  gc [--apply] <session.jsonl>       List (with --apply, remove) fold store blobs no fold references
  help [command]                     Show this help, or a command's
  version                            Show the version

Options:
  -h, --help       Show help
  -v, --version    Show the version
`;

const HELP_BY_COMMAND: Readonly<Record<string, string>> = { report: REPORT_HELP, verify: VERIFY_HELP, gc: GC_HELP };

/** What a command printed and its exit code (the worker posts it to the main thread, process.ts). */
export interface CliResult {
	code: number;
	stdout: string;
	stderr: string;
}

/** The package version from package.json. */
export function packageVersion(): string {
	const manifest = JSON.parse(readFileSync(PACKAGE_JSON, "utf8")) as { version?: unknown };
	return typeof manifest.version === "string" ? manifest.version : "unknown";
}

const ok = (stdout: string): CliResult => ({ code: 0, stdout, stderr: "" });

/**
 * Run the CLI on argv (without node and script) and return what it would
 * print. Everything printed passes `sanitizeText`: a session's tool output,
 * a tool name or a mistyped argument can carry terminal escapes, and none may
 * reach the person's terminal raw (ESC and other controls become spaces; JSON
 * output already escapes them).
 */
export async function runCli(argv: readonly string[]): Promise<CliResult> {
	const result = await runCommand(argv);
	return { code: result.code, stdout: sanitizeText(result.stdout), stderr: sanitizeText(result.stderr) };
}

async function runCommand(argv: readonly string[]): Promise<CliResult> {
	const [command = "help", ...rest] = argv;
	try {
		switch (command) {
			case "report":
				return await runReport(rest);
			case "verify":
				return await verifyCommand(rest);
			case "gc":
				return await gcCommand(rest);
			case "help":
			case "--help":
			case "-h": {
				const topic = command === "help" ? rest[0] : undefined;
				if (topic === undefined) return ok(USAGE);
				const help = Object.hasOwn(HELP_BY_COMMAND, topic) ? HELP_BY_COMMAND[topic] : undefined;
				return help ? ok(help) : usageError(`no help for unknown command "${topic}"`);
			}
			case "version":
			case "--version":
			case "-v":
				return ok(`pi-fold ${packageVersion()}\n`);
			default:
				return usageError(command.startsWith("-") ? `unknown option "${command}"` : `unknown command "${command}"`);
		}
	} catch (error) {
		// Both name the problem and the next action already (a session id the store cannot use, an unreadable store).
		if (error instanceof SessionLoadError || error instanceof FoldStoreError)
			return { code: 1, stdout: "", stderr: `pi-fold: ${error.message}\n` };
		const message = error instanceof Error ? error.message : String(error);
		return { code: 1, stdout: "", stderr: `pi-fold: unexpected failure: ${message}\n` };
	}
}

export interface ReportArgs {
	path?: string;
	rateCard?: RateCard;
	html?: string;
	replay: boolean;
	help: boolean;
	version: boolean;
}

/** `report` arguments: at most one path, `--rate-card <card>` and `--html <file>` at most once each. */
export function parseReportArgs(args: readonly string[]): ReportArgs | { problem: string } {
	let parsed: ReturnType<typeof parseReportOptions>;
	try {
		parsed = parseReportOptions(args);
	} catch (error) {
		return { problem: parseProblem(error) };
	}
	const { values, positionals } = parsed;
	const result: ReportArgs = {
		replay: values["no-replay"] !== true,
		help: values.help === true,
		version: values.version === true,
	};
	if (positionals.length > 1) return { problem: `report takes one session path, got ${positionals.length}` };
	if (positionals[0] !== undefined) result.path = positionals[0];
	const cards = values["rate-card"] ?? [];
	if (cards.length > 1) return { problem: `${RATE_CARD_FLAG} given twice` };
	const cardName = cards[0];
	if (cardName !== undefined) {
		if (cardName === "") return { problem: `${RATE_CARD_FLAG} needs a card name` };
		const card = resolveRateCard(cardName);
		if (!card) {
			return {
				problem: `unknown rate card "${cardName}" (known: ${namedRateCardNames().join(", ")}, or <provider>/<model> from Pi's catalog)`,
			};
		}
		result.rateCard = card;
	}
	const html = values.html ?? [];
	if (html.length > 1) return { problem: "--html given twice" };
	if (html[0] !== undefined) {
		if (html[0] === "") return { problem: "--html needs a file name" };
		result.html = html[0];
	}
	return result;
}

function parseReportOptions(args: readonly string[]) {
	return parseArgs({
		args: [...args],
		allowPositionals: true,
		strict: true,
		options: {
			"rate-card": { type: "string", multiple: true },
			html: { type: "string", multiple: true },
			"no-replay": { type: "boolean" },
			help: { type: "boolean", short: "h" },
			version: { type: "boolean", short: "v" },
		},
	});
}

/** `parseArgs` errors, in this CLI's words. */
function parseProblem(error: unknown): string {
	const code = (error as { code?: unknown }).code;
	const message = error instanceof Error ? error.message : String(error);
	const option = /option '([^' ]+)/i.exec(message)?.[1] ?? "";
	if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") return `unknown option "${option}" for report`;
	if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
		return option === RATE_CARD_FLAG ? `${RATE_CARD_FLAG} needs a card name` : `${option} needs a value`;
	}
	if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") return message;
	throw error;
}

async function runReport(args: readonly string[]): Promise<CliResult> {
	const parsed = parseReportArgs(args);
	if ("problem" in parsed) return usageError(parsed.problem, "pi-fold report --help");
	if (parsed.help) return ok(REPORT_HELP);
	if (parsed.version) return ok(`pi-fold ${packageVersion()}\n`);
	const path = parsed.path === undefined ? SAMPLE_SESSION_PATH : fromInvocationDir(parsed.path);
	const session = loadSessionFile(path);
	const report = await buildReport(session, {
		...(parsed.rateCard ? { rateCard: parsed.rateCard } : {}),
		replay: parsed.replay,
		store: measureStore(path, session.header.id),
	});
	let stdout = report.text;
	if (parsed.html !== undefined) {
		const out = fromInvocationDir(parsed.html);
		try {
			writeFileSync(out, chartHtml(report.series, report.page));
		} catch (error) {
			const reason = (error as { code?: string }).code ?? (error instanceof Error ? error.message : String(error));
			return {
				code: 1,
				stdout: "",
				stderr: `pi-fold: cannot write ${out} (${reason}); pass a writable path to --html.\n`,
			};
		}
		stdout +=
			report.series.points.length > 0
				? `\nChart written to ${out}\n`
				: `\nPage written to ${out}, without a chart: no request recorded prompt usage\n`;
	}
	return ok(stdout);
}

async function verifyCommand(args: readonly string[]): Promise<CliResult> {
	const parsed = parseStoreArgs("verify", args);
	if ("problem" in parsed) return usageError(parsed.problem, "pi-fold verify --help");
	if (parsed.help || parsed.path === undefined) return ok(VERIFY_HELP);
	const session = loadSessionFile(fromInvocationDir(parsed.path));
	const outcome = await runVerify(session, parsed.prefix);
	const stdout = parsed.json ? `${JSON.stringify(outcome, null, 2)}\n` : formatVerify(outcome);
	return { code: outcome.clean ? 0 : 1, stdout, stderr: "" };
}

async function gcCommand(args: readonly string[]): Promise<CliResult> {
	const parsed = parseStoreArgs("gc", args);
	if ("problem" in parsed) return usageError(parsed.problem, "pi-fold gc --help");
	if (parsed.help || parsed.path === undefined) return ok(GC_HELP);
	const session = loadSessionFile(fromInvocationDir(parsed.path));
	const skipped = skippedLines(session);
	if (parsed.apply && skipped.length > 0) {
		const first = skipped
			.slice(0, 3)
			.map((diagnostic) => diagnostic.line)
			.join(", ");
		return {
			code: 1,
			stdout: "",
			stderr: `pi-fold: ${skipped.length} line${skipped.length === 1 ? "" : "s"} of ${session.path} could not be read (line ${first}${skipped.length > 3 ? ", …" : ""}); a damaged line may reference blobs, so gc removed nothing. Run "pi-fold verify ${parsed.path}", repair or remove those lines, then gc again.\n`,
		};
	}
	const outcome = await runGc(session, parsed.prefix, parsed.apply);
	const stdout = parsed.json ? `${JSON.stringify(outcome, null, 2)}\n` : formatGc(outcome, parsed.path);
	return ok(stdout);
}

/**
 * A path the user typed, resolved against the directory they typed it in:
 * `npm start` runs in the package root and says where it was started in `INIT_CWD`.
 */
function fromInvocationDir(path: string): string {
	return resolve(process.env.INIT_CWD ?? process.cwd(), path);
}

/** Size of the session's fold store (`<session dir>/<session id>.pi-fold/`), or null when there is none. */
export function measureStore(sessionPath: string, sessionId: string): StoreSize | null {
	const dir = join(dirname(resolve(sessionPath)), `${basename(sessionId)}${FOLD_STORE_DIR_SUFFIX}`);
	let bytes = 0;
	let files = 0;
	const walk = (at: string, depth: number): void => {
		// The store is two levels deep (sha256/<ab>/<hash>); a deeper tree is not ours to walk.
		if (depth > STORE_MAX_DEPTH) return;
		for (const entry of readdirSync(at, { withFileTypes: true })) {
			const full = join(at, entry.name);
			if (entry.isDirectory()) walk(full, depth + 1);
			else if (entry.isFile()) {
				bytes += statSync(full).size;
				files++;
			}
		}
	};
	try {
		if (!statSync(dir).isDirectory()) return null;
		walk(dir, 0);
	} catch {
		return null;
	}
	return { dir, bytes, files };
}

/** Directory levels `measureStore` descends. */
const STORE_MAX_DEPTH = 4;

function usageError(problem: string, help = "pi-fold help"): CliResult {
	return { code: 2, stdout: "", stderr: `pi-fold: ${problem}. Run "${help}" for usage.\n` };
}

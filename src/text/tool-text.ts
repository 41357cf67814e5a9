/**
 * Mechanical reads of tool text, for facts and briefs: the script a shell
 * command runs (what a later success must repeat to resolve a failure), and
 * an error text's first meaningful line with the exit code Pi's bash tool
 * appends. Structure only (words, framing lines Pi writes, punctuation); the
 * vocabulary is two named word lists (stage words, output viewers) and
 * preferring a line that says "error".
 */

import { firstLine, oneLine } from "./lines.ts";

/** Leading words of one simple command that only set the stage: `sudo`, `time`, `env`, `nohup`. */
const STAGE_WORDS: ReadonlySet<string> = new Set(["sudo", "time", "env", "command", "exec", "nohup"]);
/** Commands that only change directory: a `cd /repo &&` prefix is where a script runs, not what it runs. */
const DIRECTORY_WORDS: ReadonlySet<string> = new Set(["cd", "pushd", "popd"]);
/**
 * Programs that only show another command's output. A pipeline stage running
 * one of them (`| head -40`, `| tail -n 20`, `| tee log`) is how the agent
 * looked at the output, not what it ran, so `npm test 2>&1 | tail -5` runs
 * the same script as `npm test`.
 */
const OUTPUT_VIEWERS: ReadonlySet<string> = new Set(["head", "tail", "tee", "less", "more", "cat"]);
/** A leading `NAME=value` assignment. */
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;
/** A redirection word: `2>&1`, `>out.txt`, `&>/dev/null`, `<in`; a bare operator takes the next word too. */
const REDIRECTION = /^(?:\d*|&)(?:>>?|<)/;
const BARE_REDIRECTION = /^(?:\d*|&)(?:>>?|<)&?$/;

/** Most characters of a command line read for its script. */
export const SCRIPT_SCAN_MAX_CHARS = 4096;

/**
 * Shell words and control operators of a command line, quotes respected:
 * `'…'` and `"…"` (with backslash escapes inside double quotes) stay inside
 * their word, quotes included; `&&`, `||`, `;`, `|` and newlines outside
 * quotes are operators. Mechanical, no expansion.
 */
function shellTokens(command: string): { word?: string; operator?: string }[] {
	const tokens: { word?: string; operator?: string }[] = [];
	const text = command.slice(0, SCRIPT_SCAN_MAX_CHARS);
	let word = "";
	let quote: string | undefined;
	const flush = (): void => {
		if (word) tokens.push({ word });
		word = "";
	};
	for (let index = 0; index < text.length; index++) {
		const char = text[index] ?? "";
		if (quote) {
			word += char;
			if (char === "\\" && quote === '"') word += text[++index] ?? "";
			else if (char === quote) quote = undefined;
		} else if (char === "'" || char === '"') {
			quote = char;
			word += char;
		} else if (char === "\\") word += char + (text[++index] ?? "");
		else if (/\s/.test(char) && char !== "\n") flush();
		else if (char === "\n" || char === ";") {
			flush();
			tokens.push({ operator: ";" });
		} else if ((char === "&" || char === "|") && text[index + 1] === char) {
			flush();
			tokens.push({ operator: char + char });
			index++;
		} else if (char === "|") {
			flush();
			tokens.push({ operator: "|" });
		} else word += char;
	}
	flush();
	return tokens;
}

/** Words of one simple command with stage words, assignments and redirections removed. */
function commandWords(stage: readonly string[]): string[] {
	const words = [...stage];
	while (words.length > 0 && (ASSIGNMENT.test(words[0] ?? "") || STAGE_WORDS.has(words[0] ?? ""))) words.shift();
	const kept: string[] = [];
	for (let index = 0; index < words.length; index++) {
		const word = words[index] ?? "";
		if (BARE_REDIRECTION.test(word)) index++;
		else if (!REDIRECTION.test(word)) kept.push(word);
	}
	return kept;
}

/**
 * The script a shell command runs, mechanically: every simple command of it
 * (split at `&&`, `||`, `;` and newlines) with its program and all its
 * arguments, options included, minus what only sets the stage: directory
 * changes, leading assignments and stage words, redirections, and pipeline
 * stages that only view output. `cd /repo && npm run check 2>&1 | head -40`
 * and `npm run check` run the same script; `npm test -- payments` and
 * `npm test -- utils` do not, nor do `python deploy.py --prod` and
 * `python scripts/lint_headers.py`. A failure is resolved only by a later
 * success of the same script, so arguments are part of it.
 */
export function scriptOf(command: string): string {
	const commands = scriptCommands(command);
	if (commands.length === 0) return oneLine(command);
	return commands.map((stages) => stages.map((words) => words.join(" ")).join(" | ")).join(" && ");
}

/** The script's simple commands, each as its pipeline stages' words; see `scriptOf`. */
function scriptCommands(command: string): string[][][] {
	const segments: string[][][] = [[[]]];
	for (const token of shellTokens(command)) {
		const segment = segments.at(-1) ?? [];
		if (token.word !== undefined) segment.at(-1)?.push(token.word);
		else if (token.operator === "|") segment.push([]);
		else segments.push([[]]);
	}
	const commands: string[][][] = [];
	for (const segment of segments) {
		const [first, ...rest] = segment.map(commandWords);
		if (!first || first.length === 0 || DIRECTORY_WORDS.has(first[0] ?? "")) continue;
		commands.push([first, ...rest.filter((words) => words.length > 0 && !OUTPUT_VIEWERS.has(words[0] ?? ""))]);
	}
	return commands;
}

/**
 * Search programs whose exit status 1 means "no line matched" (POSIX grep and
 * its kin), not that they failed; 2 and above are errors.
 */
const SEARCH_PROGRAMS: ReadonlySet<string> = new Set(["grep", "egrep", "fgrep", "rg", "ag", "ack", "git grep"]);
export const SEARCH_NO_MATCH_EXIT_CODE = 1;

/**
 * True when a shell command that exited with `exitCode` only searched and
 * found nothing: every program of its script is a search program and the
 * code is 1. Such a run answered its question (no match); it is not a
 * failure that stays open until something fixes it.
 */
export function searchFoundNothing(command: string, exitCode: number | undefined): boolean {
	if (exitCode !== SEARCH_NO_MATCH_EXIT_CODE) return false;
	const commands = scriptCommands(command);
	return (
		commands.length > 0 &&
		commands.every((stages) =>
			stages.every((words) => SEARCH_PROGRAMS.has(words[0] === "git" ? `git ${words[1]}` : (words[0] ?? ""))),
		)
	);
}

/** The exit code Pi's bash tool appended to a result's text (multi-line, or collapsed to one line). */
export function appendedExitCode(text: string): number | undefined {
	const match = /(?:^|\s)Command exited with code (\d+)\s*$/.exec(text);
	return match ? Number(match[1]) : undefined;
}

/** Pi's bash tool ends a failed result with this line; it is the tool's framing, not the command's output. */
const PI_EXIT_LINE = /^Command exited with code (\d+)$/;
/** Other framing lines Pi's tools write around output, and script runners' echo of the script ("> name@1.0 check"). */
const FRAMING_LINE = /^(?:Command aborted|\(no output\)|> .*)$/;
/** Lines made of nothing but punctuation and box drawing carry no message. */
const DECORATION_LINE = /^[^\p{L}\p{N}]*$/u;
/** The one word an error line is preferred by: tools and compilers name their own failures with it. */
const ERROR_WORD = /\berror\b/i;
/** Lines of error text read for the first meaningful one. */
export const ERROR_SCAN_MAX_LINES = 400;

/**
 * An error text's first meaningful line and Pi's exit code. Blank lines, the
 * tools' framing lines and decoration are skipped; the first remaining line
 * that says "error" wins, else the first remaining line, else the first line.
 */
export function errorFirstLine(text: string): { line?: string; exitCode?: number } {
	const { lines, meaningful } = scanLines(text);
	let exitCode: number | undefined;
	for (let i = lines.length - 1; i >= 0 && exitCode === undefined; i--) {
		const match = PI_EXIT_LINE.exec(lines[i] ?? "");
		if (match) exitCode = Number(match[1]);
	}
	const line = meaningful.find((candidate) => ERROR_WORD.test(candidate)) ?? meaningful[0] ?? firstLine(text);
	return { ...(line ? { line } : {}), ...(exitCode !== undefined ? { exitCode } : {}) };
}

/**
 * A successful result's first meaningful line: the same skipping as
 * `errorFirstLine` (blank, framing, decoration), without the preference
 * for a line that says "error". Empty when the text has no line at all.
 */
export function resultFirstLine(text: string): string {
	// Stops at the first meaningful line: a consolidation's brief reads every result of the folded history.
	for (const raw of text.split("\n", ERROR_SCAN_MAX_LINES)) {
		const line = oneLine(raw);
		if (carriesMessage(line)) return line;
	}
	return firstLine(text);
}

/** True for a one-lined line that is not blank, framing, decoration or Pi's exit line. */
function carriesMessage(line: string): boolean {
	return line !== "" && !PI_EXIT_LINE.test(line) && !FRAMING_LINE.test(line) && !DECORATION_LINE.test(line);
}

/** The first lines of a tool text, one-lined, and those that carry a message. */
function scanLines(text: string): { lines: string[]; meaningful: string[] } {
	const lines = text.split("\n", ERROR_SCAN_MAX_LINES).map((line) => oneLine(line));
	return { lines, meaningful: lines.filter(carriesMessage) };
}

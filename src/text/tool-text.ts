/**
 * Mechanical reads of tool text, for facts and briefs: the script a shell
 * command runs, and an error text's first meaningful line with the exit code
 * Pi's bash tool appends. Structure only (words, framing lines Pi writes,
 * punctuation); the one vocabulary rule is preferring a line that says
 * "error", named below.
 */

import { firstLine, oneLine } from "./lines.ts";

/** Shell words that end a script's name: options, paths, quotes, assignments, redirections. */
const NOT_A_NAME_WORD = /^-|[/\\"'`=$<>|&;()*?~.]|^\d/;
/** Leading words of one simple command that only set the stage: `cd dir`, `VAR=value`, `sudo`, `time`. */
const STAGE_WORDS: ReadonlySet<string> = new Set(["sudo", "time", "env", "command", "exec", "nohup"]);
/** A script is named by its program and at most this many plain subcommand words ("npm run check"). */
export const SCRIPT_NAME_MAX_WORDS = 3;

/**
 * The script a shell command runs, mechanically: the first simple command
 * (split at `&&`, `||`, `;` and `|`) that is not a `cd`, with leading
 * assignments and stage words dropped, named by its program and the plain
 * words that follow it, up to the first option, path, quote or redirection.
 * `cd /repo && npm run check 2>&1 | head` and `npm run check` both run
 * "npm run check"; `grep -n a x.ts` and `grep -rn b src` both run "grep".
 */
export function scriptOf(command: string): string {
	for (const segment of command.split(/&&|\|\||[;|\n]/)) {
		const words = segment.trim().split(/\s+/).filter(Boolean);
		while (words.length > 0 && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0] ?? "") || STAGE_WORDS.has(words[0] ?? "")))
			words.shift();
		const program = words[0];
		if (!program || program === "cd" || program === "pushd") continue;
		const name = [program];
		for (const word of words.slice(1)) {
			if (name.length >= SCRIPT_NAME_MAX_WORDS || NOT_A_NAME_WORD.test(word)) break;
			name.push(word);
		}
		return name.join(" ");
	}
	return oneLine(command);
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
	return scanLines(text).meaningful[0] ?? firstLine(text);
}

/** The first lines of a tool text, one-lined, and those that carry a message. */
function scanLines(text: string): { lines: string[]; meaningful: string[] } {
	const lines = text.split("\n", ERROR_SCAN_MAX_LINES).map((line) => oneLine(line));
	const meaningful = lines.filter(
		(line) => line && !PI_EXIT_LINE.test(line) && !FRAMING_LINE.test(line) && !DECORATION_LINE.test(line),
	);
	return { lines, meaningful };
}

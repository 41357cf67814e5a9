/**
 * Mechanical reads of tool text, for facts and briefs: the script a shell
 * command runs (what a later success must repeat to resolve a failure), and
 * an error text's first meaningful line with the exit code Pi's bash tool
 * appends. Structure only (words, framing lines Pi writes, punctuation); the
 * vocabulary is two named word lists (stage words, output viewers) and
 * preferring a line that says "error".
 *
 * Some hosts frame a shell result with a header of their own before the
 * command's output (Codex CLI: `Chunk ID: …`, `Wall time: …`, `Process
 * exited with code N`, `Original token count: …`, then `Output:`).
 * `hostOutputHeader` reads that frame once, so an error preview, a result's
 * first line and a brief show the output, and the exit code it states counts.
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

/**
 * One line of a host's output frame: its key names what the host measured,
 * not what the command printed. Codex CLI writes these (unified exec and the
 * older shell tool alike) before `Output:`.
 */
const HOST_HEADER_LINE =
	/^(?:Chunk ID: \S+|Wall time: [\d.]+ seconds?|Process exited with code (-?\d+)|Exit code: (-?\d+)|Process running with session ID (\S+)|Original token count: \d+|Total output lines: \d+)\s*$/;
/** The line that ends a host's frame; what follows is the command's output. */
const HOST_OUTPUT_LINE = /^Output:\s*$/;
/** Most frame lines read: the frames above have at most five. */
const HOST_HEADER_MAX_LINES = 8;

/** A host's frame at the start of a tool result: where the output starts and the exit code it states. */
export interface HostOutputHeader {
	/** Offset (UTF-16) of the first character of the command's output; 0 when the text has no frame. */
	bodyStart: number;
	/** The exit code the frame states, when it states one. */
	exitCode?: number;
	/**
	 * The host's session the command still runs in, when the frame says so:
	 * a later call (Codex `write_stdin` with this `session_id`) reads the
	 * rest of its output.
	 */
	sessionId?: string;
}

/**
 * The host's frame at the start of `text`, when there is one: one or more
 * frame lines (`HOST_HEADER_LINE`) followed by `Output:` (or by the end of
 * the text, for a command that printed nothing). Text without that shape has
 * no frame (`bodyStart` 0), so ordinary output that happens to start with
 * "Wall time:" is not cut.
 */
export function hostOutputHeader(text: string): HostOutputHeader {
	let offset = 0;
	let frameLines = 0;
	let exitCode: number | undefined;
	let sessionId: string | undefined;
	for (let read = 0; read <= HOST_HEADER_MAX_LINES; read++) {
		const end = text.indexOf("\n", offset);
		const line = (end === -1 ? text.slice(offset) : text.slice(offset, end)).replace(/\r$/, "");
		const next = end === -1 ? text.length : end + 1;
		if (frameLines > 0 && HOST_OUTPUT_LINE.test(line)) return { bodyStart: next, ...stated(exitCode, sessionId) };
		const match = HOST_HEADER_LINE.exec(line);
		if (!match) return { bodyStart: 0 };
		frameLines++;
		const code = match[1] ?? match[2];
		if (code !== undefined) exitCode = Number(code);
		sessionId = match[3] ?? sessionId;
		if (end === -1) return { bodyStart: text.length, ...stated(exitCode, sessionId) };
		offset = next;
	}
	return { bodyStart: 0 };
}

function stated(exitCode: number | undefined, sessionId: string | undefined): Omit<HostOutputHeader, "bodyStart"> {
	return { ...(exitCode === undefined ? {} : { exitCode }), ...(sessionId === undefined ? {} : { sessionId }) };
}

/** A tool result's text without the host's frame (`hostOutputHeader`); the text itself when it has none. */
export function withoutHostHeader(text: string): string {
	const { bodyStart } = hostOutputHeader(text);
	return bodyStart === 0 ? text : text.slice(bodyStart);
}

/**
 * The exit code a result's text states: the one Pi's bash tool appends
 * (multi-line, or collapsed to one line), else the one a host's frame states.
 */
export function appendedExitCode(text: string): number | undefined {
	const match = /(?:^|\s)Command exited with code (\d+)\s*$/.exec(text);
	if (match) return Number(match[1]);
	return hostOutputHeader(text).exitCode;
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
	const header = hostOutputHeader(text);
	const body = header.bodyStart === 0 ? text : text.slice(header.bodyStart);
	const { lines, meaningful } = scanLines(body);
	let exitCode: number | undefined;
	for (let i = lines.length - 1; i >= 0 && exitCode === undefined; i--) {
		const match = PI_EXIT_LINE.exec(lines[i] ?? "");
		if (match) exitCode = Number(match[1]);
	}
	exitCode ??= header.exitCode;
	const line = meaningful.find((candidate) => ERROR_WORD.test(candidate)) ?? meaningful[0] ?? firstLine(body);
	return { ...(line ? { line } : {}), ...(exitCode !== undefined ? { exitCode } : {}) };
}

/**
 * A successful result's first meaningful line: the same skipping as
 * `errorFirstLine` (blank, framing, decoration), without the preference
 * for a line that says "error". Empty when the text has no line at all.
 */
export function resultFirstLine(text: string): string {
	const body = withoutHostHeader(text);
	// Stops at the first meaningful line: a consolidation's brief reads every result of the folded history.
	for (const raw of body.split("\n", ERROR_SCAN_MAX_LINES)) {
		const line = oneLine(raw);
		if (carriesMessage(line)) return line;
	}
	return firstLine(body);
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

/** One file an `apply_patch` envelope (Codex CLI's file tool) changes. */
export interface PatchFile {
	action: "add" | "update" | "delete";
	path: string;
}

/** The envelope's file headers: `*** Add File: p`, `*** Update File: p`, `*** Delete File: p`, and `*** Move to: p`. */
const PATCH_FILE_LINE = /^\*\*\* (Add|Update|Delete) File: (.+)$/;
const PATCH_MOVE_LINE = /^\*\*\* Move to: (.+)$/;
/** Characters of a patch read for its file headers. */
export const PATCH_SCAN_MAX_CHARS = 256 * 1024;

/**
 * The files an `apply_patch` envelope changes, in order, each once: its
 * header lines read mechanically (the envelope is the tool's typed input
 * format, not prose). A moved file counts as an update of its new path.
 */
export function patchFiles(patch: string): PatchFile[] {
	const files = new Map<string, PatchFile>();
	let last: PatchFile | undefined;
	for (const raw of patch.slice(0, PATCH_SCAN_MAX_CHARS).split("\n")) {
		const line = raw.replace(/\r$/, "");
		const header = PATCH_FILE_LINE.exec(line);
		const move = header ? undefined : PATCH_MOVE_LINE.exec(line);
		if (header) {
			const action = header[1] === "Add" ? "add" : header[1] === "Update" ? "update" : "delete";
			last = { action, path: (header[2] ?? "").trim() };
		} else if (move && last) {
			files.delete(last.path);
			last = { action: "update", path: (move[1] ?? "").trim() };
		} else continue;
		if (last.path) files.set(last.path, last);
	}
	return [...files.values()];
}

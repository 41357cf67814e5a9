/**
 * The one typed fact extractor: what a span of session entries did, read from
 * typed fields only. Fold briefs, compaction projections, QA probes (which
 * share the tables here but keep their own logic) and the summarizer's prompt
 * all read it, so a brief and a summary of the same span name the same files,
 * commands and errors.
 *
 * Facts come from the session's normalized events (`normalizeBranch`: roles,
 * tool names, call ids, typed arguments, `isError`, exit codes, context edits
 * applied), never from prose:
 * - file operations: `read` / `edit` / `write` (and their `pi.*` Fabric refs)
 *   with a typed `path`; a successful one is a file fact of its kind;
 * - shell operations: `bash` / `powershell` with a typed `command`, and `!cmd`
 *   user executions with their typed exit code;
 * - every other completed call is a generic operation of its tool and
 *   canonical JSON arguments;
 * - a failure is resolved only by a later success of the same tool on the
 *   same target (`resolutionKey`): the same action on the same file for file
 *   tools, the same script (`scriptOf`: the command with its arguments, minus
 *   `cd` prefixes, redirections and output viewers) for shell commands, the
 *   same arguments otherwise;
 * - a shell search that found nothing (grep and its kin exiting 1) is not a
 *   failure (`searchFoundNothing`);
 * - searches, stage/step labels and tool counts come from typed arguments.
 *
 * The few reads of tool text are mechanical and live in `src/text/tool-text.ts`:
 * the script a command runs (for resolution), the exit code Pi's bash tool
 * appends to a failed result, and an error's first meaningful line.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { contentText, firstLine, identifierLabel, oneLine, shrinkText } from "../text/lines.ts";
import { firstSubstantiveSentence, SENTENCE_SCAN_MAX_CHARS } from "../text/sentences.ts";
import { appendedExitCode, errorFirstLine, patchFiles, scriptOf, searchFoundNothing } from "../text/tool-text.ts";
import { canonicalJson } from "./canonical.ts";
import type { NormalizedEvent } from "./events.ts";
import { normalizeBranch } from "./normalize.ts";
import { FABRIC_EXEC_TOOL_NAME } from "./records/fabric-trace.ts";
import { isPlainRecord, type JsonValue } from "./records/record-guards.ts";

/** Display order of file kinds, as `[Files And Changes]` names them. */
export const FILE_KINDS = ["Created", "Written", "Modified", "Read"] as const;
export type FileKind = (typeof FILE_KINDS)[number];

/** Typed file actions by plain Pi tool name and by Fabric ref. */
export const FILE_ACTIONS: Readonly<Record<string, "read" | "edit" | "write">> = {
	read: "read",
	edit: "edit",
	write: "write",
	"pi.read": "read",
	"pi.edit": "edit",
	"pi.write": "write",
};

/**
 * Shell actions by plain Pi tool name and by Fabric ref; identity is the exact
 * `command` argument. Every plain tool here must match its `pi.<tool>` ref
 * (branch.ts `PI_TOOL_REFS`), or a failure and its success re-emitted from a
 * `/tree` summary would get different identities.
 */
export const SHELL_ACTIONS: Readonly<Record<string, "bash" | "powershell">> = {
	bash: "bash",
	powershell: "powershell",
	"pi.bash": "bash",
	"pi.powershell": "powershell",
};

/**
 * Tools whose typed `input` is a patch envelope naming the files it changes
 * (Codex CLI's `apply_patch`): a successful call is a file operation per file
 * (`patchFiles`), an added file Created, an updated one Modified.
 */
export const PATCH_TOOLS: ReadonlySet<string> = new Set(["apply_patch"]);

/** The files a successful patch call changed, as file operations of the call's result. */
function patchOperations(
	base: Pick<Operation, "entryId" | "ordinal" | "address">,
	tool: string,
	toolCallId: string,
	input: string,
): Operation[] {
	return patchFiles(input)
		.filter((file) => file.action !== "delete")
		.map((file) => {
			const action = file.action === "add" ? "write" : "edit";
			return withResolution({
				...base,
				tool,
				toolCallId,
				success: true,
				identity: `file\u0000${action}\u0000${file.path}`,
				label: oneLine(file.path),
				file: { action, path: file.path, created: file.action === "add" },
			});
		});
}

/** Known Fabric file-system refs that are not significant activity (files and failures still see them). */
export const FILE_SYSTEM_REFS: readonly string[] = ["pi.read", "pi.grep", "pi.find", "pi.ls", "pi.edit", "pi.write"];

/** The outer Fabric execution tool: its result never carries file or failure facts itself. */
export const OUTER_FABRIC_TOOL = FABRIC_EXEC_TOOL_NAME;

/** Typed argument keys that name a search, and the stage/step labels a span is indexed by. */
export const SEARCH_ARG_KEYS = ["pattern", "query", "glob", "url"] as const;
export const LABEL_ARG_KEYS = ["stage", "step", "phase", "label", "title"] as const;

/** Bytes of canonical JSON arguments kept in one-line labels. */
export const ARGS_LABEL_MAX_BYTES = 256;

/** One completed typed operation (success or failure) with its structural identity. */
export interface Operation {
	entryId: string;
	ordinal: number;
	address: string;
	/** Display name: tool name, Fabric ref, or `user bash` for a `!` execution. */
	tool: string;
	/** The call's tool call id (absent for `!cmd` runs and nested operations). */
	toolCallId?: string;
	success: boolean;
	/** Exact identity (action + path, shell + command, or tool + arguments). */
	identity: string;
	/** What a later success must share to resolve this failure; see `resolutionKey`. */
	resolution: string;
	/** One-line identity shown to the reader (path, command, or bounded arguments). */
	label: string;
	file?: { action: "read" | "edit" | "write"; path: string; created: boolean };
	/** The exact command of a shell operation. */
	command?: string;
	/** Typed exit code of a `!cmd` run. */
	exitCode?: number;
	errorText?: string;
	/** The error's line (host frame and framing skipped), when the result text gave one. */
	errorLine?: string;
}

/** Bounded one-line rendering of JSON arguments. */
export function argsLabel(args: JsonValue | undefined): string {
	return shrinkText(oneLine(canonicalJson(args ?? null)), ARGS_LABEL_MAX_BYTES);
}

/**
 * The resolution key of an operation: a failure stays open until a later
 * success with the same key. File tools: the same action on the same path.
 * Shell commands: the same shell running the same script (`scriptOf`), so a
 * failed `cd /repo && npm run check | head` is settled by the next
 * `npm run check` that passes, while `npm test -- payments` is not settled by
 * `npm test -- utils`, nor `python deploy.py --prod` by another script.
 * Everything else: the same tool with the same canonical arguments.
 */
export function resolutionKey(operation: Pick<Operation, "identity" | "file" | "command" | "tool">): string {
	if (operation.file) return `file\u0000${operation.file.action}\u0000${operation.file.path}`;
	if (operation.command !== undefined) {
		const shell = SHELL_ACTIONS[operation.tool] ?? "bash";
		return `script\u0000${shell}\u0000${scriptOf(operation.command)}`;
	}
	return operation.identity;
}

function classify(
	tool: string,
	args: JsonValue | undefined,
	created: boolean,
): Pick<Operation, "identity" | "label" | "file" | "command"> {
	const record = isPlainRecord(args) ? args : undefined;
	const fileAction = FILE_ACTIONS[tool];
	if (fileAction && typeof record?.path === "string") {
		const path = record.path;
		return {
			identity: `file\u0000${fileAction}\u0000${path}`,
			label: oneLine(path),
			file: { action: fileAction, path, created: fileAction === "write" && created },
		};
	}
	const shell = SHELL_ACTIONS[tool];
	if (shell && typeof record?.command === "string") {
		return {
			identity: `shell\u0000${shell}\u0000${record.command}`,
			label: oneLine(record.command),
			command: record.command,
		};
	}
	return { identity: `ref\u0000${tool}\u0000${canonicalJson(args ?? null)}`, label: argsLabel(args) };
}

function withResolution(operation: Omit<Operation, "resolution">): Operation {
	return { ...operation, resolution: resolutionKey(operation) };
}

/** Completed typed operations in source order. */
export function operationsOf(events: readonly NormalizedEvent[]): Operation[] {
	const operations: Operation[] = [];
	for (const event of events) {
		const base = { entryId: event.entryId, ordinal: event.ordinal, address: event.address };
		if (event.kind === "toolResult") {
			if (event.toolName === OUTER_FABRIC_TOOL) continue;
			const identity = event.call
				? classify(event.toolName, event.call.args, event.created)
				: {
						identity: `orphan\u0000${event.toolCallId}`,
						label: `call ${identifierLabel(event.toolCallId)} (not on branch)`,
					};
			const failed = event.isError || (event.exitCode !== undefined && event.exitCode !== 0);
			const patch = event.call?.args?.input;
			if (!failed && PATCH_TOOLS.has(event.toolName) && typeof patch === "string") {
				const changed = patchOperations(base, event.toolName, event.toolCallId, patch);
				if (changed.length > 0) {
					operations.push(...changed);
					continue;
				}
			}
			const foundNothing =
				"command" in identity && identity.command !== undefined && failed
					? searchFoundNothing(identity.command, event.exitCode ?? appendedExitCode(event.errorText ?? ""))
					: false;
			operations.push(
				withResolution({
					...base,
					tool: event.toolName,
					toolCallId: event.toolCallId,
					success: !failed || foundNothing,
					...identity,
					...(event.errorText ? { errorText: event.errorText } : {}),
					...(event.errorLine ? { errorLine: event.errorLine } : {}),
				}),
			);
		} else if (event.kind === "bash") {
			const failed =
				event.cancelled ||
				(event.exitCode !== undefined && event.exitCode !== 0 && !searchFoundNothing(event.command, event.exitCode));
			const status = event.cancelled ? "cancelled" : `exit ${event.exitCode}`;
			operations.push(
				withResolution({
					...base,
					tool: "user bash",
					success: !failed,
					...classify("bash", { command: event.command }, false),
					...(event.exitCode !== undefined ? { exitCode: event.exitCode } : {}),
					...(failed ? { errorText: event.outputExcerpt ? `${status}: ${event.outputExcerpt}` : status } : {}),
				}),
			);
		} else if (event.kind === "fabricOperation") {
			const success = event.outcome === "succeeded";
			operations.push(
				withResolution({
					...base,
					tool: event.ref,
					success,
					...classify(event.ref, event.args, event.created),
					...(!success ? { errorText: event.error ? `${event.outcome}: ${event.error}` : event.outcome } : {}),
				}),
			);
		}
	}
	return operations;
}

/** Kind of a successful file operation. `edit` is Modified; `write` is Written unless typed `created: true`. */
export function fileKindOf(file: NonNullable<Operation["file"]>): FileKind {
	if (file.action === "read") return "Read";
	if (file.action === "edit") return "Modified";
	return file.created ? "Created" : "Written";
}

export interface FileTouch {
	path: string;
	entryId: string;
	ordinal: number;
	address: string;
	count: number;
}

/** Successful file addresses grouped by kind: each distinct path once, at its latest touch, in touch order. */
export function fileTouchesByKind(
	events: readonly NormalizedEvent[],
	operations: readonly Operation[] = operationsOf(events),
): Record<FileKind, FileTouch[]> {
	const byKind: Record<FileKind, Map<string, FileTouch>> = {
		Created: new Map(),
		Written: new Map(),
		Modified: new Map(),
		Read: new Map(),
	};
	for (const operation of operations) {
		if (!operation.success || !operation.file) continue;
		const touches = byKind[fileKindOf(operation.file)];
		const previous = touches.get(operation.file.path);
		touches.set(operation.file.path, {
			path: operation.file.path,
			entryId: operation.entryId,
			ordinal: operation.ordinal,
			address: operation.address,
			count: (previous?.count ?? 0) + 1,
		});
	}
	const ordered = (map: Map<string, FileTouch>) => [...map.values()].sort((a, b) => a.ordinal - b.ordinal);
	return {
		Created: ordered(byKind.Created),
		Written: ordered(byKind.Written),
		Modified: ordered(byKind.Modified),
		Read: ordered(byKind.Read),
	};
}

export interface FailureRecord {
	failure: Operation;
	resolvedBy?: Operation;
}

/** Failures in source order, each with the first later success of the same resolution key. */
export function failureRecords(
	events: readonly NormalizedEvent[],
	operations: readonly Operation[] = operationsOf(events),
): FailureRecord[] {
	const records: FailureRecord[] = [];
	const open = new Map<string, FailureRecord[]>();
	for (const operation of operations) {
		if (!operation.success) {
			const record: FailureRecord = { failure: operation };
			records.push(record);
			const list = open.get(operation.resolution);
			if (list) list.push(record);
			else open.set(operation.resolution, [record]);
			continue;
		}
		const pending = open.get(operation.resolution);
		if (!pending) continue;
		for (const record of pending) record.resolvedBy = operation;
		open.delete(operation.resolution);
	}
	return records;
}

/** Normalized events of a span on its own (its context edits applied), for the extractors above. */
export function spanEvents(entries: readonly SessionEntry[]): NormalizedEvent[] {
	return normalizeBranch(entries).events;
}

/** Raw error text of each failed tool result in a span, by tool call id (the events keep one line only). */
export function errorTexts(entries: readonly SessionEntry[]): Map<string, string> {
	const texts = new Map<string, string>();
	for (const entry of entries) {
		if (entry.type !== "message" || entry.message.role !== "toolResult" || !entry.message.isError) continue;
		texts.set(entry.message.toolCallId, contentText(entry.message.content));
	}
	return texts;
}

/** One command a span ran, as a brief shows it. */
export interface SpanCommand {
	/** One line, paths under the working directory shown relative. */
	text: string;
	ok: boolean;
	/** A `!cmd` the user ran. */
	user: boolean;
	exitCode?: number;
}

/** One failure in a span, with its first meaningful line and whether a later success settled it. */
export interface SpanError {
	address: string;
	/** Tool and target: `edit src/a.ts`, `bash npm run check`, `response aborted`. */
	what: string;
	line?: string;
	exitCode?: number;
	resolved: boolean;
}

/** What a span holds and did; see the module comment. */
export interface SpanFacts {
	entryCount: number;
	userMessages: number;
	assistantMessages: number;
	toolCalls: number;
	failedCalls: number;
	/** First line of the first user message. */
	ask?: string;
	/** Text of the last text-bearing assistant reply (its start, bounded). */
	lastReply?: string;
	/** The last reply's first substantive sentence: how the span ended. */
	ended?: string;
	/** Tool name → number of calls, in order of first call. */
	tools: Map<string, number>;
	/** Successful file operations' distinct paths by kind, in touch order; the same set a summary lists. */
	files: Record<FileKind, string[]>;
	/** Successful edit / write operations (each landed change counts). */
	edits: number;
	writes: number;
	commands: SpanCommand[];
	searches: string[];
	labels: string[];
	errors: SpanError[];
}

/** Shows paths (and commands) relative to a working directory. */
export function relativeTo(cwd: string | undefined): (text: string) => string {
	if (!cwd || cwd === "/") return (text) => text;
	const root = cwd.endsWith("/") ? cwd.slice(0, -1) : cwd;
	return (text) => (text === root ? "." : text.split(`cd ${root} && `).join("").split(`${root}/`).join(""));
}

function firstArg(args: Record<string, unknown> | undefined, keys: readonly string[]): string | undefined {
	for (const key of keys) {
		const value = args?.[key];
		if (typeof value === "string" && value.trim()) return value.trim();
	}
	return undefined;
}

function countEntries(entries: readonly SessionEntry[], facts: SpanFacts): void {
	for (const entry of entries) {
		if (entry.type === "custom_message" || entry.type === "branch_summary") facts.userMessages++;
		if (entry.type !== "message") continue;
		const message = entry.message;
		if (message.role === "assistant") {
			facts.assistantMessages++;
			facts.toolCalls += message.content.filter((part) => part.type === "toolCall").length;
		} else if (message.role === "toolResult") {
			if (message.isError) facts.failedCalls++;
		} else facts.userMessages++;
	}
}

/** The typed facts of a span; `cwd` shortens the paths and commands shown. */
export function spanFacts(entries: readonly SessionEntry[], cwd?: string): SpanFacts {
	const show = relativeTo(cwd);
	const facts: SpanFacts = {
		entryCount: entries.length,
		userMessages: 0,
		assistantMessages: 0,
		toolCalls: 0,
		failedCalls: 0,
		tools: new Map(),
		files: { Created: [], Written: [], Modified: [], Read: [] },
		edits: 0,
		writes: 0,
		commands: [],
		searches: [],
		labels: [],
		errors: [],
	};
	countEntries(entries, facts);
	const events = spanEvents(entries);
	const operations = operationsOf(events);
	const searches = new Set<string>();
	const labels = new Set<string>();
	const errors: { ordinal: number; error: SpanError }[] = [];
	for (const event of events) {
		if (event.kind === "user") facts.ask ??= firstLine(event.text.slice(0, SENTENCE_SCAN_MAX_CHARS)) || undefined;
		else if (event.kind === "assistant") {
			if (event.text.trim()) facts.lastReply = event.text.slice(0, SENTENCE_SCAN_MAX_CHARS);
			if (event.stopReason === "error") {
				const why = firstLine(event.errorMessage ?? "") || "no message";
				errors.push({
					ordinal: event.ordinal,
					error: { address: event.address, what: "response failed", line: why, resolved: false },
				});
			} else if (event.stopReason === "aborted") {
				const error = { address: event.address, what: "response aborted", resolved: false };
				errors.push({ ordinal: event.ordinal, error });
			}
		} else if (event.kind === "toolCall") {
			facts.tools.set(event.toolName, (facts.tools.get(event.toolName) ?? 0) + 1);
			const args = event.args;
			const search = firstArg(args, SEARCH_ARG_KEYS);
			const path = firstArg(args, ["path"]);
			if (search) searches.add(oneLine(path ? `${search} in ${show(path)}` : search));
			for (const key of LABEL_ARG_KEYS) {
				const value = args?.[key];
				if (typeof value === "string" || typeof value === "number") labels.add(oneLine(`${key} ${value}`));
			}
		}
	}
	facts.ended = facts.lastReply === undefined ? undefined : firstSubstantiveSentence(facts.lastReply);
	const touches = fileTouchesByKind(events, operations);
	for (const kind of FILE_KINDS) facts.files[kind] = touches[kind].map((touch) => show(touch.path));
	for (const operation of operations) {
		if (!operation.success || !operation.file) continue;
		if (operation.file.action === "edit") facts.edits++;
		else if (operation.file.action === "write") facts.writes++;
	}
	for (const operation of operations) {
		if (operation.command === undefined) continue;
		facts.commands.push({
			text: oneLine(show(operation.command)),
			ok: operation.success,
			user: operation.tool === "user bash",
			...(operation.exitCode !== undefined ? { exitCode: operation.exitCode } : {}),
		});
	}
	const texts = errorTexts(entries);
	for (const { failure, resolvedBy } of failureRecords(events, operations)) {
		const target = failure.file ? show(failure.file.path) : show(failure.label);
		const raw = failure.toolCallId !== undefined ? texts.get(failure.toolCallId) : undefined;
		// A `!cmd` failure's text is "exit N: <output tail>"; the exit code is typed, the rest is the line.
		const ownText =
			failure.tool === "user bash"
				? failure.errorText?.replace(/^(?:exit \S+|cancelled)(?:: )?/, "")
				: failure.errorText;
		const read = raw !== undefined ? errorFirstLine(raw) : ownText ? errorFirstLine(ownText) : {};
		const exitCode = failure.exitCode ?? read.exitCode;
		errors.push({
			ordinal: failure.ordinal,
			error: {
				address: failure.address,
				what: oneLine(`${failure.tool === "user bash" ? "!" : `${failure.tool} `}${target}`),
				...(read.line ? { line: show(read.line) } : {}),
				...(exitCode !== undefined ? { exitCode } : {}),
				resolved: resolvedBy !== undefined,
			},
		});
	}
	facts.errors = errors.sort((a, b) => a.ordinal - b.ordinal).map((item) => item.error);
	facts.searches = [...searches];
	facts.labels = [...labels];
	return facts;
}

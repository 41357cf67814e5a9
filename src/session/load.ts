/**
 * Session file loading: bytes on disk → migrated, indexed Pi session.
 *
 * Parsing is ours so every defect is reported with its line number; migration
 * and indexing are Pi's own (`migrateSessionEntries`, `SessionManager`), so
 * v1/v2 logs become exactly what Pi would make of them. The user's file is
 * only ever read: Pi's `SessionManager.open` rewrites old logs in place, so we
 * hand the parsed entries to an in-memory manager instead.
 *
 * Pi assigns random ids when it upgrades a v1 log. Those ids would make every
 * address irreproducible, so after Pi's migration we rename them to ids
 * derived from the session id and the entry's ordinal (same shape: 8 hex).
 */

import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import {
	type FileEntry,
	migrateSessionEntries,
	type SessionEntry,
	type SessionHeader,
	SessionManager,
} from "@earendil-works/pi-coding-agent";
import { sha256Hex } from "./canonical.ts";

/** Entry types Pi 1.6.0 understands; anything else is skipped with a diagnostic. */
export const KNOWN_ENTRY_TYPES: ReadonlySet<string> = new Set([
	"message",
	"thinking_level_change",
	"model_change",
	"usage",
	"compaction",
	"branch_summary",
	"custom",
	"custom_message",
	"context_edit",
	"label",
	"session_info",
]);

/** Length of ids Pi generates (and of the deterministic ids we substitute). */
const ENTRY_ID_LENGTH = 8;

/**
 * Largest session file read: parsed entries take two to three times the file
 * in memory, and Pi itself reads a session into one string, which V8 caps
 * near 512 MiB; real sessions are a few MB.
 */
export const SESSION_MAX_BYTES = 256 * 1024 * 1024;
/** Bytes read per chunk: lines are parsed as they arrive, so the whole text is never held at once. */
const READ_CHUNK_BYTES = 1024 * 1024;
/**
 * Deepest JSON nesting of a message line pi-fold reads. Pi walks messages
 * recursively (`JSON.stringify` of tool arguments in its token estimate,
 * `structuredClone` of the context), which overflows the stack a few
 * thousand levels down, so a deeper message is one Pi cannot use either; real
 * entries nest a dozen levels. Other entries (another extension's custom
 * data) are kept at any depth, as Pi keeps them: nothing reads them
 * recursively (the canonical writer keeps its own stack), and skipping one
 * would cut the branch at it.
 */
export const MAX_JSON_NESTING = 512;
/** Cycle members named in a parent-cycle diagnostic; the rest are counted. */
const CYCLE_IDS_SHOWN = 4;

export type LoadDiagnosticKind =
	| "invalid-json"
	| "truncated-last-line"
	| "not-an-object"
	| "unknown-entry-type"
	| "too-deep"
	| "bad-field"
	| "parent-cycle";

/** A line that was skipped (or, for a parent cycle or a bad header field, repaired), with why. Loading continues past these. */
export interface LoadDiagnostic {
	line: number;
	kind: LoadDiagnosticKind;
	message: string;
	/** The line was kept with a field repaired (a parent cycle cut, a header field ignored), not skipped. */
	repaired?: true;
}

export type SessionLoadErrorCode =
	| "missing-file"
	| "not-a-file"
	| "empty-file"
	| "no-header"
	| "symlink-loop"
	| "unreadable"
	| "too-large"
	| "byte-order-mark";

/** A file that cannot be read as a session at all. */
export class SessionLoadError extends Error {
	readonly code: SessionLoadErrorCode;
	readonly path: string;
	constructor(code: SessionLoadErrorCode, path: string, message: string) {
		super(message);
		this.name = "SessionLoadError";
		this.code = code;
		this.path = path;
	}
}

export interface LoadedSession {
	path: string;
	header: SessionHeader;
	/** Format version recorded in the file before migration (1 when absent). */
	sourceVersion: number;
	/** True when the ids were assigned at load time (v1 log) rather than read from the file. */
	idsDerived: boolean;
	/** Every entry in file order, migrated to the current format. */
	entries: SessionEntry[];
	/** In-memory Pi session manager over the entries; never writes to disk. */
	manager: SessionManager;
	diagnostics: LoadDiagnostic[];
	/** File line of each entry id (the last line holding it, as Pi resolves ids). */
	lines: ReadonlyMap<string, number>;
}

/** Parsed lines so far: entries, the line each came from, and what was skipped. */
interface ParsedLines {
	fileEntries: FileEntry[];
	lineOf: number[];
	diagnostics: LoadDiagnostic[];
	/** The file starts with a UTF-8 byte order mark. */
	byteOrderMark: boolean;
}

/** U+FEFF, what a UTF-8 byte order mark decodes to. */
const BYTE_ORDER_MARK = 0xfeff;

/**
 * Deepest `[`/`{` nesting of JSON text, counted without recursion (brackets
 * inside strings ignored). Stops counting once past `limit`.
 */
export function jsonNestingDepth(text: string, limit = Number.POSITIVE_INFINITY): number {
	let depth = 0;
	let deepest = 0;
	let inString = false;
	for (let i = 0; i < text.length; i++) {
		const code = text.charCodeAt(i);
		if (inString) {
			if (code === 0x5c) i++;
			else if (code === 0x22) inString = false;
		} else if (code === 0x22) inString = true;
		else if (code === 0x5b || code === 0x7b) {
			depth++;
			if (depth > deepest) {
				deepest = depth;
				if (deepest > limit) return deepest;
			}
		} else if (code === 0x5d || code === 0x7d) depth--;
	}
	return deepest;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
	typeof value === "object" && value !== null && !Array.isArray(value);

/** Message or custom-message content: a string, or an array of typed parts. */
function contentProblem(content: unknown, path: string): string | undefined {
	if (content === undefined || typeof content === "string") return undefined;
	if (!Array.isArray(content)) return `${path} is ${describe(content)}, not a string or a list of parts`;
	const at = content.findIndex((part) => !isObject(part) || typeof part.type !== "string");
	return at === -1 ? undefined : `${path}[${at}] is ${describe(content[at])}, not a typed part`;
}

function describe(value: unknown): string {
	if (value === null) return "null";
	if (Array.isArray(value)) return "a list";
	return typeof value === "object" ? "an object" : `${typeof value} ${JSON.stringify(value)?.slice(0, 40)}`;
}

/**
 * The first field of an entry that Pi or the report would dereference and
 * cannot (`"message": null`, a `null` content part, a non-string id), or
 * undefined when the entry is usable. Only fields every format version shares
 * are checked: migration fills in the rest.
 */
export function entryShapeProblem(entry: Record<string, unknown>): string | undefined {
	if (entry.id !== undefined && (typeof entry.id !== "string" || entry.id === "")) return "id is not a string";
	if (entry.parentId !== undefined && entry.parentId !== null && typeof entry.parentId !== "string")
		return "parentId is not a string or null";
	switch (entry.type) {
		case "message": {
			const message = entry.message;
			if (!isObject(message)) return `message is ${describe(message)}, not an object`;
			if (typeof message.role !== "string") return "message.role is not a string";
			if (message.usage !== undefined && !isObject(message.usage)) return "message.usage is not an object";
			return contentProblem(message.content, "message.content");
		}
		case "custom_message":
			if (typeof entry.customType !== "string") return "customType is not a string";
			return contentProblem(entry.content, "content");
		case "custom":
			return typeof entry.customType === "string" ? undefined : "customType is not a string";
		case "compaction":
		case "branch_summary":
			return typeof entry.summary === "string" ? undefined : "summary is not a string";
		case "label":
		case "context_edit":
			return typeof entry.targetId === "string" ? undefined : "targetId is not a string";
		default:
			return undefined;
	}
}

/** Parse one line into `into`; `unterminated` marks a last line with no newline after it. */
function parseLine(raw: string, line: number, unterminated: boolean, into: ParsedLines): void {
	const { diagnostics } = into;
	// Pi 1.6.0 reads a first line behind a byte order mark as invalid JSON and refuses the file; so does loadParsed.
	if (line === 1 && raw.charCodeAt(0) === BYTE_ORDER_MARK) into.byteOrderMark = true;
	const text = into.byteOrderMark && line === 1 ? raw.slice(1) : raw;
	if (!text.trim()) return;
	// Depth can only exceed the bound on a line longer than it; the scan is skipped for the rest.
	const tooDeep = text.length > MAX_JSON_NESTING && jsonNestingDepth(text, MAX_JSON_NESTING) > MAX_JSON_NESTING;
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch {
		diagnostics.push(
			unterminated
				? { line, kind: "truncated-last-line", message: `line ${line}: last line is incomplete JSON (skipped)` }
				: { line, kind: "invalid-json", message: `line ${line}: not valid JSON (skipped)` },
		);
		return;
	}
	if (!isObject(value)) {
		diagnostics.push({ line, kind: "not-an-object", message: `line ${line}: not a JSON object (skipped)` });
		return;
	}
	const type = value.type;
	if (tooDeep && (type === "message" || type === "session")) {
		diagnostics.push({
			line,
			kind: "too-deep",
			message: `line ${line}: ${type === "session" ? "session header" : "message"} JSON nested more than ${MAX_JSON_NESTING} levels deep (skipped: Pi cannot use it either)`,
		});
		return;
	}
	if (type === "session") {
		if (value.cwd !== undefined && typeof value.cwd !== "string") {
			diagnostics.push({
				line,
				kind: "bad-field",
				message: `line ${line}: session header cwd is ${describe(value.cwd)}, not a path (ignored)`,
				repaired: true,
			});
			value.cwd = "";
		}
	} else if (typeof type !== "string" || !KNOWN_ENTRY_TYPES.has(type)) {
		diagnostics.push({
			line,
			kind: "unknown-entry-type",
			message: `line ${line}: unknown entry type ${JSON.stringify(type)} (skipped)`,
		});
		return;
	} else {
		const problem = entryShapeProblem(value);
		if (problem !== undefined) {
			diagnostics.push({ line, kind: "bad-field", message: `line ${line}: ${type} entry: ${problem} (skipped)` });
			return;
		}
	}
	into.fileEntries.push(value as unknown as FileEntry);
	into.lineOf.push(line);
}

function emptyParse(): ParsedLines {
	return { fileEntries: [], lineOf: [], diagnostics: [], byteOrderMark: false };
}

/** Parse JSONL session text. Skips bad lines with a diagnostic; never throws for content. */
export function parseSessionText(text: string): { fileEntries: FileEntry[]; diagnostics: LoadDiagnostic[] } {
	return parseText(text);
}

function parseText(text: string): ParsedLines {
	const parsed = emptyParse();
	const lines = text.split("\n");
	const endsWithNewline = text.endsWith("\n");
	lines.forEach((raw, index) => {
		parseLine(raw, index + 1, index === lines.length - 1 && !endsWithNewline, parsed);
	});
	return parsed;
}

/** Load session text as Pi would, without touching any file. */
export function loadSessionText(text: string, path = "<memory>"): LoadedSession {
	return loadParsed(parseText(text), path);
}

function loadParsed(parsed: ParsedLines, path: string): LoadedSession {
	const { fileEntries, diagnostics } = parsed;
	if (parsed.byteOrderMark) {
		throw new SessionLoadError(
			"byte-order-mark",
			path,
			`${path}: the file starts with a UTF-8 byte order mark (BOM), so Pi 1.6.0 refuses to open it ("not a valid session": its loader reads the header line as invalid JSON). Remove the mark, e.g. sed -i '1s/^\\xEF\\xBB\\xBF//' ${path}, then run pi-fold again.`,
		);
	}
	const header = fileEntries.find((entry): entry is SessionHeader => entry.type === "session");
	if (!header) {
		throw new SessionLoadError(
			fileEntries.length === 0 && diagnostics.length === 0 ? "empty-file" : "no-header",
			path,
			`${path}: no session header line ({"type":"session",...}); this is not a Pi session file. Pass a .jsonl file from ~/.pi/agent/sessions.`,
		);
	}
	const sourceVersion = typeof header.version === "number" ? header.version : 1;
	migrateSessionEntries(fileEntries);
	const idsDerived = sourceVersion < 2;
	if (idsDerived) renameDerivedIds(fileEntries, header.id);
	diagnostics.push(...breakParentCycles(fileEntries, parsed.lineOf));
	diagnostics.sort((a, b) => a.line - b.line);
	const lines = new Map<string, number>();
	fileEntries.forEach((entry, index) => {
		if (entry.type !== "session") lines.set(entry.id, parsed.lineOf[index] ?? 0);
	});
	const manager = SessionManager.inMemory(header.cwd || "/", undefined, fileEntries);
	return { path, header, sourceVersion, idsDerived, entries: manager.getEntries(), manager, diagnostics, lines };
}

export interface LoadFileOptions {
	/** Refuse files larger than this many bytes (default `SESSION_MAX_BYTES`). */
	maxBytes?: number;
}

/** Load a session file from disk, line by line. The file is read once and never written. */
export function loadSessionFile(path: string, options: LoadFileOptions = {}): LoadedSession {
	const maxBytes = options.maxBytes ?? SESSION_MAX_BYTES;
	let fd: number;
	try {
		if (!statSync(path).isFile()) throw new SessionLoadError("not-a-file", path, `${path}: not a regular file.`);
		fd = openSync(path, "r");
	} catch (error) {
		throw openError(path, error);
	}
	try {
		const size = fstatSync(fd).size;
		if (size === 0) throw new SessionLoadError("empty-file", path, `${path}: file is empty; nothing to load.`);
		if (size > maxBytes) throw tooLarge(path, size, maxBytes);
		return loadParsed(readLines(fd, path, maxBytes), path);
	} finally {
		closeSync(fd);
	}
}

/**
 * Read and parse a file a chunk at a time; never holds more than one chunk
 * and one line of text. Only the new chunk is searched for line ends: the
 * start of an unfinished line waits in a list joined once when its end
 * arrives, so a line of any length costs time linear in its size (searching
 * the whole pending text again per chunk made one 100 MB line quadratic).
 */
function readLines(fd: number, path: string, maxBytes: number): ParsedLines {
	const parsed = emptyParse();
	// ignoreBOM keeps a leading byte order mark in the text, so it is seen (and refused) as Pi sees it.
	const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
	const chunk = new Uint8Array(READ_CHUNK_BYTES);
	const pending: string[] = [];
	let line = 1;
	let total = 0;
	for (;;) {
		const read = readSync(fd, chunk, 0, chunk.length, null);
		total += read;
		// The file may grow while it is read (Pi appending); the bound holds for what is read.
		if (total > maxBytes) throw tooLarge(path, total, maxBytes);
		const text = decoder.decode(chunk.subarray(0, read), { stream: read > 0 });
		let start = 0;
		for (let end = text.indexOf("\n"); end !== -1; end = text.indexOf("\n", start)) {
			pending.push(text.slice(start, end));
			parseLine(pending.join(""), line++, false, parsed);
			pending.length = 0;
			start = end + 1;
		}
		if (start < text.length) pending.push(text.slice(start));
		if (read === 0) break;
	}
	if (pending.length > 0) parseLine(pending.join(""), line, true, parsed);
	return parsed;
}

function tooLarge(path: string, size: number, maxBytes: number): SessionLoadError {
	const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
	return new SessionLoadError(
		"too-large",
		path,
		`${path}: ${mb(size)} is over the ${mb(maxBytes)} pi-fold reads (and near what Pi itself can load). Run it on a part cut at a line boundary, e.g. head -n 100000 ${path} > part.jsonl.`,
	);
}

/** What an open or stat failure means for the user, by errno. */
function openError(path: string, error: unknown): SessionLoadError {
	if (error instanceof SessionLoadError) return error;
	const code = (error as { code?: unknown }).code;
	if (code === "ELOOP")
		return new SessionLoadError(
			"symlink-loop",
			path,
			`${path}: symbolic link loop (ELOOP): its links point back at each other. Pass the real session file's path.`,
		);
	if (code === "ENOENT" || code === "ENOTDIR")
		return new SessionLoadError("missing-file", path, `${path}: no such file. Check the path to the session .jsonl.`);
	const reason = code === "EACCES" || code === "EPERM" ? "permission denied" : String(code ?? error);
	return new SessionLoadError(
		"unreadable",
		path,
		`${path}: cannot be read (${reason}). Check the file's permissions, or copy it somewhere readable.`,
	);
}

/**
 * Cut every parent-id cycle (Pi walks parents until none is left, so a cycle
 * loops forever): in each cycle the entry earliest in the file, whose parent
 * necessarily points forward, becomes a root. Ids resolve as Pi resolves them
 * (the last entry with an id wins). Returns one diagnostic per cycle.
 */
export function breakParentCycles(fileEntries: FileEntry[], lineOf: readonly number[] = []): LoadDiagnostic[] {
	const entries = fileEntries.map((entry) => (entry.type === "session" ? undefined : entry));
	const byId = new Map<string, number>();
	entries.forEach((entry, index) => {
		if (entry) byId.set(entry.id, index);
	});
	const state = new Uint8Array(entries.length); // 0 unseen, 1 on the current walk, 2 done
	const diagnostics: LoadDiagnostic[] = [];
	for (let start = 0; start < entries.length; start++) {
		const walk: number[] = [];
		let at: number | undefined = start;
		while (at !== undefined && state[at] === 0 && entries[at]) {
			state[at] = 1;
			walk.push(at);
			const parent: string | null | undefined = entries[at]?.parentId;
			at = typeof parent === "string" ? byId.get(parent) : undefined;
		}
		if (at !== undefined && state[at] === 1) {
			const cycle = walk.slice(walk.indexOf(at));
			const first = Math.min(...cycle);
			const entry = entries[first];
			if (entry) {
				const line = lineOf[first] ?? first + 1;
				const ids = cycle.map((index) => entries[index]?.id ?? "?");
				const shown = ids.slice(0, CYCLE_IDS_SHOWN).map((id) => JSON.stringify(id.slice(0, 40)));
				const more = ids.length > CYCLE_IDS_SHOWN ? ` and ${ids.length - CYCLE_IDS_SHOWN} more` : "";
				diagnostics.push({
					line,
					kind: "parent-cycle",
					message: `line ${line}: parent ids loop (${shown.join(" → ")}${more} → back); entry ${JSON.stringify(entry.id.slice(0, 40))} read as a root`,
					repaired: true,
				});
				entry.parentId = null;
			}
		}
		for (const index of walk) state[index] = 2;
	}
	return diagnostics;
}

/**
 * Replace the random ids Pi gave a v1 log with `sha256(sessionId:ordinal)`
 * prefixes, keeping every reference (parentId, firstKeptEntryId, targetId,
 * fromId) consistent.
 */
function renameDerivedIds(fileEntries: FileEntry[], sessionId: string): void {
	const renamed = new Map<string, string>();
	const taken = new Set<string>();
	let ordinal = 0;
	for (const entry of fileEntries) {
		if (entry.type === "session") continue;
		let id = sha256Hex(`${sessionId}:${ordinal}`).slice(0, ENTRY_ID_LENGTH);
		for (let salt = 1; taken.has(id); salt++)
			id = sha256Hex(`${sessionId}:${ordinal}:${salt}`).slice(0, ENTRY_ID_LENGTH);
		taken.add(id);
		renamed.set(entry.id, id);
		ordinal++;
	}
	const map = (id: string | null | undefined): string | null | undefined =>
		id === null || id === undefined ? id : (renamed.get(id) ?? id);
	for (const entry of fileEntries) {
		if (entry.type === "session") continue;
		entry.id = map(entry.id) as string;
		entry.parentId = map(entry.parentId) ?? null;
		if (entry.type === "compaction") entry.firstKeptEntryId = map(entry.firstKeptEntryId) ?? "";
		if (entry.type === "branch_summary") entry.fromId = map(entry.fromId) ?? entry.fromId;
		if (entry.type === "context_edit" || entry.type === "label") entry.targetId = map(entry.targetId) ?? entry.targetId;
	}
}

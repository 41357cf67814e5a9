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

import { readFileSync, statSync } from "node:fs";
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

export type LoadDiagnosticKind = "invalid-json" | "truncated-last-line" | "not-an-object" | "unknown-entry-type";

/** A line that was skipped, with why. Loading continues past these. */
export interface LoadDiagnostic {
	line: number;
	kind: LoadDiagnosticKind;
	message: string;
}

export type SessionLoadErrorCode = "missing-file" | "not-a-file" | "empty-file" | "no-header";

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
}

/** Parse JSONL session text. Skips bad lines with a diagnostic; never throws for content. */
export function parseSessionText(text: string): { fileEntries: FileEntry[]; diagnostics: LoadDiagnostic[] } {
	const diagnostics: LoadDiagnostic[] = [];
	const fileEntries: FileEntry[] = [];
	const lines = text.split("\n");
	const endsWithNewline = text.endsWith("\n");
	lines.forEach((raw, index) => {
		const line = index + 1;
		if (!raw.trim()) return;
		let value: unknown;
		try {
			value = JSON.parse(raw);
		} catch {
			const isLast = index === lines.length - 1 && !endsWithNewline;
			diagnostics.push(
				isLast
					? { line, kind: "truncated-last-line", message: `line ${line}: last line is incomplete JSON (skipped)` }
					: { line, kind: "invalid-json", message: `line ${line}: not valid JSON (skipped)` },
			);
			return;
		}
		if (typeof value !== "object" || value === null || Array.isArray(value)) {
			diagnostics.push({ line, kind: "not-an-object", message: `line ${line}: not a JSON object (skipped)` });
			return;
		}
		const type = (value as { type?: unknown }).type;
		if (type !== "session" && (typeof type !== "string" || !KNOWN_ENTRY_TYPES.has(type))) {
			diagnostics.push({
				line,
				kind: "unknown-entry-type",
				message: `line ${line}: unknown entry type ${JSON.stringify(type)} (skipped)`,
			});
			return;
		}
		fileEntries.push(value as FileEntry);
	});
	return { fileEntries, diagnostics };
}

/** Load session text as Pi would, without touching any file. */
export function loadSessionText(text: string, path = "<memory>"): LoadedSession {
	const { fileEntries, diagnostics } = parseSessionText(text);
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
	const manager = SessionManager.inMemory(header.cwd || "/", undefined, fileEntries);
	return { path, header, sourceVersion, idsDerived, entries: manager.getEntries(), manager, diagnostics };
}

/** Load a session file from disk. The file is read once and never written. */
export function loadSessionFile(path: string): LoadedSession {
	let size: number;
	try {
		const stat = statSync(path);
		if (!stat.isFile()) throw new SessionLoadError("not-a-file", path, `${path}: not a regular file.`);
		size = stat.size;
	} catch (error) {
		if (error instanceof SessionLoadError) throw error;
		throw new SessionLoadError("missing-file", path, `${path}: no such file. Check the path to the session .jsonl.`);
	}
	if (size === 0) throw new SessionLoadError("empty-file", path, `${path}: file is empty; nothing to load.`);
	return loadSessionText(readFileSync(path, "utf8"), path);
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

/**
 * Another writer on the session file. Pi takes no lock, so two processes on
 * one session both append; each one's folds then sit on a branch the other
 * never sees. The check is cheap: the file's last complete entry must be one
 * this process's session manager knows.
 */

import { closeSync, fstatSync, openSync, readSync } from "node:fs";

/** Bytes read from the end of the file: comfortably more than one entry line of metadata. */
export const TAIL_READ_BYTES = 64 * 1024;

/** Id of the last complete JSONL line in `tail` (text ending at the file's end), if it has one. */
export function lastEntryId(tail: string): string | undefined {
	const lines = tail.split("\n");
	// A line cut by the start of the window is only usable when it is also the last one and complete.
	for (let i = lines.length - 1; i >= 1 || (i === 0 && lines.length === 1); i--) {
		const line = lines[i]?.trim();
		if (!line) continue;
		try {
			const entry = JSON.parse(line) as { id?: unknown; type?: unknown };
			// The header carries the session id, not an entry id.
			if (entry.type === "session") return undefined;
			return typeof entry.id === "string" ? entry.id : undefined;
		} catch {
			return undefined;
		}
	}
	return undefined;
}

/** Read the end of a file as text; undefined when it cannot be read. */
export function readTail(path: string, bytes = TAIL_READ_BYTES): string | undefined {
	let fd: number | undefined;
	try {
		fd = openSync(path, "r");
		const size = fstatSync(fd).size;
		const length = Math.min(size, bytes);
		const buffer = Buffer.alloc(length);
		readSync(fd, buffer, 0, length, size - length);
		return buffer.toString("utf8");
	} catch {
		return undefined;
	} finally {
		if (fd !== undefined) closeSync(fd);
	}
}

/** The foreign entry id at the end of the session file, when another process appended after us. */
export function foreignTail(path: string, known: (id: string) => boolean): string | undefined {
	const tail = readTail(path);
	const id = tail === undefined ? undefined : lastEntryId(tail);
	return id !== undefined && !known(id) ? id : undefined;
}

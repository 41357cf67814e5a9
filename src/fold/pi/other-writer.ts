/**
 * Another writer on the session file. Pi takes no lock, so two processes on
 * one session both append; each one's folds then sit on a branch the other
 * never sees. The check is cheap and symmetric: every complete line appended
 * to the file since this process last looked must be an entry its own
 * session manager knows (it wrote it, or loaded it at open). The first
 * process notices the second as soon as the second has appended anything,
 * the second notices the first once the first appends again, whichever of
 * them wrote last: checking only the file's last line missed a foreign
 * entry the checking process had already written past.
 */

import { closeSync, openSync, readSync, statSync } from "node:fs";

/** Bytes read from the end of the file when there is no earlier look to start from. */
export const TAIL_READ_BYTES = 64 * 1024;
/** Most bytes read at one look: past this, only the newest are scanned (a foreign line is rarely alone). */
export const MAX_SCAN_BYTES = 4 * 1024 * 1024;

/** An entry line's id; undefined for the header, null for a line that is not an entry. */
function lineEntryId(line: string): string | undefined | null {
	try {
		const entry = JSON.parse(line) as { id?: unknown; type?: unknown };
		// The header carries the session id, not an entry id.
		if (entry.type === "session") return undefined;
		return typeof entry.id === "string" ? entry.id : null;
	} catch {
		return null;
	}
}

/** Read `length` bytes of a file from `position`; undefined when it cannot be read. */
function readRange(path: string, position: number, length: number): Buffer | undefined {
	let fd: number | undefined;
	try {
		fd = openSync(path, "r");
		const buffer = Buffer.alloc(length);
		const read = readSync(fd, buffer, 0, length, position);
		return buffer.subarray(0, read);
	} catch {
		return undefined;
	} finally {
		if (fd !== undefined) closeSync(fd);
	}
}

function fileSize(path: string): number | undefined {
	try {
		return statSync(path).size;
	} catch {
		return undefined;
	}
}

/**
 * Where this process last looked in the session file. `start` at open (the
 * session manager has loaded everything before that point); `foreignSince`
 * at each boundary reads only what was appended since and names the first
 * entry the session manager does not know.
 */
export class OtherWriterWatch {
	/** Byte offset just past the last complete line already checked; undefined: not started. */
	private offset: number | undefined;
	private path: string | undefined;

	/** Start at the file's end; the same file again (a reload, a `/tree` move) keeps the place, so nothing goes unread. */
	start(path: string | undefined): void {
		if (path !== undefined && path === this.path && this.offset !== undefined) return;
		this.path = path;
		this.offset = path === undefined ? undefined : (fileSize(path) ?? 0);
	}

	foreignSince(path: string, known: (id: string) => boolean): string | undefined {
		const size = fileSize(path);
		if (size === undefined) return undefined;
		// Not started, or the file shrank (rewritten in place): look at its end only.
		let from = this.offset === undefined || size < this.offset ? Math.max(0, size - TAIL_READ_BYTES) : this.offset;
		const cut = size - from > MAX_SCAN_BYTES;
		if (cut) from = size - MAX_SCAN_BYTES;
		const bytes = readRange(path, from, size - from);
		if (bytes === undefined) return undefined;
		// A line still being written (no newline yet) is read at the next look.
		const end = bytes.lastIndexOf(0x0a) + 1;
		const lines = bytes.subarray(0, end).toString("utf8").split("\n");
		// A read that did not start at a line end begins inside a line: skip that part.
		const startsMidLine = from > 0 && (cut || this.offset === undefined || size < this.offset);
		this.offset = from + end;
		for (const line of startsMidLine ? lines.slice(1) : lines) {
			if (!line.trim()) continue;
			const id = lineEntryId(line);
			if (typeof id === "string" && !known(id)) return id;
		}
		return undefined;
	}
}

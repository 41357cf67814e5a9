/**
 * File-backed fold store: `<sessionDir>/<sessionId>.pi-fold/sha256/<ab>/<hash>`.
 *
 * Writes are atomic: the bytes go to a temp file in the blob's own directory,
 * are fsynced, made read-only (0444) and renamed into place, then the
 * directory is fsynced (best effort; not every platform allows it). The mode
 * is set before the rename rather than after, so a blob never appears
 * writable, even briefly. A failed write removes its temp file. Nothing is
 * created until the first write, and a read-only store never writes.
 *
 * Before any write the file system's free space is read (statfs): a write
 * that would leave less than `STORE_FREE_SPACE_RESERVE_BYTES` is refused
 * as "no-space", and so is one the disk runs out under (ENOSPC, EDQUOT);
 * a directory that cannot be written is "read-only".
 *
 * A source with cut points is stored as parts: `<hash>.parts` beside the
 * blobs (parts.ts), written with the same atomic path.
 *
 * The session id is checked with Pi's own rule for session ids and every
 * address is checked by the shared core (store.ts), so no input can name a
 * path outside the store directory.
 */

import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { access, chmod, lstat, mkdir, open, readdir, rename, rm, statfs, utimes } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type BlobBackend, type FoldStore, FoldStoreError, storeOver } from "./store.ts";

/** Suffix of the per-session store directory next to the session file. */
export const FOLD_STORE_DIR_SUFFIX = ".pi-fold";
/** Subdirectory naming the address algorithm. */
export const FOLD_STORE_HASH_DIR = "sha256";
/** Mode of every stored blob: read-only for everyone. */
export const BLOB_FILE_MODE = 0o444;
/** Mode of a temp file while it is written. */
const TEMP_FILE_MODE = 0o600;

/**
 * Free space every blob write leaves on the file system, at least. The
 * session log lives on the same disk and Pi appends its next lines there
 * (tool results of tens of KB, replies, a compaction summary); a write that
 * would leave less is refused ("no-space"), so the fold is not made and
 * Pi's own log never fails for want of the space a blob took. 1 MiB holds
 * some dozens of such lines.
 */
export const STORE_FREE_SPACE_RESERVE_BYTES = 1024 * 1024;

/** Pi's rule for session ids (assertValidSessionId): alphanumerics, '.', '_', '-', alphanumeric at both ends. */
const SESSION_ID_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;

export interface FileFoldStoreOptions {
	sessionDir: string;
	sessionId: string;
	readOnly?: boolean;
}

/** The store's root: `<sessionDir>/<sessionId>.pi-fold`. */
export function foldStoreDir(sessionDir: string, sessionId: string): string {
	if (!SESSION_ID_PATTERN.test(sessionId) || sessionId.includes("..")) {
		throw new FoldStoreError(
			"invalid-session-id",
			`${JSON.stringify(sessionId.slice(0, 80))} is not a valid session id for a fold store path; nothing was opened. Use the session's own id.`,
		);
	}
	return join(sessionDir, `${sessionId}${FOLD_STORE_DIR_SUFFIX}`);
}

/** Relative path of a blob (or, with its suffix, a part list) inside the store root; the address must already be validated. */
export function blobRelativePath(name: string): string {
	return join(FOLD_STORE_HASH_DIR, name.slice(0, 2), name);
}

let tempCounter = 0;

/** Open (lazily) the fold store of a session that has a file. */
export function openFileFoldStore(options: FileFoldStoreOptions): FoldStore {
	return openBlobDirectory({ root: foldStoreDir(options.sessionDir, options.sessionId), readOnly: options.readOnly });
}

export interface BlobDirectoryOptions {
	/** Directory the `sha256/` tree lives in. */
	root: string;
	readOnly?: boolean;
	/** Mode of directories the first write creates (root included); default: the process umask decides. */
	dirMode?: number;
	/** Free bytes a write must leave; default `STORE_FREE_SPACE_RESERVE_BYTES`. */
	reserveBytes?: number;
}

/** The same atomic, verified, 0444 blob store rooted anywhere (fold sources; evidence artifacts). */
export function openBlobDirectory(options: BlobDirectoryOptions): FoldStore {
	const root = options.root;
	const pathOf = (name: string): string => join(root, blobRelativePath(name));
	const io = (path: string, action: string, error: unknown): FoldStoreError => {
		const code = (error as { code?: unknown } | undefined)?.code;
		const message = error instanceof Error ? error.message : String(error);
		if (code === "ENOSPC" || code === "EDQUOT")
			return new FoldStoreError(
				"no-space",
				`Could not ${action} fold blob ${path}: the disk is full (${message}). Nothing was stored; free some space, and the fold can be made again.`,
				path,
			);
		if (code === "EROFS" || code === "EACCES" || code === "EPERM")
			return new FoldStoreError(
				"read-only",
				`Could not ${action} fold blob ${path}: the store directory is not writable (${message}). Nothing was stored; make ${root} writable, and the fold can be made again.`,
				path,
			);
		return new FoldStoreError(
			"io",
			`Could not ${action} fold blob ${path}: ${message}. Check that the session directory exists and is writable.`,
			path,
		);
	};
	const reserve = options.reserveBytes ?? STORE_FREE_SPACE_RESERVE_BYTES;
	/** Refuse a write that would leave the file system under the reserve (statfs of the nearest existing directory). */
	const checkSpace = async (path: string, bytes: number): Promise<void> => {
		let free: number | undefined;
		for (let dir = dirname(path); free === undefined; dir = dirname(dir)) {
			try {
				const info = await statfs(dir);
				free = info.bavail * info.bsize;
			} catch (error) {
				// Not created yet: ask its parent; anything else (or the root) leaves the write to find out.
				if ((error as { code?: unknown }).code !== "ENOENT" || dirname(dir) === dir) return;
			}
		}
		if (free - bytes >= reserve) return;
		throw new FoldStoreError(
			"no-space",
			`Not writing fold blob ${path} (${bytes} bytes): the disk has ${free} bytes free, and pi-fold leaves at least ${reserve} free for Pi's own session log. Nothing was stored; free some space, and the fold can be made again.`,
			path,
		);
	};

	let swept: Promise<void> | undefined;
	// Once per open store: temp files a killed writer left behind are removed (never ours in flight).
	const sweep = (): Promise<void> => {
		swept ??= options.readOnly ? Promise.resolve() : removeStaleTemps(join(root, FOLD_STORE_HASH_DIR));
		return swept;
	};
	const backend: BlobBackend = {
		kind: "file",
		location: root,
		locate: pathOf,
		async readRaw(name) {
			await sweep();
			const path = pathOf(name);
			// Synchronous calls: a blob is a small local file, and the promise API spends four thread-pool
			// round trips on each (open, stat, read, close). A search of a long session reads ten thousand
			// of them one after another, and waited 13 of its 14 seconds on those hops (`npm run bench -- search-cost`).
			let fd: number;
			try {
				// No symlink is followed and opening a FIFO does not wait for a writer.
				fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
			} catch (error) {
				if (isNotFound(error)) return undefined;
				throw io(path, "open", error);
			}
			try {
				if (!fstatSync(fd).isFile()) throw new Error("not a regular file");
				return new Uint8Array(readFileSync(fd));
			} catch (error) {
				throw io(path, "read", error);
			} finally {
				closeSync(fd);
			}
		},
		async exists(name) {
			const path = pathOf(name);
			try {
				const info = await lstat(path);
				if (!info.isFile()) throw new Error("not a regular file");
				return true;
			} catch (error) {
				if (isNotFound(error)) return false;
				throw io(path, "stat", error);
			}
		},
		async writeRaw(name, bytes) {
			await sweep();
			const path = pathOf(name);
			await checkSpace(path, bytes.length);
			const dir = join(root, FOLD_STORE_HASH_DIR, name.slice(0, 2));
			const temp = join(dir, `.${name}.${process.pid}.${++tempCounter}.tmp`);
			try {
				if (options.dirMode !== undefined) {
					await mkdir(root, { recursive: true, mode: options.dirMode });
					await chmod(root, options.dirMode);
				}
				await mkdir(dir, { recursive: true, ...(options.dirMode === undefined ? {} : { mode: options.dirMode }) });
				const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, TEMP_FILE_MODE);
				try {
					await handle.writeFile(bytes);
					await handle.sync();
					await handle.chmod(BLOB_FILE_MODE);
				} finally {
					await handle.close();
				}
				await rename(temp, path);
			} catch (error) {
				await rm(temp, { force: true }).catch(() => undefined);
				throw io(path, "write", await unwritable(dir, error));
			}
			await syncDirectory(dir);
		},
		async touch(name) {
			const now = new Date();
			// Best effort: a file another user owns, or a read-only mount, only loses gc's grace period.
			await utimes(pathOf(name), now, now).catch(() => undefined);
		},
		async quarantine(name) {
			const path = pathOf(name);
			const aside = `${path}.corrupt`;
			try {
				await rename(path, aside);
			} catch (error) {
				throw io(path, "quarantine", error);
			}
			return aside;
		},
	};
	return storeOver(backend, options.readOnly ?? false);
}

/**
 * Why a write failed, as precisely as the file system says: a recursive
 * mkdir under a read-only mount reports ENOENT for the directory it could not
 * make, so the nearest existing directory is asked whether it can be written.
 */
async function unwritable(dir: string, error: unknown): Promise<unknown> {
	if ((error as { code?: unknown }).code !== "ENOENT") return error;
	for (let at = dir; dirname(at) !== at; at = dirname(at)) {
		try {
			await access(at, constants.W_OK);
			return error;
		} catch (denied) {
			if ((denied as { code?: unknown }).code !== "ENOENT") return denied;
		}
	}
	return error;
}

/** Temp names carry the writer's pid: `.<hash>[.parts].<pid>.<n>.tmp`. */
const TEMP_NAME = /^\.[0-9a-f]{64}(?:\.parts)?\.(\d+)\.\d+\.tmp$/;

/** Remove temp files whose writer is gone (a kill mid-write). A live writer's temps, ours included, stay. */
export async function removeStaleTemps(hashDir: string): Promise<void> {
	let shards: string[];
	try {
		shards = await readdir(hashDir);
	} catch {
		return;
	}
	for (const shard of shards) {
		const dir = join(hashDir, shard);
		const names = await readdir(dir).catch(() => [] as string[]);
		for (const name of names) {
			const pid = Number(TEMP_NAME.exec(name)?.[1] ?? Number.NaN);
			if (Number.isNaN(pid) || pid === process.pid || processAlive(pid)) continue;
			await rm(join(dir, name), { force: true }).catch(() => undefined);
		}
	}
}

function processAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		// EPERM: it exists but belongs to someone else.
		return (error as { code?: unknown }).code === "EPERM";
	}
}

/** fsync a directory so a rename survives a crash; some platforms refuse, which is fine. */
async function syncDirectory(dir: string): Promise<void> {
	try {
		const handle = await open(dir, constants.O_RDONLY);
		try {
			await handle.sync();
		} finally {
			await handle.close();
		}
	} catch {
		// Best effort by design: the blob is already complete and verified on every read.
	}
}

function isNotFound(error: unknown): boolean {
	return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "ENOENT";
}

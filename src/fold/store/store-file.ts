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
 * The session id is checked with Pi's own rule for session ids and every
 * address is checked by the shared core (store.ts), so no input can name a
 * path outside the store directory.
 */

import { constants } from "node:fs";
import { chmod, lstat, mkdir, open, readdir, rename, rm, utimes } from "node:fs/promises";
import { join } from "node:path";
import { type BlobBackend, type FoldStore, FoldStoreError, storeOver } from "./store.ts";

/** Suffix of the per-session store directory next to the session file. */
export const FOLD_STORE_DIR_SUFFIX = ".pi-fold";
/** Subdirectory naming the address algorithm. */
export const FOLD_STORE_HASH_DIR = "sha256";
/** Mode of every stored blob: read-only for everyone. */
export const BLOB_FILE_MODE = 0o444;
/** Mode of a temp file while it is written. */
const TEMP_FILE_MODE = 0o600;

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
}

/** The same atomic, verified, 0444 blob store rooted anywhere (fold sources; evidence artifacts). */
export function openBlobDirectory(options: BlobDirectoryOptions): FoldStore {
	const root = options.root;
	const pathOf = (name: string): string => join(root, blobRelativePath(name));
	const io = (path: string, action: string, error: unknown): FoldStoreError =>
		new FoldStoreError(
			"io",
			`Could not ${action} fold blob ${path}: ${error instanceof Error ? error.message : String(error)}. Check that the session directory exists and is writable.`,
			path,
		);

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
			let handle: Awaited<ReturnType<typeof open>>;
			try {
				// No symlink is followed and opening a FIFO does not wait for a writer.
				handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
			} catch (error) {
				if (isNotFound(error)) return undefined;
				throw io(path, "open", error);
			}
			try {
				if (!(await handle.stat()).isFile()) throw new Error("not a regular file");
				return new Uint8Array(await handle.readFile());
			} catch (error) {
				throw io(path, "read", error);
			} finally {
				await handle.close();
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
				throw io(path, "write", error);
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

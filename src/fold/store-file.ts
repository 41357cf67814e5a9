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
import { mkdir, open, readFile, rename, rm, stat } from "node:fs/promises";
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

/** Relative path of a blob inside the store root (the address must already be validated). */
export function blobRelativePath(hash: string): string {
	return join(FOLD_STORE_HASH_DIR, hash.slice(0, 2), hash);
}

let tempCounter = 0;

/** Open (lazily) the fold store of a session that has a file. */
export function openFileFoldStore(options: FileFoldStoreOptions): FoldStore {
	const root = foldStoreDir(options.sessionDir, options.sessionId);
	const pathOf = (hash: string): string => join(root, blobRelativePath(hash));
	const io = (path: string, action: string, error: unknown): FoldStoreError =>
		new FoldStoreError(
			"io",
			`Could not ${action} fold blob ${path}: ${error instanceof Error ? error.message : String(error)}. Check that the session directory exists and is writable.`,
			path,
		);

	const backend: BlobBackend = {
		kind: "file",
		location: root,
		locate: pathOf,
		async readRaw(hash) {
			const path = pathOf(hash);
			try {
				return new Uint8Array(await readFile(path));
			} catch (error) {
				if (isNotFound(error)) return undefined;
				throw io(path, "read", error);
			}
		},
		async exists(hash) {
			const path = pathOf(hash);
			try {
				return (await stat(path)).isFile();
			} catch (error) {
				if (isNotFound(error)) return false;
				throw io(path, "stat", error);
			}
		},
		async writeRaw(hash, bytes) {
			const path = pathOf(hash);
			const dir = join(root, FOLD_STORE_HASH_DIR, hash.slice(0, 2));
			const temp = join(dir, `.${hash}.${process.pid}.${++tempCounter}.tmp`);
			try {
				await mkdir(dir, { recursive: true });
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
		async quarantine(hash) {
			const path = pathOf(hash);
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

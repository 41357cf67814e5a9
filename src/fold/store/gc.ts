/**
 * `pi-fold gc` over one session's fold store: the blobs and part lists
 * nothing references (`referenced.ts`, the definition verify reads by) are
 * listed, and removed only on request. gc never follows or removes a
 * symbolic link, never touches a file that is not a blob or a part list
 * (temp files, quarantined `.corrupt` copies), never leaves the store.
 *
 * What a running Pi may still need that no line of the file names yet: the
 * sources it stored for a mark or a commit whose line the next turn boundary
 * appends. So files younger than `GC_GRACE_MS` are kept, and everything a
 * kept part list names; a turn longer than that loses nothing either (the
 * fold's source is rebuilt from the log at its next read). Both processes
 * on one session append to the same file, and gc walks every branch of it,
 * so a fold one process made and persisted is referenced whatever the other
 * did since.
 */

import { lstat, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { isSha256Hex } from "../../session/canonical.ts";
import { PARTS_SUFFIX } from "./parts.ts";
import { partReferences, referencedHashes, stateReferences } from "./referenced.ts";
import { FOLD_STORE_HASH_DIR, foldStoreDir, openFileFoldStore } from "./store-file.ts";

/**
 * Unreferenced files younger than this are kept: an hour covers the turn
 * between a source's write and the line that names it, with room for long
 * tool calls; `--grace` changes it.
 */
export const GC_GRACE_MS = 60 * 60 * 1000;

/** One stored file: a blob (`<hash>`) or a part list (`<hash>.parts`). */
export interface StoredFile {
	hash: string;
	form: "blob" | "parts";
	bytes: number;
}

export interface GcOptions {
	apply: boolean;
	/** Unreferenced files modified within this many milliseconds are kept. */
	graceMs: number;
	/** The clock, for tests. */
	now?: number;
}

export interface GcReport {
	storeDir: string;
	/** Blobs in the store (files named by a hash). */
	blobs: number;
	/** Part lists in the store (`<hash>.parts`). */
	lists: number;
	storeBytes: number;
	/** Files something references; never removed. */
	referenced: number;
	/** Unreferenced files kept because they are younger than the grace period. */
	recent: number;
	unreferenced: StoredFile[];
	removed: number;
	/** Part lists that cannot be read: what they name is unknown, so nothing is removed. */
	damaged: { hash: string; problem: string }[];
	/** Symbolic links found in the store tree: never followed, never removed (they may point anywhere). */
	links: string[];
}

interface Found extends StoredFile {
	path: string;
	modified: number;
}

/** Every blob and part list in the store, typed without following links (links are listed, never walked). */
async function storedFiles(storeDir: string, links: string[]): Promise<Found[]> {
	const hashDir = join(storeDir, FOLD_STORE_HASH_DIR);
	const list = async (dir: string) => {
		const items = await readdir(dir, { withFileTypes: true }).catch(() => []);
		for (const item of items) if (item.isSymbolicLink()) links.push(join(dir, item.name));
		return items.filter((item) => !item.isSymbolicLink()).sort((a, b) => (a.name < b.name ? -1 : 1));
	};
	const storeInfo = await lstat(storeDir).catch(() => undefined);
	const hashInfo = storeInfo?.isDirectory() ? await lstat(hashDir).catch(() => undefined) : undefined;
	for (const [path, info] of [
		[storeDir, storeInfo],
		[hashDir, hashInfo],
	] as const)
		if (info?.isSymbolicLink()) links.push(path);
	const shards = hashInfo?.isDirectory() ? await list(hashDir) : [];
	const found: Found[] = [];
	for (const shard of shards.filter((item) => item.isDirectory())) {
		for (const file of await list(join(hashDir, shard.name))) {
			// Only `<ab>/<hash>` and `<ab>/<hash>.parts`; quarantined copies and temp files are left alone.
			const form = file.name.endsWith(PARTS_SUFFIX) ? "parts" : "blob";
			const hash = form === "parts" ? file.name.slice(0, -PARTS_SUFFIX.length) : file.name;
			if (!file.isFile() || !isSha256Hex(hash) || hash.slice(0, 2) !== shard.name) continue;
			const path = join(hashDir, shard.name, file.name);
			const info = await lstat(path).catch(() => undefined);
			if (!info?.isFile()) continue;
			found.push({ hash, form, bytes: info.size, path, modified: info.mtimeMs });
		}
	}
	return found;
}

/** Blobs and part lists of a session's store that nothing references; removed only with `apply`. */
export async function collectGarbage(
	entries: readonly SessionEntry[],
	sessionDir: string,
	sessionId: string,
	prefix: string,
	options: GcOptions,
): Promise<GcReport> {
	const storeDir = foldStoreDir(sessionDir, sessionId);
	const report: GcReport = {
		storeDir,
		blobs: 0,
		lists: 0,
		storeBytes: 0,
		referenced: 0,
		recent: 0,
		unreferenced: [],
		removed: 0,
		damaged: [],
		links: [],
	};
	const files = await storedFiles(storeDir, report.links);
	const state = stateReferences(entries, prefix);
	const since = (options.now ?? Date.now()) - options.graceMs;
	const recent = files.filter((file) => file.modified > since).map((file) => file.hash);
	const roots = new Set([...referencedHashes(state), ...recent]);
	const store = openFileFoldStore({ sessionDir, sessionId, readOnly: true });
	const parts = await partReferences(store, roots);
	report.damaged = parts.damaged;
	const referenced = referencedHashes(state, parts);
	const removable: Found[] = [];
	for (const file of files) {
		report[file.form === "parts" ? "lists" : "blobs"]++;
		report.storeBytes += file.bytes;
		if (referenced.has(file.hash)) report.referenced++;
		else if (file.modified > since) report.recent++;
		else {
			report.unreferenced.push({ hash: file.hash, form: file.form, bytes: file.bytes });
			removable.push(file);
		}
	}
	// A list that cannot be read may name any of them: remove nothing until verify is clean.
	if (!options.apply || report.damaged.length > 0) return report;
	for (const file of removable) {
		await rm(file.path, { force: true });
		report.removed++;
	}
	return report;
}

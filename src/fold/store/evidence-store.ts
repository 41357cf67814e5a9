/**
 * Evidence ingestion, the I/O half: one session's artifact directory
 * `<sessionDir>/pi-fold-evidence/<sessionId>/` (0700), written through the
 * fold store's atomic 0444 blob path (`openBlobDirectory`), and the session
 * cap. The bytes already written are counted from the directory on first
 * use, so the cap holds across resumes and reloads; after that the count is
 * kept in memory. An artifact whose bytes are already stored costs nothing.
 */

import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import {
	EVIDENCE_DIR_MODE,
	EVIDENCE_OVERSIZED_BYTES,
	EVIDENCE_SESSION_CAP_BYTES,
	type EvidenceFacts,
	evidenceArtifact,
	evidenceDirName,
	isOversized,
	type ToolResultShape,
} from "./evidence.ts";
import type { BlobSlice, FoldStore } from "./store.ts";
import { FOLD_STORE_HASH_DIR, foldStoreDir, openBlobDirectory } from "./store-file.ts";

export interface EvidenceLimits {
	capBytes: number;
	oversizedBytes: number;
}

export const DEFAULT_EVIDENCE_LIMITS: EvidenceLimits = {
	capBytes: EVIDENCE_SESSION_CAP_BYTES,
	oversizedBytes: EVIDENCE_OVERSIZED_BYTES,
};

export type IngestOutcome =
	| { ingested: true; hash: string; bytes: number; reused: boolean }
	| { ingested: false; reason: "small" | "no-session-file" | "over-cap" | "write-failed"; detail?: string };

/** `<sessionDir>/<prefix's evidence dir>/<sessionId>` (default `pi-fold-evidence`); the id is checked by the fold store's rule. */
export function evidenceDir(sessionDir: string, sessionId: string, entryTypePrefix: string): string {
	// foldStoreDir validates the id; the evidence directory takes the id itself, without the suffix.
	foldStoreDir(sessionDir, sessionId);
	return join(sessionDir, evidenceDirName(entryTypePrefix), sessionId);
}

export class EvidenceStore {
	private readonly store: FoldStore | undefined;
	private used: number | undefined;
	private artifacts = 0;
	private refusedOverCap = 0;
	private failed = 0;
	private lastError: string | undefined;

	readonly root: string | undefined;
	private readonly limits: EvidenceLimits;
	/** Why there is no directory though the session has a file (an unusable session id). */
	private readonly unavailable: string | undefined;

	constructor(root: string | undefined, limits: EvidenceLimits = DEFAULT_EVIDENCE_LIMITS, unavailable?: string) {
		this.root = root;
		this.limits = limits;
		this.unavailable = unavailable;
		this.store = root === undefined ? undefined : openBlobDirectory({ root, dirMode: EVIDENCE_DIR_MODE });
	}

	/** Write an oversized result as evidence, or say why not. Never throws. */
	async ingest(result: ToolResultShape): Promise<IngestOutcome> {
		const artifact = evidenceArtifact(result);
		if (!isOversized(artifact.length, this.limits.oversizedBytes)) return { ingested: false, reason: "small" };
		if (!this.store || this.root === undefined) return { ingested: false, reason: "no-session-file" };
		try {
			if (this.used === undefined) {
				const found = await storedBlobs(join(this.root, FOLD_STORE_HASH_DIR));
				this.used = found.reduce((sum, blob) => sum + blob.bytes, 0);
				this.artifacts = found.length;
			}
			if (this.used + artifact.length > this.limits.capBytes) {
				this.refusedOverCap++;
				return { ingested: false, reason: "over-cap" };
			}
			const put = await this.store.put(artifact);
			if (!put.reused) {
				this.used += put.bytes;
				this.artifacts++;
			}
			return { ingested: true, hash: put.hash, bytes: put.bytes, reused: put.reused };
		} catch (error) {
			this.failed++;
			this.lastError = error instanceof Error ? error.message : String(error);
			return { ingested: false, reason: "write-failed", detail: this.lastError };
		}
	}

	/** Verified read of an artifact (throws the store's named errors). */
	async read(hash: string, offset: number, bytes: number): Promise<BlobSlice> {
		if (!this.store) throw new Error(this.noStore());
		return this.store.read(hash, { offset, bytes });
	}

	/** Verified read of a whole artifact (throws the store's named errors). */
	async readWhole(hash: string): Promise<Uint8Array> {
		if (!this.store) throw new Error(this.noStore());
		return (await this.store.read(hash)).bytes;
	}

	private noStore(): string {
		return this.unavailable
			? `this session has no evidence directory (${this.unavailable})`
			: "this session has no file, so it has no evidence";
	}

	/** Every artifact of this session (hashes in directory order; not verified until read). */
	async list(): Promise<string[]> {
		if (this.root === undefined) return [];
		return (await storedBlobs(join(this.root, FOLD_STORE_HASH_DIR))).map((blob) => blob.hash);
	}

	facts(enabled: boolean): EvidenceFacts {
		return {
			enabled,
			location: this.root,
			...(this.unavailable ? { unavailable: this.unavailable } : {}),
			artifacts: this.artifacts,
			bytes: this.used ?? 0,
			capBytes: this.limits.capBytes,
			refusedOverCap: this.refusedOverCap,
			failed: this.failed,
			lastError: this.lastError,
		};
	}
}

/** The blobs under a `sha256/` tree with their sizes (temp and quarantined files excluded); none when absent. */
async function storedBlobs(hashDir: string): Promise<{ hash: string; bytes: number }[]> {
	const blobs: { hash: string; bytes: number }[] = [];
	const shards = (await readdir(hashDir).catch(() => [] as string[])).sort();
	for (const shard of shards) {
		const names = (await readdir(join(hashDir, shard)).catch(() => [] as string[])).sort();
		for (const name of names) {
			if (!/^[0-9a-f]{64}$/.test(name)) continue;
			blobs.push({ hash: name, bytes: (await stat(join(hashDir, shard, name))).size });
		}
	}
	return blobs;
}

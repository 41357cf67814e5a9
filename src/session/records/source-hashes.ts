/**
 * Source hashes a compaction or deterministic branch summary records for the
 * entries it summarized: SHA-256 of each entry's canonical JSON, keyed by
 * entry id. Recall (recall.ts) checks exact source against them.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { canonicalBytes, sha256Hex } from "../canonical.ts";
import { isPlainRecord } from "./record-guards.ts";

/** Algorithm tag of recorded source hashes: SHA-256 of the entry's canonical JSON, lower-case hex. */
export const SOURCE_HASH_ALGORITHM = "sha256-canonical-json";

/** Per-entry source hashes a compaction records for the entries it compacted. */
export interface SourceHashes {
	algorithm: typeof SOURCE_HASH_ALGORITHM;
	entries: Record<string, string>;
}

/** The hashes of `entries`, for a details record. */
export function sourceHashesOf(entries: readonly SessionEntry[]): SourceHashes {
	const out: Record<string, string> = {};
	for (const entry of entries) out[entry.id] = sha256Hex(canonicalBytes(entry));
	return { algorithm: SOURCE_HASH_ALGORITHM, entries: out };
}

/** A valid recorded hash map, or undefined (absent in older records, or malformed). */
export function readSourceHashes(value: unknown): SourceHashes | undefined {
	if (!isPlainRecord(value) || value.algorithm !== SOURCE_HASH_ALGORITHM || !isPlainRecord(value.entries))
		return undefined;
	const entries: Record<string, string> = {};
	for (const [id, hash] of Object.entries(value.entries)) {
		if (typeof hash !== "string" || !/^[0-9a-f]{64}$/.test(hash)) return undefined;
		entries[id] = hash;
	}
	return { algorithm: SOURCE_HASH_ALGORITHM, entries };
}

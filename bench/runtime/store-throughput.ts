/**
 * Fold store write + verify against the physical limit: `put` of a blob into
 * a fresh file store (hash, write, fsync, read-only rename, directory fsync)
 * then a verified `read` of it, beside one raw `crypto.createHash("sha256")`
 * over the same bytes. The store API is async, so this module times it
 * itself: interleaved runs, medians, one untimed warm-up each.
 */

import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openFileFoldStore } from "../../src/fold/store/store-file.ts";
import { median } from "../harness.ts";

/** Blob sizes the issue names. */
export const STORE_BLOB_BYTES = [1_048_576, 10_485_760] as const;

/** Deterministic incompressible-looking bytes (xorshift32), so no size or content shortcut applies. */
export function blobBytes(size: number, seed = 1): Uint8Array {
	const out = new Uint8Array(size);
	let state = seed >>> 0 || 1;
	for (let i = 0; i < size; i++) {
		state ^= state << 13;
		state ^= state >>> 17;
		state ^= state << 5;
		out[i] = state & 0xff;
	}
	return out;
}

export interface StoreTiming {
	bytes: number;
	runs: number;
	writeVerifyMs: number;
	sha256Ms: number;
	/** writeVerifyMs ÷ sha256Ms. */
	ratio: number;
	/** MB/s of raw SHA-256 and of write + verify (10^6 bytes). */
	sha256MBps: number;
	writeVerifyMBps: number;
}

async function writeThenVerify(root: string, run: number, bytes: Uint8Array): Promise<number> {
	const store = openFileFoldStore({ sessionDir: root, sessionId: `bench-${run}` });
	const put = await store.put(bytes);
	const read = await store.read(put.hash);
	return read.totalBytes;
}

function rawSha256(bytes: Uint8Array): string {
	return createHash("sha256").update(bytes).digest("hex");
}

/** Time write + verify and raw SHA-256 for each size, `runs` interleaved repetitions each. */
export async function timeStore(runs: number, sizes: readonly number[] = STORE_BLOB_BYTES): Promise<StoreTiming[]> {
	const root = mkdtempSync(join(tmpdir(), "pi-fold-bench-store-"));
	try {
		const blobs = sizes.map((size) => blobBytes(size));
		const write: number[][] = sizes.map(() => []);
		const hash: number[][] = sizes.map(() => []);
		let counter = 0;
		for (let run = -1; run < runs; run++) {
			for (const [index, bytes] of blobs.entries()) {
				let start = process.hrtime.bigint();
				await writeThenVerify(root, counter++, bytes);
				const wrote = Number(process.hrtime.bigint() - start) / 1e6;
				start = process.hrtime.bigint();
				rawSha256(bytes);
				const hashed = Number(process.hrtime.bigint() - start) / 1e6;
				// Each run writes into its own store; remove it so the disk does not fill up.
				rmSync(join(root, `bench-${counter - 1}.pi-fold`), { recursive: true, force: true });
				if (run < 0) continue;
				write[index]?.push(wrote);
				hash[index]?.push(hashed);
			}
		}
		return sizes.map((bytes, index) => {
			const writeVerifyMs = median(write[index] ?? []);
			const sha256Ms = median(hash[index] ?? []);
			return {
				bytes,
				runs,
				writeVerifyMs,
				sha256Ms,
				ratio: writeVerifyMs / sha256Ms,
				sha256MBps: bytes / 1e6 / (sha256Ms / 1e3),
				writeVerifyMBps: bytes / 1e6 / (writeVerifyMs / 1e3),
			};
		});
	} finally {
		rmSync(root, { recursive: true, force: true });
	}
}

/**
 * Fold store: content-addressed, verified blobs of each fold's exact source.
 *
 * A blob is the canonical span bytes of a fold's leaf entries, addressed by
 * their lowercase hex SHA-256. This module owns the contract every store
 * keeps, whatever holds the bytes:
 *
 * - Addresses are validated before any I/O: anything but 64 lowercase hex
 *   digits is refused ("invalid-hash"), so no id can name a path.
 * - `put` is idempotent. Writing bytes that are already stored reuses the
 *   blob after verifying it. If the stored blob is corrupt, `put` refuses
 *   with a `FoldIntegrityError` and leaves it in place; `put(..., { repair:
 *   true })` quarantines the corrupt copy (file stores keep it as
 *   `<hash>.corrupt`) and writes the exact bytes. Never a silent overwrite.
 * - Every read verifies the SHA-256 of the whole blob first; a mismatch is a
 *   `FoldIntegrityError` (code "integrity") naming the blob and the next step.
 * - Slices are UTF-8 byte ranges, shrunk to whole characters: a start inside a
 *   multibyte character moves forward past it and an end inside one moves back
 *   before it, so slice text is always valid and never longer than asked. If
 *   that leaves nothing while bytes remain (a request smaller than the next
 *   character), the slice holds that one whole character, so paging by
 *   `nextOffset` always makes progress.
 *
 * The file store lives in store-file.ts; the memory store (sessions without a
 * file, `--no-session`) is here and shares the same core, so both behave alike.
 */

import { isSha256Hex, sha256Hex } from "../../session/canonical.ts";

export type FoldStoreKind = "file" | "memory";

export type FoldStoreErrorCode =
	| "integrity"
	| "missing"
	| "invalid-hash"
	| "invalid-session-id"
	| "read-only"
	| "bad-range"
	| "io";

/** A store operation that failed. `location` is the blob path (or memory address) when one is involved. */
export class FoldStoreError extends Error {
	readonly code: FoldStoreErrorCode;
	readonly location: string | undefined;
	constructor(code: FoldStoreErrorCode, message: string, location?: string) {
		super(message);
		this.name = "FoldStoreError";
		this.code = code;
		this.location = location;
	}
}

/** Stored bytes whose SHA-256 is not their address. */
export class FoldIntegrityError extends FoldStoreError {
	readonly expectedHash: string;
	readonly actualHash: string;
	constructor(message: string, location: string, expectedHash: string, actualHash: string) {
		super("integrity", message, location);
		this.name = "FoldIntegrityError";
		this.expectedHash = expectedHash;
		this.actualHash = actualHash;
	}
}

export interface PutOptions {
	/** The hash the caller expects (a fold plan's `sourceHash`); a mismatch writes nothing. */
	expectedHash?: string;
	/** Replace a corrupt stored blob with these bytes, quarantining the corrupt copy. */
	repair?: boolean;
}

export interface PutResult {
	hash: string;
	bytes: number;
	/** The blob was already stored intact; nothing was written. */
	reused: boolean;
	/** A corrupt stored blob was replaced. */
	repaired: boolean;
	location: string;
	/** Where the corrupt copy was kept, when repaired. */
	quarantined?: string;
}

export interface ReadOptions {
	/** First UTF-8 byte wanted. Default 0. */
	offset?: number;
	/** Most UTF-8 bytes wanted. Default: to the end. */
	bytes?: number;
}

export interface BlobSlice {
	hash: string;
	totalBytes: number;
	/** Actual byte range returned, `[offset, end)`, on character boundaries. */
	offset: number;
	end: number;
	bytes: Uint8Array;
	text: string;
	/** True when the slice is the whole blob. */
	complete: boolean;
	/** Where the next page starts, or undefined at the end of the blob. */
	nextOffset: number | undefined;
}

export interface FoldStore {
	readonly kind: FoldStoreKind;
	readonly readOnly: boolean;
	/** The store directory, or "memory". */
	readonly location: string;
	put(source: Uint8Array, options?: PutOptions): Promise<PutResult>;
	/** Verified read of a whole blob or a slice of it. */
	read(hash: string, options?: ReadOptions): Promise<BlobSlice>;
	/** True when a blob with this address exists (not verified). */
	has(hash: string): Promise<boolean>;
	/** Throws unless the blob exists and verifies; returns its size. */
	verify(hash: string): Promise<{ hash: string; bytes: number }>;
	/** Path or memory address of a blob, for messages. */
	locate(hash: string): string;
}

/** Raw byte access a store is built on. Addresses reaching it are already validated. */
export interface BlobBackend {
	readonly kind: FoldStoreKind;
	readonly location: string;
	locate(hash: string): string;
	readRaw(hash: string): Promise<Uint8Array | undefined>;
	exists(hash: string): Promise<boolean>;
	writeRaw(hash: string, bytes: Uint8Array): Promise<void>;
	/** Move a corrupt blob aside; returns where it went. */
	quarantine(hash: string): Promise<string>;
}

/** Refuse anything that is not a lowercase hex SHA-256 before it can reach a path. */
export function assertBlobHash(hash: string): void {
	if (typeof hash !== "string" || !isSha256Hex(hash)) {
		const shown = typeof hash === "string" ? JSON.stringify(hash.slice(0, 80)) : typeof hash;
		throw new FoldStoreError(
			"invalid-hash",
			`${shown} is not a blob address (64 lowercase hex digits); nothing was read or written. Pass a fold record's sourceHash.`,
		);
	}
}

function isContinuationByte(byte: number | undefined): boolean {
	return byte !== undefined && (byte & 0xc0) === 0x80;
}

/** Byte bounds of a UTF-8 slice on character boundaries (see the module comment). */
export function utf8SliceBounds(bytes: Uint8Array, offset: number, count: number): { start: number; end: number } {
	const total = bytes.length;
	let start = Math.min(offset, total);
	while (start < total && isContinuationByte(bytes[start])) start++;
	let end = Math.max(start, Math.min(offset + count, total));
	while (end > start && end < total && isContinuationByte(bytes[end])) end--;
	if (end === start && start < total && count > 0) {
		end = start + 1;
		while (end < total && isContinuationByte(bytes[end])) end++;
	}
	return { start, end };
}

const decoder = new TextDecoder("utf-8");

function checkRange(options: ReadOptions, location: string): { offset: number; count: number | undefined } {
	const { offset = 0, bytes } = options;
	const valid = (n: number | undefined): boolean => n === undefined || (Number.isSafeInteger(n) && n >= 0);
	if (!valid(offset) || !valid(bytes)) {
		throw new FoldStoreError(
			"bad-range",
			`offset and bytes must be non-negative integers (got offset ${offset}, bytes ${bytes}); nothing was read. Retry with whole byte counts.`,
			location,
		);
	}
	return { offset, count: bytes };
}

/** A verified blob's bytes as a slice on character boundaries (the whole blob when `count` is undefined). */
export function sliceBytes(hash: string, raw: Uint8Array, offset: number, count: number | undefined): BlobSlice {
	const { start, end } = utf8SliceBounds(raw, offset, count ?? raw.length);
	const bytes = raw.slice(start, end);
	return {
		hash,
		totalBytes: raw.length,
		offset: start,
		end,
		bytes,
		text: decoder.decode(bytes),
		complete: start === 0 && end === raw.length,
		nextOffset: end < raw.length ? end : undefined,
	};
}

/** Build a store with the shared rules over raw byte access. */
export function storeOver(backend: BlobBackend, readOnly: boolean): FoldStore {
	const integrity = (hash: string, actual: string, during: string): FoldIntegrityError => {
		const location = backend.locate(hash);
		return new FoldIntegrityError(
			`Fold blob ${location} fails SHA-256 verification ${during} (expected ${hash}, found ${actual}); its bytes cannot be trusted, and the fold stays as it is. The session log still holds the exact entries: move the corrupt file aside (it is read-only) and peek again; a missing blob is rebuilt from the log when the log still hashes to the fold.`,
			location,
			hash,
			actual,
		);
	};
	const readVerified = async (hash: string): Promise<Uint8Array> => {
		assertBlobHash(hash);
		const raw = await backend.readRaw(hash);
		if (!raw) {
			throw new FoldStoreError(
				"missing",
				`No fold blob at ${backend.locate(hash)}. The session log still holds the exact entries: write the fold's source again with put.`,
				backend.locate(hash),
			);
		}
		const actual = sha256Hex(raw);
		if (actual !== hash) throw integrity(hash, actual, "on read");
		return raw;
	};
	const refuseWrite = (hash: string): FoldStoreError =>
		new FoldStoreError(
			"read-only",
			`Fold store ${backend.location} is read-only; blob ${hash} was not written. Open the store writable to add or repair blobs.`,
			backend.locate(hash),
		);

	return {
		kind: backend.kind,
		readOnly,
		location: backend.location,
		locate: (hash) => {
			assertBlobHash(hash);
			return backend.locate(hash);
		},
		async put(source, options = {}) {
			const hash = sha256Hex(source);
			const location = backend.locate(hash);
			if (options.expectedHash !== undefined && options.expectedHash !== hash) {
				throw new FoldIntegrityError(
					`Fold source hashes to ${hash}, not the expected ${options.expectedHash}; nothing was written to ${location}. Recompute the source from the fold's entries.`,
					location,
					options.expectedHash,
					hash,
				);
			}
			const result: PutResult = { hash, bytes: source.length, reused: false, repaired: false, location };
			const existing = await backend.readRaw(hash);
			if (existing) {
				const actual = sha256Hex(existing);
				if (actual === hash) return { ...result, reused: true };
				if (!options.repair) throw integrity(hash, actual, "while writing the same source; it was left in place");
				if (readOnly) throw refuseWrite(hash);
				const quarantined = await backend.quarantine(hash);
				await backend.writeRaw(hash, source);
				return { ...result, repaired: true, quarantined };
			}
			if (readOnly) throw refuseWrite(hash);
			await backend.writeRaw(hash, source);
			return result;
		},
		async read(hash, options = {}) {
			assertBlobHash(hash);
			const { offset, count } = checkRange(options, backend.locate(hash));
			return sliceBytes(hash, await readVerified(hash), offset, count);
		},
		async has(hash) {
			assertBlobHash(hash);
			return backend.exists(hash);
		},
		async verify(hash) {
			const raw = await readVerified(hash);
			return { hash, bytes: raw.length };
		},
	};
}

export interface MemoryFoldStoreOptions {
	readOnly?: boolean;
	/** Backing map (hash → bytes). Pass one to share blobs between stores or to inspect them in tests. */
	blobs?: Map<string, Uint8Array>;
	/** Why the session has no durable store, when a file store could not be opened; shown as the location. */
	noDurableStore?: string;
}

/** A fold store held in memory, for sessions without a file. Same rules as the file store. */
export function createMemoryFoldStore(options: MemoryFoldStoreOptions = {}): FoldStore {
	const blobs = options.blobs ?? new Map<string, Uint8Array>();
	const backend: BlobBackend = {
		kind: "memory",
		location: options.noDurableStore ? `memory (no durable store: ${options.noDurableStore})` : "memory",
		locate: (hash) => `memory:sha256/${hash}`,
		readRaw: async (hash) => {
			const stored = blobs.get(hash);
			return stored ? stored.slice() : undefined;
		},
		exists: async (hash) => blobs.has(hash),
		writeRaw: async (hash, bytes) => {
			// Copy, so a caller reusing its buffer cannot change a stored blob.
			blobs.set(hash, bytes.slice());
		},
		quarantine: async (hash) => {
			const corrupt = blobs.get(hash);
			if (corrupt) blobs.set(`${hash}.corrupt`, corrupt);
			return `memory:sha256/${hash}.corrupt`;
		},
	};
	return storeOver(backend, options.readOnly ?? false);
}

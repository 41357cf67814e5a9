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
 * - A source with cut points (a fold with child folds) is stored as parts:
 *   each range a blob of its own, or a reference to one already stored (a
 *   child's source), plus a part list (parts.ts). Reads compose it: every
 *   part blob is verified against its own SHA-256 and the whole against the
 *   source's, so a composed read serves exactly the bytes a whole blob would.
 *   Both forms are read, so stores written before part lists keep working.
 *
 * The file store lives in store-file.ts; the memory store (sessions without a
 * file, `--no-session`) is here and shares the same core, so both behave alike.
 */

import { isSha256Hex, sha256Hex } from "../../session/canonical.ts";
import { cutRanges, encodePartList, PARTS_SUFFIX, type PartList, parsePartList, type SourcePart } from "./parts.ts";

export type FoldStoreKind = "file" | "memory";

export type FoldStoreErrorCode =
	| "integrity"
	| "missing"
	| "invalid-hash"
	| "invalid-session-id"
	| "read-only"
	| "bad-range"
	| "no-space"
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
	/**
	 * Offsets where the source splits into parts that may already be stored
	 * (a child fold's source): the source is then stored as parts, and only
	 * the parts not yet stored are written. Omitted or empty: one whole blob.
	 */
	cuts?: readonly number[];
}

export interface PutResult {
	hash: string;
	bytes: number;
	/** The blob was already stored intact; nothing was written. */
	reused: boolean;
	/** A corrupt stored blob was replaced. */
	repaired: boolean;
	location: string;
	/** Where the corrupt copy was kept, when repaired (comma-separated when parts were replaced too). */
	quarantined?: string;
	/** How the source is stored: one blob, or a part list over blobs. */
	form: "whole" | "parts";
	/** Bytes this put wrote (new parts, the part list, a whole blob); 0 when everything was stored already. */
	written: number;
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
	/**
	 * The parts of a source stored as a part list, in order; undefined when
	 * there is no part list for it (a whole blob, or nothing). A damaged list
	 * is a `FoldIntegrityError`. The parts themselves are not read.
	 */
	partsOf(hash: string): Promise<SourcePart[] | undefined>;
}

/**
 * Raw byte access a store is built on. A name is a validated address
 * (`<hash>`, a blob) or an address and `.parts` (its part list).
 */
export interface BlobBackend {
	readonly kind: FoldStoreKind;
	readonly location: string;
	locate(name: string): string;
	readRaw(name: string): Promise<Uint8Array | undefined>;
	exists(name: string): Promise<boolean>;
	writeRaw(name: string, bytes: Uint8Array): Promise<void>;
	/** Move a corrupt blob or list aside; returns where it went. */
	quarantine(name: string): Promise<string>;
	/** Mark a stored file as just used (its modification time), so gc's grace period spares a reused source. */
	touch(name: string): Promise<void>;
}

/** Name of the part list of the source `hash`. */
export function partsName(hash: string): string {
	return `${hash}${PARTS_SUFFIX}`;
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
	/** A part list that cannot be trusted: named, with what is wrong with it. */
	const badList = (hash: string, problem: string): FoldIntegrityError => {
		const location = backend.locate(partsName(hash));
		return new FoldIntegrityError(
			`The part list ${location} of fold source ${hash} cannot be trusted: ${problem}. Nothing composed from it is served. The session log still holds the exact entries: move the list aside (it is read-only) and peek again to rebuild it from the log.`,
			location,
			hash,
			"",
		);
	};
	const missing = (hash: string, of?: string): FoldStoreError => {
		const location = backend.locate(hash);
		const within = of ? `, a part of fold source ${of} (${backend.locate(partsName(of))}),` : "";
		return new FoldStoreError(
			"missing",
			`No fold blob at ${location}${within}. The session log still holds the exact entries: write the fold's source again with put.`,
			location,
		);
	};
	const readList = async (hash: string): Promise<PartList | undefined> => {
		const raw = await backend.readRaw(partsName(hash));
		if (!raw) return undefined;
		const list = parsePartList(raw, hash);
		if (typeof list === "string") throw badList(hash, list);
		return list;
	};
	/**
	 * Write the bytes of `list`'s parts into `out` from `at`, reading each part
	 * blob verified against its own hash and descending into nested lists.
	 * `path` holds the sources being composed, so a list that names one of its
	 * own ancestors is refused instead of followed.
	 */
	const fill = async (out: Uint8Array, at: number, list: PartList, path: readonly string[]): Promise<void> => {
		let offset = at;
		for (const part of list.parts) {
			if (path.includes(part.hash)) throw badList(list.hash, `part ${part.hash} is one of the sources it is part of`);
			const raw = await backend.readRaw(part.hash);
			if (raw) {
				const actual = sha256Hex(raw);
				if (actual !== part.hash) throw integrity(part.hash, actual, `as a part of fold source ${path[0]}`);
				if (raw.length !== part.bytes)
					throw badList(list.hash, `part ${part.hash} holds ${raw.length} bytes, the list says ${part.bytes}`);
				out.set(raw, offset);
			} else {
				const inner = await readList(part.hash);
				if (!inner) throw missing(part.hash, list.hash);
				if (inner.bytes !== part.bytes)
					throw badList(list.hash, `part ${part.hash} composes ${inner.bytes} bytes, the list says ${part.bytes}`);
				await fill(out, offset, inner, [...path, part.hash]);
			}
			offset += part.bytes;
		}
	};
	/** A source's verified bytes: its whole blob, or its parts composed; the whole checked against `hash` either way. */
	const readVerified = async (hash: string): Promise<Uint8Array> => {
		assertBlobHash(hash);
		const raw = await backend.readRaw(hash);
		if (raw) {
			const actual = sha256Hex(raw);
			if (actual !== hash) throw integrity(hash, actual, "on read");
			return raw;
		}
		const list = await readList(hash);
		if (!list) throw missing(hash);
		const composed = new Uint8Array(list.bytes);
		await fill(composed, 0, list, [hash]);
		const actual = sha256Hex(composed);
		if (actual !== hash)
			throw badList(hash, `its parts are intact but compose bytes hashing to ${actual}, so one of its lists is wrong`);
		return composed;
	};
	const refuseWrite = (hash: string): FoldStoreError =>
		new FoldStoreError(
			"read-only",
			`Fold store ${backend.location} is read-only; blob ${hash} was not written. Open the store writable to add or repair blobs.`,
			backend.locate(hash),
		);
	const stored = async (hash: string): Promise<boolean> =>
		(await backend.exists(hash)) || (await backend.exists(partsName(hash)));
	/**
	 * Store each range of `source` as a part. A part already stored as a blob
	 * (a child's source, a run written before) is read and verified, and
	 * referenced, not written again; a corrupt one is refused, or replaced
	 * when `repair` (the corrupt copy kept aside). A part stored as a part list
	 * itself (an earlier consolidation) is trusted by its existence: it is
	 * verified at every read, and re-reading it here would cost a commit the
	 * whole history again.
	 */
	const writeParts = async (
		source: Uint8Array,
		ranges: readonly [number, number][],
		repair: boolean | undefined,
	): Promise<{ parts: SourcePart[]; written: number; quarantined: string[] }> => {
		const parts: SourcePart[] = [];
		const quarantined: string[] = [];
		let written = 0;
		for (const [start, end] of ranges) {
			const bytes = source.subarray(start, end);
			const hash = sha256Hex(bytes);
			parts.push({ hash, bytes: bytes.length });
			const existing = await backend.readRaw(hash);
			if (existing) {
				const actual = sha256Hex(existing);
				if (actual === hash) continue;
				if (!repair) throw integrity(hash, actual, "while writing a source it is part of; it was left in place");
				if (readOnly) throw refuseWrite(hash);
				quarantined.push(await backend.quarantine(hash));
			} else if (await backend.exists(partsName(hash))) continue;
			if (readOnly) throw refuseWrite(hash);
			await backend.writeRaw(hash, bytes);
			written += bytes.length;
		}
		return { parts, written, quarantined };
	};
	/**
	 * An existing part list checked against the true bytes: every part's range
	 * hashes to the part's address. Its parts are then stored as by
	 * `writeParts` (missing ones written back from those bytes). Undefined
	 * when the list does not describe `source`.
	 */
	const reuseList = async (
		hash: string,
		source: Uint8Array,
		repair: boolean | undefined,
	): Promise<{ written: number; quarantined: string[] } | undefined> => {
		let list: PartList | undefined;
		try {
			list = await readList(hash);
		} catch (error) {
			if (error instanceof FoldIntegrityError) return undefined;
			throw error;
		}
		if (!list || list.bytes !== source.length) return undefined;
		const ranges: [number, number][] = [];
		let start = 0;
		for (const part of list.parts) {
			if (sha256Hex(source.subarray(start, start + part.bytes)) !== part.hash) return undefined;
			ranges.push([start, start + part.bytes]);
			start += part.bytes;
		}
		const { written, quarantined } = await writeParts(source, ranges, repair);
		return { written, quarantined };
	};

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
			const result: PutResult = {
				hash,
				bytes: source.length,
				reused: false,
				repaired: false,
				location,
				form: "whole",
				written: 0,
			};
			const aside: string[] = [];
			const done = (outcome: Partial<PutResult>): PutResult =>
				aside.length === 0
					? { ...result, ...outcome }
					: { ...result, ...outcome, repaired: true, quarantined: aside.join(", ") };
			const existing = await backend.readRaw(hash);
			if (existing) {
				const actual = sha256Hex(existing);
				if (actual === hash) {
					// A reused source may have been unreferenced for long (a dissolved fold folded again): keep gc off it.
					if (!readOnly) await backend.touch(hash);
					return done({ reused: true });
				}
				if (!options.repair) throw integrity(hash, actual, "while writing the same source; it was left in place");
				if (readOnly) throw refuseWrite(hash);
				aside.push(await backend.quarantine(hash));
			} else if (await backend.exists(partsName(hash))) {
				const listLocation = backend.locate(partsName(hash));
				const reused = await reuseList(hash, source, options.repair);
				if (reused) {
					if (!readOnly) await backend.touch(partsName(hash));
					aside.push(...reused.quarantined);
					return done({ location: listLocation, form: "parts", reused: true, written: reused.written });
				}
				if (!options.repair) throw badList(hash, "it does not describe the source being written; it was left in place");
				if (readOnly) throw refuseWrite(hash);
				aside.push(await backend.quarantine(partsName(hash)));
			}
			if (readOnly) throw refuseWrite(hash);
			const ranges = existing ? [] : cutRanges(source.length, options.cuts);
			if (ranges.length < 2) {
				await backend.writeRaw(hash, source);
				return done({ written: source.length });
			}
			// Parts first, the list last: a crash in between leaves unreferenced parts, never a list without them.
			const parts = await writeParts(source, ranges, options.repair);
			aside.push(...parts.quarantined);
			const list = encodePartList({ hash, bytes: source.length, parts: parts.parts });
			await backend.writeRaw(partsName(hash), list);
			return done({ location: backend.locate(partsName(hash)), form: "parts", written: parts.written + list.length });
		},
		async read(hash, options = {}) {
			assertBlobHash(hash);
			const { offset, count } = checkRange(options, backend.locate(hash));
			return sliceBytes(hash, await readVerified(hash), offset, count);
		},
		async has(hash) {
			assertBlobHash(hash);
			return stored(hash);
		},
		async verify(hash) {
			const raw = await readVerified(hash);
			return { hash, bytes: raw.length };
		},
		async partsOf(hash) {
			assertBlobHash(hash);
			return (await readList(hash))?.parts;
		},
	};
}

/**
 * Store a fold's source as the log has it now, cut at its children's
 * sources: the bytes are checked against the planned hash first, so a
 * corrupt stored copy (a flipped byte in a pending mark's blob) is replaced
 * by these verified bytes and kept aside, never reused or served.
 */
export function putFoldSource(
	store: FoldStore,
	hash: string,
	source: { source: Uint8Array; sourceCuts: readonly number[] },
): Promise<PutResult> {
	return store.put(source.source, { expectedHash: hash, cuts: source.sourceCuts, repair: true });
}

export interface MemoryFoldStoreOptions {
	readOnly?: boolean;
	/** Backing map (name → bytes: `<hash>` blobs, `<hash>.parts` lists). Pass one to share blobs between stores or to inspect them in tests. */
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
		locate: (name) => `memory:sha256/${name}`,
		readRaw: async (name) => {
			const stored = blobs.get(name);
			return stored ? stored.slice() : undefined;
		},
		exists: async (name) => blobs.has(name),
		writeRaw: async (name, bytes) => {
			// Copy, so a caller reusing its buffer cannot change a stored blob.
			blobs.set(name, bytes.slice());
		},
		touch: async () => undefined,
		quarantine: async (name) => {
			const corrupt = blobs.get(name);
			if (corrupt) blobs.set(`${name}.corrupt`, corrupt);
			blobs.delete(name);
			return `memory:sha256/${name}.corrupt`;
		},
	};
	return storeOver(backend, options.readOnly ?? false);
}

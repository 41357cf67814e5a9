import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { encodePartList } from "../../../src/fold/store/parts.ts";
import {
	createMemoryFoldStore,
	FoldIntegrityError,
	type FoldStore,
	FoldStoreError,
	utf8SliceBounds,
} from "../../../src/fold/store/store.ts";
import {
	BLOB_FILE_MODE,
	blobRelativePath,
	foldStoreDir,
	openBlobDirectory,
	openFileFoldStore,
	STORE_FREE_SPACE_RESERVE_BYTES,
} from "../../../src/fold/store/store-file.ts";
import { sha256Hex } from "../../../src/session/canonical.ts";

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);
const SESSION_ID = "2026-01-01_abc-123";

let sessionDir = "";
beforeEach(async () => {
	sessionDir = await mkdtemp(join(tmpdir(), "pi-fold-store-"));
});
afterEach(async () => {
	await rm(sessionDir, { recursive: true, force: true });
});

/** A store's raw files behind its back: read, write or remove `<hash>` or `<hash>.parts`. */
interface RawAccess {
	get(name: string): Promise<Uint8Array | undefined>;
	set(name: string, bytes: Uint8Array): Promise<void>;
	remove(name: string): Promise<void>;
}

/** Each store kind, with a way to flip one stored byte behind the store's back. */
const kinds: [
	string,
	() => {
		store: FoldStore;
		corrupt: (hash: string) => Promise<void>;
		reopen: (readOnly: boolean) => FoldStore;
		raw: RawAccess;
	},
][] = [
	[
		"file",
		() => {
			const open = (readOnly: boolean) => openFileFoldStore({ sessionDir, sessionId: SESSION_ID, readOnly });
			const pathOf = (name: string) => join(foldStoreDir(sessionDir, SESSION_ID), blobRelativePath(name));
			return {
				store: open(false),
				reopen: open,
				corrupt: async (hash) => {
					const path = pathOf(hash);
					const bytes = await readFile(path);
					bytes[0] = (bytes[0] ?? 0) ^ 0xff;
					await chmod(path, 0o644);
					await writeFile(path, bytes);
				},
				raw: {
					get: async (name) => readFile(pathOf(name)).catch(() => undefined),
					set: async (name, bytes) => {
						await chmod(pathOf(name), 0o644).catch(() => undefined);
						await writeFile(pathOf(name), bytes);
					},
					remove: async (name) => rm(pathOf(name), { force: true }),
				},
			};
		},
	],
	[
		"memory",
		() => {
			const blobs = new Map<string, Uint8Array>();
			return {
				store: createMemoryFoldStore({ blobs }),
				reopen: (readOnly) => createMemoryFoldStore({ blobs, readOnly }),
				corrupt: async (hash) => {
					const bytes = blobs.get(hash);
					if (bytes) bytes[0] = (bytes[0] ?? 0) ^ 0xff;
				},
				raw: {
					get: async (name) => blobs.get(name),
					set: async (name, bytes) => {
						blobs.set(name, bytes);
					},
					remove: async (name) => {
						blobs.delete(name);
					},
				},
			};
		},
	],
];

describe.each(kinds)("%s fold store", (kind, make) => {
	it("round-trips exact bytes under their SHA-256 and says what kind it is", async () => {
		const { store } = make();
		const source = encode('{"id":"e1"}\n{"id":"e2","text":"héllo"}\n');
		const put = await store.put(source);
		expect(put).toMatchObject({ hash: sha256Hex(source), bytes: source.length, reused: false, repaired: false });
		const read = await store.read(put.hash);
		expect(read.bytes).toEqual(source);
		expect(read).toMatchObject({ complete: true, offset: 0, end: source.length, nextOffset: undefined });
		expect(store.kind).toBe(kind);
		expect(await store.verify(put.hash)).toEqual({ hash: put.hash, bytes: source.length });
	});

	it("reuses an intact blob when the same content is written again", async () => {
		const { store } = make();
		const first = await store.put(encode("same"));
		const second = await store.put(encode("same"));
		expect(second).toMatchObject({ hash: first.hash, reused: true });
	});

	it("refuses a put whose bytes do not match the expected hash", async () => {
		const { store } = make();
		const wrong = sha256Hex("other");
		await expect(store.put(encode("mine"), { expectedHash: wrong })).rejects.toBeInstanceOf(FoldIntegrityError);
		expect(await store.has(sha256Hex("mine"))).toBe(false);
	});

	it("throws a named integrity error when a stored byte flips", async () => {
		const { store, corrupt } = make();
		const { hash } = await store.put(encode("precious source"));
		await corrupt(hash);
		const error = await store.read(hash).catch((caught: unknown) => caught);
		expect(error).toBeInstanceOf(FoldIntegrityError);
		expect(error).toMatchObject({ code: "integrity", expectedHash: hash, location: store.locate(hash) });
		expect((error as Error).message).toContain(store.locate(hash));
		expect((error as Error).message).toContain("move the corrupt file aside");
		await expect(store.verify(hash)).rejects.toBeInstanceOf(FoldIntegrityError);
	});

	it("refuses to reuse a corrupt blob, and repairs it only when asked", async () => {
		const { store, corrupt } = make();
		const source = encode("precious source");
		const { hash } = await store.put(source);
		await corrupt(hash);
		await expect(store.put(source)).rejects.toMatchObject({ code: "integrity" });
		const repaired = await store.put(source, { repair: true });
		expect(repaired).toMatchObject({ repaired: true, quarantined: `${store.locate(hash)}.corrupt` });
		expect((await store.read(hash)).bytes).toEqual(source);
	});

	it("reports a missing blob by name", async () => {
		const { store } = make();
		const hash = sha256Hex("never written");
		await expect(store.read(hash)).rejects.toMatchObject({ code: "missing", location: store.locate(hash) });
		expect(await store.has(hash)).toBe(false);
	});

	it("refuses anything but a hex SHA-256 address before any I/O", async () => {
		const { store } = make();
		for (const bad of ["../../etc/passwd", `${"a".repeat(63)}/`, "A".repeat(64), "f-0123456789ab", ""]) {
			await expect(store.read(bad)).rejects.toMatchObject({ code: "invalid-hash" });
			await expect(store.has(bad)).rejects.toMatchObject({ code: "invalid-hash" });
			expect(() => store.locate(bad)).toThrow(FoldStoreError);
		}
	});

	it("in read-only mode reads and reuses, but never writes", async () => {
		const { store, reopen } = make();
		const { hash } = await store.put(encode("kept"));
		const readOnly = reopen(true);
		expect(readOnly.readOnly).toBe(true);
		expect((await readOnly.read(hash)).text).toBe("kept");
		expect(await readOnly.put(encode("kept"))).toMatchObject({ reused: true });
		await expect(readOnly.put(encode("new"))).rejects.toMatchObject({ code: "read-only" });
		expect(await readOnly.has(sha256Hex("new"))).toBe(false);
	});

	it("slices by UTF-8 bytes on character boundaries and pages to the end", async () => {
		const { store } = make();
		const text = "aé😀b€c";
		const { hash } = await store.put(encode(text));
		let offset: number | undefined = 0;
		const pages: string[] = [];
		while (offset !== undefined) {
			const page = await store.read(hash, { offset, bytes: 3 });
			expect(page.end - page.offset).toBeLessThanOrEqual(4);
			pages.push(page.text);
			offset = page.nextOffset;
		}
		expect(pages.join("")).toBe(text);
		expect(pages).toEqual(["aé", "😀", "b", "€", "c"]);
	});

	describe("a source stored as parts", () => {
		const child = encode('{"id":"c1","text":"the child\'s source"}\n{"id":"c2"}\n');
		const before = encode('{"id":"u1","text":"before"}\n');
		const after = encode('{"id":"u2","text":"after é"}\n');
		const whole = new Uint8Array([...before, ...child, ...after]);
		const cuts = [before.length, before.length + child.length];

		it("keeps a stored child's source once: only the new runs and the list are written", async () => {
			const { store, raw } = make();
			const stored = await store.put(child);
			const put = await store.put(whole, { cuts });
			expect(put).toMatchObject({ hash: sha256Hex(whole), form: "parts", reused: false });
			const list = await raw.get(`${put.hash}.parts`);
			expect(put.written).toBe(before.length + after.length + (list?.length ?? Number.NaN));
			expect(await raw.get(put.hash)).toBeUndefined();
			expect(await store.partsOf(put.hash)).toEqual([
				{ hash: sha256Hex(before), bytes: before.length },
				{ hash: stored.hash, bytes: child.length },
				{ hash: sha256Hex(after), bytes: after.length },
			]);
			expect((await store.read(put.hash)).bytes).toEqual(whole);
			expect(await store.has(put.hash)).toBe(true);
			expect(await store.verify(put.hash)).toEqual({ hash: put.hash, bytes: whole.length });
			expect(await store.put(whole, { cuts })).toMatchObject({ reused: true, written: 0, form: "parts" });
		});

		it("composes nested lists, and slices across part boundaries as the whole would", async () => {
			const { store } = make();
			const inner = await store.put(whole, { cuts });
			const outer = new Uint8Array([...whole, ...encode('{"id":"u3"}\n')]);
			const put = await store.put(outer, { cuts: [whole.length] });
			expect((await store.partsOf(put.hash))?.[0]).toEqual({ hash: inner.hash, bytes: whole.length });
			for (const [offset, bytes] of [
				[0, 10],
				[before.length - 3, 8],
				[whole.length - 5, 9],
			] as const) {
				const slice = await store.read(put.hash, { offset, bytes });
				expect(slice.bytes).toEqual(outer.slice(slice.offset, slice.end));
				expect(slice.end - slice.offset).toBeLessThanOrEqual(bytes);
			}
		});

		it("names a missing part, and a put of the true bytes writes it back", async () => {
			const { store, raw } = make();
			const put = await store.put(whole, { cuts });
			const run = sha256Hex(after);
			await raw.remove(run);
			const error = await store.read(put.hash).catch((caught: unknown) => caught);
			expect(error).toMatchObject({ code: "missing", location: store.locate(run) });
			expect((error as Error).message).toContain(`a part of fold source ${put.hash}`);
			expect(await store.put(whole, { cuts })).toMatchObject({ reused: true, written: after.length });
			expect((await store.read(put.hash)).bytes).toEqual(whole);
		});

		it("refuses a corrupt part by name, and replaces it only with the true bytes when asked", async () => {
			const { store, corrupt } = make();
			const put = await store.put(whole, { cuts });
			const run = sha256Hex(before);
			await corrupt(run);
			const error = await store.read(put.hash).catch((caught: unknown) => caught);
			expect(error).toBeInstanceOf(FoldIntegrityError);
			expect(error).toMatchObject({ expectedHash: run, location: store.locate(run) });
			await expect(store.put(whole, { cuts })).rejects.toBeInstanceOf(FoldIntegrityError);
			const repaired = await store.put(whole, { cuts, repair: true });
			expect(repaired).toMatchObject({ repaired: true, quarantined: `${store.locate(run)}.corrupt` });
			expect((await store.read(put.hash)).bytes).toEqual(whole);
		});

		it("refuses a damaged list, a list naming the wrong part, and a list naming itself", async () => {
			const { store, raw } = make();
			const put = await store.put(whole, { cuts });
			const name = `${put.hash}.parts`;
			const list = new TextDecoder().decode(await raw.get(name));
			const flip = (text: string) =>
				text.replace(/^part ([0-9a-f])/m, (_, d: string) => `part ${d === "0" ? "1" : "0"}`);
			await raw.set(name, encode(flip(list)));
			await expect(store.read(put.hash)).rejects.toThrow(/check line does not match/);
			await expect(store.partsOf(put.hash)).rejects.toBeInstanceOf(FoldIntegrityError);
			await expect(store.put(whole, { cuts })).rejects.toBeInstanceOf(FoldIntegrityError);
			const rewritten = await store.put(whole, { cuts, repair: true });
			expect(rewritten).toMatchObject({ repaired: true, form: "parts" });
			expect((await store.read(put.hash)).bytes).toEqual(whole);

			// A well-formed list whose parts are real blobs but compose other bytes.
			const other = await store.put(encode('{"id":"zz"}\n'));
			const forged = encodePartList({
				hash: put.hash,
				bytes: whole.length,
				parts: [
					{ hash: sha256Hex(before), bytes: before.length },
					{ hash: sha256Hex(child), bytes: child.length },
					{ hash: other.hash, bytes: after.length },
				],
			});
			await raw.set(name, forged);
			await expect(store.read(put.hash)).rejects.toThrow(/holds \d+ bytes, the list says/);
			const cyclic = encodePartList({
				hash: put.hash,
				bytes: whole.length * 2,
				parts: [
					{ hash: put.hash, bytes: whole.length },
					{ hash: put.hash, bytes: whole.length },
				],
			});
			await raw.set(name, cyclic);
			await expect(store.read(put.hash)).rejects.toThrow(/is one of the sources it is part of/);
		});

		it("in read-only mode composes and reuses, but writes no missing part", async () => {
			const { store, reopen, raw } = make();
			const put = await store.put(whole, { cuts });
			const readOnly = reopen(true);
			expect((await readOnly.read(put.hash)).bytes).toEqual(whole);
			expect(await readOnly.put(whole, { cuts })).toMatchObject({ reused: true, written: 0 });
			await raw.remove(sha256Hex(after));
			await expect(readOnly.put(whole, { cuts })).rejects.toMatchObject({ code: "read-only" });
		});
	});

	it("rejects negative or fractional ranges", async () => {
		const { store } = make();
		const { hash } = await store.put(encode("abc"));
		await expect(store.read(hash, { offset: -1 })).rejects.toMatchObject({ code: "bad-range" });
		await expect(store.read(hash, { bytes: 1.5 })).rejects.toMatchObject({ code: "bad-range" });
		expect((await store.read(hash, { offset: 10 })).text).toBe("");
	});
});

describe("UTF-8 slice bounds", () => {
	const bytes = encode("a😀b"); // a | f0 9f 98 80 | b

	it("moves a start inside a character forward and an end inside one back", () => {
		expect(utf8SliceBounds(bytes, 2, 10)).toEqual({ start: 5, end: 6 });
		expect(utf8SliceBounds(bytes, 0, 3)).toEqual({ start: 0, end: 1 });
	});

	it("returns one whole character when the request is smaller than it", () => {
		expect(utf8SliceBounds(bytes, 1, 1)).toEqual({ start: 1, end: 5 });
		expect(utf8SliceBounds(bytes, 1, 0)).toEqual({ start: 1, end: 1 });
	});
});

describe("file fold store on disk", () => {
	it("writes <sessionDir>/<sessionId>.pi-fold/sha256/<ab>/<hash>, mode 0444, no temp files", async () => {
		const store = openFileFoldStore({ sessionDir, sessionId: SESSION_ID });
		const { hash, location } = await store.put(encode("blob"));
		const expected = join(sessionDir, `${SESSION_ID}.pi-fold`, "sha256", hash.slice(0, 2), hash);
		expect(location).toBe(expected);
		expect(store.location).toBe(join(sessionDir, `${SESSION_ID}.pi-fold`));
		expect((await stat(expected)).mode & 0o777).toBe(BLOB_FILE_MODE);
		expect(await readdir(join(sessionDir, `${SESSION_ID}.pi-fold`, "sha256", hash.slice(0, 2)))).toEqual([hash]);
	});

	it("marks a reused source as just used, so gc's grace period spares it until its line lands", async () => {
		const store = openFileFoldStore({ sessionDir, sessionId: SESSION_ID });
		const { hash, location } = await store.put(encode("folded again"));
		const old = new Date(Date.now() - 24 * 60 * 60_000);
		await utimes(location, old, old);
		expect(await store.put(encode("folded again"))).toMatchObject({ reused: true });
		expect((await stat(location)).mtimeMs).toBeGreaterThan(Date.now() - 60_000);
		expect((await stat(location)).mode & 0o777).toBe(BLOB_FILE_MODE);
		expect(hash).toBe(sha256Hex("folded again"));
	});

	it("refuses a write that would leave the disk under the reserve, naming it, and writes nothing", async () => {
		const { statfs } = await import("node:fs/promises");
		const info = await statfs(sessionDir);
		const free = info.bavail * info.bsize;
		// A reserve far above what this disk has free: every write would cut into Pi's room. (Just above
		// would race: other processes free blocks between this statfs and the store's own.)
		const store = openBlobDirectory({ root: join(sessionDir, "tight"), reserveBytes: free + 2 ** 40 });
		const error = await store.put(encode("a source")).catch((caught: unknown) => caught);
		expect(error).toMatchObject({ code: "no-space" });
		expect((error as Error).message).toMatch(
			/the disk has \d+ bytes free, and pi-fold leaves at least \d+ free for Pi's own session log/,
		);
		expect(await readdir(sessionDir)).toEqual([]);
		const roomy = openBlobDirectory({ root: join(sessionDir, "roomy"), reserveBytes: STORE_FREE_SPACE_RESERVE_BYTES });
		expect(await roomy.put(encode("a source"))).toMatchObject({ reused: false });
	});

	it("creates nothing until the first write, and nothing for a refused address", async () => {
		const store = openFileFoldStore({ sessionDir, sessionId: SESSION_ID });
		await expect(store.read("../../../etc/passwd")).rejects.toMatchObject({ code: "invalid-hash" });
		await expect(store.read(sha256Hex("x"))).rejects.toMatchObject({ code: "missing" });
		expect(await readdir(sessionDir)).toEqual([]);
	});

	it("refuses a session id that could name another directory", () => {
		for (const bad of ["../escape", "a/b", "..", ".hidden", ""]) {
			expect(() => openFileFoldStore({ sessionDir, sessionId: bad })).toThrow(
				expect.objectContaining({ code: "invalid-session-id" }),
			);
		}
	});

	it("reports a blob path it cannot read as an io error", async () => {
		const store = openFileFoldStore({ sessionDir, sessionId: SESSION_ID });
		const hash = sha256Hex("blocked");
		await mkdir(join(foldStoreDir(sessionDir, SESSION_ID), blobRelativePath(hash)), { recursive: true });
		await expect(store.read(hash)).rejects.toMatchObject({ code: "io" });
		await expect(store.put(encode("blocked"))).rejects.toMatchObject({ code: "io" });
	});
});

import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
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
	openFileFoldStore,
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

/** Each store kind, with a way to flip one stored byte behind the store's back. */
const kinds: [
	string,
	() => { store: FoldStore; corrupt: (hash: string) => Promise<void>; reopen: (readOnly: boolean) => FoldStore },
][] = [
	[
		"file",
		() => {
			const open = (readOnly: boolean) => openFileFoldStore({ sessionDir, sessionId: SESSION_ID, readOnly });
			return {
				store: open(false),
				reopen: open,
				corrupt: async (hash) => {
					const path = join(foldStoreDir(sessionDir, SESSION_ID), blobRelativePath(hash));
					const bytes = await readFile(path);
					bytes[0] = (bytes[0] ?? 0) ^ 0xff;
					await chmod(path, 0o644);
					await writeFile(path, bytes);
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

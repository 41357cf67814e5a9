import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { openFileFoldStore } from "../../../src/fold/store/store-file.ts";

/** The error the next rename of a temp file into place throws. */
let renameError = { message: "simulated rename failure", code: "EIO" };

// Make the rename into place fail, as a failing disk or a racing cleaner would.
vi.mock("node:fs/promises", async (importOriginal) => {
	const actual = await importOriginal<typeof import("node:fs/promises")>();
	return {
		...actual,
		rename: vi.fn(async (from: string, to: string) => {
			if (from.endsWith(".tmp")) throw Object.assign(new Error(renameError.message), { code: renameError.code });
			return actual.rename(from, to);
		}),
	};
});

let sessionDir = "";
beforeEach(async () => {
	sessionDir = await mkdtemp(join(tmpdir(), "pi-fold-store-fail-"));
});
afterEach(async () => {
	await rm(sessionDir, { recursive: true, force: true });
});

describe("file fold store write failure", () => {
	it("reports an io error naming the blob and removes its temp file", async () => {
		const store = openFileFoldStore({ sessionDir, sessionId: "s1" });
		const error = await store.put(new TextEncoder().encode("lost")).catch((caught: unknown) => caught);
		expect(error).toMatchObject({ code: "io" });
		expect((error as Error).message).toContain("simulated rename failure");
		const shards = await readdir(join(sessionDir, "s1.pi-fold", "sha256"));
		expect(shards).toHaveLength(1);
		expect(await readdir(join(sessionDir, "s1.pi-fold", "sha256", shards[0] ?? ""))).toEqual([]);
	});

	it("names a disk that ran out under the write no-space, and a directory it may not write read-only", async () => {
		const store = openFileFoldStore({ sessionDir, sessionId: "s2" });
		renameError = { message: "ENOSPC: no space left on device", code: "ENOSPC" };
		await expect(store.put(new TextEncoder().encode("full"))).rejects.toMatchObject({
			code: "no-space",
			message: expect.stringMatching(/the disk is full .*free some space, and the fold can be made again/),
		});
		renameError = { message: "EROFS: read-only file system", code: "EROFS" };
		await expect(store.put(new TextEncoder().encode("full"))).rejects.toMatchObject({ code: "read-only" });
		renameError = { message: "simulated rename failure", code: "EIO" };
	});
});

/**
 * Input guards of session loading (issue 11, break 9): parent-id cycles, a
 * size bound and a line-by-line reader, a nesting bound, malformed fields
 * skipped as bad lines, a UTF-8 BOM (refused, as Pi refuses it), a symlink
 * loop. Each case aborted, looped or misreported before the guard.
 */

import { mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.ts";
import { canonicalJson } from "../../src/session/canonical.ts";
import {
	jsonNestingDepth,
	loadSessionFile,
	loadSessionText,
	MAX_JSON_NESTING,
	SESSION_MAX_BYTES,
} from "../../src/session/load.ts";
import { BranchBuilder, sessionHeader, toJsonl } from "../fixtures/session.ts";

const dir = mkdtempSync(join(tmpdir(), "pi-fold-guards-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
	const path = join(dir, name);
	writeFileSync(path, text);
	return path;
}

/** A two-message session as JSONL lines (header first). */
function lines(): Record<string, unknown>[] {
	const branch = new BranchBuilder();
	branch.user("hello");
	branch.assistant("hi");
	branch.user("again");
	return toJsonl(branch.entries)
		.trimEnd()
		.split("\n")
		.map((line) => JSON.parse(line) as Record<string, unknown>);
}
const jsonl = (rows: readonly unknown[]) => `${rows.map((row) => JSON.stringify(row)).join("\n")}\n`;

describe("parent-id cycles", () => {
	it("cuts a cycle at its earliest entry, names it with the line, and never loops", () => {
		const rows = lines();
		// e1 → e3 → e2 → e1: e1's parent points forward, which Pi never writes.
		(rows[1] as Record<string, unknown>).parentId = "e3";
		const session = loadSessionText(jsonl(rows));
		expect(session.diagnostics).toEqual([expect.objectContaining({ line: 2, kind: "parent-cycle", repaired: true })]);
		expect(session.diagnostics[0]?.message).toBe(
			'line 2: parent ids loop ("e1" → "e3" → "e2" → back); entry "e1" read as a root',
		);
		expect(session.manager.getBranch().map((entry) => entry.id)).toEqual(["e1", "e2", "e3"]);
	});

	it("a self-parent and a report over a cycle finish", async () => {
		const rows = lines();
		(rows[2] as Record<string, unknown>).parentId = "e2";
		const path = file("self-cycle.jsonl", jsonl(rows));
		const result = await runCli(["report", "--no-replay", path]);
		expect(result.code).toBe(0);
		expect(result.stdout).toMatch(
			/^Problems: 1 line \(0 skipped, 1 repaired\)\n\s+line 3: parent ids loop \("e2" → back\)/,
		);
	});
});

describe("size bound and line-by-line reading", () => {
	it("refuses a 1 GB file by its size, naming the limit and the next step, without reading it", () => {
		const path = join(dir, "huge.jsonl");
		writeFileSync(path, "");
		truncateSync(path, 1024 * 1024 * 1024);
		const before = process.memoryUsage().rss;
		expect(() => loadSessionFile(path)).toThrowError(
			expect.objectContaining({
				code: "too-large",
				message: expect.stringMatching(/1024 MB is over the 256 MB pi-fold reads.*head -n 100000/),
			}),
		);
		expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
		expect(SESSION_MAX_BYTES).toBe(256 * 1024 * 1024);
	});

	it("honours a smaller bound", () => {
		const path = file("small.jsonl", jsonl(lines()));
		expect(() => loadSessionFile(path, { maxBytes: 100 })).toThrowError(expect.objectContaining({ code: "too-large" }));
	});

	it("reads lines and multibyte characters that straddle chunk boundaries exactly as the whole text", () => {
		const branch = new BranchBuilder();
		// Lines of 0.7 MB of two- and four-byte characters cross every 1 MiB chunk boundary at odd offsets.
		for (let i = 0; i < 4; i++) branch.user(`${"é".repeat(350_000 + i)}${"😀".repeat(i + 1)}`);
		const text = toJsonl(branch.entries);
		const path = file("straddle.jsonl", `${text}{"type":"message","id":"e9"`);
		const fromFile = loadSessionFile(path);
		const fromText = loadSessionText(`${text}{"type":"message","id":"e9"`);
		expect(canonicalJson(fromFile.entries)).toBe(canonicalJson(fromText.entries));
		expect(fromFile.entries).toHaveLength(4);
		expect(fromFile.diagnostics).toEqual([expect.objectContaining({ line: 6, kind: "truncated-last-line" })]);
	});
});

describe("nesting bound", () => {
	const deep = (levels: number) => `${"[".repeat(levels)}1${"]".repeat(levels)}`;

	it("skips a line with 100k-deep tool arguments, and the report runs", async () => {
		const rows = lines().map((row) => JSON.stringify(row));
		const call = { type: "toolCall", id: "c1", name: "bash", arguments: { x: "@DEEP@" } };
		const entry = JSON.stringify({
			type: "message",
			id: "e4",
			parentId: "e3",
			timestamp: "2026-01-01T00:00:00.000Z",
			message: { role: "assistant", content: [call], stopReason: "toolUse", timestamp: 0 },
		}).replace('"@DEEP@"', deep(100_000));
		const path = file("deep.jsonl", `${[...rows, entry].join("\n")}\n`);
		const session = loadSessionFile(path);
		expect(session.diagnostics).toEqual([
			{
				line: 5,
				kind: "too-deep",
				message: `line 5: message JSON nested more than ${MAX_JSON_NESTING} levels deep (skipped: Pi cannot use it either)`,
			},
		]);
		expect((await runCli(["report", "--no-replay", path])).code).toBe(0);
	});

	it("counts depth without recursion, ignoring brackets inside strings", () => {
		expect(jsonNestingDepth('{"a":[1,{"b":"[[[[\\"]]"}]}')).toBe(3);
		expect(jsonNestingDepth(deep(200_000))).toBe(200_000);
		expect(jsonNestingDepth(deep(200_000), 10)).toBe(11);
	});

	it("keeps another extension's custom entry at any depth, as Pi does, so the branch is not cut at it", () => {
		const rows = lines().map((row) => JSON.stringify(row));
		const custom = `{"type":"custom","customType":"other","id":"e4","parentId":"e3","timestamp":"2026-01-01T00:00:00.000Z","data":${deep(100_000)}}`;
		const after = JSON.stringify({
			type: "message",
			id: "e5",
			parentId: "e4",
			timestamp: "2026-01-01T00:00:00.000Z",
			message: { role: "user", content: "after", timestamp: 0 },
		});
		const session = loadSessionFile(file("deep-custom.jsonl", `${[...rows, custom, after].join("\n")}\n`));
		expect(session.diagnostics).toEqual([]);
		expect(session.manager.getBranch().map((entry) => entry.id)).toEqual(["e1", "e2", "e3", "e4", "e5"]);
	});

	it("the canonical writer has bytes for any depth JSON.parse reads, identical to JSON.stringify for sorted input", () => {
		for (const levels of [1, 1_024, 100_000]) {
			const text = deep(levels);
			expect(canonicalJson(JSON.parse(text))).toBe(text);
		}
		expect(canonicalJson({ b: [1, { d: null, c: "x" }], a: undefined })).toBe('{"b":[1,{"c":"x","d":null}]}');
		expect(canonicalJson([undefined, () => 1, { toJSON: () => ({ z: 1, y: [Number.NaN] }) }])).toBe(
			'[null,null,{"y":[null],"z":1}]',
		);
		expect(canonicalJson(undefined)).toBe("null");
	});
});

describe("malformed fields are bad lines, not aborts", () => {
	it.each([
		[
			"message: null",
			(rows: Record<string, unknown>[]) => Object.assign(rows[2] as object, { message: null }),
			3,
			"message is null, not an object",
		],
		[
			"content: [null]",
			(rows: Record<string, unknown>[]) => Object.assign((rows[2] as { message: object }).message, { content: [null] }),
			3,
			"message.content[0] is null, not a typed part",
		],
		[
			"message.role: 5",
			(rows: Record<string, unknown>[]) => Object.assign((rows[3] as { message: object }).message, { role: 5 }),
			4,
			"message.role is not a string",
		],
	] as const)("%s: skipped with its line number, the report still runs", async (_name, tamper, line, problem) => {
		const rows = lines();
		tamper(rows);
		const path = file(`field-${line}-${problem.length}.jsonl`, jsonl(rows));
		const session = loadSessionFile(path);
		expect(session.diagnostics).toEqual([
			{ line, kind: "bad-field", message: `line ${line}: message entry: ${problem} (skipped)` },
		]);
		const result = await runCli(["report", "--no-replay", path]);
		expect(result.code).toBe(0);
		expect(result.stdout).toContain(`line ${line}: message entry: ${problem} (skipped)`);
	});

	it("cwd: 5 in the header is named and ignored; the session loads", async () => {
		const rows = lines();
		(rows[0] as Record<string, unknown>).cwd = 5;
		const path = file("cwd.jsonl", jsonl(rows));
		const session = loadSessionFile(path);
		expect(session.diagnostics).toEqual([
			expect.objectContaining({
				line: 1,
				kind: "bad-field",
				message: "line 1: session header cwd is number 5, not a path (ignored)",
			}),
		]);
		expect(session.entries).toHaveLength(3);
		expect((await runCli(["report", "--no-replay", path])).code).toBe(0);
	});
});

describe("one very long line", () => {
	it("is searched for line ends once: characters scanned stay linear in its size (the reader re-split it per chunk)", () => {
		const size = 8 * 1024 * 1024;
		const header = JSON.stringify(sessionHeader());
		const entry = JSON.stringify({ type: "custom", customType: "x", id: "e1", parentId: null, data: "y".repeat(size) });
		const path = file("long-line.jsonl", `${header}\n${entry}\n`);
		// Every character the reader searches for a newline passes one of these, on the string it searches.
		let scanned = 0;
		const split = String.prototype.split;
		const indexOf = String.prototype.indexOf;
		String.prototype.split = function (this: string, ...args: Parameters<typeof split>) {
			scanned += this.length;
			return split.apply(this, args);
		} as typeof split;
		String.prototype.indexOf = function (this: string, ...args: Parameters<typeof indexOf>) {
			scanned += this.length;
			return indexOf.apply(this, args);
		};
		let entries: number;
		try {
			entries = loadSessionFile(path).entries.length;
		} finally {
			String.prototype.split = split;
			String.prototype.indexOf = indexOf;
		}
		expect(entries).toBe(1);
		// Before: the pending line was split again with every 1 MiB chunk, 4.5 times its size here (quadratic).
		expect(scanned).toBeLessThan(2 * size);
	});
});

describe("file-level guards", () => {
	it("refuses a file that starts with a UTF-8 byte order mark, as Pi does, and says so (test/e2e/host-quirks pins Pi)", async () => {
		const text = `\uFEFF${jsonl(lines())}`;
		expect(() => loadSessionText(text)).toThrowError(expect.objectContaining({ code: "byte-order-mark" }));
		const path = file("bom.jsonl", text);
		for (const command of ["report", "verify"]) {
			const result = await runCli([command, path]);
			expect(result.code).toBe(1);
			expect(result.stderr).toContain("starts with a UTF-8 byte order mark (BOM), so Pi 1.6.0 refuses to open it");
			expect(result.stderr).toContain("sed -i '1s/^\\xEF\\xBB\\xBF//'");
		}
	});

	it("names a symlink loop (ELOOP), not a missing file", async () => {
		const a = join(dir, "loop-a.jsonl");
		const b = join(dir, "loop-b.jsonl");
		symlinkSync(b, a);
		symlinkSync(a, b);
		expect(() => loadSessionFile(a)).toThrowError(expect.objectContaining({ code: "symlink-loop" }));
		const result = await runCli(["report", a]);
		expect(result.code).toBe(1);
		expect(result.stderr).toMatch(/symbolic link loop \(ELOOP\).*Pass the real session file's path/);
	});
});

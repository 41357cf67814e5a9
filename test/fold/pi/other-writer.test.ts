/** Noticing another process appending to the session file, from either side (issue 18, item 14). */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_SCAN_BYTES, OtherWriterWatch, TAIL_READ_BYTES } from "../../../src/fold/pi/other-writer.ts";

const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const line = (entry: object) => `${JSON.stringify(entry)}\n`;

/** One Pi process on the file: the ids its session manager knows (loaded at open, or written) and its watch. */
class Writer {
	readonly known = new Set<string>();
	readonly watch = new OtherWriterWatch();
	private readonly file: string;
	constructor(file: string) {
		this.file = file;
	}
	open(loaded: string[]): this {
		for (const id of loaded) this.known.add(id);
		this.watch.start(this.file);
		return this;
	}
	write(id: string, text = "x"): void {
		this.known.add(id);
		writeFileSync(this.file, line({ type: "message", id, text }), { flag: "a" });
	}
	/** The boundary check: the first entry appended since the last look that this process does not know. */
	check(): string | undefined {
		return this.watch.foreignSince(this.file, (id) => this.known.has(id));
	}
}

function sessionFile(): string {
	const dir = mkdtempSync(join(tmpdir(), "pi-fold-writer-"));
	dirs.push(dir);
	const file = join(dir, "s.jsonl");
	writeFileSync(file, line({ type: "session", id: "s1" }) + line({ type: "message", id: "e1" }));
	return file;
}

describe("another writer", () => {
	it("both processes warn: each names the other's entry even when it wrote after it", () => {
		const file = sessionFile();
		const first = new Writer(file).open(["e1"]);
		first.write("a1");
		expect(first.check()).toBeUndefined();
		// The second process opens the file after the first wrote, and appends.
		const second = new Writer(file).open(["e1", "a1"]);
		second.write("b1");
		expect(second.check()).toBeUndefined();
		// The first writes its next turn before its boundary check: the file's last line is its own again,
		// which a check of the last line alone took for "no other writer".
		first.write("a2");
		expect(first.check()).toBe("b1");
		// The second's next boundary sees the first's new entry, though it, too, wrote after it.
		second.write("b2");
		expect(second.check()).toBe("a2");
	});

	it("one writer alone is never warned, across many looks and a line still being written", () => {
		const file = sessionFile();
		const only = new Writer(file).open(["e1"]);
		for (let i = 0; i < 5; i++) {
			only.write(`a${i}`);
			expect(only.check()).toBeUndefined();
		}
		// Half a line (a write in progress) is read at the next look, once whole.
		writeFileSync(file, '{"type":"message","id":"c', { flag: "a" });
		expect(only.check()).toBeUndefined();
		only.known.add("c1");
		writeFileSync(file, '1"}\n', { flag: "a" });
		expect(only.check()).toBeUndefined();
		writeFileSync(file, line({ type: "message", id: "z9" }), { flag: "a" });
		expect(only.check()).toBe("z9");
	});

	it("a missing file names nothing; a reopened watch on the same file keeps its place", () => {
		const file = sessionFile();
		const watch = new OtherWriterWatch();
		watch.start(join(file, "..", "missing.jsonl"));
		expect(watch.foreignSince(join(file, "..", "missing.jsonl"), () => false)).toBeUndefined();
		const writer = new Writer(file).open(["e1"]);
		writeFileSync(file, line({ type: "message", id: "theirs" }), { flag: "a" });
		// A `/tree` move or reload starts the watch again on the same file: the unread foreign line is still read.
		writer.watch.start(file);
		expect(writer.check()).toBe("theirs");
	});

	it("a huge append is scanned from its newest bytes only", () => {
		const file = sessionFile();
		const writer = new Writer(file).open(["e1"]);
		writeFileSync(file, line({ type: "message", id: "theirs" }), { flag: "a" });
		writer.write("big", "y".repeat(MAX_SCAN_BYTES + TAIL_READ_BYTES));
		writer.write("mine");
		// The foreign line is older than the scan window; the cut line at its start is skipped, not misread.
		expect(writer.check()).toBeUndefined();
		writeFileSync(file, line({ type: "message", id: "later" }), { flag: "a" });
		expect(writer.check()).toBe("later");
	});
});

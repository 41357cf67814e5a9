/** Noticing another process appending to the session file. */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { foreignTail, lastEntryId } from "../../../src/fold/pi/other-writer.ts";

const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const line = (entry: object) => `${JSON.stringify(entry)}\n`;

describe("another writer", () => {
	it("reads the id of the last complete line, ignoring the header and a cut first line", () => {
		expect(lastEntryId(line({ type: "session", id: "s1" }))).toBeUndefined();
		expect(lastEntryId(`tial":1}\n${line({ type: "message", id: "e2" })}`)).toBe("e2");
		expect(lastEntryId(`${line({ id: "e1" })}{"id":"e2","trunc`)).toBeUndefined();
	});

	it("names an entry at the end of the file that this process does not know", () => {
		const dir = mkdtempSync(join(tmpdir(), "pi-fold-writer-"));
		dirs.push(dir);
		const file = join(dir, "s.jsonl");
		writeFileSync(file, line({ type: "session", id: "s1" }) + line({ type: "message", id: "mine" }));
		const known = (id: string) => id === "mine";
		expect(foreignTail(file, known)).toBeUndefined();
		writeFileSync(file, line({ type: "message", id: "theirs" }), { flag: "a" });
		expect(foreignTail(file, known)).toBe("theirs");
		expect(foreignTail(join(dir, "missing.jsonl"), known)).toBeUndefined();
	});
});

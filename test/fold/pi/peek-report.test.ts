/**
 * `/context peek` for a person shows the whole source, a page at a time:
 * every entry whole (a long one goes on over pages and says so), each page
 * about PEEK_PAGE_CHARS, and `pageShowing` finds the page a search hit is on.
 */

import { describe, expect, it } from "vitest";
import {
	formatPeekReport,
	PEEK_PAGE_CHARS,
	pageShowing,
	peekSourcePages,
	sourceEntryLines,
} from "../../../src/fold/pi/peek-report.ts";

const entry = (id: string, role: "user" | "assistant", text: string) => ({
	id,
	type: "message",
	message: { role, content: [{ type: "text", text }] },
});
const result = (id: string, text: string) => ({
	id,
	type: "message",
	message: { role: "toolResult", toolName: "bash", toolCallId: "c", isError: false, content: [{ type: "text", text }] },
});
/** A successful peek's text: header lines, a blank line, one canonical JSON entry per line. */
const peekText = (entries: object[]) =>
	`Fold f-1 (chapter), source sha256 ${"a".repeat(64)} verified.\nBytes 0–1 of 1.\n\n${entries.map((item) => JSON.stringify(item)).join("\n")}`;

describe("a peek's source for a person", () => {
	it("shows an entry whole: a short one on its head line, a longer one line by line under it", () => {
		expect(sourceEntryLines(entry("e1", "user", "hello there") as never)).toEqual(["e1 user: hello there"]);
		expect(sourceEntryLines(result("e2", "one\ntwo\nthree\n") as never)).toEqual([
			"e2 bash result:",
			"  one",
			"  two",
			"  three",
		]);
	});

	it("pages by characters, goes on with a long entry over pages, and names the next page", () => {
		const long = `START ${"x".repeat(2 * PEEK_PAGE_CHARS)} FACT-42 END`;
		const text = peekText([entry("e1", "user", "go"), result("e2", long), entry("e3", "assistant", "done")]);
		const paged = peekSourcePages(text);
		expect(paged.entries).toBe(3);
		expect(paged.pages.length).toBe(4);
		for (const page of paged.pages)
			expect(page.reduce((sum, line) => sum + line.text.length, 0)).toBeLessThanOrEqual(PEEK_PAGE_CHARS + 4);
		// Nothing of the long entry is lost: its pieces, in order, are its text.
		const pieces = paged.pages.flat().filter((line) => line.entryId === "e2");
		expect(pieces.map((line) => line.text.trim()).join("")).toBe(`e2 bash result:${long}`);
		expect(pageShowing(paged, "e2", (shown) => shown.includes("FACT-42"))).toBe(4);
		expect(pageShowing(paged, "e2", () => false)).toBe(1);
		expect(pageShowing(paged, "nope", () => true)).toBeUndefined();

		const input = { id: "f-1", outcomeText: text, fold: undefined, brief: "b", compacted: false, command: "context" };
		const second = formatPeekReport({ ...input, page: 2 });
		expect(second).toContain("  (entry 2 continued)");
		expect(second).toContain("Page 2 of 4 (entries 2–2 of 3). Next: /context peek f-1 3");
		expect(formatPeekReport({ ...input, page: 4 })).toContain(
			"Page 4 of 4 (entries 2–3 of 3). The last page; the first: /context peek f-1 1",
		);
	});
});

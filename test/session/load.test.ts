import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { spanHash } from "../../src/session/canonical.ts";
import { closureDefects, toolCallSpans } from "../../src/session/closure.ts";
import { loadSessionFile, loadSessionText, SessionLoadError } from "../../src/session/load.ts";
import { BranchBuilder, REAL_SESSIONS, sessionHeader, toJsonl } from "../fixtures/session.ts";

describe("loadSessionFile on the real logs", () => {
	it.each([
		["beforeCompaction", REAL_SESSIONS.beforeCompaction, 1002, 990, 2, 454, 448, 6],
		["large", REAL_SESSIONS.large, 1018, 914, 0, 391, 373, 18],
	] as const)(
		"%s loads with exact counts",
		(_name, path, entries, messages, compactions, calls, results, unanswered) => {
			const session = loadSessionFile(path);
			expect(session.sourceVersion).toBe(1);
			expect(session.idsDerived).toBe(true);
			expect(session.diagnostics).toEqual([]);
			expect(session.entries).toHaveLength(entries);
			expect(session.entries.filter((entry) => entry.type === "message")).toHaveLength(messages);
			expect(session.entries.filter((entry) => entry.type === "compaction")).toHaveLength(compactions);
			const spans = toolCallSpans(session.entries);
			expect([...spans.values()].filter((span) => span.callIndex >= 0)).toHaveLength(calls);
			expect([...spans.values()].reduce((sum, span) => sum + span.resultIndices.length, 0)).toBe(results);
			const defects = closureDefects(spans);
			expect(defects.filter((defect) => defect.kind === "missing-result")).toHaveLength(unanswered);
			expect(defects.filter((defect) => defect.kind !== "missing-result")).toEqual([]);
		},
	);

	it("never modifies the input file", () => {
		for (const path of Object.values(REAL_SESSIONS)) {
			const before = readFileSync(path);
			loadSessionFile(path);
			expect(readFileSync(path).equals(before)).toBe(true);
		}
	});

	it("derives the same ids and span hash on every load", () => {
		const first = loadSessionFile(REAL_SESSIONS.large);
		const second = loadSessionFile(REAL_SESSIONS.large);
		expect(second.entries.map((entry) => entry.id)).toEqual(first.entries.map((entry) => entry.id));
		expect(spanHash(second.entries)).toBe(spanHash(first.entries));
		expect(new Set(first.entries.map((entry) => entry.id)).size).toBe(first.entries.length);
	});

	it("keeps the parent chain and compaction targets consistent after renaming ids", () => {
		const session = loadSessionFile(REAL_SESSIONS.beforeCompaction);
		const ids = new Set(session.entries.map((entry) => entry.id));
		session.entries.forEach((entry, index) => {
			expect(entry.parentId).toBe(index === 0 ? null : session.entries[index - 1]?.id);
			if (entry.type === "compaction") expect(ids.has(entry.firstKeptEntryId)).toBe(true);
		});
		// Pi's projection honours the latest compaction: summary first, then the kept tail.
		const projection = session.manager.buildSessionProjection();
		expect(projection.entries[0]?.sourceEntry.type).toBe("compaction");
	});

	it("reads v3 logs with their own ids untouched", () => {
		const branch = new BranchBuilder();
		branch.user("hello");
		branch.assistant("hi");
		const session = loadSessionText(toJsonl(branch.entries));
		expect(session.idsDerived).toBe(false);
		expect(session.entries.map((entry) => entry.id)).toEqual(["e1", "e2"]);
	});
});

describe("bad input", () => {
	it("names a missing file", () => {
		expect(() => loadSessionFile("/nonexistent/session.jsonl")).toThrowError(
			expect.objectContaining({ code: "missing-file", name: "SessionLoadError" }),
		);
	});

	it("refuses a file without a session header", () => {
		const text = `${JSON.stringify({ type: "message", id: "a", parentId: null })}\n`;
		expect(() => loadSessionText(text)).toThrow(SessionLoadError);
		expect(() => loadSessionText(text)).toThrow(/no session header/);
	});

	it("skips a non-JSON line, a truncated last line and an unknown entry type with line-numbered diagnostics", () => {
		const branch = new BranchBuilder();
		branch.user("one");
		branch.assistant("two");
		const lines = toJsonl(branch.entries).split("\n");
		lines.splice(2, 0, "this is not json");
		lines.splice(3, 0, JSON.stringify({ type: "mystery", id: "m1", parentId: "e1", timestamp: "x" }));
		const text = `${lines.join("\n").trimEnd()}\n{"type":"message","id":"e9"`;
		const session = loadSessionText(text);
		expect(session.diagnostics.map((diagnostic) => [diagnostic.line, diagnostic.kind])).toEqual([
			[3, "invalid-json"],
			[4, "unknown-entry-type"],
			[6, "truncated-last-line"],
		]);
		expect(session.entries.map((entry) => entry.id)).toEqual(["e1", "e2"]);
	});

	it("reports an empty file", () => {
		expect(() => loadSessionText("")).toThrowError(expect.objectContaining({ code: "empty-file" }));
		expect(() => loadSessionText(toJsonl([], sessionHeader()))).not.toThrow();
	});
});

import { describe, expect, it } from "vitest";
import { editCall, patchAnchorLines } from "../../../src/cost/out-of-view/edits.ts";
import { anchorKeys, errorFragments, isCodeIdentifier, textTokens } from "../../../src/cost/out-of-view/references.ts";

const values = (text: string) => textTokens(text).map((token) => `${token.kind}:${token.value}`);

describe("reference tokens", () => {
	it("finds paths, their base names, path:line, ids, URLs and code identifiers", () => {
		const found = values(
			"Fix src/cost/price.ts:42 (see C:\\Users\\dev\\app\\page.tsx and lib/format.ts), commit e72a2821, " +
				"https://example.org/issues/7, call formatEventDate on parse_widget_v2 in widget.py",
		);
		expect(found).toEqual(
			expect.arrayContaining([
				"url:https://example.org/issues/7",
				"path:src/cost/price.ts",
				"path:price.ts",
				"path:line:src/cost/price.ts:42",
				"path:C:\\Users\\dev\\app\\page.tsx",
				"path:lib/format.ts",
				"path:widget.py",
				"id:e72a2821",
				"identifier:formatEventDate",
				"identifier:parse_widget_v2",
			]),
		);
	});

	it("leaves prose, closing tags, method calls, library names and URL patterns out", () => {
		const found = values(
			"Because the render function should handle and/or input/output. </label> resp.json() " +
				"TypeScript, Next.js and node_modules; https://www.youtube.com/watch?v= then startsWith",
		);
		expect(found).toEqual([]);
	});

	it("calls code-shaped words identifiers and plain words not", () => {
		expect(["useWidget", "MergeService", "dress_code", "8mY9wx_iMSU", "v2beta"].every(isCodeIdentifier)).toBe(true);
		expect(["render", "Number", "README", "because", "abc", "x_y"].some(isCodeIdentifier)).toBe(false);
	});

	it("takes error fragments only from quoted output", () => {
		const text =
			"The build failed because of types.\n`error TS2345: Argument of type 'x'` is the first one.\n" +
			"```\nTypeError: widget is not a function\n  at main.ts:3\n```\n> ENOENT: No such file or directory, open 'a.json'";
		expect(errorFragments(text)).toEqual([
			"error TS2345: Argument of type 'x'",
			"TypeError: widget is not a function",
			"ENOENT: No such file or directory, open 'a.json'",
		]);
	});

	it("indexes a line by itself and without a tool's line-number or grep prefix", () => {
		const keys = anchorKeys("    12→const widget = makeWidget();\nsrc/a.ts:40:  return widget.size;\n}");
		expect(keys).toEqual(
			expect.arrayContaining([
				"const widget = makeWidget();",
				"return widget.size;",
				"12→const widget = makeWidget();",
			]),
		);
		expect(keys).not.toContain("}");
	});
});

describe("edit anchors", () => {
	it("reads old texts of Pi, Claude Code and str_replace editors, not the new text", () => {
		const pi = editCall("edit", {
			path: "a.ts",
			edits: [{ oldText: "const widget = makeWidget();\n}", newText: "const widget = makeGadget();" }],
		});
		const legacy = editCall("edit", { path: "a.ts", oldText: "return widget.size;", newText: "x" });
		const claude = editCall("Edit", { file_path: "a.ts", old_string: "function parseWidget() {", new_string: "y" });
		const multi = editCall("MultiEdit", {
			file_path: "a.ts",
			edits: [{ old_string: "let counter = 0;", new_string: "let counter = 1;" }],
		});
		expect(pi?.anchors).toEqual(["const widget = makeWidget();"]);
		expect(legacy?.anchors).toEqual(["return widget.size;"]);
		expect(claude).toEqual({ tool: "Edit", anchors: ["function parseWidget() {"] });
		expect(multi?.anchors).toEqual(["let counter = 0;"]);
		expect(editCall("write", { path: "a.ts", content: "const widget = makeWidget();" })).toBeUndefined();
	});

	it("reads a Codex patch's context and removed lines of updated files only", () => {
		const patch = [
			"*** Begin Patch",
			"*** Update File: lib/format.ts",
			"@@",
			" export function formatEventDate(date: string) {",
			"-  return new Date(date).toString();",
			"+  return format(date);",
			"*** Add File: lib/new.ts",
			"+export const created = true;",
			"*** End Patch",
		].join("\n");
		expect(patchAnchorLines(patch)).toEqual([
			"export function formatEventDate(date: string) {",
			"  return new Date(date).toString();",
		]);
		expect(editCall("apply_patch", { input: patch })?.anchors).toEqual([
			"export function formatEventDate(date: string) {",
			"return new Date(date).toString();",
		]);
		expect(editCall("shell", { command: ["bash", "-lc", `apply_patch <<'EOF'\n${patch}\nEOF`] })?.anchors).toHaveLength(
			2,
		);
	});
});

/**
 * The names a piece of code declares or imports, read mechanically from a
 * tool result (a file read, a grep hit, a diff): what a later reply is most
 * likely to name again. A fold's brief lists them, so an agent that needs
 * `getMarkdownTheme` knows which fold holds it without a search.
 *
 * Structure only: a declaration keyword common to the usual languages
 * (`function`, `class`, `interface`, `type`, `enum`, `const`, `let`, `var`,
 * `def`, `fn`, `func`, `struct`, `trait`) followed by a name or a
 * destructuring pattern, a class method (a name and its parameters opening
 * a block on one line, modifiers allowed: `private showThemeSelector(): void {`),
 * and the names inside an `import { … }` or `from … import …`. Names shorter than
 * `MIN_IDENTIFIER_CHARS` are left out, as the reference reader leaves them
 * out (src/text/references.ts).
 */

import { MIN_IDENTIFIER_CHARS } from "./references.ts";

/** Most characters of one text read for names: a huge output is read at its start. */
export const DECLARED_NAMES_SCAN_MAX_CHARS = 256 * 1024;

/** A declaration keyword and the name it declares (`export`, `async`, `default`, `pub` may precede it). */
const DECLARATION =
	/(?:^|[\s;{(])(?:function\*?|class|interface|type|enum|const|let|var|def|fn|func|struct|trait|module|namespace)\s+([A-Za-z_$][\w$]*)/g;
/**
 * A method of a class (TypeScript, JavaScript): a line that is a name, its
 * parameters and an opening brace, after optional modifiers and before an
 * optional return type. Calls never end in `{` on their line; arrow callbacks
 * (`it("x", () => {`) have `=>` there. A read's line-number prefix (`12→`) may lead.
 */
const METHOD =
	/^(?:[ \t]*\d+(?:→|\t|:))?[ \t]*(?:(?:public|private|protected|static|async|override|abstract|readonly|get|set)\s+)*([A-Za-z_$][\w$]*)\s*(?:<[^>\n]*>)?\s*\([^)\n]*\)\s*(?::\s*[^{\n;=]+)?\{\s*$/gm;
/** A destructuring declaration: `const [events, setEvents] = …`, `let { data, error } = …`. */
const DESTRUCTURING = /\b(?:const|let|var)\s+[[{]([^\]}=]{1,400})[\]}]\s*=/g;
/** The braces of an ES import, and Python's `from x import a, b`. */
const IMPORT_BRACES = /\bimport\s+(?:type\s+)?\{([^}]{1,2000})\}/g;
const PYTHON_IMPORT = /\bfrom\s+[\w.]+\s+import\s+([\w, ]{1,2000})/g;
const NAME = /^[A-Za-z_$][\w$]*$/;
/** Keywords a declaration pattern can catch as a name (`type` in `export type X`, …). */
const KEYWORDS: ReadonlySet<string> = new Set([
	"function",
	"return",
	"export",
	"import",
	"default",
	"extends",
	"implements",
	"static",
	"public",
	"private",
	"protected",
	"readonly",
	"string",
	"number",
	"boolean",
	"object",
	"unknown",
	"undefined",
	"switch",
	"constructor",
]);

/** Names a text declares, then those it imports, each once, in order of appearance. */
export function declaredNames(text: string): string[] {
	const body = text.length > DECLARED_NAMES_SCAN_MAX_CHARS ? text.slice(0, DECLARED_NAMES_SCAN_MAX_CHARS) : text;
	const declared = new Set<string>();
	const imported = new Set<string>();
	const keep = (into: Set<string>, name: string | undefined) => {
		const trimmed = name?.trim() ?? "";
		if (trimmed.length >= MIN_IDENTIFIER_CHARS && NAME.test(trimmed) && !KEYWORDS.has(trimmed)) into.add(trimmed);
	};
	// `type X` inside an import's braces is an import, not a declaration. Declarations and methods in order of appearance.
	const unbraced = body.replace(IMPORT_BRACES, " ");
	const found = [...unbraced.matchAll(DECLARATION), ...unbraced.matchAll(METHOD)].sort(
		(a, b) => (a.index ?? 0) - (b.index ?? 0),
	);
	for (const match of found) keep(declared, match[1]);
	for (const match of body.matchAll(DESTRUCTURING)) {
		for (const item of (match[1] ?? "").split(","))
			keep(
				declared,
				item
					.split(":")
					.at(-1)
					?.replace(/^\s*\.\.\./, ""),
			);
	}
	for (const match of body.matchAll(IMPORT_BRACES)) {
		for (const item of (match[1] ?? "").split(","))
			keep(
				imported,
				item
					.replace(/^\s*type\s+/, "")
					.split(/\s+as\s+/)
					.at(-1),
			);
	}
	for (const match of body.matchAll(PYTHON_IMPORT)) {
		for (const item of (match[1] ?? "").split(",")) keep(imported, item.split(/\s+as\s+/).at(-1));
	}
	return [...declared, ...[...imported].filter((name) => !declared.has(name))];
}

/**
 * What a message can point back at, read mechanically: the paths, code
 * identifiers, hex ids and URLs in a text. The working set
 * (src/fold/policy/references.ts) keeps raw what the agent's recent replies
 * and calls name, so these are the names an agent reuses from earlier
 * output: a path it read, a function it saw, a commit or call id, a URL.
 *
 * Structure, with one word list: a path has a separator, or is a file name
 * with a known extension; an identifier is a word of `MIN_IDENTIFIER_CHARS`
 * or more that looks like code (an underscore, digit or `$` inside, a
 * lower-to-upper case change, or PascalCase), so English prose ("problems",
 * "Tailwind", "WARNING") does not count while `getCapacityPercent`,
 * `EVENT_SELECT_FIELDS` and `TypedSupabaseClient` do.
 */

/** Shortest word read as an identifier: shorter ones (`id`, `name`, `value`) recur everywhere. */
export const MIN_IDENTIFIER_CHARS = 6;
/** Shortest run of hex digits read as an id (a short commit hash is 7). */
export const MIN_HEX_ID_CHARS = 7;
/** Shortest path read as one (`a.ts`). */
export const MIN_PATH_CHARS = 4;
/** Longest text read for references: a larger one is read at its start and its end, this much of each. */
export const REFERENCE_SCAN_MAX_CHARS = 64 * 1024;

/** A run of characters a path or URL may hold: what lies between spaces, quotes, brackets and separators. */
const CHUNK = /[^\s"'`()[\]{}<>,;|=*!?^]+/g;
/** Punctuation that ends a sentence or a `path:line` rather than the path. */
const CHUNK_TRAIL = /(?::\d+)*[.:]*$/;
/**
 * Extensions a bare file name is recognised by. Without a separator, `x.y`
 * is as often a member access (`console.log`, `this.state`) as a file, so
 * only these count; a path with a separator needs none.
 */
const FILE_EXTENSIONS =
	"ts|tsx|mts|cts|js|jsx|mjs|cjs|json|jsonl|md|mdx|txt|py|rb|go|rs|java|kt|swift|c|h|cc|cpp|hpp|cs|php|sh|bash|zsh|ps1|sql|css|scss|html|vue|svelte|yml|yaml|toml|ini|cfg|lock|xml|csv|env|gradle|dart|lua|ex|exs|zig";
/** A bare file name: a name, a dot and a known extension (`index.ts`, `README.md`, `Cargo.lock`). */
const FILE_NAME = new RegExp(`^[\\w@-]+(?:\\.[\\w-]+)*\\.(?:${FILE_EXTENSIONS})$`, "i");
/** A word that may be an identifier (`$` and `_` included, as JavaScript and shells use them), never the tail of a longer word. */
const WORD = /(?<![\w$])[A-Za-z_$][\w$]*/g;
/** What makes a word read as code rather than prose: an underscore, digit or `$`, camelCase, or PascalCase. */
const CODE_SHAPE = /[_\d$]|[a-z][A-Z]|^[A-Z][a-z0-9]+[A-Z]/;
const HEX_ID = /\b[0-9a-f]{7,64}\b/g;
const HEX_HAS_DIGIT_AND_LETTER = /\d[a-f]|[a-f]\d/;
const URL_START = /^https?:\/\//;

/** The part of a text read for references: all of it, or its start and end when it is very long. */
function scanned(text: string): string {
	if (text.length <= 2 * REFERENCE_SCAN_MAX_CHARS) return text;
	return `${text.slice(0, REFERENCE_SCAN_MAX_CHARS)}\n${text.slice(-REFERENCE_SCAN_MAX_CHARS)}`;
}

/** The path or URL a chunk of text is, if it is one: a URL, two named segments, or a file name. */
function chunkReference(chunk: string): string | undefined {
	if (URL_START.test(chunk)) return chunk.replace(/[.:]+$/, "");
	const token = chunk.replace(CHUNK_TRAIL, "");
	if (token.length < MIN_PATH_CHARS) return undefined;
	if (/[\\/]/.test(token)) {
		const named = token.split(/[\\/]/).filter((part) => /[A-Za-z0-9]/.test(part));
		return named.length >= 2 || (named.length === 1 && FILE_NAME.test(named[0] ?? "")) ? token : undefined;
	}
	return FILE_NAME.test(token) && !/^\d/.test(token) ? token : undefined;
}

/** True for a word that reads as a code identifier (long enough, and code-shaped), as `referenceTokens` counts one. */
export function isCodeIdentifier(word: string): boolean {
	return word.length >= MIN_IDENTIFIER_CHARS && CODE_SHAPE.test(word);
}

/** Reference tokens of a text: paths (as written), code identifiers, hex ids, URLs. */
export function referenceTokens(text: string): Set<string> {
	const out = new Set<string>();
	const body = scanned(text);
	for (const match of body.matchAll(CHUNK)) {
		const reference = chunkReference(match[0]);
		if (reference) out.add(reference);
	}
	for (const match of body.matchAll(WORD)) {
		const word = match[0];
		if (isCodeIdentifier(word)) out.add(word);
	}
	for (const match of body.matchAll(HEX_ID)) if (HEX_HAS_DIGIT_AND_LETTER.test(match[0])) out.add(match[0]);
	return out;
}

/** Paths (and URLs) named in a text, in order. */
export function pathTokens(text: string): string[] {
	const out: string[] = [];
	for (const match of scanned(text).matchAll(CHUNK)) {
		const reference = chunkReference(match[0]);
		if (reference && !URL_START.test(reference)) out.push(reference);
	}
	return out;
}

/** True when a reference token is a path (a separator or a file name), not a URL, identifier or id. */
export function isPathToken(token: string): boolean {
	return !URL_START.test(token) && chunkReference(token) === token;
}

/**
 * The keys a path is found by, longest first: its segments joined from each
 * one to the end, lower-cased, `\` read as `/`. `C:\repo\src\a.ts` and
 * `src/a.ts` share `src/a.ts` and `a.ts`, so a mention by either name finds
 * a read by the other.
 */
export function pathKeys(path: string): string[] {
	const segments = path
		.toLowerCase()
		.split(/[\\/]+/)
		.filter((segment) => segment !== "" && segment !== "." && segment !== ".." && !/^[a-z]:$/.test(segment));
	const keys: string[] = [];
	for (let i = 0; i < segments.length; i++) keys.push(segments.slice(i).join("/"));
	return keys;
}

/**
 * What in a text can refer to earlier material (pure): paths, `path:line`,
 * code identifiers of six or more characters, ids and hashes, URLs (the
 * tokens), error fragments, and the lines an index keeps for finding an
 * edit's anchor lines. One extractor serves both sides: the scorer reads a
 * reply's references with it and indexes every segment it sees with it, so a
 * reference and the text it came from are cut the same way.
 *
 * Precision over recall: words that merely look like names are noise (the
 * issue's own extractor judged 58% of hidden tokens truly needed history;
 * the rest were library and language names), so a token must have the shape
 * of code (see `isCodeIdentifier`), and names common to unrelated projects
 * are left out (`COMMON_TOKENS`).
 */

/** What a reference is. */
export type ReferenceKind = "path" | "path:line" | "identifier" | "id" | "url" | "error" | "anchor";

export interface Token {
	kind: Exclude<ReferenceKind, "error" | "anchor">;
	value: string;
}

/** Identifiers shorter than this are too common to point at one thing (issue 27: six or more characters). */
export const MIN_IDENTIFIER_CHARS = 6;
/** Hex runs shorter than this are words, numbers or colours more often than hashes (git's short hash is 7). */
export const MIN_HEX_CHARS = 7;
/** Shortest path worth a reference (shorter ones are `a/b`, `./x`). */
export const MIN_PATH_CHARS = 4;
/** Error fragments shorter than this match too much; longer ones are cut (a fragment is a quote, not a log). */
export const ERROR_FRAGMENT_CHARS = { min: 12, max: 200 } as const;
/** Anchor lines shorter than this (`}`, `return x;`) occur everywhere and say nothing about where they came from. */
export const MIN_ANCHOR_CHARS = 12;

/**
 * Names that occur across unrelated projects: languages, runtimes, hosts and
 * the library names a coding session mentions without needing history. They
 * have code shape (camel case, a digit, a dot) but point at no earlier
 * message. Lower-cased.
 */
export const COMMON_TOKENS: ReadonlySet<string> = new Set(
	[
		// Languages, runtimes, hosts and products.
		"javascript",
		"typescript",
		"github",
		"gitlab",
		"youtube",
		"openai",
		"chatgpt",
		"postgresql",
		"mongodb",
		"graphql",
		"websocket",
		"nodejs",
		"node.js",
		"next.js",
		"vue.js",
		"nuxt.js",
		"react.js",
		"express.js",
		"three.js",
		"d3.js",
		"macos",
		"iphone",
		"ipados",
		"linkedin",
		"devtools",
		"localhost",
		"python3",
		// Files and directories every project of a kind has.
		"node_modules",
		"package.json",
		"package-lock.json",
		"tsconfig.json",
		"readme.md",
		"devdependencies",
		"/dev/null",
		"/usr/bin/env",
		"/bin/bash",
		"/tmp",
		// Encodings, hashes, platforms.
		"utf-8",
		"utf8",
		"base64",
		"sha256",
		"sha-256",
		"sha1",
		"md5",
		"http2",
		"ipv4",
		"ipv6",
		"oauth2",
		"es2020",
		"es2022",
		"esnext",
		"html5",
		"css3",
		"x86_64",
		"win32",
		"arm64",
		"amd64",
		// Language built-ins (JavaScript and TypeScript, Python, Java) and React's hooks.
		"__init__",
		"__main__",
		"__name__",
		"__dirname",
		"__filename",
		"console.log",
		"process.env",
		"tostring",
		"valueof",
		"hasownproperty",
		"defineproperty",
		"foreach",
		"flatmap",
		"indexof",
		"lastindexof",
		"findindex",
		"startswith",
		"endswith",
		"padstart",
		"padend",
		"trimstart",
		"trimend",
		"tofixed",
		"tolocalestring",
		"toisostring",
		"tolowercase",
		"touppercase",
		"charcodeat",
		"fromcharcode",
		"parseint",
		"parsefloat",
		"encodeuricomponent",
		"decodeuricomponent",
		"uint8array",
		"arraybuffer",
		"textencoder",
		"textdecoder",
		"returntype",
		"settimeout",
		"cleartimeout",
		"setinterval",
		"clearinterval",
		"requestanimationframe",
		"localstorage",
		"sessionstorage",
		"addeventlistener",
		"removeeventlistener",
		"queryselector",
		"queryselectorall",
		"getelementbyid",
		"innerhtml",
		"textcontent",
		"classname",
		"onclick",
		"onchange",
		"onsubmit",
		"preventdefault",
		"stoppropagation",
		"readfilesync",
		"writefilesync",
		"existssync",
		"mkdirsync",
		"isinstance",
		"arraylist",
		"hashmap",
		"concurrenthashmap",
		"getmessage",
		"printstacktrace",
		"usestate",
		"useeffect",
		"usememo",
		"usecallback",
		"useref",
		// Status words of planning tools (Codex update_plan, Claude Code TodoWrite): vocabulary, not history.
		"in_progress",
		"api_key",
	].map((token) => token.toLowerCase()),
);

/** File extensions a bare file name must end with to count as a path (`price.ts`, not `e.g` or `etc.`). */
const FILE_EXTENSIONS =
	"ts|tsx|mts|cts|js|jsx|mjs|cjs|json|jsonl|md|mdx|py|pyi|rb|go|rs|java|kt|kts|swift|c|h|cc|cpp|hpp|cs|php|sh|bash|zsh|ps1|psm1|bat|cmd|yml|yaml|toml|ini|cfg|conf|sql|html|htm|css|scss|sass|less|vue|svelte|astro|txt|lock|xml|gradle|properties|env|csv|tsv|log|dart|lua|ex|exs|erl|hs|scala|clj|r|ipynb|proto|graphql|gql|prisma|tf|dockerfile|mk|cmake|patch|diff|svg|png|jpg|jpeg|gif|webp|pdf";
/** A run of path characters with at least one separator (`src/cost/price.ts`, `C:\Users\x`, `/tmp/a`). */
const SEPARATED_PATH = /(?:[A-Za-z]:)?[\w.@~+-]*(?:[/\\][\w.@~+-]+)+[/\\]?/g;
/** A bare file name with a known extension. */
const BARE_FILE = new RegExp(`(?<![\\w.@~+/\\\\-])[\\w@+-][\\w.@+-]*\\.(?:${FILE_EXTENSIONS})(?![\\w/\\\\-])`, "gi");
/** A line number right after a path: `:12` or `:12:5`. */
const LINE_SUFFIX = /^:(\d+)(?::\d+)?/;
const URL = /\bhttps?:\/\/[^\s"'`<>()[\]{}|\\^]+/g;
const URL_TRAILING = /[.,;:!?'"*]+$/;
/** A URL cut before its parameter (`…/watch?v=`) is a pattern, not a place. */
const URL_PREFIX_ONLY = /[=?&]$/;
/** A word of code: letters, digits, `_` and `$` (a leading digit included: `8mY9wx_iMSU` is one id). */
const WORD = /(?<![\w$])[\w$]+/g;
const HEX = /(?<![\w-])[0-9a-f]{7,64}(?![\w-])/g;
const UUID = /(?<![\w-])[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}(?![\w-])/g;
/** Top-level domains: `github.com` has a file name's shape and is a host. */
const DOMAIN_SUFFIX = /\.(?:com|org|net|io|dev|app|ai|co|gov|edu|info|me|so|sh|xyz|cloud)$/i;
/** `Next.js`, `Vue.js`: a capitalised word before `.js` is a library, not a file. */
const LIBRARY_JS = /^[A-Z][A-Za-z]*\.js$/;

/**
 * Code shape: an underscore between letters or digits, a lower-to-upper
 * step (camelCase, PascalCase with a second capital), or letters mixed with
 * digits. Plain words (`render`, `Number`, `because`) and acronyms
 * (`README`, `HTTPS`) are not identifiers here: English carries too many.
 */
export function isCodeIdentifier(word: string): boolean {
	if (word.length < MIN_IDENTIFIER_CHARS) return false;
	const letters = word.replace(/[^A-Za-z]/g, "");
	if (letters.length === 0) return false;
	if (/[a-z][A-Z]/.test(word)) return true;
	if (/[A-Za-z0-9]_+[A-Za-z0-9]/.test(word)) return true;
	return /\d/.test(word) && letters.length >= 2;
}

function isCommon(value: string): boolean {
	return COMMON_TOKENS.has(value.toLowerCase());
}

/** The last segment of a path (`src/cost/price.ts` → `price.ts`). */
function baseName(path: string): string {
	const parts = path.split(/[/\\]/).filter((part) => part.length > 0);
	return parts.at(-1) ?? path;
}

function acceptPath(path: string): boolean {
	if (path.length < MIN_PATH_CHARS || !/[A-Za-z]/.test(path)) return false;
	const segments = path.split(/[/\\]/).filter((part) => part.length > 0);
	const rooted = /^(?:[/\\~]|\.{1,2}[/\\]|[A-Za-z]:)/.test(path);
	const last = segments.at(-1) ?? "";
	const extension = /\.[A-Za-z][\w]{0,7}$/.test(last);
	// `and/or`, `input/output`: two plain words with a slash are prose.
	return rooted || extension || segments.length >= 3;
}

/** Every token of `text`, each value once (URLs, paths, ids, then identifiers). */
export function textTokens(text: string): Token[] {
	const out: Token[] = [];
	const seen = new Set<string>();
	// One kind per value (the first found): the index and the classification go by value.
	const add = (kind: Token["kind"], value: string) => {
		if (seen.has(value) || isCommon(value)) return;
		seen.add(value);
		out.push({ kind, value });
	};
	// URLs first, and masked: their paths and hosts are not separate references.
	let rest = text.replace(URL, (match) => {
		const url = match.replace(URL_TRAILING, "");
		if (url.length > "https://".length && !URL_PREFIX_ONLY.test(url)) add("url", url);
		return " ".repeat(match.length);
	});
	const addPath = (raw: string, start: number, end: number) => {
		const path = raw.replace(/[.:]+$/, "");
		if (!acceptPath(path) || DOMAIN_SUFFIX.test(path) || LIBRARY_JS.test(path)) return;
		// `</label>` is a closing tag; `resp.json()` a method call; `proxy/VPN` two words.
		if (rest[start - 1] === "<" || rest[end] === "(" || /\p{L}/u.test(rest[start - 1] ?? "")) return;
		add("path", path);
		const base = baseName(path);
		if (base !== path && /\.[A-Za-z]/.test(base) && base.length >= MIN_PATH_CHARS) add("path", base);
		const line = LINE_SUFFIX.exec(rest.slice(end - (raw.length - path.length)));
		if (line) add("path:line", `${path}:${line[1]}`);
	};
	const each = (pattern: RegExp) => {
		for (const match of rest.matchAll(pattern)) {
			const start = match.index ?? 0;
			addPath(match[0], start, start + match[0].length);
		}
	};
	each(SEPARATED_PATH);
	rest = rest.replace(SEPARATED_PATH, (match) => " ".repeat(match.length));
	each(BARE_FILE);
	for (const match of text.matchAll(UUID)) add("id", match[0].toLowerCase());
	for (const match of text.matchAll(HEX)) {
		const hex = match[0];
		if (/\d/.test(hex) && /[a-f]/.test(hex)) add("id", hex);
	}
	for (const match of rest.matchAll(WORD)) if (isCodeIdentifier(match[0])) add("identifier", match[0]);
	return out;
}

/** Words that mark a line as reporting an error. */
const ERROR_MARKER =
	/(?:\b\w*(?:Error|Exception)\b|\berror\b|\bERROR\b|\bERR!|\bERR_[A-Z_]+|\bfatal\b|\bFATAL\b|\bpanic\b|\bTraceback\b|\bfailed\b|\bFAILED\b|\bFAIL\b|\bcannot\b|\bCannot\b|\bnot found\b|\bNo such file\b|\bdenied\b|\bis not defined\b|\bTS\d{4}\b)/;

/** Whether a line reports an error. */
export function isErrorLine(line: string): boolean {
	return ERROR_MARKER.test(line);
}

/** The error lines of a text (trimmed, long enough to quote), each once. */
export function errorLines(text: string): string[] {
	const out = new Set<string>();
	for (const raw of text.split("\n")) {
		const line = raw.trim();
		if (line.length >= ERROR_FRAGMENT_CHARS.min && isErrorLine(line)) out.add(line);
	}
	return [...out];
}

/**
 * Error fragments a reply quotes: inline code spans, fenced code lines and
 * `>` quotes that report an error, trimmed, cut at the maximum. Prose about
 * an error is not a fragment: only text set off as a quote of output is.
 */
export function errorFragments(text: string): string[] {
	const out = new Set<string>();
	const consider = (candidate: string) => {
		const fragment = candidate.trim().slice(0, ERROR_FRAGMENT_CHARS.max).trim();
		if (fragment.length >= ERROR_FRAGMENT_CHARS.min && isErrorLine(fragment)) out.add(fragment);
	};
	let fenced = false;
	for (const line of text.split("\n")) {
		if (/^\s*(?:```|~~~)/.test(line)) {
			fenced = !fenced;
			continue;
		}
		if (fenced) consider(line);
		else if (/^\s*>/.test(line)) consider(line.replace(/^\s*>+/, ""));
		else for (const span of line.matchAll(/`([^`\n]+)`/g)) consider(span[1] ?? "");
	}
	return [...out];
}

/** Prefixes a line can carry in tool output that the file itself does not: `  12→`, `12\t`, `path:12:`, a diff's `+`/`-`. */
const LINE_PREFIXES = [/^\s*\d+\s*(?:→|\t|\|)\s?/, /^[^\s:]+:\d+[:-]/, /^[+-](?![+-])/];

/** A line as an anchor is compared: trimmed, long enough, with a letter or digit. */
export function anchorKey(line: string): string | undefined {
	const key = line.trim();
	return key.length >= MIN_ANCHOR_CHARS && /[A-Za-z0-9]/.test(key) ? key : undefined;
}

/** The keys a text's lines can be found by as anchors: each line, and each line without a tool's prefix. */
export function anchorKeys(text: string): string[] {
	const out = new Set<string>();
	for (const line of text.split("\n")) {
		const plain = anchorKey(line);
		if (plain) out.add(plain);
		for (const prefix of LINE_PREFIXES) {
			if (!prefix.test(line)) continue;
			const stripped = anchorKey(line.replace(prefix, ""));
			if (stripped) out.add(stripped);
		}
	}
	return [...out];
}

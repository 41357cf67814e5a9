/**
 * Finding a query in lines of text, literally or as a regular expression,
 * with bounds a hostile or careless pattern cannot break.
 *
 * A literal query is matched as written and, when it differs, in its JSON
 * string form too (a quote, backslash or newline inside a stored message is
 * escaped in canonical JSON), so a literal finds the exact bytes either way.
 * A regular expression (JavaScript syntax, case-sensitive, no flags) is
 * refused when it does not compile, is longer than the query bound, or
 * matches the empty string; it runs inside a `node:vm` context with a time
 * budget, since a backtracking engine can take exponential time on a
 * pattern such as `(a+)+$`, and V8 interrupts a regex when the budget is
 * spent. Running out of time is a named outcome, never a silent partial
 * answer. Zero-length matches (lookarounds) are skipped, so scanning always
 * advances. A match that starts or ends between the two halves of a
 * surrogate pair (a query holding half a character, or a pattern matching
 * one UTF-16 unit) is no match: it names no whole characters, and its byte
 * offset would fall inside one.
 */

import vm from "node:vm";

/** Longest query accepted, literal or regex, in characters. */
export const QUERY_MAX_CHARS = 256;

/** One match: line index, UTF-16 index in the line, UTF-16 length. */
export type LineMatch = [line: number, index: number, length: number];

export interface ScanResult {
	/** The first matches found, at most `keep`, in line order. */
	matches: LineMatch[];
	/** Matches counted (stops at `countCap`). */
	total: number;
	/** The time budget ran out before the lines were scanned. */
	timedOut: boolean;
}

export interface Matcher {
	readonly regex: boolean;
	/** Scan lines; `budgetMs` bounds a regex scan's time (a literal scan is linear and ignores it). */
	scan(lines: readonly string[], keep: number, countCap: number, budgetMs: number): ScanResult;
}

export type MatcherResult = { ok: true; matcher: Matcher } | { ok: false; code: "invalid-query"; message: string };

const invalid = (message: string): MatcherResult => ({ ok: false, code: "invalid-query", message });

/** A matcher for the query, or a refusal naming what is wrong with it. */
export function compileMatcher(query: string, regex: boolean): MatcherResult {
	if (query.length === 0) return invalid("query must not be empty.");
	if (query.length > QUERY_MAX_CHARS)
		return invalid(`query is ${query.length} characters; at most ${QUERY_MAX_CHARS}.`);
	if (!regex) return { ok: true, matcher: literalMatcher(query) };
	let pattern: RegExp;
	try {
		pattern = new RegExp(query, "g");
	} catch (error) {
		return invalid(
			`query is not a valid regular expression: ${error instanceof Error ? error.message : String(error)}.`,
		);
	}
	if (new RegExp(query).test(""))
		return invalid(
			"the regular expression matches the empty string, so it would match everywhere; make it match at least one character.",
		);
	return { ok: true, matcher: regexMatcher(pattern) };
}

/**
 * Whether the match at `index` of `length` UTF-16 units cuts a surrogate
 * pair at either end. Written out as source: the regex scan runs it inside
 * its sandbox too (`SCAN_SCRIPT`).
 */
const SPLITS_PAIR_SOURCE = `(text, index, length) => {
	const high = (unit) => unit >= 0xd800 && unit <= 0xdbff;
	const low = (unit) => unit >= 0xdc00 && unit <= 0xdfff;
	const end = index + length;
	return (low(text.charCodeAt(index)) && high(text.charCodeAt(index - 1))) ||
		(high(text.charCodeAt(end - 1)) && low(text.charCodeAt(end)));
}`;
const splitsPair = new vm.Script(SPLITS_PAIR_SOURCE).runInThisContext() as (
	text: string,
	index: number,
	length: number,
) => boolean;

function literalMatcher(query: string): Matcher {
	const escaped = JSON.stringify(query).slice(1, -1);
	const needles = escaped === query ? [query] : [query, escaped];
	return {
		regex: false,
		scan(lines, keep, countCap) {
			const matches: LineMatch[] = [];
			let total = 0;
			for (let line = 0; line < lines.length && total < countCap; line++) {
				const text = lines[line] ?? "";
				const found: [number, number][] = [];
				for (const needle of needles) {
					for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length))
						found.push([at, needle.length]);
				}
				if (needles.length > 1) found.sort((a, b) => a[0] - b[0]);
				for (const [index, length] of found) {
					if (total >= countCap) break;
					if (splitsPair(text, index, length)) continue;
					total++;
					if (matches.length < keep) matches.push([line, index, length]);
				}
			}
			return { matches, total, timedOut: false };
		},
	};
}

/**
 * The scan loop, run inside the sandbox so the time budget can interrupt the
 * regex engine. Its inputs are read from the sandbox's globals once, into
 * locals: every read of a contextified global goes through an interceptor,
 * which in the loop cost more than the matching.
 */
const SCAN_SCRIPT = new vm.Script(`(() => {
	const texts = lines, re = pattern, most = keep, cap = countCap, splits = ${SPLITS_PAIR_SOURCE};
	const matches = [];
	let total = 0;
	for (let line = 0; line < texts.length && total < cap; line++) {
		const text = texts[line];
		re.lastIndex = 0;
		let match;
		while (total < cap && (match = re.exec(text)) !== null) {
			if (match[0].length === 0) { re.lastIndex++; continue; }
			if (splits(text, match.index, match[0].length)) continue;
			total++;
			if (matches.length < most) matches.push([line, match.index, match[0].length]);
		}
	}
	return { matches, total };
})()`);

function regexMatcher(pattern: RegExp): Matcher {
	const context = vm.createContext({});
	return {
		regex: true,
		scan(lines, keep, countCap, budgetMs) {
			if (budgetMs <= 0) return { matches: [], total: 0, timedOut: true };
			Object.assign(context, { lines, keep, countCap, pattern });
			try {
				const out = SCAN_SCRIPT.runInContext(context, { timeout: Math.max(1, Math.floor(budgetMs)) }) as {
					matches: LineMatch[];
					total: number;
				};
				// Copy out of the sandbox's realm into plain arrays of this one.
				return { matches: out.matches.map(([l, i, n]) => [l, i, n]), total: out.total, timedOut: false };
			} catch (error) {
				if ((error as { code?: unknown }).code === "ERR_SCRIPT_EXECUTION_TIMEOUT")
					return { matches: [], total: 0, timedOut: true };
				throw error;
			} finally {
				Object.assign(context, { lines: [] });
			}
		},
	};
}

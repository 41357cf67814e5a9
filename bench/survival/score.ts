/**
 * Whether a probe's needle is in a text, by rules that know nothing of how a
 * summary is laid out:
 * - words: at least `WORD_SHARE` of the first `WORDS_PER_NEEDLE` distinct
 *   content words of the needle occur as words of the text;
 * - path: the file's name occurs, and so does its parent directory's name
 *   (a summary may group files by directory or show paths relative to a root);
 * - exact: the text contains the needle (case-sensitive);
 * - state: the line of the text that names the failed command says whether
 *   it was fixed: "resolved" or "fixed" for a fixed failure (or no line at
 *   all: a fixed failure may be dropped), a line without them for an open one.
 */

import type { Needle } from "./probes.ts";

export const WORDS_PER_NEEDLE = 12;
export const WORD_SHARE = 2 / 3;
/** Shortest word counted, except in scripts that write words without spaces or with syllable blocks. */
const MIN_WORD_CHARS = 3;
const STOP_WORDS: ReadonlySet<string> = new Set(
	"the and for you are was but not with this that have has had from they will would there their what when which about into your can could should just then than them these those some also only like more very been were its it's our out all any how why who".split(
		" ",
	),
);
const FIXED_WORDS = /\b(?:resolved|fixed)\b/i;

/** Lower-cased words of a text: letters, digits and underscores. */
export function wordsOf(text: string): string[] {
	return [...text.toLowerCase().matchAll(/[\p{L}\p{N}_]+/gu)].map((match) => match[0]);
}

function contentWords(text: string): string[] {
	const words = new Set<string>();
	for (const word of wordsOf(text)) {
		const spaced = /^[\p{Script=Latin}\p{N}_]+$/u.test(word);
		if ((spaced && word.length < MIN_WORD_CHARS) || STOP_WORDS.has(word)) continue;
		words.add(word);
		if (words.size >= WORDS_PER_NEEDLE) break;
	}
	return [...words];
}

/** A text prepared for many lookups. */
export interface Haystack {
	text: string;
	lower: string;
	words: ReadonlySet<string>;
	lines: readonly string[];
}

export function haystack(text: string): Haystack {
	return { text, lower: text.toLowerCase(), words: new Set(wordsOf(text)), lines: text.split("\n") };
}

function wordsFound(needle: string, words: ReadonlySet<string>): boolean {
	const wanted = contentWords(needle);
	if (wanted.length === 0) return false;
	const found = wanted.filter((word) => words.has(word)).length;
	return found >= Math.ceil(wanted.length * WORD_SHARE);
}

function pathFound(path: string, hay: Haystack): boolean {
	const segments = path.split(/[/\\]/).filter((segment) => segment !== "");
	const name = segments.at(-1);
	if (!name || !hay.text.includes(name)) return false;
	const parent = segments.at(-2);
	return parent === undefined || hay.text.includes(parent);
}

function stateFound(command: string, fixed: boolean, hay: Haystack): boolean {
	const lines = hay.lines.filter((line) => wordsFound(command, new Set(wordsOf(line))));
	if (fixed) return lines.length === 0 || lines.some((line) => FIXED_WORDS.test(line));
	return lines.length > 0 && !lines.some((line) => FIXED_WORDS.test(line));
}

export function found(needle: Needle, hay: Haystack): boolean {
	switch (needle.kind) {
		case "words":
			return wordsFound(needle.text, hay.words);
		case "path":
			return pathFound(needle.path, hay);
		case "exact":
			return hay.text.includes(needle.text);
		case "state":
			return stateFound(needle.command, needle.fixed, hay);
	}
}

/** A hand-picked fact: case-insensitive substring. */
export function factFound(text: string, hay: Haystack): boolean {
	return hay.lower.includes(text.toLowerCase());
}

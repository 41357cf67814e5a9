/**
 * The first substantive sentence of a prose reply, for "how a span ended".
 *
 * Mechanical rules only, no vocabulary: the reply is read line by line,
 * skipping fenced code, markdown headings and table rows, with list markers
 * and emphasis stripped; each line is split into sentences at `.`, `!` or `?`
 * followed by a space. A sentence is a lead-in, and skipped, when it has at
 * most `LEAD_IN_MAX_WORDS` words ("Perfect!", "Done.", "Excellent
 * progress!") or ends with a colon (it introduces what follows: "Let me
 * summarize what was done:"); a list item is content however short, unless it
 * ends with a colon. The first sentence that is neither is the
 * answer; when every sentence is a lead-in, the first colon sentence with
 * its colon removed, else the first sentence. A substantive sentence right
 * after a colon sentence of more than `INTRO_MIN_WORDS` words keeps that
 * introduction ("The API now shows: `state`, `model`"). Undefined for text with no
 * sentence at all.
 */

import { oneLine } from "./lines.ts";

/** Sentences this short are acknowledgements, not content ("Perfect!", "Good thinking."). */
export const LEAD_IN_MAX_WORDS = 3;
/** A colon sentence of more words than this introduces the sentence after it ("Created the plan with:"). */
export const INTRO_MIN_WORDS = 1;
/** Only this much of a reply is read: the answer sits near its start, and replies can be very long. */
export const SENTENCE_SCAN_MAX_CHARS = 8_000;

const FENCE = /^\s*(```|~~~)/;
const HEADING = /^\s*#{1,6}\s/;
const TABLE_ROW = /^\s*\|/;
const LIST_MARKER = /^\s*(?:[-*+]|\d{1,3}[.)])\s+/;
const EMPHASIS = /\*\*|__/g;
const SENTENCE_END = /(?<=[.!?])\s+/;

/** True for a sentence that only introduces or acknowledges; see the module comment. */
export function isLeadIn(sentence: string): boolean {
	if (sentence.endsWith(":")) return true;
	return wordCount(sentence) <= LEAD_IN_MAX_WORDS;
}

function wordCount(sentence: string): number {
	return sentence.split(" ").filter((word) => /[\p{L}\p{N}]/u.test(word)).length;
}

/** Sentences of a reply's prose lines, in order; see the module comment. */
export function proseSentences(text: string): string[] {
	return sentencesOf(text).map((sentence) => sentence.text);
}

interface Sentence {
	text: string;
	/** From a list item: content however short, unless it ends with a colon. */
	item: boolean;
}

function sentencesOf(text: string): Sentence[] {
	const sentences: Sentence[] = [];
	let fenced = false;
	for (const raw of text.slice(0, SENTENCE_SCAN_MAX_CHARS).split("\n")) {
		if (FENCE.test(raw)) {
			fenced = !fenced;
			continue;
		}
		if (fenced || HEADING.test(raw) || TABLE_ROW.test(raw)) continue;
		const item = LIST_MARKER.test(raw);
		const line = oneLine(raw.replace(LIST_MARKER, "").replace(EMPHASIS, ""));
		if (!line) continue;
		for (const sentence of line.split(SENTENCE_END)) if (sentence) sentences.push({ text: sentence, item });
	}
	return sentences;
}

/** The first substantive sentence of `text`; see the module comment. */
export function firstSubstantiveSentence(text: string): string | undefined {
	const all = sentencesOf(text);
	const sentences = all.map((sentence) => sentence.text);
	const index = all.findIndex((sentence) => (sentence.item ? !sentence.text.endsWith(":") : !isLeadIn(sentence.text)));
	const substantive = sentences[index];
	if (substantive !== undefined) {
		// A list right after "Created the plan with:" reads as one sentence with its introduction.
		const intro = sentences[index - 1];
		const joins = intro?.endsWith(":") && wordCount(intro) > INTRO_MIN_WORDS && !substantive.endsWith(":");
		return joins ? `${intro} ${substantive}` : substantive;
	}
	const colon = sentences.find((sentence) => sentence.endsWith(":"));
	if (colon) return colon.replace(/:+$/, "").trimEnd();
	return sentences[0];
}

/**
 * The decisions an agent stated in its own text: the sentences that say what
 * it chose, switched to or ruled out ("so I'm switching to the REST client",
 * "I'll use a temp file instead", "Rather than patching X, …"). A summary
 * keeps them so the next context does not undo a choice it can no longer see.
 *
 * Read from assistant text only (never thinking, never tool output), outside
 * fenced code. A sentence is a decision when it holds one of
 * `DECISION_PHRASES`, the ways Claude Code, Codex and Pi agents word a choice
 * (lower case, typographic apostrophes read as plain ones); a question is
 * not. This is the one vocabulary rule here, next to `plan.ts`'s labels.
 * Identical sentences count once (the latest). Deterministic and bounded.
 */

import { oneLine, shrinkText } from "../text/lines.ts";
import type { NormalizedEvent } from "./events.ts";

/**
 * Phrases that state a choice. Agents announce one before they act
 * ("I'll use …", "I'm going to …", Codex's "so I'm switching to …"), when
 * they change course ("instead", "rather than", "switch to"), and when they
 * settle on a cause or a fix ("the fix is", "the cleanest approach").
 */
export const DECISION_PHRASES: readonly string[] = [
	"instead",
	"rather than",
	"switch to",
	"switching to",
	"switched to",
	"i'll use",
	"i will use",
	"i'm using",
	"we'll use",
	"let's use",
	"i'm going to",
	"i'll go with",
	"going with",
	"decided",
	"decision",
	"i chose",
	"chosen",
	"the fix is",
	"the right fix",
	"the approach",
	"approach is",
	"cleaner approach",
	"simpler approach",
	"better approach",
	"i'll keep",
	"so i'm",
	"so i'll",
	"won't",
	"no longer",
	"not going to",
	"avoid",
];

/** Characters of one assistant text scanned for decisions (its start). */
export const DECISION_SCAN_MAX_CHARS = 16 * 1024;
/** UTF-8 bytes of one decision as returned (one line, cut with an ellipsis). */
export const DECISION_MAX_BYTES = 280;
/** Shortest sentence read as a decision: shorter ones ("Switching to it.") carry no content. */
const DECISION_MIN_CHARS = 24;

export interface Decision {
	entryId: string;
	address: string;
	ordinal: number;
	/** One line, bounded to `DECISION_MAX_BYTES`. */
	text: string;
}

/** Sentences of prose: fenced code dropped, split after `.`, `!`, `?` and at line ends. */
function proseSentences(text: string): string[] {
	const prose: string[] = [];
	let fenced = false;
	for (const line of text.slice(0, DECISION_SCAN_MAX_CHARS).split("\n")) {
		if (line.trimStart().startsWith("```")) {
			fenced = !fenced;
			continue;
		}
		if (!fenced) prose.push(line);
	}
	return prose.flatMap((line) => line.split(/(?<=[.!?])\s+/)).map((sentence) => sentence.trim());
}

/** True when a sentence states a choice (`DECISION_PHRASES`), not a question. */
export function isDecision(sentence: string): boolean {
	if (sentence.length < DECISION_MIN_CHARS || sentence.endsWith("?")) return false;
	const lower = sentence.toLowerCase().replace(/[‘’]/g, "'");
	return DECISION_PHRASES.some((phrase) => lower.includes(phrase));
}

/** The decisions of a span of events, oldest first; a repeated sentence is kept at its latest statement. */
export function decisionsOf(events: readonly NormalizedEvent[]): Decision[] {
	const byText = new Map<string, Decision>();
	for (const event of events) {
		if (event.kind !== "assistant" || event.origin !== "raw") continue;
		for (const sentence of proseSentences(event.text)) {
			if (!isDecision(sentence)) continue;
			const text = shrinkText(oneLine(sentence.replace(/^[\s#>*_`-]+/, "")), DECISION_MAX_BYTES);
			byText.delete(text);
			byText.set(text, { entryId: event.entryId, address: event.address, ordinal: event.ordinal, text });
		}
	}
	return [...byText.values()].sort((a, b) => a.ordinal - b.ordinal);
}

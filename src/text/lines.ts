/**
 * One-line and multi-line text selection: the package's one set of
 * mechanical text operations (sanitize characters, collapse whitespace,
 * select a first line, shrink one-line text with an ellipsis). Nothing here
 * looks at what the text means. Byte limits are UTF-8 (`utf8.ts`); the
 * code-unit bounds fold briefs use live in `bounded.ts`.
 */

import { isHighSurrogate, isLowSurrogate, truncateUtf8, truncateUtf8Start, utf8ByteLength } from "./utf8.ts";

/** Marker appended to (or prepended before) a shrunken one-line text. */
export const ELLIPSIS = "…";

const ELLIPSIS_BYTES = 3;

/** Any code unit `sanitizeText` rewrites (CR, controls, C1, surrogates: a valid pair is checked below). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const NEEDS_SANITIZING = /[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]/;

/**
 * Make text safe to render: CRLF/CR become LF, lone surrogates become U+FFFD,
 * and control characters other than LF and TAB become spaces.
 */
export function sanitizeText(text: string): string {
	// Most text needs nothing: one native scan answers that (and a per-character loop is slow under jiti).
	if (!NEEDS_SANITIZING.test(text)) return text;
	let out = "";
	let runStart = 0;
	for (let index = 0; index < text.length; index++) {
		const unit = text.charCodeAt(index);
		let replacement: string | undefined;
		if (unit === 0x0d) {
			replacement = text.charCodeAt(index + 1) === 0x0a ? "" : "\n";
		} else if ((unit < 0x20 && unit !== 0x0a && unit !== 0x09) || (unit >= 0x7f && unit <= 0x9f)) {
			replacement = " ";
		} else if (isHighSurrogate(unit)) {
			if (isLowSurrogate(text.charCodeAt(index + 1))) index++;
			else replacement = "\uFFFD";
		} else if (isLowSurrogate(unit)) {
			replacement = "\uFFFD";
		}
		if (replacement !== undefined) {
			out += text.slice(runStart, index) + replacement;
			runStart = index + 1;
		}
	}
	return runStart === 0 ? text : out + text.slice(runStart);
}

/** Sanitized multi-line text with trailing spaces removed per line and outer blank lines trimmed. */
export function multiLine(text: string): string {
	return sanitizeText(text)
		.split("\n")
		.map((line) => line.trimEnd())
		.join("\n")
		.replace(/^\n+|\n+$/g, "");
}

/** Sanitized text with every whitespace run collapsed to one space, trimmed. */
export function oneLine(text: string): string {
	return sanitizeText(text).replace(/\s+/g, " ").trim();
}

/** The first non-blank line, collapsed to one line ("" when there is none). */
export function firstLine(text: string): string {
	for (const line of sanitizeText(text).split("\n")) {
		const collapsed = line.replace(/\s+/g, " ").trim();
		if (collapsed) return collapsed;
	}
	return "";
}

/** Bound one-line text to `maxBytes`, keeping its start (or end) and marking the cut with an ellipsis. */
export function shrinkText(text: string, maxBytes: number, keep: "start" | "end" = "start"): string {
	if (utf8ByteLength(text) <= maxBytes) return text;
	if (maxBytes < ELLIPSIS_BYTES) return "";
	return keep === "start"
		? truncateUtf8(text, maxBytes - ELLIPSIS_BYTES) + ELLIPSIS
		: ELLIPSIS + truncateUtf8Start(text, maxBytes - ELLIPSIS_BYTES);
}

/** Upper bound for one-line text carried in view items (above every per-line cap). */
export const ONE_LINE_MAX_BYTES = 4096;

/** `oneLine` + `shrinkText` for potentially huge text, without scanning all of it. */
export function boundedOneLine(text: string, maxBytes = ONE_LINE_MAX_BYTES, keep: "start" | "end" = "start"): string {
	const window = maxBytes * 4;
	const slice = text.length <= window ? text : keep === "start" ? text.slice(0, window) : text.slice(-window);
	return shrinkText(oneLine(slice), maxBytes, keep);
}

/** Custom-message types, tool names, refs, call ids and enricher ids are cut to this many UTF-8 bytes. */
export const IDENTIFIER_MAX_BYTES = 128;

/** Visible ASCII without spaces: already one sanitized line, one byte per character. */
const PLAIN_IDENTIFIER = /^[\x21-\x7e]*$/;

/**
 * A typed identifier (id, address, tool name) as one sanitized line of at most
 * `maxBytes`, cut with an ellipsis: it can never start a new line or crowd out
 * the text around it.
 */
export function boundedIdentifier(text: string, maxBytes: number): string {
	// Fast path for the usual id or name; the result is what `boundedOneLine` would return.
	if (text.length <= maxBytes && PLAIN_IDENTIFIER.test(text)) return text;
	return boundedOneLine(text, maxBytes);
}

/** A typed identifier (custom type, tool name, ref, call id) as one bounded line; cut with an ellipsis. */
export function identifierLabel(identifier: string): string {
	return boundedIdentifier(identifier, IDENTIFIER_MAX_BYTES);
}

/** Text of a message content: the string itself, or its text parts joined with newlines (other parts skipped). */
export function contentText(content: unknown): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	const texts: string[] = [];
	for (const part of content) {
		if (typeof part !== "object" || part === null) continue;
		const { type, text } = part as { type?: unknown; text?: unknown };
		if (type === "text" && typeof text === "string") texts.push(text);
	}
	return texts.join("\n");
}

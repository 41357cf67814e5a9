/**
 * The mechanical text operations the deterministic compactor is allowed to use.
 *
 * Everything here is structural: sanitize characters, collapse whitespace,
 * select a first line, shrink one-line text with an ellipsis, excerpt
 * multi-line text, and build explicit byte-loss markers. Nothing here looks at what
 * the text means. UTF-8 measuring and clipping live in `utf8.ts`; `sanitizeText`
 * replaces lone surrogates up front so the rendered string and its byte count
 * never disagree.
 */

import { isHighSurrogate, isLowSurrogate, truncateUtf8, truncateUtf8Start, utf8ByteLength } from "./utf8.ts";

/** Marker appended to (or prepended before) a shrunken one-line text. */
export const ELLIPSIS = "…";

const ELLIPSIS_BYTES = 3;

/**
 * Make text safe to render: CRLF/CR become LF, lone surrogates become U+FFFD,
 * and control characters other than LF and TAB become spaces.
 */
export function sanitizeText(text: string): string {
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

/** The first non-blank line, collapsed to one line (the historical one-line view). */
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

/** Rendered entry ids and nested addresses are cut to this many UTF-8 bytes (after the `@`). */
export const ADDRESS_MAX_BYTES = 128;
/** Custom-message types, tool names, refs, call ids and enricher ids are cut to this many UTF-8 bytes. */
export const IDENTIFIER_MAX_BYTES = 128;

/**
 * The one way a source address reaches rendered text: `@` plus the address on
 * one line (sanitized, whitespace collapsed), cut to `ADDRESS_MAX_BYTES` with a
 * trailing ellipsis when it is longer. An id can therefore never start a new
 * line (and pose as a section header) or crowd out the block it appears in.
 */
export function renderAddress(address: string): string {
	return `@${boundedIdentifier(address, ADDRESS_MAX_BYTES)}`;
}

/** A typed identifier (custom type, tool name, ref, call id) as one bounded line; cut with an ellipsis. */
export function identifierLabel(identifier: string): string {
	return boundedIdentifier(identifier, IDENTIFIER_MAX_BYTES);
}

/** Visible ASCII without spaces: already one sanitized line, one byte per character. */
const PLAIN_IDENTIFIER = /^[\x21-\x7e]*$/;

function boundedIdentifier(text: string, maxBytes: number): string {
	// Fast path for the usual id or name; the result is what `boundedOneLine` would return.
	if (text.length <= maxBytes && PLAIN_IDENTIFIER.test(text)) return text;
	return boundedOneLine(text, maxBytes);
}

/** Explicit marker for protected text that lost bytes. */
export function omittedBytesMarker(omittedBytes: number): string {
	return `[... ${omittedBytes} bytes omitted]`;
}

/**
 * Keep the head and tail of multi-line text within `maxBytes`, replacing the
 * middle with an omitted-byte marker on its own line. Returns the excerpt and
 * how many source bytes it dropped (0 when the text fits).
 */
export function excerptMiddle(text: string, maxBytes: number): { text: string; omittedBytes: number } {
	const total = utf8ByteLength(text);
	if (total <= maxBytes) return { text, omittedBytes: 0 };
	// The marker never grows: the real omitted count has no more digits than `total`.
	const frame = utf8ByteLength(`\n${omittedBytesMarker(total)}\n`);
	const available = Math.max(0, maxBytes - frame);
	const head = truncateUtf8(text, Math.ceil(available / 2));
	const tail = truncateUtf8Start(text, available - utf8ByteLength(head));
	const omittedBytes = total - utf8ByteLength(head) - utf8ByteLength(tail);
	if (available === 0) return { text: omittedBytesMarker(total), omittedBytes: total };
	return { text: `${head}\n${omittedBytesMarker(omittedBytes)}\n${tail}`, omittedBytes };
}

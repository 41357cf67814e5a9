/**
 * The mechanical text operations the deterministic compactor is allowed to
 * use, on top of the package's text toolkit (`src/text/`): address and
 * identifier rendering, explicit byte-loss markers, and multi-line excerpts.
 * Nothing here looks at what the text means. The one-line helpers are
 * re-exported from `src/text/lines.ts` so every compactor module reads them
 * from one place.
 */

import { boundedIdentifier } from "../../text/lines.ts";
import { truncateUtf8, truncateUtf8Start, utf8ByteLength } from "../../text/utf8.ts";

export {
	boundedOneLine,
	ELLIPSIS,
	firstLine,
	IDENTIFIER_MAX_BYTES,
	identifierLabel,
	multiLine,
	ONE_LINE_MAX_BYTES,
	oneLine,
	sanitizeText,
	shrinkText,
} from "../../text/lines.ts";

/** Rendered entry ids and nested addresses are cut to this many UTF-8 bytes (after the `@`). */
export const ADDRESS_MAX_BYTES = 128;

/**
 * The one way a source address reaches rendered text: `@` plus the address on
 * one line (sanitized, whitespace collapsed), cut to `ADDRESS_MAX_BYTES` with a
 * trailing ellipsis when it is longer. An id can therefore never start a new
 * line (and pose as a section header) or crowd out the block it appears in.
 */
export function renderAddress(address: string): string {
	return `@${boundedIdentifier(address, ADDRESS_MAX_BYTES)}`;
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

/**
 * An action's text as a person reads it. Actions write for the model (exact
 * byte counts, full SHA-256 hashes it can quote back); a slash command's
 * output and a tool row show the same sentences with readable sizes and
 * short hashes. The model's text is never changed.
 */

import { readableBytes } from "../../text/bytes.ts";

/** Hex digits of a hash a person is shown: enough to recognise it (`/context peek` finds a fold by id, not hash). */
export const SHORT_HASH_CHARS = 12;

/** `13782 bytes` → `13.5 KB`, `a 273-byte brief` → `a 273 B brief`, a 64-hex hash → its first 12 digits and "…". */
export function personText(text: string): string {
	return text
		.replace(/\b(\d{4,}) bytes\b/g, (_, bytes: string) => readableBytes(Number(bytes)))
		.replace(/\ban? (\d+)-byte\b/g, (_, bytes: string) => `a ${readableBytes(Number(bytes))}`)
		.replace(/\b([0-9a-f]{64})\b/g, (hash: string) => `${hash.slice(0, SHORT_HASH_CHARS)}…`);
}

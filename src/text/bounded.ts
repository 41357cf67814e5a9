/**
 * Bounds in UTF-16 code units (JavaScript string length), as fold briefs are
 * measured: cut with a truncation mark, never inside a surrogate pair, and
 * join lists until a bound with an explicit "(+n more)".
 */

import { isHighSurrogate } from "./utf8.ts";

/** Marks text cut to fit a bound. */
export const TRUNCATION_MARK = "…";

/** Cut `text` to at most `max` code units, ending with the truncation mark, never inside a surrogate pair. */
export function truncateText(text: string, max: number): string {
	if (text.length <= max) return text;
	if (max <= TRUNCATION_MARK.length) return "";
	let cut = max - TRUNCATION_MARK.length;
	if (isHighSurrogate(text.charCodeAt(cut - 1))) cut--;
	return `${text.slice(0, cut).trimEnd()}${TRUNCATION_MARK}`;
}

/** Join items until `max` would be exceeded, then say how many were left out. Undefined when empty. */
export function boundedList(items: readonly string[], separator: string, max: number): string | undefined {
	if (items.length === 0) return undefined;
	const all = items.join(separator);
	if (all.length <= max) return all;
	let text = "";
	for (let i = 0; i < items.length; i++) {
		const item = items[i] ?? "";
		const next = text ? `${text}${separator}${item}` : item;
		const rest = items.length - i - 1;
		const tail = rest > 0 ? ` (+${rest} more)` : "";
		if (next.length + tail.length > max) {
			// The previous round checked that `text` fits with this very "(+n more)" tail.
			if (text) return `${text} (+${items.length - i} more)`;
			return `${truncateText(item, max - tail.length)}${tail}`;
		}
		text = next;
	}
	return text;
}

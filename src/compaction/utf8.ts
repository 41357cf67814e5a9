/**
 * Mechanical UTF-8 and code-point measurements for bounded compaction text.
 *
 * Every byte limit in the compactor is measured in UTF-8 as a `TextEncoder`
 * would write the string: a lone UTF-16 surrogate counts as the three bytes of
 * U+FFFD it would become. Clipping never splits a code point, so a clipped
 * string is always a prefix of whole characters.
 */

const HIGH_SURROGATE_MIN = 0xd800;
const HIGH_SURROGATE_MAX = 0xdbff;
const LOW_SURROGATE_MIN = 0xdc00;
const LOW_SURROGATE_MAX = 0xdfff;

/** True for a UTF-16 high (leading) surrogate code unit. */
export function isHighSurrogate(unit: number): boolean {
	return unit >= HIGH_SURROGATE_MIN && unit <= HIGH_SURROGATE_MAX;
}

/** True for a UTF-16 low (trailing) surrogate code unit. */
export function isLowSurrogate(unit: number): boolean {
	return unit >= LOW_SURROGATE_MIN && unit <= LOW_SURROGATE_MAX;
}

/** Width in code units and UTF-8 bytes of the code point starting at `index`. */
function codePointAt(text: string, index: number): { units: number; bytes: number } {
	const unit = text.charCodeAt(index);
	if (unit < 0x80) return { units: 1, bytes: 1 };
	if (unit < 0x800) return { units: 1, bytes: 2 };
	if (isHighSurrogate(unit) && isLowSurrogate(text.charCodeAt(index + 1))) return { units: 2, bytes: 4 };
	// BMP characters and lone surrogates (written as U+FFFD) take three bytes.
	return { units: 1, bytes: 3 };
}

/** UTF-8 byte length of `text`. */
export function utf8ByteLength(text: string): number {
	let bytes = 0;
	for (let index = 0; index < text.length; ) {
		const point = codePointAt(text, index);
		bytes += point.bytes;
		index += point.units;
	}
	return bytes;
}

/** Number of Unicode code points ("characters") in `text`; a lone surrogate counts as one. */
export function codePointLength(text: string): number {
	let count = 0;
	for (let index = 0; index < text.length; count++) index += codePointAt(text, index).units;
	return count;
}

/** True when `text` has no unpaired UTF-16 surrogate. */
export function isWellFormedUtf16(text: string): boolean {
	for (let index = 0; index < text.length; index++) {
		const unit = text.charCodeAt(index);
		if (isHighSurrogate(unit)) {
			if (!isLowSurrogate(text.charCodeAt(index + 1))) return false;
			index++;
		} else if (isLowSurrogate(unit)) {
			return false;
		}
	}
	return true;
}

/** Replace each unpaired surrogate with U+FFFD, which is what UTF-8 encoding would write anyway. */
export function toWellFormedUtf16(text: string): string {
	if (isWellFormedUtf16(text)) return text;
	let out = "";
	for (let index = 0; index < text.length; index++) {
		const unit = text.charCodeAt(index);
		if (isHighSurrogate(unit) && isLowSurrogate(text.charCodeAt(index + 1))) {
			out += text.slice(index, index + 2);
			index++;
		} else if (isHighSurrogate(unit) || isLowSurrogate(unit)) {
			out += "\ufffd";
		} else {
			out += text[index];
		}
	}
	return out;
}

/** A whole-code-point prefix of `text` within both limits, and the UTF-8 bytes it leaves out. */
export interface ClippedText {
	text: string;
	bytes: number;
	omittedBytes: number;
	clipped: boolean;
}

/**
 * Longest prefix of `text` with at most `maxBytes` UTF-8 bytes and at most
 * `maxCodePoints` code points. Never splits a surrogate pair.
 */
export function clipText(text: string, maxBytes: number, maxCodePoints = Number.POSITIVE_INFINITY): ClippedText {
	let bytes = 0;
	let points = 0;
	let index = 0;
	while (index < text.length) {
		const point = codePointAt(text, index);
		if (bytes + point.bytes > maxBytes || points + 1 > maxCodePoints) break;
		bytes += point.bytes;
		points++;
		index += point.units;
	}
	if (index >= text.length) return { text, bytes, omittedBytes: 0, clipped: false };
	return { text: text.slice(0, index), bytes, omittedBytes: utf8ByteLength(text.slice(index)), clipped: true };
}

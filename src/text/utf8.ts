/**
 * The package's one UTF-8 module: byte lengths, code-point walking and
 * clipping for bounded text (compaction summaries, fold briefs, records).
 *
 * Every byte limit in the package is measured in UTF-8 as a `TextEncoder`
 * would write the string: a lone UTF-16 surrogate counts as the three bytes of
 * U+FFFD it would become. Clipping never splits a code point, so a clipped
 * string is always a prefix (or suffix) of whole characters.
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

/**
 * UTF-8 byte length of `text`: the engine's own count (a lone surrogate is
 * written as U+FFFD, three bytes). Native because it runs over every byte a
 * fold or summary measures, and Pi loads this package through jiti, where a
 * per-character loop calling imported helpers pays a binding getter per call.
 */
export function utf8ByteLength(text: string): number {
	return Buffer.byteLength(text, "utf8");
}

/** Number of Unicode code points ("characters") in `text`; a lone surrogate counts as one. */
export function codePointLength(text: string): number {
	let count = 0;
	for (let index = 0; index < text.length; count++) index += codePointAt(text, index).units;
	return count;
}

/** True when `text` has no unpaired UTF-16 surrogate. */
export function isWellFormedUtf16(text: string): boolean {
	return text.isWellFormed();
}

/** Replace each unpaired surrogate with U+FFFD, which is what UTF-8 encoding would write anyway. */
export function toWellFormedUtf16(text: string): string {
	return text.toWellFormed();
}

/** A whole-code-point prefix of `text` within both limits, and the UTF-8 bytes it leaves out. */
export interface ClippedText {
	text: string;
	bytes: number;
	omittedBytes: number;
	clipped: boolean;
}

/** End index and UTF-8 size of the longest whole-code-point prefix within both limits. */
function prefixEnd(text: string, maxBytes: number, maxCodePoints: number): { index: number; bytes: number } {
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
	return { index, bytes };
}

/**
 * Longest prefix of `text` with at most `maxBytes` UTF-8 bytes and at most
 * `maxCodePoints` code points. Never splits a surrogate pair.
 */
export function clipText(text: string, maxBytes: number, maxCodePoints = Number.POSITIVE_INFINITY): ClippedText {
	const { index, bytes } = prefixEnd(text, maxBytes, maxCodePoints);
	if (index >= text.length) return { text, bytes, omittedBytes: 0, clipped: false };
	return { text: text.slice(0, index), bytes, omittedBytes: utf8ByteLength(text.slice(index)), clipped: true };
}

/** Longest prefix of `text` whose UTF-8 encoding fits `maxBytes`; never splits a code point. */
export function truncateUtf8(text: string, maxBytes: number): string {
	if (maxBytes <= 0) return "";
	// No UTF-16 code unit encodes to more than three bytes.
	if (text.length * 3 <= maxBytes) return text;
	return text.slice(0, prefixEnd(text, maxBytes, Number.POSITIVE_INFINITY).index);
}

/** Longest suffix of `text` whose UTF-8 encoding fits `maxBytes`; never splits a code point. */
export function truncateUtf8Start(text: string, maxBytes: number): string {
	if (maxBytes <= 0) return "";
	if (text.length * 3 <= maxBytes) return text;
	let bytes = 0;
	let index = text.length;
	while (index > 0) {
		const units =
			isLowSurrogate(text.charCodeAt(index - 1)) && index >= 2 && isHighSurrogate(text.charCodeAt(index - 2)) ? 2 : 1;
		const size = codePointAt(text, index - units).bytes;
		if (bytes + size > maxBytes) break;
		bytes += size;
		index -= units;
	}
	return text.slice(index);
}

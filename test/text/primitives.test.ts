import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sanitizeText } from "../../src/text/lines.ts";
import { isWellFormedUtf16, toWellFormedUtf16, utf8ByteLength } from "../../src/text/utf8.ts";

/** The rule `sanitizeText` states, one code unit at a time, with no fast path. */
function sanitizeOracle(text: string): string {
	let out = "";
	for (let index = 0; index < text.length; index++) {
		const unit = text.charCodeAt(index);
		const next = text.charCodeAt(index + 1);
		if (unit === 0x0d) out += next === 0x0a ? "" : "\n";
		else if ((unit < 0x20 && unit !== 0x0a && unit !== 0x09) || (unit >= 0x7f && unit <= 0x9f)) out += " ";
		else if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
			out += text.slice(index, index + 2);
			index++;
		} else if (unit >= 0xd800 && unit <= 0xdfff) out += "\uFFFD";
		else out += text[index];
	}
	return out;
}

/** Strings mixing plain text, controls, CR/LF, C1, valid pairs and lone surrogates. */
const hostileText = fc
	.array(
		fc.oneof(
			fc.string(),
			fc.constantFrom("\r", "\r\n", "\n", "\t", "\x00", "\x1b[31m", "\x7f", "\x85", "\x9f", "é", "😀"),
			fc.constantFrom("\ud800", "\udfff", "\ud83d", "\ude00x"),
		),
	)
	.map((parts) => parts.join(""));

describe("text primitives", () => {
	it("sanitizeText rewrites exactly what its rule names, with or without the fast path", () => {
		fc.assert(
			fc.property(hostileText, (text) => {
				expect(sanitizeText(text)).toBe(sanitizeOracle(text));
			}),
			{ numRuns: 500 },
		);
		const plain = "export const a = 1;\n\tindented é 😀";
		expect(sanitizeText(plain)).toBe(plain);
	});

	it("utf8ByteLength counts what UTF-8 encoding writes (a lone surrogate as U+FFFD)", () => {
		const encoder = new TextEncoder();
		fc.assert(
			fc.property(hostileText, (text) => {
				expect(utf8ByteLength(text)).toBe(encoder.encode(text).length);
				expect(isWellFormedUtf16(text)).toBe(toWellFormedUtf16(text) === text);
				expect(utf8ByteLength(toWellFormedUtf16(text))).toBe(utf8ByteLength(text));
			}),
			{ numRuns: 500 },
		);
	});
});

/**
 * Bounded, strict recursive-descent JSON decoder for the typed compaction
 * request protocol.
 *
 * It exists so the protocol never goes through `JSON.parse`, which silently
 * keeps the last of duplicate keys, accepts unpaired surrogates and has no
 * structural bound. This decoder:
 * - accepts exactly RFC 8259 grammar (whitespace is space, tab, LF, CR);
 * - rejects duplicate keys by their decoded value, so `"\u0076ersion"` and
 *   `"version"` collide;
 * - rejects unpaired UTF-16 surrogates, raw or escaped. A pair must be written
 *   in one form: two raw code units or two `\u` escapes;
 * - stops at a container depth and a value-node count before doing more work;
 * - returns typed nodes (numbers keep their lexeme) and never builds objects
 *   with prototype-sensitive keys.
 * Callers bound the source length before calling.
 */

import { isHighSurrogate, isLowSurrogate } from "../../text/utf8.ts";

/** A decoded JSON value. Object members keep source order. */
export type JsonNode =
	| { kind: "object"; members: Map<string, JsonNode> }
	| { kind: "array"; items: JsonNode[] }
	| { kind: "string"; value: string }
	| { kind: "number"; lexeme: string; value: number }
	| { kind: "boolean"; value: boolean }
	| { kind: "null" };

export type JsonDecodeErrorCode =
	| "malformed-json"
	| "invalid-scalar"
	| "unpaired-surrogate"
	| "duplicate-key"
	| "too-deep"
	| "too-many-nodes";

export interface JsonDecodeError {
	code: JsonDecodeErrorCode;
	/** Code-unit offset into the decoded source where the problem was found. */
	offset: number;
	/** Short description of the problem; never quotes the source. */
	detail: string;
}

export type JsonDecodeResult = { ok: true; value: JsonNode } | { ok: false; error: JsonDecodeError };

export interface JsonDecodeLimits {
	/** Deepest container nesting allowed; the outermost object or array is depth 1. */
	maxDepth: number;
	/** Most values (containers and scalars, not keys) allowed in the document. */
	maxNodes: number;
}

/** Thrown internally to unwind the descent; never escapes `decodeBoundedJson`. */
class DecodeStop {
	readonly error: JsonDecodeError;
	constructor(error: JsonDecodeError) {
		this.error = error;
	}
}

const NUMBER_PATTERN = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const HEX4_PATTERN = /^[0-9a-fA-F]{4}$/;
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
	'"': '"',
	"\\": "\\",
	"/": "/",
	b: "\b",
	f: "\f",
	n: "\n",
	r: "\r",
	t: "\t",
};

/** Decode `source` as one strict JSON document within `limits`. Never throws. */
export function decodeBoundedJson(source: string, limits: JsonDecodeLimits): JsonDecodeResult {
	let pos = 0;
	let nodes = 0;

	const fail = (code: JsonDecodeErrorCode, detail: string, offset = pos): never => {
		throw new DecodeStop({ code, offset, detail });
	};

	const skipWhitespace = (): void => {
		while (pos < source.length) {
			const char = source[pos];
			if (char !== " " && char !== "\t" && char !== "\n" && char !== "\r") return;
			pos++;
		}
	};

	const countNode = (): void => {
		nodes++;
		if (nodes > limits.maxNodes) fail("too-many-nodes", `more than ${limits.maxNodes} values`);
	};

	const readHex4 = (): number => {
		const hex = source.slice(pos, pos + 4);
		if (!HEX4_PATTERN.test(hex)) fail("invalid-scalar", "\\u escape needs four hex digits");
		pos += 4;
		return Number.parseInt(hex, 16);
	};

	const parseString = (): string => {
		const start = pos;
		pos++; // opening quote
		let out = "";
		while (true) {
			if (pos >= source.length) fail("malformed-json", "unterminated string", start);
			const unit = source.charCodeAt(pos);
			if (unit === 0x22) {
				pos++;
				return out;
			}
			if (unit < 0x20) fail("invalid-scalar", "raw control character in string");
			if (unit === 0x5c) {
				const escapeChar = source[pos + 1];
				if (escapeChar === undefined) fail("malformed-json", "unterminated string", start);
				const simple = escapeChar === undefined ? undefined : SIMPLE_ESCAPES[escapeChar];
				if (simple !== undefined) {
					out += simple;
					pos += 2;
					continue;
				}
				if (escapeChar !== "u") fail("invalid-scalar", "unknown string escape");
				const escapeAt = pos;
				pos += 2;
				const code = readHex4();
				if (isLowSurrogate(code))
					fail("unpaired-surrogate", "escaped low surrogate without a high surrogate", escapeAt);
				if (isHighSurrogate(code)) {
					if (source[pos] !== "\\" || source[pos + 1] !== "u") {
						fail("unpaired-surrogate", "escaped high surrogate not followed by an escaped low surrogate", escapeAt);
					}
					pos += 2;
					const low = readHex4();
					if (!isLowSurrogate(low)) {
						fail("unpaired-surrogate", "escaped high surrogate not followed by an escaped low surrogate", escapeAt);
					}
					out += String.fromCharCode(code, low);
					continue;
				}
				out += String.fromCharCode(code);
				continue;
			}
			if (isLowSurrogate(unit)) fail("unpaired-surrogate", "raw low surrogate without a high surrogate");
			if (isHighSurrogate(unit)) {
				if (!isLowSurrogate(source.charCodeAt(pos + 1))) {
					fail("unpaired-surrogate", "raw high surrogate not followed by a raw low surrogate");
				}
				out += source.slice(pos, pos + 2);
				pos += 2;
				continue;
			}
			out += source[pos];
			pos++;
		}
	};

	const parseNumber = (): JsonNode => {
		NUMBER_PATTERN.lastIndex = pos;
		const match = NUMBER_PATTERN.exec(source);
		if (!match) return fail("invalid-scalar", "malformed number");
		const lexeme = match[0];
		const next = source[pos + lexeme.length];
		// A number must end at a structural character or whitespace, e.g. reject "01" and "1.".
		if (next !== undefined && !/[ \t\n\r,\]}]/.test(next)) fail("invalid-scalar", "malformed number");
		const value = Number(lexeme);
		if (!Number.isFinite(value)) fail("invalid-scalar", "number out of range");
		pos += lexeme.length;
		return { kind: "number", lexeme, value };
	};

	const parseLiteral = (): JsonNode => {
		for (const [word, node] of [
			["true", { kind: "boolean", value: true }],
			["false", { kind: "boolean", value: false }],
			["null", { kind: "null" }],
		] as const) {
			if (source.startsWith(word, pos)) {
				const next = source[pos + word.length];
				if (next !== undefined && /[A-Za-z0-9_$]/.test(next)) break;
				pos += word.length;
				return node;
			}
		}
		return fail("invalid-scalar", "unknown literal");
	};

	const parseValue = (depth: number): JsonNode => {
		skipWhitespace();
		if (pos >= source.length) fail("malformed-json", "expected a value");
		countNode();
		const char = source[pos];
		if (char === "{") return parseObject(depth + 1);
		if (char === "[") return parseArray(depth + 1);
		if (char === '"') return { kind: "string", value: parseString() };
		if (char === "-" || (char !== undefined && char >= "0" && char <= "9")) return parseNumber();
		if (char !== undefined && /[A-Za-z]/.test(char)) return parseLiteral();
		return fail("malformed-json", "unexpected character");
	};

	const parseObject = (depth: number): JsonNode => {
		if (depth > limits.maxDepth) fail("too-deep", `nesting deeper than ${limits.maxDepth}`);
		pos++; // {
		const members = new Map<string, JsonNode>();
		skipWhitespace();
		if (source[pos] === "}") {
			pos++;
			return { kind: "object", members };
		}
		while (true) {
			skipWhitespace();
			if (source[pos] !== '"') fail("malformed-json", "expected a string key");
			const keyAt = pos;
			const key = parseString();
			if (members.has(key)) fail("duplicate-key", "duplicate object key", keyAt);
			skipWhitespace();
			if (source[pos] !== ":") fail("malformed-json", "expected ':' after key");
			pos++;
			members.set(key, parseValue(depth));
			skipWhitespace();
			const next = source[pos];
			if (next === ",") {
				pos++;
				continue;
			}
			if (next === "}") {
				pos++;
				return { kind: "object", members };
			}
			fail("malformed-json", "expected ',' or '}'");
		}
	};

	const parseArray = (depth: number): JsonNode => {
		if (depth > limits.maxDepth) fail("too-deep", `nesting deeper than ${limits.maxDepth}`);
		pos++; // [
		const items: JsonNode[] = [];
		skipWhitespace();
		if (source[pos] === "]") {
			pos++;
			return { kind: "array", items };
		}
		while (true) {
			items.push(parseValue(depth));
			skipWhitespace();
			const next = source[pos];
			if (next === ",") {
				pos++;
				continue;
			}
			if (next === "]") {
				pos++;
				return { kind: "array", items };
			}
			fail("malformed-json", "expected ',' or ']'");
		}
	};

	try {
		const value = parseValue(0);
		skipWhitespace();
		if (pos !== source.length) fail("malformed-json", "unexpected content after the JSON value");
		return { ok: true, value };
	} catch (stop) {
		if (stop instanceof DecodeStop) return { ok: false, error: stop.error };
		// A host failure such as stack exhaustion still fails closed as malformed input.
		return { ok: false, error: { code: "malformed-json", offset: pos, detail: "decoder stopped" } };
	}
}

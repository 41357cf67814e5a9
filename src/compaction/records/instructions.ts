/**
 * Decoding of Pi's `customInstructions` for the deterministic compactor.
 *
 * Three inputs are told apart by exact matches only, never by reading prose:
 * - the exact `__pi_vcc__` sentinel routes compaction to pi-vcc and is never
 *   rendered (on the tree path it is ordinary text);
 * - the typed preserve protocol: the exact prefix `COMPACT_REQUEST_PREFIX`
 *   followed by a strict v1 JSON object. Any failure is a structured error and
 *   the caller must cancel; the payload is never shown as plain text;
 * - anything else is plain user text: whitespace is canonicalized and the text
 *   is bounded to the instruction limits, marking truncation.
 * The prefix namespace is reserved: text that starts with it after leading
 * whitespace, or names another protocol version, also fails closed rather than
 * being rendered as instructions.
 */

import { clipText, codePointLength, toWellFormedUtf16, utf8ByteLength } from "../../text/utf8.ts";
import { decodeBoundedJson, type JsonDecodeErrorCode, type JsonNode } from "./json-decoder.ts";

import { COMPACT_REQUEST_NAMESPACE, COMPACT_REQUEST_PREFIX, PI_VCC_SENTINEL } from "./wire.ts";

export { COMPACT_REQUEST_NAMESPACE, COMPACT_REQUEST_PREFIX, PI_VCC_SENTINEL };
/** The only protocol version this decoder accepts (`"version": 1`, written exactly as `1`). */
export const COMPACT_REQUEST_VERSION = 1;
/** Limit on the whole typed source (prefix plus JSON) in UTF-8 bytes, checked before parsing. */
export const MAX_REQUEST_SOURCE_BYTES = 16 * 1024;
/** Instructions limit, in code points and in UTF-8 bytes (typed: reject; plain: truncate). */
export const MAX_INSTRUCTIONS_CHARS = 8 * 1024;
export const MAX_INSTRUCTIONS_BYTES = 8 * 1024;
/** Most `preserve` items in one typed request. */
export const MAX_PRESERVE_ITEMS = 16;
/** Per-item `preserve` limit, in code points and in UTF-8 bytes. */
export const MAX_PRESERVE_ITEM_CHARS = 2 * 1024;
export const MAX_PRESERVE_ITEM_BYTES = 2 * 1024;
/** Structural bound for the request JSON: the valid shape is an object holding one array (depth 2, ≤ 20 values). */
export const REQUEST_JSON_LIMITS = { maxDepth: 4, maxNodes: 64 } as const;
/** Upper bound on an error message, so a notification never carries a large payload. */
export const MAX_INSTRUCTION_ERROR_MESSAGE_BYTES = 512;
/** Longest field name quoted back in an error message; longer or unprintable names are not echoed. */
export const MAX_QUOTED_FIELD_CHARS = 64;

export type InstructionErrorCode =
	| "request-too-large"
	| "prefix-not-exact"
	| "unsupported-protocol"
	| JsonDecodeErrorCode
	| "not-an-object"
	| "unknown-field"
	| "missing-version"
	| "unsupported-version"
	| "invalid-type"
	| "instructions-too-many-chars"
	| "instructions-too-many-bytes"
	| "preserve-too-many-items"
	| "preserve-item-too-many-chars"
	| "preserve-item-too-many-bytes"
	| "preserve-item-empty";

/** A rejected typed request. `message` names the problem and the next action. */
export interface InstructionDecodeError {
	code: InstructionErrorCode;
	message: string;
}

/** Request content ready for the `[Compaction Request]` block. */
export interface CompactionRequest {
	/** Canonical instruction text; "" when there is none. */
	instructions: string;
	/** UTF-8 bytes of canonical plain text the decoder cut off (always 0 for typed requests). */
	instructionsOmittedBytes: number;
	/** Canonical preserve items, in request order. */
	preserve: string[];
	/** True when canonicalization changed any value. */
	canonicalized: boolean;
	/** True when the decoder had to truncate plain text to the instruction limits. */
	decoderTruncated: boolean;
}

export type InstructionSurface = "compaction" | "tree";

export type DecodedInstructions =
	| { ok: true; mode: "none" | "pi-vcc"; sourceBytes: number; request: undefined }
	| { ok: true; mode: "plain" | "typed-v1"; sourceBytes: number; request: CompactionRequest }
	| { ok: false; mode: "typed-v1"; sourceBytes: number; error: InstructionDecodeError };

const NEXT_ACTION = "Compaction was cancelled; resend a valid request.";

function rejection(code: InstructionErrorCode, problem: string, sourceBytes: number): DecodedInstructions {
	const message = clipText(
		`Compaction request rejected (${code}): ${problem}. ${NEXT_ACTION}`,
		MAX_INSTRUCTION_ERROR_MESSAGE_BYTES,
	).text;
	return { ok: false, mode: "typed-v1", sourceBytes, error: { code, message } };
}

/**
 * Whitespace canonicalization ("whitespace-v1"): CRLF, CR, U+2028 and U+2029
 * become LF; within a line every run of other whitespace becomes one space and
 * the line is trimmed; runs of blank lines collapse to one; leading and
 * trailing blank lines are dropped. Unpaired surrogates become U+FFFD.
 */
export function canonicalizeWhitespace(text: string): string {
	const lines = toWellFormedUtf16(text)
		.replace(/\r\n?|[\u2028\u2029]/g, "\n")
		.split("\n");
	const out: string[] = [];
	let pendingBlank = false;
	for (const line of lines) {
		const collapsed = line.replace(/\s+/g, " ").trim();
		if (collapsed === "") {
			pendingBlank = out.length > 0;
			continue;
		}
		if (pendingBlank) out.push("");
		pendingBlank = false;
		out.push(collapsed);
	}
	return out.join("\n");
}

/**
 * Decode Pi's `customInstructions`. Never throws. A result with `ok: false`
 * means the caller must cancel the operation and may show `error.message`.
 */
export function decodeCustomInstructions(
	value: unknown,
	surface: InstructionSurface = "compaction",
): DecodedInstructions {
	if (typeof value !== "string" || value === "") return { ok: true, mode: "none", sourceBytes: 0, request: undefined };
	if (surface === "compaction" && value === PI_VCC_SENTINEL) {
		return { ok: true, mode: "pi-vcc", sourceBytes: utf8ByteLength(value), request: undefined };
	}
	if (value.startsWith(COMPACT_REQUEST_PREFIX)) return decodeTypedRequest(value);
	const sourceBytes = utf8ByteLength(value);
	const leading = value.trimStart();
	if (leading.startsWith(COMPACT_REQUEST_PREFIX)) {
		return rejection("prefix-not-exact", "the request prefix must be the first character of the text", sourceBytes);
	}
	if (leading.startsWith(COMPACT_REQUEST_NAMESPACE)) {
		return rejection(
			"unsupported-protocol",
			`only the "${COMPACT_REQUEST_PREFIX}" request protocol is supported`,
			sourceBytes,
		);
	}
	return decodePlain(value, sourceBytes);
}

function decodePlain(value: string, sourceBytes: number): DecodedInstructions {
	const canonical = canonicalizeWhitespace(value);
	if (canonical === "") return { ok: true, mode: "none", sourceBytes, request: undefined };
	const clipped = clipText(canonical, MAX_INSTRUCTIONS_BYTES, MAX_INSTRUCTIONS_CHARS);
	return {
		ok: true,
		mode: "plain",
		sourceBytes,
		request: {
			instructions: clipped.text,
			instructionsOmittedBytes: clipped.omittedBytes,
			preserve: [],
			canonicalized: canonical !== value,
			decoderTruncated: clipped.clipped,
		},
	};
}

function describeField(name: string): string {
	const printable = [...name].every((char) => char.charCodeAt(0) >= 0x20);
	if (codePointLength(name) > MAX_QUOTED_FIELD_CHARS || !printable) return "an unnamed field";
	return JSON.stringify(name);
}

function decodeTypedRequest(value: string): DecodedInstructions {
	// The aggregate bound comes first: nothing larger reaches the parser.
	const sourceBytes = utf8ByteLength(value);
	if (sourceBytes > MAX_REQUEST_SOURCE_BYTES) {
		return rejection(
			"request-too-large",
			`the request is ${sourceBytes} UTF-8 bytes, the limit is ${MAX_REQUEST_SOURCE_BYTES}; shorten instructions or preserve items`,
			sourceBytes,
		);
	}
	const parsed = decodeBoundedJson(value.slice(COMPACT_REQUEST_PREFIX.length), REQUEST_JSON_LIMITS);
	if (!parsed.ok) {
		const at = parsed.error.offset + COMPACT_REQUEST_PREFIX.length;
		return rejection(parsed.error.code, `invalid JSON at offset ${at}: ${parsed.error.detail}`, sourceBytes);
	}
	const root = parsed.value;
	if (root.kind !== "object") return rejection("not-an-object", "the payload must be a JSON object", sourceBytes);
	for (const key of root.members.keys()) {
		if (key !== "version" && key !== "instructions" && key !== "preserve") {
			return rejection(
				"unknown-field",
				`${describeField(key)} is not a request field; allowed fields are "version", "instructions" and "preserve"`,
				sourceBytes,
			);
		}
	}
	const version = root.members.get("version");
	if (version === undefined) return rejection("missing-version", `"version": 1 is required`, sourceBytes);
	if (version.kind !== "number") return rejection("invalid-type", `"version" must be the number 1`, sourceBytes);
	if (version.lexeme !== String(COMPACT_REQUEST_VERSION)) {
		return rejection("unsupported-version", `only "version": ${COMPACT_REQUEST_VERSION} is supported`, sourceBytes);
	}
	const instructions = readInstructions(root.members.get("instructions"), sourceBytes);
	if (typeof instructions !== "string") return instructions;
	const preserve = readPreserve(root.members.get("preserve"), sourceBytes);
	if (!Array.isArray(preserve)) return preserve;
	// Canonicalization runs only after every limit held on the decoded values.
	const canonicalInstructions = canonicalizeWhitespace(instructions);
	const canonicalPreserve: string[] = [];
	for (const [index, item] of preserve.entries()) {
		const canonical = canonicalizeWhitespace(item);
		if (canonical === "") {
			return rejection("preserve-item-empty", `preserve item ${index} is empty after whitespace`, sourceBytes);
		}
		canonicalPreserve.push(canonical);
	}
	return {
		ok: true,
		mode: "typed-v1",
		sourceBytes,
		request: {
			instructions: canonicalInstructions,
			instructionsOmittedBytes: 0,
			preserve: canonicalPreserve,
			canonicalized:
				canonicalInstructions !== instructions || canonicalPreserve.some((item, i) => item !== preserve[i]),
			decoderTruncated: false,
		},
	};
}

function readInstructions(node: JsonNode | undefined, sourceBytes: number): string | DecodedInstructions {
	if (node === undefined) return "";
	if (node.kind !== "string") return rejection("invalid-type", `"instructions" must be a string`, sourceBytes);
	const chars = codePointLength(node.value);
	if (chars > MAX_INSTRUCTIONS_CHARS) {
		return rejection(
			"instructions-too-many-chars",
			`"instructions" has ${chars} characters, the limit is ${MAX_INSTRUCTIONS_CHARS}`,
			sourceBytes,
		);
	}
	const bytes = utf8ByteLength(node.value);
	if (bytes > MAX_INSTRUCTIONS_BYTES) {
		return rejection(
			"instructions-too-many-bytes",
			`"instructions" has ${bytes} UTF-8 bytes, the limit is ${MAX_INSTRUCTIONS_BYTES}`,
			sourceBytes,
		);
	}
	return node.value;
}

function readPreserve(node: JsonNode | undefined, sourceBytes: number): string[] | DecodedInstructions {
	if (node === undefined) return [];
	if (node.kind !== "array") return rejection("invalid-type", `"preserve" must be an array of strings`, sourceBytes);
	// The count is checked before any item is inspected.
	if (node.items.length > MAX_PRESERVE_ITEMS) {
		return rejection(
			"preserve-too-many-items",
			`"preserve" has ${node.items.length} items, the limit is ${MAX_PRESERVE_ITEMS}`,
			sourceBytes,
		);
	}
	const items: string[] = [];
	for (const [index, item] of node.items.entries()) {
		if (item.kind !== "string")
			return rejection("invalid-type", `preserve item ${index} must be a string`, sourceBytes);
		const chars = codePointLength(item.value);
		if (chars > MAX_PRESERVE_ITEM_CHARS) {
			return rejection(
				"preserve-item-too-many-chars",
				`preserve item ${index} has ${chars} characters, the limit is ${MAX_PRESERVE_ITEM_CHARS}`,
				sourceBytes,
			);
		}
		const bytes = utf8ByteLength(item.value);
		if (bytes > MAX_PRESERVE_ITEM_BYTES) {
			return rejection(
				"preserve-item-too-many-bytes",
				`preserve item ${index} has ${bytes} UTF-8 bytes, the limit is ${MAX_PRESERVE_ITEM_BYTES}`,
				sourceBytes,
			);
		}
		items.push(item.value);
	}
	return items;
}

export interface PreserveRequestInput {
	instructions?: string;
	preserve?: readonly string[];
}

/**
 * Encode a typed request as `COMPACT_REQUEST_PREFIX` + JSON for Pi's
 * `customInstructions`. The result is checked with the decoder, so an `ok`
 * text is always accepted by `decodeCustomInstructions`.
 */
export function encodePreserveRequest(
	input: PreserveRequestInput,
): { ok: true; text: string } | { ok: false; error: InstructionDecodeError } {
	if (input.preserve !== undefined && input.preserve.length > MAX_PRESERVE_ITEMS) {
		const refused = rejection(
			"preserve-too-many-items",
			`"preserve" has ${input.preserve.length} items, the limit is ${MAX_PRESERVE_ITEMS}`,
			0,
		);
		if (!refused.ok) return { ok: false, error: refused.error };
	}
	const parts = [`"version":${COMPACT_REQUEST_VERSION}`];
	if (input.instructions !== undefined) parts.push(`"instructions":${JSON.stringify(String(input.instructions))}`);
	if (input.preserve !== undefined) {
		parts.push(`"preserve":[${Array.from(input.preserve, (item) => JSON.stringify(String(item))).join(",")}]`);
	}
	const text = `${COMPACT_REQUEST_PREFIX}{${parts.join(",")}}`;
	const check = decodeCustomInstructions(text);
	if (!check.ok) return { ok: false, error: check.error };
	return { ok: true, text };
}

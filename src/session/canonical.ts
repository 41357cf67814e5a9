/**
 * Canonical bytes and SHA-256 addresses for session entries and spans.
 *
 * The serialization is JSON with object keys sorted by UTF-16 code unit order
 * at every depth, no insignificant whitespace, `undefined` members dropped (as
 * JSON.stringify drops them), encoded as UTF-8. A span is the concatenation of
 * its entries' canonical JSON, each followed by one "\n" (JSONL). The same
 * entry therefore has the same bytes and hash in every run on every machine.
 */

import { createHash } from "node:crypto";

/** Length of a SHA-256 digest written as lowercase hex. */
export const SHA256_HEX_LENGTH = 64;

/**
 * Deepest nesting the writer descends: it recurses, so a value nested tens of
 * thousands of levels deep would overflow the stack; this fails first with a
 * named error. Session loading refuses lines nested deeper than this.
 */
export const CANONICAL_MAX_DEPTH = 1024;

const encoder = new TextEncoder();

/** Serialize any JSON-compatible value with sorted keys and no whitespace. */
export function canonicalJson(value: unknown): string {
	return writeValue(value, 0) ?? "null";
}

function writeValue(value: unknown, depth: number): string | undefined {
	if (value === null) return "null";
	switch (typeof value) {
		case "string":
			return JSON.stringify(value);
		case "number":
			return Number.isFinite(value) ? JSON.stringify(value) : "null";
		case "boolean":
			return value ? "true" : "false";
		case "undefined":
		case "function":
		case "symbol":
			return undefined;
		case "bigint":
			throw new TypeError("canonicalJson: bigint values have no JSON form");
		default:
			break;
	}
	if (depth >= CANONICAL_MAX_DEPTH) {
		throw new RangeError(
			`canonicalJson: value nests deeper than ${CANONICAL_MAX_DEPTH} levels; it has no canonical form`,
		);
	}
	if (Array.isArray(value)) {
		return `[${value.map((item) => writeValue(item, depth + 1) ?? "null").join(",")}]`;
	}
	const record = value as Record<string, unknown>;
	const toJson = (record as { toJSON?: () => unknown }).toJSON;
	if (typeof toJson === "function") return writeValue(toJson.call(record), depth);
	const parts: string[] = [];
	for (const key of Object.keys(record).sort()) {
		const written = writeValue(record[key], depth + 1);
		if (written !== undefined) parts.push(`${JSON.stringify(key)}:${written}`);
	}
	return `{${parts.join(",")}}`;
}

/** Canonical UTF-8 bytes of one entry (or any JSON value). */
export function canonicalBytes(value: unknown): Uint8Array {
	return encoder.encode(canonicalJson(value));
}

/** Canonical UTF-8 bytes of an ordered span: one canonical JSON line per entry. */
export function canonicalSpanBytes(values: readonly unknown[]): Uint8Array {
	return encoder.encode(values.map((value) => `${canonicalJson(value)}\n`).join(""));
}

/** Lowercase hex SHA-256 of bytes or a string (hashed as UTF-8). */
export function sha256Hex(data: Uint8Array | string): string {
	return createHash("sha256").update(data).digest("hex");
}

/** SHA-256 address of one entry's canonical bytes. */
export function entryHash(entry: unknown): string {
	return sha256Hex(canonicalBytes(entry));
}

/** SHA-256 address of a span's canonical bytes. */
export function spanHash(entries: readonly unknown[]): string {
	return sha256Hex(canonicalSpanBytes(entries));
}

/** True when `text` is a well-formed lowercase SHA-256 hex digest. */
export function isSha256Hex(text: string): boolean {
	return text.length === SHA256_HEX_LENGTH && /^[0-9a-f]+$/.test(text);
}

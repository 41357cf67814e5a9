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

const encoder = new TextEncoder();

/** A container being written: the array and the next index, or the record, its sorted keys and the next key. */
type Frame =
	| { array: readonly unknown[]; index: number }
	| { record: Record<string, unknown>; keys: string[]; index: number; written: boolean };

/** `value` after its `toJSON` (repeatedly, as JSON.stringify would). */
function resolved(value: unknown): unknown {
	let current = value;
	while (typeof current === "object" && current !== null && !Array.isArray(current)) {
		const toJson = (current as { toJSON?: unknown }).toJSON;
		if (typeof toJson !== "function") break;
		current = toJson.call(current);
	}
	return current;
}

/** Values JSON has no form for: dropped from objects, `null` in arrays and at the top. */
function omitted(value: unknown): boolean {
	return value === undefined || typeof value === "function" || typeof value === "symbol";
}

/**
 * Serialize any JSON-compatible value with sorted keys and no whitespace.
 *
 * The writer keeps its own stack instead of recursing, so a value nested as
 * deep as `JSON.parse` can read (another extension's custom entry 100,000
 * levels down) still has canonical bytes and a hash: session data of any
 * depth can be folded, compacted and verified, and no hook fails on it. Its
 * tokens go into one list joined once, so the work is linear in the output.
 */
export function canonicalJson(value: unknown): string {
	const out: string[] = [];
	const stack: Frame[] = [];
	const open = (item: unknown): void => {
		if (item === null) out.push("null");
		else if (typeof item === "string") out.push(JSON.stringify(item));
		else if (typeof item === "number") out.push(Number.isFinite(item) ? JSON.stringify(item) : "null");
		else if (typeof item === "boolean") out.push(item ? "true" : "false");
		else if (typeof item === "bigint") throw new TypeError("canonicalJson: bigint values have no JSON form");
		else if (Array.isArray(item)) {
			out.push("[");
			stack.push({ array: item, index: 0 });
		} else {
			const record = item as Record<string, unknown>;
			out.push("{");
			stack.push({ record, keys: Object.keys(record).sort(), index: 0, written: false });
		}
	};
	const root = resolved(value);
	if (omitted(root)) return "null";
	open(root);
	for (let frame = stack.at(-1); frame !== undefined; frame = stack.at(-1)) {
		if ("array" in frame) {
			if (frame.index >= frame.array.length) {
				out.push("]");
				stack.pop();
				continue;
			}
			if (frame.index > 0) out.push(",");
			const item = resolved(frame.array[frame.index++]);
			if (omitted(item)) out.push("null");
			else open(item);
			continue;
		}
		let key: string | undefined;
		let item: unknown;
		while (key === undefined && frame.index < frame.keys.length) {
			const candidate = frame.keys[frame.index++] ?? "";
			item = resolved(frame.record[candidate]);
			if (!omitted(item)) key = candidate;
		}
		if (key === undefined) {
			out.push("}");
			stack.pop();
			continue;
		}
		out.push(`${frame.written ? "," : ""}${JSON.stringify(key)}:`);
		frame.written = true;
		open(item);
	}
	return out.join("");
}

/** Canonical UTF-8 bytes of one entry (or any JSON value). */
export function canonicalBytes(value: unknown): Uint8Array {
	return encoder.encode(canonicalJson(value));
}

/**
 * Canonical lines already encoded, by the object they serialize. A session
 * entry is never changed in place (Pi appends an edit as a new entry), and a
 * consolidation, the summary prepared for the next one and a peek's check of
 * the log each read every entry the fold covers: each entry is serialized
 * and encoded once per process, and a span is a copy of its lines' bytes.
 */
const lines = new WeakMap<object, Uint8Array>();

/** One value's canonical JSON line (with its "\n") as UTF-8, encoded once per object. */
function canonicalLine(value: unknown): Uint8Array {
	if (typeof value !== "object" || value === null) return encoder.encode(`${canonicalJson(value)}\n`);
	let line = lines.get(value);
	if (line === undefined) {
		line = encoder.encode(`${canonicalJson(value)}\n`);
		lines.set(value, line);
	}
	return line;
}

/** The lines' bytes, one after another. */
function concatLines(parts: readonly Uint8Array[]): Uint8Array {
	let total = 0;
	for (const part of parts) total += part.length;
	const out = new Uint8Array(total);
	let at = 0;
	for (const part of parts) {
		out.set(part, at);
		at += part.length;
	}
	return out;
}

/** Canonical UTF-8 bytes of an ordered span: one canonical JSON line per entry. */
export function canonicalSpanBytes(values: readonly unknown[]): Uint8Array {
	return concatLines(values.map(canonicalLine));
}

/**
 * Canonical span bytes of consecutive pieces of one span, and the byte
 * offsets where each piece after the first begins: the bytes are exactly
 * `canonicalSpanBytes(pieces.flat())`, so a store can keep the pieces apart
 * (a fold's children) while the span keeps one hash.
 */
export function canonicalPieces(pieces: readonly (readonly unknown[])[]): { bytes: Uint8Array; cuts: number[] } {
	const cuts: number[] = [];
	const parts: Uint8Array[] = [];
	let offset = 0;
	for (const piece of pieces) {
		if (parts.length > 0) cuts.push(offset);
		for (const value of piece) {
			const line = canonicalLine(value);
			parts.push(line);
			offset += line.length;
		}
	}
	return { bytes: concatLines(parts), cuts };
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

/** Entry ids of a span's canonical lines, in order ("" for a line that is not an entry with a string id). */
export function spanEntryIds(text: string): string[] {
	return text
		.split("\n")
		.filter(Boolean)
		.map((line) => {
			try {
				const id = (JSON.parse(line) as { id?: unknown }).id;
				return typeof id === "string" ? id : "";
			} catch {
				return "";
			}
		});
}

/** True when `text` is a well-formed lowercase SHA-256 hex digest. */
export function isSha256Hex(text: string): boolean {
	return text.length === SHA256_HEX_LENGTH && /^[0-9a-f]+$/.test(text);
}

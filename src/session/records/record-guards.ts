/**
 * The one set of structural guards for untrusted session values: plain
 * records, own properties, counts, string lists, and the bounded JSON reader
 * every typed payload passes through (tool arguments, custom-message details,
 * Fabric traces and audits, branch-summary facts, persisted details).
 *
 * They never trust prototypes, getters or numeric coercion: a record is a
 * plain object, a count is a non-negative safe integer, and a JSON value is
 * checked against explicit bounds before anything recurses over it.
 */

import { utf8ByteLength } from "../../text/utf8.ts";
import { canonicalJson } from "../canonical.ts";

/** A plain object: not null, not an array, with Object.prototype or a null prototype. */
export function isPlainRecord(value: unknown): value is Record<string, unknown> {
	if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
	const proto = Object.getPrototypeOf(value);
	return proto === Object.prototype || proto === null;
}

/** Own enumerable property, never an inherited one. */
export function own(record: Record<string, unknown>, key: string): unknown {
	return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** A non-negative safe integer. */
export function isCount(value: unknown): value is number {
	return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

export function isNonEmptyString(value: unknown): value is string {
	return typeof value === "string" && value.length > 0;
}

export function isStringArray(value: unknown, maxItems: number): value is string[] {
	return Array.isArray(value) && value.length <= maxItems && value.every((item) => typeof item === "string");
}

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/**
 * Limits for one bounded JSON value. Exceeding any of them rejects the value
 * as a whole. Depth counts nodes from the root (depth 0). The optional limits
 * are unbounded when absent.
 */
export interface JsonBounds {
	maxDepth: number;
	maxNodes: number;
	/** Most array items or object keys in one collection. */
	maxCollection?: number;
	/** UTF-8 size of one string or object key. */
	maxStringBytes?: number;
	/** UTF-8 size of the canonical JSON serialization. */
	maxBytes?: number;
}

export type BoundedJson = { ok: true; value: JsonValue; bytes?: number } | { ok: false; reason: string };

/**
 * Accept `value` only if it is plain JSON (null, boolean, finite number,
 * string, array, plain object) within every bound. Returns the value itself
 * (no copy) so callers keep exact typed data; `bytes` is its canonical size
 * when `maxBytes` is set. Recursion never goes deeper than `maxDepth + 1`.
 */
export function readBoundedJson(value: unknown, bounds: JsonBounds): BoundedJson {
	const maxCollection = bounds.maxCollection ?? Number.POSITIVE_INFINITY;
	const maxStringBytes = bounds.maxStringBytes ?? Number.POSITIVE_INFINITY;
	// No UTF-16 code unit takes more than three UTF-8 bytes, so short strings skip the count.
	const tooLong = (text: string): boolean => text.length * 3 > maxStringBytes && utf8ByteLength(text) > maxStringBytes;
	let nodes = 0;
	const visit = (node: unknown, depth: number): string | undefined => {
		nodes++;
		if (nodes > bounds.maxNodes) return "too many nodes";
		if (depth > bounds.maxDepth) return "too deep";
		if (node === null || typeof node === "boolean") return undefined;
		if (typeof node === "number") return Number.isFinite(node) ? undefined : "non-finite number";
		if (typeof node === "string") return tooLong(node) ? "string too long" : undefined;
		if (typeof node !== "object") return `not JSON (${typeof node})`;
		if (Array.isArray(node)) {
			if (node.length > maxCollection) return "array too long";
			for (const item of node) {
				const problem = visit(item, depth + 1);
				if (problem) return problem;
			}
			return undefined;
		}
		if (!isPlainRecord(node)) return "not a plain object";
		const keys = Object.keys(node);
		if (keys.length > maxCollection) return "object too large";
		for (const key of keys) {
			if (tooLong(key)) return "key too long";
			const problem = visit(node[key], depth + 1);
			if (problem) return problem;
		}
		return undefined;
	};
	const problem = visit(value, 0);
	if (problem) return { ok: false, reason: problem };
	if (bounds.maxBytes === undefined) return { ok: true, value: value as JsonValue };
	const bytes = utf8ByteLength(canonicalJson(value));
	if (bytes > bounds.maxBytes) return { ok: false, reason: "too many bytes" };
	return { ok: true, value: value as JsonValue, bytes };
}

/**
 * Small structural guards shared by the strict details validators.
 *
 * They read untrusted persisted values (compaction and branch-summary
 * `details`) without trusting prototypes, getters or numeric coercion: a
 * record is a plain object, a count is a non-negative safe integer, and a JSON
 * value is checked against explicit depth and node bounds.
 */

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

export function isCount(value: unknown): value is number {
	return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

export function isNonEmptyString(value: unknown): value is string {
	return typeof value === "string" && value.length > 0;
}

export function isStringArray(value: unknown, maxItems: number): value is string[] {
	return Array.isArray(value) && value.length <= maxItems && value.every((item) => typeof item === "string");
}

/** JSON value type used for bounded structural details. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export interface JsonBounds {
	maxDepth: number;
	maxNodes: number;
}

/**
 * True when `value` is plain JSON (finite numbers, plain objects, arrays)
 * within `bounds`. Containers count toward depth; every value is a node.
 */
export function isBoundedJson(value: unknown, bounds: JsonBounds): value is JsonValue {
	let nodes = 0;
	const visit = (node: unknown, depth: number): boolean => {
		nodes++;
		if (nodes > bounds.maxNodes) return false;
		if (node === null || typeof node === "string" || typeof node === "boolean") return true;
		if (typeof node === "number") return Number.isFinite(node);
		if (depth + 1 > bounds.maxDepth) return false;
		if (Array.isArray(node)) return node.every((item) => visit(item, depth + 1));
		if (!isPlainRecord(node)) return false;
		return Object.keys(node).every((key) => visit(node[key], depth + 1));
	};
	return visit(value, 0);
}

/**
 * Strict readers for the typed Fabric payloads normalization may trust.
 *
 * - `readFabricDisplay`: the declared intent on a `fabric_exec` call
 *   (`arguments.display.name`, optional `arguments.display.description`).
 * - `readFabricExecutionTraceV1`: the nested execution trace in a result's
 *   `details.trace`. Accepted shape (anything else, including unknown keys,
 *   rejects the whole trace; it is never reinterpreted as legacy data):
 *
 *   ```
 *   { kind: "pi-fabric.execution", version: 1,
 *     outcome: "succeeded" | "failed" | "aborted" | "timed_out",
 *     phases: string[],                      // ≤ 512, each non-blank, ≤ 1,024 bytes
 *     operations: {                          // ≤ 2,048, unique integer sequence ≥ 0
 *       type: "call", sequence: number, ref: string,   // ref non-blank, ≤ 1,024 bytes
 *       provider?: string, action?: string,            // ≤ 1,024 bytes each
 *       args: JSON object, outcome: <outcome>,
 *       failureStage?: "resolve" | "prepare" | "validate" | "approve" | "invoke" | "guard",
 *       error?: string,                                // ≤ 8,192 bytes
 *       result?: JSON, resultTruncated?: boolean, normalization?: JSON (ignored)
 *     }[],
 *     counts: { droppedValues, truncatedValues, redactedValues, droppedOperations },  // integers ≥ 0
 *     error?: string }                       // ≤ 8,192 bytes; whole trace ≤ 512 KiB canonical JSON
 *   ```
 *   Operations are returned in `sequence` order.
 * - `readLegacyFabricAudits`: the pre-trace `details.audits` array, used only
 *   when no `trace` field exists. Every record needs a non-blank string `ref`,
 *   JSON `args`, boolean `success` and optional string `error`; one bad record
 *   rejects the array. Other record fields (renderings, result prose) are never read.

 * Branch-summary envelopes are validated by `branch-details.ts`.
 */

import { oneLine, shrinkText } from "../../text/lines.ts";
import { utf8ByteLength } from "../../text/utf8.ts";
import {
	isCount,
	isPlainRecord,
	type JsonBounds,
	type JsonObject,
	type JsonValue,
	readBoundedJson,
} from "./record-guards.ts";

/** Aggregate and per-operation outcomes of a Fabric execution (trace V1 vocabulary). */
export type FabricOutcome = "succeeded" | "failed" | "aborted" | "timed_out";
export const FABRIC_OUTCOMES: readonly FabricOutcome[] = ["succeeded", "failed", "aborted", "timed_out"];

/** Tool name of the outer Fabric execution tool. */
export const FABRIC_EXEC_TOOL_NAME = "fabric_exec";

/** Declared run name and description bounds (UTF-8 bytes). */
export const FABRIC_RUN_NAME_MAX_BYTES = 256;
export const FABRIC_RUN_DESCRIPTION_MAX_BYTES = 1024;

export const FABRIC_TRACE_KIND = "pi-fabric.execution";
export const FABRIC_TRACE_VERSION = 1;
export const FABRIC_TRACE_MAX_BYTES = 512 * 1024;
export const FABRIC_TRACE_MAX_OPERATIONS = 2048;
export const FABRIC_TRACE_MAX_PHASES = 512;
export const FABRIC_TRACE_MAX_IDENTIFIER_BYTES = 1024;
export const FABRIC_TRACE_MAX_ERROR_BYTES = 8 * 1024;
export const FABRIC_TRACE_FAILURE_STAGES: readonly string[] = [
	"resolve",
	"prepare",
	"validate",
	"approve",
	"invoke",
	"guard",
];
export const FABRIC_AUDIT_MAX_RECORDS = 2048;

/** Structural bound for whole typed payloads before their shape is checked. */
const PAYLOAD_BOUNDS: JsonBounds = {
	maxDepth: 32,
	maxNodes: 200_000,
	maxCollection: 4096,
	maxStringBytes: FABRIC_TRACE_MAX_BYTES,
	maxBytes: FABRIC_TRACE_MAX_BYTES,
};

export interface FabricDisplay {
	name: string;
	description?: string;
}

/** Read a non-blank typed `display.name` (and optional description) from `fabric_exec` call arguments. */
export function readFabricDisplay(args: unknown): FabricDisplay | undefined {
	if (!isPlainRecord(args) || !isPlainRecord(args.display)) return undefined;
	const { name, description } = args.display;
	if (typeof name !== "string") return undefined;
	const boundedName = shrinkText(oneLine(name), FABRIC_RUN_NAME_MAX_BYTES);
	if (!boundedName) return undefined;
	const boundedDescription =
		typeof description === "string" ? shrinkText(oneLine(description), FABRIC_RUN_DESCRIPTION_MAX_BYTES) : "";
	return boundedDescription ? { name: boundedName, description: boundedDescription } : { name: boundedName };
}

/** A nested operation as normalization consumes it (from a trace, legacy audit or branch fact). */
export interface FabricOperationRecord {
	ref: string;
	provider?: string;
	action?: string;
	args: JsonValue;
	outcome: FabricOutcome;
	error?: string;
	result?: JsonValue;
}

export interface FabricExecutionTraceV1 {
	outcome: FabricOutcome;
	phases: string[];
	/** In `sequence` order. */
	operations: (FabricOperationRecord & { sequence: number })[];
	error?: string;
}

function isOutcome(value: unknown): value is FabricOutcome {
	return typeof value === "string" && (FABRIC_OUTCOMES as readonly string[]).includes(value);
}

function hasOnlyKeys(record: Record<string, unknown>, allowed: readonly string[]): boolean {
	return Object.keys(record).every((key) => allowed.includes(key));
}

function isBoundedString(value: unknown, maxBytes: number, nonBlank = false): value is string {
	return typeof value === "string" && utf8ByteLength(value) <= maxBytes && (!nonBlank || value.trim() !== "");
}

function optionalString(record: Record<string, unknown>, key: string, maxBytes: number): boolean {
	return !(key in record) || isBoundedString(record[key], maxBytes);
}

const TRACE_KEYS = ["kind", "version", "outcome", "phases", "operations", "counts", "error"];
const OPERATION_KEYS = [
	"type",
	"sequence",
	"ref",
	"provider",
	"action",
	"args",
	"outcome",
	"failureStage",
	"error",
	"result",
	"resultTruncated",
	"normalization",
];
const COUNT_KEYS = ["droppedValues", "truncatedValues", "redactedValues", "droppedOperations"];

/** Validate `details.trace` against the V1 shape documented above; undefined when it does not match. */
export function readFabricExecutionTraceV1(value: unknown): FabricExecutionTraceV1 | undefined {
	if (!isPlainRecord(value) || !hasOnlyKeys(value, TRACE_KEYS)) return undefined;
	if (value.kind !== FABRIC_TRACE_KIND || value.version !== FABRIC_TRACE_VERSION) return undefined;
	if (!isOutcome(value.outcome) || !optionalString(value, "error", FABRIC_TRACE_MAX_ERROR_BYTES)) return undefined;
	const { phases, operations, counts } = value;
	if (!Array.isArray(phases) || phases.length > FABRIC_TRACE_MAX_PHASES) return undefined;
	if (!phases.every((phase) => isBoundedString(phase, FABRIC_TRACE_MAX_IDENTIFIER_BYTES, true))) return undefined;
	if (!Array.isArray(operations) || operations.length > FABRIC_TRACE_MAX_OPERATIONS) return undefined;
	if (!isPlainRecord(counts) || Object.keys(counts).length !== COUNT_KEYS.length) return undefined;
	if (!COUNT_KEYS.every((key) => isCount(counts[key]))) return undefined;
	if (!readBoundedJson(value, PAYLOAD_BOUNDS).ok) return undefined;
	const sequences = new Set<number>();
	const read: (FabricOperationRecord & { sequence: number })[] = [];
	for (const operation of operations) {
		if (!isPlainRecord(operation) || !hasOnlyKeys(operation, OPERATION_KEYS)) return undefined;
		if (operation.type !== "call" || !isCount(operation.sequence) || sequences.has(operation.sequence)) {
			return undefined;
		}
		sequences.add(operation.sequence);
		if (!isBoundedString(operation.ref, FABRIC_TRACE_MAX_IDENTIFIER_BYTES, true)) return undefined;
		if (!optionalString(operation, "provider", FABRIC_TRACE_MAX_IDENTIFIER_BYTES)) return undefined;
		if (!optionalString(operation, "action", FABRIC_TRACE_MAX_IDENTIFIER_BYTES)) return undefined;
		if (!optionalString(operation, "error", FABRIC_TRACE_MAX_ERROR_BYTES)) return undefined;
		if (!isPlainRecord(operation.args) || !isOutcome(operation.outcome)) return undefined;
		if ("failureStage" in operation && !FABRIC_TRACE_FAILURE_STAGES.includes(operation.failureStage as string)) {
			return undefined;
		}
		if ("resultTruncated" in operation && typeof operation.resultTruncated !== "boolean") return undefined;
		read.push({
			sequence: operation.sequence,
			...identityFields(operation.ref, operation.provider, operation.action),
			args: operation.args as JsonObject,
			outcome: operation.outcome,
			...(typeof operation.error === "string" ? { error: operation.error } : {}),
			...("result" in operation ? { result: operation.result as JsonValue } : {}),
		});
	}
	read.sort((a, b) => a.sequence - b.sequence);
	return {
		outcome: value.outcome,
		phases: phases as string[],
		operations: read,
		...(typeof value.error === "string" ? { error: value.error } : {}),
	};
}

/** Typed provider/action for a ref: explicit typed fields win, else split the ref once on ".". */
function identityFields(
	ref: string,
	provider: unknown,
	action: unknown,
): { ref: string; provider?: string; action?: string } {
	const split = splitRef(ref);
	const resolvedProvider = typeof provider === "string" ? provider : split.provider;
	const resolvedAction = typeof action === "string" ? action : split.action;
	return {
		ref,
		...(resolvedProvider !== undefined ? { provider: resolvedProvider } : {}),
		...(resolvedAction !== undefined ? { action: resolvedAction } : {}),
	};
}

/** Split a typed Fabric ref once on "." into provider and action identity. */
export function splitRef(ref: string): { provider?: string; action?: string } {
	const dot = ref.indexOf(".");
	if (dot <= 0 || dot === ref.length - 1) return {};
	return { provider: ref.slice(0, dot), action: ref.slice(dot + 1) };
}

/** Strict legacy `details.audits` adapter; undefined when any record is malformed. */
export function readLegacyFabricAudits(value: unknown): FabricOperationRecord[] | undefined {
	if (!Array.isArray(value) || value.length > FABRIC_AUDIT_MAX_RECORDS) return undefined;
	const records: FabricOperationRecord[] = [];
	for (const record of value) {
		if (!isPlainRecord(record)) return undefined;
		if (!isBoundedString(record.ref, FABRIC_TRACE_MAX_IDENTIFIER_BYTES, true)) return undefined;
		if (typeof record.success !== "boolean") return undefined;
		if (!optionalString(record, "error", FABRIC_TRACE_MAX_ERROR_BYTES)) return undefined;
		if (!("args" in record) || !readBoundedJson(record.args, PAYLOAD_BOUNDS).ok) return undefined;
		records.push({
			...identityFields(record.ref, undefined, undefined),
			args: record.args as JsonValue,
			outcome: record.success ? "succeeded" : "failed",
			...(typeof record.error === "string" ? { error: record.error } : {}),
		});
	}
	return records;
}

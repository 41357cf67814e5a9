/**
 * The typed event model of the deterministic compactor, plus the bounded JSON
 * value guard every typed payload passes through.
 *
 * Normalization turns raw session entries into these events; projections,
 * rendering and QA read only events, never raw entries or rendered text.
 * Every event names the supplied-branch entry it came from (`entryId`,
 * `entryIndex`), its position in the event stream (`ordinal`), and the stable
 * address a reader can expand (`address`: an entry id, `entryId/n` for a
 * nested operation, `entryId/phase:n` for a phase, or a branch-summary fact
 * address). Thinking never becomes an event; it is only counted.
 */

import { canonicalJson } from "../session/canonical.ts";
import { utf8Bytes } from "./render-text.ts";

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** Aggregate and per-operation outcomes of a Fabric execution (trace V1 vocabulary). */
export type FabricOutcome = "succeeded" | "failed" | "aborted" | "timed_out";
export const FABRIC_OUTCOMES: readonly FabricOutcome[] = ["succeeded", "failed", "aborted", "timed_out"];

/** `raw`: read from a supplied entry. `branch-fact`: re-emitted from a valid branch-summary details envelope. */
export type EventOrigin = "raw" | "branch-fact";

interface EventBase {
	/** Position in the normalized event stream (0-based, dense). */
	ordinal: number;
	/** Id of the supplied-branch entry that produced the event. */
	entryId: string;
	/** Index of that entry in the supplied entries (summarized prefix, then kept tail). */
	entryIndex: number;
	/** Stable address to expand: entry id, `entryId/n`, `entryId/phase:n`, or a branch fact address. */
	address: string;
	origin: EventOrigin;
}

export interface UserEvent extends EventBase {
	kind: "user";
	text: string;
	images: number;
}

export interface AssistantEvent extends EventBase {
	kind: "assistant";
	/** Text parts of one assistant entry joined with newlines; thinking excluded. */
	text: string;
	stopReason?: string;
	/** Typed `errorMessage` of a failed or aborted response. */
	errorMessage?: string;
}

export interface CustomEvent extends EventBase {
	kind: "custom";
	customType: string;
	/** Text selected from a string content or its text parts. */
	text: string;
	images: number;
	display: boolean;
	/** Bounded JSON details; absent when there were none or they were malformed/over bounds. */
	details?: JsonValue;
	detailsStatus: "absent" | "kept" | "omitted";
}

export interface ToolCallEvent extends EventBase {
	kind: "toolCall";
	toolCallId: string;
	toolName: string;
	/** The typed JSON arguments object, or undefined when the call carried none. */
	args: JsonObject | undefined;
}

export interface ToolResultEvent extends EventBase {
	kind: "toolResult";
	toolCallId: string;
	/** Tool name of the paired call, or the result's own `toolName` when the call is missing. */
	toolName: string;
	isError: boolean;
	/** Bounded text of an error result (explicit error text, quoted, never parsed). */
	errorText?: string;
	/** True only when the result's typed `details.created` is exactly `true`. */
	created: boolean;
	/** The call paired by exact `toolCallId`, when one exists on the branch. */
	call?: { entryId: string; args: JsonObject | undefined };
}

export interface BashEvent extends EventBase {
	kind: "bash";
	command: string;
	exitCode?: number;
	cancelled: boolean;
	truncated: boolean;
	/** Bounded output of a failed execution (quoted, never parsed). */
	outputExcerpt?: string;
}

export interface FabricRunEvent extends EventBase {
	kind: "fabricRun";
	/** Declared `display.name`, bounded. */
	name: string;
	/** Declared `display.description`, bounded. */
	description?: string;
	outcome: FabricOutcome;
	toolCallId: string;
	/** Assistant entry that issued the call (the raw-source expansion address). */
	callEntryId: string;
	/** Internal fact address `callEntryId/call:toolCallId`. */
	factAddress: string;
}

export interface FabricPhaseEvent extends EventBase {
	kind: "fabricPhase";
	phase: string;
}

export interface FabricOperationEvent extends EventBase {
	kind: "fabricOperation";
	ref: string;
	provider?: string;
	action?: string;
	args: JsonValue;
	outcome: FabricOutcome;
	error?: string;
	/** True only when a typed operation result has `created: true`. */
	created: boolean;
	source: "trace" | "audit" | "branch-fact";
}

export type NormalizedEvent =
	| UserEvent
	| AssistantEvent
	| CustomEvent
	| ToolCallEvent
	| ToolResultEvent
	| BashEvent
	| FabricRunEvent
	| FabricPhaseEvent
	| FabricOperationEvent;

export type EventKind = NormalizedEvent["kind"];

/** Structural counts kept alongside the events so every omission stays auditable. */
export interface NormalizationCounts {
	/** Entries in the summarized prefix. */
	sourceEntries: number;
	/** Entries in the kept raw tail (read for dialogue only). */
	keptEntries: number;
	/** Events derived from the summarized prefix. */
	sourceEvents: number;
	/** Assistant thinking blocks in the summarized prefix that were erased (never become events). */
	thinkingErased: number;
	/** Prefix entries omitted by their latest `context_edit`. */
	editOmissions: number;
	/** Prefix entries whose content the latest `context_edit` replaced. */
	editReplacements: number;
	/** Custom-message details dropped as malformed or over bounds (content kept). */
	customDetailsOmitted: number;
	/** `fabric_exec` results whose present `details.trace` failed the V1 guard. */
	fabricTracesRejected: number;
	/** `fabric_exec` results whose legacy `details.audits` failed the strict adapter. */
	fabricAuditsRejected: number;
	/** Branch-summary entries whose details envelope was read / was absent or invalid. */
	branchEnvelopesRead: number;
	branchEnvelopesIgnored: number;
}

export function emptyNormalizationCounts(): NormalizationCounts {
	return {
		sourceEntries: 0,
		keptEntries: 0,
		sourceEvents: 0,
		thinkingErased: 0,
		editOmissions: 0,
		editReplacements: 0,
		customDetailsOmitted: 0,
		fabricTracesRejected: 0,
		fabricAuditsRejected: 0,
		branchEnvelopesRead: 0,
		branchEnvelopesIgnored: 0,
	};
}

/** Limits for one bounded JSON value. Exceeding any of them rejects the value as a whole. */
export interface JsonBounds {
	maxDepth: number;
	maxNodes: number;
	/** Most array items or object keys in one collection. */
	maxCollection: number;
	maxStringBytes: number;
	/** UTF-8 size of the canonical JSON serialization. */
	maxBytes: number;
}

export type BoundedJson = { ok: true; value: JsonValue; bytes: number } | { ok: false; reason: string };

/**
 * Accept `value` only if it is plain JSON (null, boolean, finite number,
 * string, array, plain object) within every bound. Returns the value itself
 * (no copy) so callers keep exact typed data.
 */
export function readBoundedJson(value: unknown, bounds: JsonBounds): BoundedJson {
	let nodes = 0;
	const visit = (node: unknown, depth: number): string | undefined => {
		nodes++;
		if (nodes > bounds.maxNodes) return "too many nodes";
		if (depth > bounds.maxDepth) return "too deep";
		if (node === null || typeof node === "boolean") return undefined;
		if (typeof node === "number") return Number.isFinite(node) ? undefined : "non-finite number";
		if (typeof node === "string") return utf8Bytes(node) > bounds.maxStringBytes ? "string too long" : undefined;
		if (typeof node !== "object") return `not JSON (${typeof node})`;
		if (Array.isArray(node)) {
			if (node.length > bounds.maxCollection) return "array too long";
			for (const item of node) {
				const problem = visit(item, depth + 1);
				if (problem) return problem;
			}
			return undefined;
		}
		const prototype = Object.getPrototypeOf(node);
		if (prototype !== Object.prototype && prototype !== null) return "not a plain object";
		const keys = Object.keys(node);
		if (keys.length > bounds.maxCollection) return "object too large";
		for (const key of keys) {
			if (utf8Bytes(key) > bounds.maxStringBytes) return "key too long";
			const problem = visit((node as Record<string, unknown>)[key], depth + 1);
			if (problem) return problem;
		}
		return undefined;
	};
	const problem = visit(value, 0);
	if (problem) return { ok: false, reason: problem };
	const bytes = utf8Bytes(canonicalJson(value));
	if (bytes > bounds.maxBytes) return { ok: false, reason: "too many bytes" };
	return { ok: true, value: value as JsonValue, bytes };
}

export function isPlainRecord(value: unknown): value is Record<string, unknown> {
	if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
	const prototype = Object.getPrototypeOf(value);
	return prototype === Object.prototype || prototype === null;
}

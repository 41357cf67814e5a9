/**
 * The typed event model of a session branch (`normalize.ts` builds it).
 *
 * Normalization turns raw session entries into these events; the fact
 * extractor and the compactor's projections, rendering and QA read only
 * events, never raw entries or rendered text. Every event names the
 * supplied-branch entry it came from (`entryId`, `entryIndex`), its position
 * in the event stream (`ordinal`), and the stable address a reader can
 * expand (`address`: an entry id, `entryId/n` for a nested operation,
 * `entryId/phase:n` for a phase, or a branch-summary fact address).
 * Thinking never becomes an event; it is only counted.
 */

import type { FabricOutcome } from "./records/fabric-trace.ts";
import type { JsonObject, JsonValue } from "./records/record-guards.ts";

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
	/** Bounded text of a failed result (explicit error text, quoted, never parsed). */
	errorText?: string;
	/** The failed result's error line (`errorFirstLine` of its multi-line text: host frame and framing skipped). */
	errorLine?: string;
	/**
	 * The exit code the result's text states (a host frame's `Exit code: N`, or
	 * Pi's appended line on an error result). A non-zero code fails the call
	 * even without `isError`: Codex CLI reports failed commands that way.
	 */
	exitCode?: number;
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
	/** Tool calls whose arguments were not plain JSON within `TOOL_ARGS_BOUNDS` (the call stays, without arguments). */
	toolArgsOmitted: number;
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
		toolArgsOmitted: 0,
		fabricTracesRejected: 0,
		fabricAuditsRejected: 0,
		branchEnvelopesRead: 0,
		branchEnvelopesIgnored: 0,
	};
}

/**
 * Raw active-branch session entries → typed events: the session model the
 * fact extractor (`facts.ts`), fold briefs and the deterministic compactor
 * all read. It imports nothing from `src/compaction` or `src/fold`.
 *
 * Structure alone decides what becomes an event: entry type, message role,
 * content-part type, custom-message fields, tool names, call ids, `isError`,
 * exit codes and the typed Fabric payloads read by `fabric-trace.ts`.
 *
 * - user / assistant text / tool call / tool result / bash execution messages
 *   and top-level `custom_message` entries produce events.
 * - Tool-call arguments pass the bounded JSON reader (`TOOL_ARGS_BOUNDS`)
 *   before anything recurses over them; rejected arguments are counted.
 * - Assistant thinking parts never become events; they are counted.
 * - Tool results pair with calls only by exact `toolCallId`.
 * - `compaction` entries, branch-summary prose, summary-carrying message roles
 *   (`compactionSummary`, `branchSummary`), system checkpoints, plain `custom`
 *   state entries and unknown roles produce nothing. A valid Fabric
 *   branch-summary details envelope contributes its typed facts.
 * - `context_edit` entries apply branch-relatively: the latest valid edit per
 *   target across the supplied entries wins; `null` omits the target, a
 *   replacement swaps its content only.
 * - `bashExecution` messages marked `excludeFromContext` never reach the model
 *   and produce nothing.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { boundedOneLine, contentText, oneLine, shrinkText } from "../text/lines.ts";
import { errorFirstLine, hostOutputHeader, withoutHostHeader } from "../text/tool-text.ts";
import {
	type CustomEvent,
	emptyNormalizationCounts,
	type NormalizationCounts,
	type NormalizedEvent,
} from "./events.ts";
import { type BranchFactV2, parseBranchSummaryDetails } from "./records/branch-details.ts";
import {
	FABRIC_EXEC_TOOL_NAME,
	FABRIC_RUN_DESCRIPTION_MAX_BYTES,
	FABRIC_RUN_NAME_MAX_BYTES,
	type FabricOperationRecord,
	type FabricOutcome,
	readFabricDisplay,
	readFabricExecutionTraceV1,
	readLegacyFabricAudits,
	splitRef,
} from "./records/fabric-trace.ts";
import { isPlainRecord, type JsonBounds, type JsonObject, readBoundedJson } from "./records/record-guards.ts";

/** Bounds for top-level custom-message `details`; anything beyond them is omitted, content stays. */
export const CUSTOM_DETAILS_BOUNDS = {
	maxDepth: 8,
	maxNodes: 512,
	maxCollection: 64,
	maxStringBytes: 2048,
	maxBytes: 8192,
} satisfies Required<JsonBounds>;

/**
 * Bounds for tool-call `arguments`. Only structure is tight (projections
 * recurse over arguments for identities and labels); string sizes stay far
 * above what one model response can write, so a large `write` keeps its path.
 * There is no serialized-size bound: measuring it would serialize every call's
 * arguments, and depth, node and string bounds already bound the work.
 * Arguments beyond any bound are omitted and counted; the call stays.
 */
export const TOOL_ARGS_BOUNDS = {
	maxDepth: 64,
	maxNodes: 200_000,
	maxCollection: 200_000,
	maxStringBytes: 16 * 1024 * 1024,
} satisfies JsonBounds;

/** Explicit error text kept from an error tool result (UTF-8 bytes, one line). */
export const ERROR_TEXT_MAX_BYTES = 2048;
/** The error line kept from a failed tool result (UTF-8 bytes, one line). */
export const ERROR_LINE_MAX_BYTES = 512;

/** The first text part of a tool result: where a host writes its output frame. */
function leadingText(content: unknown): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	const part = content.find((candidate) => isPlainRecord(candidate) && candidate.type === "text");
	return isPlainRecord(part) && typeof part.text === "string" ? part.text : "";
}

/**
 * What a failed tool result says, read from its multi-line text: the exit
 * code a host frame states (Codex CLI reports a failed command with
 * `Exit code: 1` and no typed error flag), the bounded one-line text without
 * that frame, and its error line (`errorFirstLine`: framing lines skipped).
 */
function resultFailure(
	content: unknown,
	isError: boolean,
): { errorText?: string; errorLine?: string; exitCode?: number } {
	const stated = hostOutputHeader(leadingText(content)).exitCode;
	if (!isError && (stated === undefined || stated === 0)) return stated === undefined ? {} : { exitCode: stated };
	const text = contentText(content);
	const read = errorFirstLine(text);
	const exitCode = read.exitCode ?? stated;
	return {
		errorText: boundedOneLine(withoutHostHeader(text), ERROR_TEXT_MAX_BYTES),
		...(read.line ? { errorLine: boundedOneLine(read.line, ERROR_LINE_MAX_BYTES) } : {}),
		...(exitCode !== undefined ? { exitCode } : {}),
	};
}

/** Output kept from a failed bash execution (UTF-8 bytes, one line, tail kept). */
export const BASH_OUTPUT_EXCERPT_MAX_BYTES = 1024;

export interface NormalizedBranch {
	/** Events of the summarized prefix followed by events of the kept tail. */
	events: NormalizedEvent[];
	/** Index of the first kept entry, i.e. the number of summarized entries. */
	cutIndex: number;
	/** Index in `events` of the first event that came from the kept tail. */
	cutEventIndex: number;
	counts: NormalizationCounts;
	/** Ids of the summarized entries, in order. */
	sourceEntryIds: string[];
	/** Timestamp of the last summarized entry that has one (never the wall clock). */
	sourceTimestamp?: string;
}

type EditReplacement = { content: unknown } | null;

interface CallInfo {
	entryId: string;
	name: string;
	args: JsonObject | undefined;
}

/** An event before it gets its stream ordinal. */
type EventDraft = NormalizedEvent extends infer E ? (E extends NormalizedEvent ? Omit<E, "ordinal"> : never) : never;

function contentImages(content: unknown): number {
	if (!Array.isArray(content)) return 0;
	return content.filter((part) => isPlainRecord(part) && part.type === "image").length;
}

/** Latest valid `context_edit` per target across the supplied entries. */
function collectEdits(entries: readonly unknown[]): Map<string, EditReplacement> {
	const edits = new Map<string, EditReplacement>();
	for (const entry of entries) {
		if (!isPlainRecord(entry) || entry.type !== "context_edit" || typeof entry.targetId !== "string") continue;
		const { replacement } = entry;
		if (replacement === null) edits.set(entry.targetId, null);
		else if (
			isPlainRecord(replacement) &&
			(typeof replacement.content === "string" || Array.isArray(replacement.content))
		)
			edits.set(entry.targetId, { content: replacement.content });
	}
	return edits;
}

/** Content after the target's latest edit; string replacements become one text block for array-content roles. */
function effectiveContent(original: unknown, edit: EditReplacement | undefined, arrayRole: boolean): unknown {
	if (!edit) return original;
	if (arrayRole && typeof edit.content === "string") return [{ type: "text", text: edit.content }];
	return edit.content;
}

/** Normalize the summarized prefix `entries` and (for dialogue only) the kept tail. */
export function normalizeBranch(
	entries: readonly SessionEntry[],
	keptEntries: readonly SessionEntry[] = [],
): NormalizedBranch {
	const all: readonly unknown[] = [...entries, ...keptEntries];
	const cutIndex = entries.length;
	const edits = collectEdits(all);
	const counts = emptyNormalizationCounts();
	counts.sourceEntries = entries.length;
	counts.keptEntries = keptEntries.length;

	const messageOf = (entry: unknown): Record<string, unknown> | undefined =>
		isPlainRecord(entry) && entry.type === "message" && isPlainRecord(entry.message) ? entry.message : undefined;

	// Arguments are read once per part object, through the bounded JSON reader.
	const argsRead = new WeakMap<object, JsonObject | undefined>();
	const argsOf = (part: Record<string, unknown>): JsonObject | undefined => {
		const raw = part.arguments;
		if (!isPlainRecord(raw)) return undefined;
		if (argsRead.has(raw)) return argsRead.get(raw);
		const read = readBoundedJson(raw, TOOL_ARGS_BOUNDS);
		const args = read.ok ? (read.value as JsonObject) : undefined;
		argsRead.set(raw, args);
		return args;
	};

	// Pass 1: every tool call on the branch, first occurrence per id, from edited content.
	const calls = new Map<string, CallInfo>();
	for (const entry of all) {
		const message = messageOf(entry);
		if (message?.role !== "assistant" || !isPlainRecord(entry) || typeof entry.id !== "string") continue;
		const edit = edits.get(entry.id);
		if (edit === null) continue;
		const content = effectiveContent(message.content, edit, true);
		if (!Array.isArray(content)) continue;
		for (const part of content) {
			if (!isPlainRecord(part) || part.type !== "toolCall" || typeof part.id !== "string") continue;
			if (typeof part.name !== "string" || calls.has(part.id)) continue;
			calls.set(part.id, {
				entryId: entry.id,
				name: part.name,
				args: argsOf(part),
			});
		}
	}

	const events: NormalizedEvent[] = [];
	let cutEventIndex = -1;
	const push = (draft: EventDraft): void => {
		events.push({ ...draft, ordinal: events.length } as NormalizedEvent);
	};
	const runsEmitted = new Set<string>();

	all.forEach((entry, entryIndex) => {
		if (entryIndex === cutIndex) cutEventIndex = events.length;
		if (!isPlainRecord(entry) || typeof entry.id !== "string") return;
		const entryId = entry.id;
		const inPrefix = entryIndex < cutIndex;
		const base = { entryId, entryIndex, address: entryId, origin: "raw" as const };
		const edit = edits.get(entryId);
		const countEdit = (): void => {
			if (!inPrefix || edit === undefined) return;
			if (edit === null) counts.editOmissions++;
			else counts.editReplacements++;
		};

		if (entry.type === "custom_message") {
			countEdit();
			if (edit === null || typeof entry.customType !== "string") return;
			const content = effectiveContent(entry.content, edit, false);
			push({ ...base, kind: "custom", ...customFields(entry.customType, content, entry, inPrefix, counts) });
			return;
		}
		if (entry.type === "branch_summary") {
			// Only a valid typed envelope counts; the summary prose never does.
			const parsed = parseBranchSummaryDetails(entry.details);
			if (!parsed.ok) {
				if (inPrefix) counts.branchEnvelopesIgnored++;
				return;
			}
			if (inPrefix) counts.branchEnvelopesRead++;
			for (const fact of parsed.details.facts) push(factEvent(fact, entryId, entryIndex, inPrefix, counts));
			return;
		}
		const message = messageOf(entry);
		if (!message) return;
		switch (message.role) {
			case "user": {
				countEdit();
				if (edit === null) return;
				const content = effectiveContent(message.content, edit, false);
				const text = contentText(content);
				const images = contentImages(content);
				if (text.trim() || images > 0) push({ ...base, kind: "user", text, images });
				return;
			}
			case "assistant": {
				countEdit();
				if (edit === null) return;
				const content = effectiveContent(message.content, edit, true);
				const parts = Array.isArray(content) ? content : [];
				if (inPrefix) counts.thinkingErased += parts.filter((p) => isPlainRecord(p) && p.type === "thinking").length;
				const text = contentText(parts);
				const errorMessage = typeof message.errorMessage === "string" ? message.errorMessage : "";
				if (text.trim() || errorMessage.trim()) {
					push({
						...base,
						kind: "assistant",
						text,
						...(typeof message.stopReason === "string" ? { stopReason: message.stopReason } : {}),
						...(errorMessage.trim() ? { errorMessage: boundedOneLine(errorMessage, ERROR_TEXT_MAX_BYTES) } : {}),
					});
				}
				for (const part of parts) {
					if (!isPlainRecord(part) || part.type !== "toolCall" || typeof part.id !== "string") continue;
					if (typeof part.name !== "string") continue;
					const args = argsOf(part);
					if (inPrefix && args === undefined && isPlainRecord(part.arguments)) counts.toolArgsOmitted++;
					push({ ...base, kind: "toolCall", toolCallId: part.id, toolName: part.name, args });
				}
				return;
			}
			case "toolResult": {
				countEdit();
				if (edit === null || typeof message.toolCallId !== "string") return;
				const toolCallId = message.toolCallId;
				const call = calls.get(toolCallId);
				const toolName = call?.name ?? (typeof message.toolName === "string" ? message.toolName : "");
				const isError = message.isError === true;
				const content = effectiveContent(message.content, edit, true);
				const details = isPlainRecord(message.details) ? message.details : undefined;
				push({
					...base,
					kind: "toolResult",
					toolCallId,
					toolName,
					isError,
					created: details?.created === true,
					...resultFailure(content, isError),
					...(call ? { call: { entryId: call.entryId, args: call.args } } : {}),
				});
				if (toolName === FABRIC_EXEC_TOOL_NAME) {
					emitFabric({ entryId, entryIndex, toolCallId, call, isError, details, inPrefix, counts, runsEmitted, push });
				}
				return;
			}
			case "bashExecution": {
				countEdit();
				if (edit === null || message.excludeFromContext === true || typeof message.command !== "string") return;
				const exitCode = typeof message.exitCode === "number" ? message.exitCode : undefined;
				const cancelled = message.cancelled === true;
				const failed = cancelled || (exitCode !== undefined && exitCode !== 0);
				const output = typeof message.output === "string" ? message.output : "";
				push({
					...base,
					kind: "bash",
					command: message.command,
					...(exitCode !== undefined ? { exitCode } : {}),
					cancelled,
					truncated: message.truncated === true,
					...(failed && output.trim()
						? { outputExcerpt: boundedOneLine(output, BASH_OUTPUT_EXCERPT_MAX_BYTES, "end") }
						: {}),
				});
				return;
			}
			default:
				return;
		}
	});
	if (cutEventIndex === -1) cutEventIndex = events.length;
	counts.sourceEvents = cutEventIndex;

	let sourceTimestamp: string | undefined;
	for (let index = entries.length - 1; index >= 0 && sourceTimestamp === undefined; index--) {
		const timestamp = (entries[index] as { timestamp?: unknown }).timestamp;
		if (typeof timestamp === "string" && timestamp.trim()) sourceTimestamp = shrinkText(oneLine(timestamp), 64);
	}
	return {
		events,
		cutIndex,
		cutEventIndex,
		counts,
		sourceEntryIds: entries.map((entry) => entry.id),
		...(sourceTimestamp !== undefined ? { sourceTimestamp } : {}),
	};
}

function customFields(
	customType: string,
	content: unknown,
	entry: Record<string, unknown>,
	inPrefix: boolean,
	counts: NormalizationCounts,
): Omit<CustomEvent, "ordinal" | "entryId" | "entryIndex" | "address" | "origin" | "kind"> {
	const fields = {
		customType,
		text: contentText(content),
		images: contentImages(content),
		display: entry.display === true,
	};
	if (!("details" in entry) || entry.details === undefined) return { ...fields, detailsStatus: "absent" };
	const details = readBoundedJson(entry.details, CUSTOM_DETAILS_BOUNDS);
	if (!details.ok) {
		if (inPrefix) counts.customDetailsOmitted++;
		return { ...fields, detailsStatus: "omitted" };
	}
	return { ...fields, details: details.value, detailsStatus: "kept" };
}

interface FabricContext {
	entryId: string;
	entryIndex: number;
	toolCallId: string;
	call: CallInfo | undefined;
	isError: boolean;
	details: Record<string, unknown> | undefined;
	inPrefix: boolean;
	counts: NormalizationCounts;
	runsEmitted: Set<string>;
	push: (draft: EventDraft) => void;
}

/** Declared intent, phases and nested operations of one outer `fabric_exec` result. */
function emitFabric(context: FabricContext): void {
	const { entryId, entryIndex, toolCallId, call, details, inPrefix, counts, push } = context;
	let outcome: FabricOutcome = context.isError ? "failed" : "succeeded";
	let phases: string[] = [];
	let operations: FabricOperationRecord[] = [];
	let source: "trace" | "audit" = "trace";
	if (details && "trace" in details) {
		const trace = readFabricExecutionTraceV1(details.trace);
		if (trace) {
			outcome = trace.outcome;
			phases = trace.phases;
			operations = trace.operations;
		} else if (inPrefix) counts.fabricTracesRejected++;
	} else if (details && "audits" in details) {
		const audits = readLegacyFabricAudits(details.audits);
		if (audits) {
			operations = audits;
			source = "audit";
		} else if (inPrefix) counts.fabricAuditsRejected++;
	}
	const base = { entryId, entryIndex, origin: "raw" as const };
	const display = call?.name === FABRIC_EXEC_TOOL_NAME ? readFabricDisplay(call.args) : undefined;
	if (call && display && !context.runsEmitted.has(toolCallId)) {
		context.runsEmitted.add(toolCallId);
		push({
			...base,
			address: call.entryId,
			kind: "fabricRun",
			...display,
			outcome,
			toolCallId,
			callEntryId: call.entryId,
			factAddress: `${call.entryId}/call:${toolCallId}`,
		});
	}
	phases.forEach((phase, index) => {
		push({ ...base, address: `${entryId}/phase:${index}`, kind: "fabricPhase", phase });
	});
	operations.forEach((operation, index) => {
		push({ ...base, address: `${entryId}/${index}`, kind: "fabricOperation", ...operationFields(operation), source });
	});
}

/** Event fields of a nested operation: typed result reduced to its `created` flag, error quoted on one line. */
function operationFields(operation: FabricOperationRecord) {
	const { result, error, ...rest } = operation;
	const quoted = error === undefined ? "" : boundedOneLine(error, ERROR_TEXT_MAX_BYTES);
	return { ...rest, ...(quoted ? { error: quoted } : {}), created: isPlainRecord(result) && result.created === true };
}

/** A typed branch-summary fact as an event positioned at its branch-summary entry. */
function factEvent(
	fact: BranchFactV2,
	entryId: string,
	entryIndex: number,
	inPrefix: boolean,
	counts: NormalizationCounts,
): EventDraft {
	const base = { entryId, entryIndex, address: fact.address, origin: "branch-fact" as const };
	switch (fact.kind) {
		case "user":
			return { ...base, kind: "user", text: fact.text, images: 0 };
		case "customMessage":
			return {
				...base,
				kind: "custom",
				...customFields(
					fact.customType,
					fact.text,
					{ display: fact.display, ...("details" in fact ? { details: fact.details } : {}) },
					inPrefix,
					counts,
				),
			};
		case "phase":
			return { ...base, kind: "fabricPhase", phase: fact.phase };
		case "operation": {
			const split = splitRef(fact.ref);
			const provider = fact.provider ?? split.provider;
			const action = fact.action ?? split.action;
			const operation: FabricOperationRecord = {
				ref: fact.ref,
				...(provider !== undefined ? { provider } : {}),
				...(action !== undefined ? { action } : {}),
				args: fact.args,
				outcome: fact.outcome,
				...(fact.error !== undefined ? { error: fact.error } : {}),
				...(fact.result !== undefined ? { result: fact.result } : {}),
			};
			return { ...base, kind: "fabricOperation", ...operationFields(operation), source: "branch-fact" };
		}
		case "fabricRun": {
			const description = shrinkText(oneLine(fact.description ?? ""), FABRIC_RUN_DESCRIPTION_MAX_BYTES);
			return {
				...base,
				kind: "fabricRun",
				name: shrinkText(oneLine(fact.name), FABRIC_RUN_NAME_MAX_BYTES),
				...(description ? { description } : {}),
				outcome: fact.outcome,
				toolCallId: fact.subordinal.slice("call:".length),
				callEntryId: fact.entryId,
				factAddress: fact.address,
			};
		}
	}
}

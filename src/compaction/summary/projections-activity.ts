/**
 * Conversation and run projections: historical requests, Fabric activity,
 * earlier turns, current status and the collapsed transcript.
 *
 * Every line is assembled from typed event fields. Text is selected (first
 * line or whitespace-collapsed), bounded and quoted; it is never interpreted.
 */

import type { FabricRunEvent, NormalizedEvent } from "../../session/events.ts";
import { FABRIC_EXEC_TOOL_NAME } from "../../session/records/fabric-trace.ts";
import { argsLabel, FILE_SYSTEM_REFS, fileKindOf, operationsOf, SHELL_ACTIONS } from "./projections-files.ts";
import {
	EARLIER_TURN_LIMIT,
	FABRIC_ACTIVITY_LIMIT,
	HISTORICAL_REQUEST_LIMIT,
	TRANSCRIPT_EVENT_LIMIT,
	type ViewBlock,
	type ViewItem,
} from "./projections-model.ts";
import {
	boundedOneLine,
	firstLine,
	identifierLabel,
	ONE_LINE_MAX_BYTES,
	oneLine,
	renderAddress,
	shrinkText,
} from "./render-text.ts";

export const HISTORICAL_HEADER = "[Historical requests]";
export const ACTIVITY_HEADER = "[Fabric Activity]";
export const TURNS_HEADER = "[Earlier Turns]";
export const STATUS_HEADER = "[Current Status]";
export const TRANSCRIPT_HEADER = "[Transcript]";

/** Historical one-line views cap each request line's text at this many bytes. */
export const HISTORICAL_LINE_MAX_BYTES = 1024;
/** Distinct tool names listed per earlier turn before `+N more`. */
export const TURN_TOOL_NAMES_MAX = 6;
/** Run name bytes inside an earlier-turn line. */
export const TURN_RUN_NAME_MAX_BYTES = 64;
/** Bytes of custom-message details shown in a transcript line. */
export const TRANSCRIPT_DETAILS_MAX_BYTES = 160;

const quoted = (text: string): string => `"${text}"`;

function item(
	entryId: string,
	lead: string,
	text: string,
	options: { trail?: string; keep?: "start" | "end"; required?: boolean } = {},
): ViewItem {
	return {
		entryId,
		lead,
		text,
		trail: options.trail ?? "",
		keep: options.keep ?? "start",
		textRequired: options.required ?? true,
	};
}

/** Older user requests (raw and branch facts) not already shown in the protected dialogue. */
export function projectHistoricalRequests(
	events: readonly NormalizedEvent[],
	dialogueUserOrdinals: ReadonlySet<number>,
): ViewBlock {
	const items: ViewItem[] = [];
	for (const event of events) {
		if (event.kind !== "user" || dialogueUserOrdinals.has(event.ordinal)) continue;
		const line =
			shrinkText(firstLine(event.text.slice(0, ONE_LINE_MAX_BYTES * 4)), ONE_LINE_MAX_BYTES) ||
			`(${event.images} image${event.images === 1 ? "" : "s"})`;
		items.push(item(event.entryId, `${renderAddress(event.address)} `, quoted(line)));
	}
	return {
		key: "historical",
		header: HISTORICAL_HEADER,
		prelude: [],
		groups: [
			{
				key: "goal",
				items,
				limit: HISTORICAL_REQUEST_LIMIT,
				mode: "earliest-latest",
				maxTextBytes: HISTORICAL_LINE_MAX_BYTES,
			},
		],
	};
}

function runLead(run: FabricRunEvent): string {
	return `${renderAddress(run.address)} run "${run.name}"`;
}

/** Named runs, phases and significant non-file nested operations, in source order. */
export function projectActivity(events: readonly NormalizedEvent[]): ViewBlock {
	const items: ViewItem[] = [];
	for (const event of events) {
		if (event.kind === "fabricRun") {
			items.push(
				item(event.entryId, runLead(event), event.description ? ` — ${event.description}` : "", {
					trail: ` → ${event.outcome}`,
					required: false,
				}),
			);
		} else if (event.kind === "fabricPhase") {
			items.push(item(event.entryId, `${renderAddress(event.address)} phase `, oneLine(event.phase)));
		} else if (event.kind === "fabricOperation" && !FILE_SYSTEM_REFS.includes(event.ref)) {
			const command =
				SHELL_ACTIONS[event.ref] && typeof (event.args as { command?: unknown } | null)?.command === "string"
					? oneLine((event.args as { command: string }).command)
					: argsLabel(event.args);
			const error = event.error ? `: ${quoted(oneLine(event.error))}` : "";
			items.push(
				item(
					event.entryId,
					`${renderAddress(event.address)} ${identifierLabel(event.ref)} → ${event.outcome}`,
					` ${command}${error}`,
					{
						required: false,
					},
				),
			);
		}
	}
	return {
		key: "activity",
		header: ACTIVITY_HEADER,
		prelude: [],
		groups: [{ key: "activity", items, limit: FABRIC_ACTIVITY_LIMIT, mode: "earliest-latest", maxTextBytes: 1024 }],
	};
}

interface Turn {
	start: NormalizedEvent;
	tools: Map<string, number>;
	run?: FabricRunEvent;
}

/** Segment events into turns starting at each user or custom-message event. */
export function turnsOf(events: readonly NormalizedEvent[]): Turn[] {
	const turns: Turn[] = [];
	for (const event of events) {
		let current = turns.at(-1);
		if (!current || event.kind === "user" || event.kind === "custom") {
			current = { start: event, tools: new Map() };
			turns.push(current);
		}
		if (event.kind === "toolCall") current.tools.set(event.toolName, (current.tools.get(event.toolName) ?? 0) + 1);
		if (event.kind === "fabricRun") current.run = event;
	}
	return turns;
}

function turnTrail(turn: Turn): string {
	const tools = [...turn.tools.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
	const listed = tools.slice(0, TURN_TOOL_NAMES_MAX).map(([name, count]) => `${identifierLabel(name)}×${count}`);
	if (tools.length > TURN_TOOL_NAMES_MAX) listed.push(`+${tools.length - TURN_TOOL_NAMES_MAX} more`);
	const parts = listed.length > 0 ? [listed.join(" ")] : [];
	if (turn.run) {
		parts.push(`run "${shrinkText(turn.run.name, TURN_RUN_NAME_MAX_BYTES)}" → ${turn.run.outcome}`);
	}
	return parts.length > 0 ? ` [${parts.join("; ")}]` : "";
}

function contextLabel(event: NormalizedEvent): { label: string; text: string } {
	if (event.kind === "user") return { label: "user", text: quoted(boundedOneLine(event.text)) };
	if (event.kind === "custom")
		return { label: `custom ${identifierLabel(event.customType)}`, text: quoted(boundedOneLine(event.text)) };
	return { label: "(before the first message)", text: "" };
}

/**
 * One line per turn: what started it and the tools it used. A user turn is
 * named by its address only: its request is quoted once, under
 * `[Historical requests]` or in the dialogue, so the line costs what the turn
 * did, not a second copy of what was asked.
 */
export function projectTurns(events: readonly NormalizedEvent[]): ViewBlock {
	const items = turnsOf(events).map((turn): ViewItem => {
		const { label, text } = turn.start.kind === "user" ? { label: "user", text: "" } : contextLabel(turn.start);
		return item(turn.start.entryId, `${renderAddress(turn.start.address)} ${label}${text ? ": " : ""}`, text, {
			trail: turnTrail(turn),
		});
	});
	return {
		key: "turns",
		header: TURNS_HEADER,
		prelude: [],
		groups: [{ key: "turns", items, limit: EARLIER_TURN_LIMIT, mode: "earliest-latest", maxTextBytes: 512 }],
	};
}

/** Latest user/custom context, modification, named run and assistant line. */
export function projectStatus(events: readonly NormalizedEvent[]): ViewBlock {
	const items: ViewItem[] = [];
	const latestContext = events.findLast((event) => event.kind === "user" || event.kind === "custom");
	if (latestContext) {
		const { label, text } = contextLabel(latestContext);
		items.push(item(latestContext.entryId, `Latest ${label} ${renderAddress(latestContext.address)}: `, text));
	}
	const modification = operationsOf(events).findLast(
		(operation) => operation.success && operation.file !== undefined && operation.file.action !== "read",
	);
	if (modification?.file) {
		items.push(
			item(
				modification.entryId,
				`Latest modification ${renderAddress(modification.address)}: ${fileKindOf(modification.file)} `,
				oneLine(modification.file.path),
				{ keep: "end" },
			),
		);
	}
	const run = events.findLast((event) => event.kind === "fabricRun");
	if (run) items.push(item(run.entryId, `Latest Fabric run ${runLead(run)} → ${run.outcome}`, "", { required: false }));
	const assistant = events.findLast((event) => event.kind === "assistant");
	if (assistant) {
		const text = assistant.text.trim()
			? shrinkText(firstLine(assistant.text.slice(0, ONE_LINE_MAX_BYTES * 4)), ONE_LINE_MAX_BYTES)
			: `error: ${assistant.errorMessage ?? ""}`;
		items.push(item(assistant.entryId, `Latest assistant ${renderAddress(assistant.address)}: `, quoted(text)));
	}
	return {
		key: "status",
		header: STATUS_HEADER,
		prelude: [],
		groups: [{ key: "status", items, limit: items.length, mode: "all", maxTextBytes: 512 }],
	};
}

function transcriptItem(event: NormalizedEvent): ViewItem | undefined {
	const at = renderAddress(event.address);
	switch (event.kind) {
		case "user":
			return item(event.entryId, `${at} user: `, quoted(boundedOneLine(event.text)), { required: false });
		case "assistant":
			return event.text.trim()
				? item(event.entryId, `${at} assistant: `, quoted(boundedOneLine(event.text)), { required: false })
				: item(event.entryId, `${at} assistant error: `, quoted(event.errorMessage ?? ""), { required: false });
		case "custom": {
			const details =
				event.details !== undefined
					? ` details=${shrinkText(argsLabel(event.details), TRANSCRIPT_DETAILS_MAX_BYTES)}`
					: "";
			const hidden = event.display ? "" : " (hidden)";
			return item(
				event.entryId,
				`${at} custom ${identifierLabel(event.customType)}${hidden}: `,
				`${quoted(boundedOneLine(event.text))}${details}`,
				{
					required: false,
				},
			);
		}
		case "toolCall": {
			const args = event.args;
			const path = typeof args?.path === "string" ? args.path : undefined;
			const command = typeof args?.command === "string" ? args.command : undefined;
			// An outer fabric_exec call carries source code, which never becomes a fact or a detail.
			const detail =
				event.toolName === FABRIC_EXEC_TOOL_NAME
					? ""
					: path !== undefined
						? oneLine(path)
						: command !== undefined
							? oneLine(command)
							: argsLabel(args);
			return item(event.entryId, `${at} call ${identifierLabel(event.toolName)} `, detail, { required: false });
		}
		case "toolResult":
			return item(
				event.entryId,
				`${at} result ${identifierLabel(event.toolName)} ${event.errorText !== undefined ? "error" : "ok"}`,
				event.errorText ? `: ${quoted(event.errorLine ?? event.errorText)}` : "",
				{ required: false },
			);
		case "bash": {
			const status = event.cancelled ? "cancelled" : `exit ${event.exitCode ?? "?"}`;
			return item(event.entryId, `${at} user bash ${status}: `, oneLine(event.command), { required: false });
		}
		case "fabricRun":
			return item(event.entryId, `${runLead(event)} → ${event.outcome}`, "", { required: false });
		default:
			return undefined;
	}
}

/**
 * The latest typed events of the last turn (from the last user or custom
 * message on), so the block is as long as that turn was; older turns are
 * the other blocks'. A completed named `fabric_exec` replaces its outer
 * call/result pair.
 */
export function projectTranscript(source: readonly NormalizedEvent[]): ViewBlock {
	const start = source.findLastIndex((event) => event.kind === "user" || event.kind === "custom");
	const events = start < 0 ? source : source.slice(start);
	const namedCalls = new Set<string>();
	for (const event of events) {
		if (event.kind === "fabricRun" && event.origin === "raw") namedCalls.add(event.toolCallId);
	}
	const items: ViewItem[] = [];
	for (const event of events) {
		const replaced =
			(event.kind === "toolCall" || event.kind === "toolResult") &&
			event.toolName === FABRIC_EXEC_TOOL_NAME &&
			namedCalls.has(event.toolCallId);
		if (replaced) continue;
		const line = transcriptItem(event);
		if (line) items.push(line);
	}
	return {
		key: "transcript",
		header: TRANSCRIPT_HEADER,
		prelude: [],
		groups: [{ key: "transcript", items, limit: TRANSCRIPT_EVENT_LIMIT, mode: "latest", maxTextBytes: 384 }],
	};
}

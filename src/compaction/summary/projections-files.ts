/**
 * Operation projections: file addresses (`[Files And Changes]`) and failures
 * with their resolutions (`[Outstanding Context]`), rendered from the facts
 * `src/session/facts.ts` extracts (the same facts fold briefs show).
 *
 * A failure is resolved by a later success of the same tool on the same
 * target: the same file for file tools, the same script for shell commands,
 * the same arguments otherwise (`resolutionKey`). Error text is quoted with
 * bounds, never parsed. Outer `fabric_exec` results never create file or
 * failure facts; their nested operations do.
 */

import type { NormalizedEvent } from "../../session/events.ts";
import {
	type FailureRecord,
	FILE_KINDS,
	type FileKind,
	failureRecords,
	fileTouchesByKind,
} from "../../session/facts.ts";
import { utf8ByteLength } from "../../text/utf8.ts";
import {
	FILE_LIMIT_PER_KIND,
	type OmissionKey,
	OPERATION_STATE_LIMIT,
	type ViewBlock,
	type ViewGroup,
	type ViewItem,
} from "./projections-model.ts";
import { identifierLabel, oneLine, renderAddress } from "./render-text.ts";

export {
	ARGS_LABEL_MAX_BYTES,
	argsLabel,
	type FailureRecord,
	FILE_ACTIONS,
	FILE_KINDS,
	FILE_SYSTEM_REFS,
	type FileKind,
	failureRecords,
	fileKindOf,
	fileTouchesByKind,
	type Operation,
	operationsOf,
	SHELL_ACTIONS,
} from "../../session/facts.ts";

export const FILES_HEADER = "[Files And Changes]";
export const OUTSTANDING_HEADER = "[Outstanding Context]";

const FILE_KIND_KEYS: Record<FileKind, OmissionKey> = {
	Created: "filesCreated",
	Written: "filesWritten",
	Modified: "filesModified",
	Read: "filesRead",
};

/** A longer common path prefix is not used as display root: the prelude line stays bounded. */
export const DISPLAY_ROOT_MAX_BYTES = 256;

/**
 * Common directory prefix of all paths, segmented on `/` or `\`, used to
 * shorten displayed paths. Undefined when there is no prefix beyond a root separator.
 */
export function displayRootOf(paths: readonly string[]): string | undefined {
	const first = paths[0];
	if (first === undefined) return undefined;
	let length = first.length;
	for (const path of paths) {
		let index = 0;
		while (index < length && index < path.length && path[index] === first[index]) index++;
		length = index;
	}
	const common = first.slice(0, length);
	const cut = Math.max(common.lastIndexOf("/"), common.lastIndexOf("\\"));
	if (cut < 1) return undefined;
	return first.slice(0, cut + 1);
}

export function displayPath(path: string, root: string | undefined): string {
	return oneLine(root && path.startsWith(root) ? path.slice(root.length) : path);
}

export function projectFiles(events: readonly NormalizedEvent[]): ViewBlock {
	const touches = fileTouchesByKind(events);
	const common = displayRootOf(FILE_KINDS.flatMap((kind) => touches[kind].map((touch) => touch.path)));
	const root = common !== undefined && utf8ByteLength(common) <= DISPLAY_ROOT_MAX_BYTES ? common : undefined;
	const groups: ViewGroup[] = FILE_KINDS.map((kind) => ({
		key: FILE_KIND_KEYS[kind],
		label: `${kind}:`,
		items: touches[kind].map(
			(touch): ViewItem => ({
				entryId: touch.entryId,
				lead: `${renderAddress(touch.address)} ${touch.count > 1 ? `×${touch.count} ` : ""}`,
				text: displayPath(touch.path, root),
				trail: "",
				keep: "end",
				textRequired: true,
			}),
		),
		limit: FILE_LIMIT_PER_KIND,
		mode: "earliest-latest",
		maxTextBytes: 512,
	}));
	const hasFiles = groups.some((group) => group.items.length > 0);
	return {
		key: "files",
		header: FILES_HEADER,
		prelude: hasFiles && root ? [`Paths relative to ${oneLine(root)}`] : [],
		groups,
	};
}

export const OPEN_FAILURES_LABEL = "Open:";
export const RESOLVED_FAILURES_LABEL = "Resolved:";

function failureItem({ failure, resolvedBy }: FailureRecord): ViewItem {
	const state = resolvedBy ? `resolved by ${renderAddress(resolvedBy.address)}` : "open";
	return {
		entryId: failure.entryId,
		lead: `${renderAddress(failure.address)} ${state} ${identifierLabel(failure.tool)}: `,
		text: failure.errorText ? `${failure.label} → "${failure.errorText}"` : failure.label,
		trail: "",
		keep: "start",
		textRequired: true,
	};
}

/**
 * Failures still open first, then resolved ones. The two share the spec's 32
 * operation-state records; resolved ones are listed only when every open one
 * is, else counted by their omission marker, so an open failure is never
 * sampled out while a resolved one is listed.
 */
export function projectOutstanding(events: readonly NormalizedEvent[]): ViewBlock {
	const records = failureRecords(events);
	const open = records.filter((record) => record.resolvedBy === undefined).map(failureItem);
	const resolved = records.filter((record) => record.resolvedBy !== undefined).map(failureItem);
	const group = (label: string, items: ViewItem[], limit: number): ViewGroup => ({
		key: "operations",
		label,
		items,
		limit,
		mode: "earliest-latest",
		maxTextBytes: 512,
	});
	return {
		key: "outstanding",
		header: OUTSTANDING_HEADER,
		prelude: [],
		groups: [
			group(OPEN_FAILURES_LABEL, open, OPERATION_STATE_LIMIT),
			{
				...group(RESOLVED_FAILURES_LABEL, resolved, Math.max(0, OPERATION_STATE_LIMIT - open.length)),
				afterCompleteGroups: true,
			},
		],
	};
}

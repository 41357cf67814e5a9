/**
 * Operation projections: typed tool, bash and nested Fabric operations →
 * file addresses (`[Files And Changes]`) and failures with their exact
 * structural resolutions (`[Outstanding Context]`).
 *
 * Identity is structural and exact: file operations by action + typed path,
 * shell operations by exact command, everything else by ref/tool name +
 * canonical JSON arguments. A failure is resolved only by a later success
 * with the same identity. Error text is quoted with bounds, never parsed.
 * Outer `fabric_exec` results never create file or failure facts; their
 * nested operations do.
 */

import { canonicalJson } from "../session/canonical.ts";
import type { NormalizedEvent } from "./events.ts";
import { FABRIC_EXEC_TOOL_NAME } from "./fabric-trace.ts";
import {
	FILE_LIMIT_PER_KIND,
	type OmissionKey,
	OPERATION_STATE_LIMIT,
	type ViewBlock,
	type ViewGroup,
	type ViewItem,
} from "./projections-model.ts";
import { isPlainRecord, type JsonValue } from "./record-guards.ts";
import { identifierLabel, oneLine, renderAddress, shrinkText } from "./render-text.ts";
import { utf8ByteLength } from "./utf8.ts";

export const FILES_HEADER = "[Files And Changes]";
export const OUTSTANDING_HEADER = "[Outstanding Context]";

/** Display order of file kinds. */
export const FILE_KINDS = ["Created", "Written", "Modified", "Read"] as const;
export type FileKind = (typeof FILE_KINDS)[number];

const FILE_KIND_KEYS: Record<FileKind, OmissionKey> = {
	Created: "filesCreated",
	Written: "filesWritten",
	Modified: "filesModified",
	Read: "filesRead",
};

/** Typed file actions by plain Pi tool name and by Fabric ref. */
export const FILE_ACTIONS: Readonly<Record<string, "read" | "edit" | "write">> = {
	read: "read",
	edit: "edit",
	write: "write",
	"pi.read": "read",
	"pi.edit": "edit",
	"pi.write": "write",
};

/**
 * Shell actions by plain Pi tool name and by Fabric ref; identity is the exact
 * `command` argument. Every plain tool here must match its `pi.<tool>` ref
 * (branch.ts `PI_TOOL_REFS`), or a failure and its success re-emitted from a
 * `/tree` summary would get different identities.
 */
export const SHELL_ACTIONS: Readonly<Record<string, "bash" | "powershell">> = {
	bash: "bash",
	powershell: "powershell",
	"pi.bash": "bash",
	"pi.powershell": "powershell",
};

/** Known Fabric file-system refs that are not significant activity (files and failures still see them). */
export const FILE_SYSTEM_REFS: readonly string[] = ["pi.read", "pi.grep", "pi.find", "pi.ls", "pi.edit", "pi.write"];

/** A longer common path prefix is not used as display root: the prelude line stays bounded. */
export const DISPLAY_ROOT_MAX_BYTES = 256;

/** Bytes of canonical JSON arguments kept in one-line labels. */
export const ARGS_LABEL_MAX_BYTES = 256;

/** One completed typed operation (success or failure) with its structural identity. */
export interface Operation {
	entryId: string;
	ordinal: number;
	address: string;
	/** Display name: tool name, Fabric ref, or `user bash` for a `!` execution. */
	tool: string;
	success: boolean;
	/** Exact identity used for resolution. */
	identity: string;
	/** One-line identity shown to the reader (path, command, or bounded arguments). */
	label: string;
	file?: { action: "read" | "edit" | "write"; path: string; created: boolean };
	errorText?: string;
}

/** Bounded one-line rendering of JSON arguments. */
export function argsLabel(args: JsonValue | undefined): string {
	return shrinkText(oneLine(canonicalJson(args ?? null)), ARGS_LABEL_MAX_BYTES);
}

function classify(
	tool: string,
	args: JsonValue | undefined,
	created: boolean,
): Pick<Operation, "identity" | "label" | "file"> {
	const record = isPlainRecord(args) ? args : undefined;
	const fileAction = FILE_ACTIONS[tool];
	if (fileAction && typeof record?.path === "string") {
		const path = record.path;
		return {
			identity: `file\u0000${fileAction}\u0000${path}`,
			label: oneLine(path),
			file: { action: fileAction, path, created: fileAction === "write" && created },
		};
	}
	const shell = SHELL_ACTIONS[tool];
	if (shell && typeof record?.command === "string") {
		return { identity: `shell\u0000${shell}\u0000${record.command}`, label: oneLine(record.command) };
	}
	return { identity: `ref\u0000${tool}\u0000${canonicalJson(args ?? null)}`, label: argsLabel(args) };
}

/** Completed typed operations in source order. */
export function operationsOf(events: readonly NormalizedEvent[]): Operation[] {
	const operations: Operation[] = [];
	for (const event of events) {
		const base = { entryId: event.entryId, ordinal: event.ordinal, address: event.address };
		if (event.kind === "toolResult") {
			if (event.toolName === FABRIC_EXEC_TOOL_NAME) continue;
			const args = event.call ? event.call.args : undefined;
			const identity = event.call
				? classify(event.toolName, args, event.created)
				: {
						identity: `orphan\u0000${event.toolCallId}`,
						label: `call ${identifierLabel(event.toolCallId)} (not on branch)`,
					};
			operations.push({
				...base,
				tool: event.toolName,
				success: !event.isError,
				...identity,
				...(event.errorText ? { errorText: event.errorText } : {}),
			});
		} else if (event.kind === "bash") {
			const failed = event.cancelled || (event.exitCode !== undefined && event.exitCode !== 0);
			const status = event.cancelled ? "cancelled" : `exit ${event.exitCode}`;
			operations.push({
				...base,
				tool: "user bash",
				success: !failed,
				...classify("bash", { command: event.command }, false),
				...(failed ? { errorText: event.outputExcerpt ? `${status}: ${event.outputExcerpt}` : status } : {}),
			});
		} else if (event.kind === "fabricOperation") {
			const success = event.outcome === "succeeded";
			operations.push({
				...base,
				tool: event.ref,
				success,
				...classify(event.ref, event.args, event.created),
				...(!success ? { errorText: event.error ? `${event.outcome}: ${event.error}` : event.outcome } : {}),
			});
		}
	}
	return operations;
}

/** Kind of a successful file operation. `edit` is Modified; `write` is Written unless typed `created: true`. */
export function fileKindOf(file: NonNullable<Operation["file"]>): FileKind {
	if (file.action === "read") return "Read";
	if (file.action === "edit") return "Modified";
	return file.created ? "Created" : "Written";
}

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

interface FileTouch {
	path: string;
	entryId: string;
	ordinal: number;
	address: string;
	count: number;
}

/** Successful file addresses grouped by kind: each distinct path once, at its latest touch. */
export function fileTouchesByKind(events: readonly NormalizedEvent[]): Record<FileKind, FileTouch[]> {
	const byKind: Record<FileKind, Map<string, FileTouch>> = {
		Created: new Map(),
		Written: new Map(),
		Modified: new Map(),
		Read: new Map(),
	};
	for (const operation of operationsOf(events)) {
		if (!operation.success || !operation.file) continue;
		const touches = byKind[fileKindOf(operation.file)];
		const previous = touches.get(operation.file.path);
		touches.set(operation.file.path, {
			path: operation.file.path,
			entryId: operation.entryId,
			ordinal: operation.ordinal,
			address: operation.address,
			count: (previous?.count ?? 0) + 1,
		});
	}
	const ordered = (map: Map<string, FileTouch>) => [...map.values()].sort((a, b) => a.ordinal - b.ordinal);
	return {
		Created: ordered(byKind.Created),
		Written: ordered(byKind.Written),
		Modified: ordered(byKind.Modified),
		Read: ordered(byKind.Read),
	};
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

export interface FailureRecord {
	failure: Operation;
	resolvedBy?: Operation;
}

/** Failures in source order, each with the first later success of identical identity. */
export function failureRecords(events: readonly NormalizedEvent[]): FailureRecord[] {
	const records: FailureRecord[] = [];
	const open = new Map<string, FailureRecord[]>();
	for (const operation of operationsOf(events)) {
		if (!operation.success) {
			const record: FailureRecord = { failure: operation };
			records.push(record);
			const list = open.get(operation.identity);
			if (list) list.push(record);
			else open.set(operation.identity, [record]);
			continue;
		}
		const pending = open.get(operation.identity);
		if (!pending) continue;
		for (const record of pending) record.resolvedBy = operation;
		open.delete(operation.identity);
	}
	return records;
}

export function projectOutstanding(events: readonly NormalizedEvent[]): ViewBlock {
	const items = failureRecords(events).map(({ failure, resolvedBy }): ViewItem => {
		const state = resolvedBy ? `resolved by ${renderAddress(resolvedBy.address)}` : "open";
		return {
			entryId: failure.entryId,
			lead: `${renderAddress(failure.address)} ${state} ${identifierLabel(failure.tool)}: `,
			text: failure.errorText ? `${failure.label} → "${failure.errorText}"` : failure.label,
			trail: "",
			keep: "start",
			textRequired: true,
		};
	});
	return {
		key: "outstanding",
		header: OUTSTANDING_HEADER,
		prelude: [],
		groups: [{ key: "operations", items, limit: OPERATION_STATE_LIMIT, mode: "earliest-latest", maxTextBytes: 512 }],
	};
}

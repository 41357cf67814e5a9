/**
 * The text a recall (the context tool's `peek` of an entry or operation
 * address) returns: the checked exact bytes, paged, with a header saying what
 * was verified against what; or a refusal that names why. Pure.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { type AddressPart, parseRecallAddress, type RecallRefusal, recall } from "./recall.ts";

export interface RecallReportInput {
	address: string;
	branch: readonly SessionEntry[];
	entryById(id: string): SessionEntry | undefined;
	/** The tool to name in the "more follows" hint. */
	toolName: string;
	offset: number;
	bytes: number;
}

export type RecallReport = { ok: true; text: string } | { ok: false; code: RecallRefusal | "unknown-id"; text: string };

const decoder = new TextDecoder();

function isContinuation(byte: number | undefined): boolean {
	return byte !== undefined && (byte & 0xc0) === 0x80;
}

/** A byte page on UTF-8 character boundaries; a page never ends inside a character and never comes back empty. */
export function pageBytes(bytes: Uint8Array, offset: number, count: number): { start: number; end: number } {
	const total = bytes.length;
	let start = Math.min(Math.max(0, offset), total);
	while (start < total && isContinuation(bytes[start])) start++;
	let end = Math.max(start, Math.min(start + count, total));
	while (end > start && end < total && isContinuation(bytes[end])) end--;
	if (end === start && start < total) {
		end = start + 1;
		while (end < total && isContinuation(bytes[end])) end++;
	}
	return { start, end };
}

function partName(part: AddressPart): string {
	if (part.kind === "operation") return `operation ${part.index}`;
	if (part.kind === "phase") return `phase ${part.index}`;
	return "the whole entry";
}

/** Resolve, check and page one address; see the module comment. */
export function recallReport(input: RecallReportInput): RecallReport {
	const parsed = parseRecallAddress(input.address);
	const known =
		parsed !== undefined &&
		(input.branch.some((entry) => entry.id === parsed.entryId) || input.entryById(parsed.entryId) !== undefined);
	const result = recall(input);
	if (!result.ok) {
		// An id nothing knows is the old "unknown id" (a mistyped fold id lands here too).
		if (result.code === "unparsable-address" || (result.code === "foreign-address" && !known)) {
			return {
				ok: false,
				code: "unknown-id",
				text: `"${input.address}" is neither a fold id nor a session entry id on this branch. List fold ids with {"action":"status","detail":"tree"}; summaries write entry ids as @<entry-id>.`,
			};
		}
		return { ok: false, code: result.code, text: `Refused (${result.code}): ${result.message}` };
	}
	const { start, end } = pageBytes(result.bytes, input.offset, input.bytes);
	const more =
		end < result.bytes.length
			? `More follows: ${input.toolName} ${JSON.stringify({ action: "peek", id: input.address, offset: end })}`
			: "This is the end.";
	const check = result.recorded
		? `sha256 ${result.entryHash} verified against the hash compaction ${result.recorded.recordedBy} recorded`
		: `sha256 ${result.entryHash} (read now: no compaction on this branch recorded this entry)`;
	const onBranch = input.branch.some((entry) => entry.id === result.entry.id);
	const header = [
		`Session entry ${result.entry.id} (${result.entry.type})${onBranch ? "" : " from an earlier branch of this session"}, ${partName(result.part)}, read from the session log; entry ${check}.`,
		`Canonical JSON bytes ${start}–${end} of ${result.bytes.length}. ${more}`,
		"The window is unchanged.",
	];
	return { ok: true, text: `${header.join("\n")}\n\n${decoder.decode(result.bytes.slice(start, end))}` };
}

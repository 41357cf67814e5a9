/**
 * Exact recall of compacted source: resolving a summary address to exact
 * bytes, checked against the hash a compaction recorded and against the
 * active branch's lineage. Pure: the caller supplies the active branch and a
 * look-up of any entry in the session file.
 *
 * Addresses: `@<entry-id>` (or the bare id) is the whole entry; `<id>/<n>` is
 * the n-th nested operation of a `fabric_exec` result in sequence order (the
 * order normalization numbers them); `<id>/phase:<n>` is its n-th phase. The
 * bytes are canonical JSON of that raw record, never a re-rendering.
 *
 * Checks, in order: a compaction (or deterministic branch summary) on the
 * active branch must have recorded the entry's source hash — else the address
 * is foreign to this branch ("foreign-address"), unless the entry lies on the
 * active branch itself and was never compacted, which reads as before with a
 * read-time hash; the entry must exist in the session file ("missing-entry");
 * its canonical bytes must hash to the recorded value ("tampered"); the
 * operation or phase must exist ("unknown-operation").
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { canonicalBytes, sha256Hex } from "../../session/canonical.ts";
import { parseBranchSummaryDetails } from "../../session/records/branch-details.ts";
import { readFabricExecutionTraceV1, readLegacyFabricAudits } from "../../session/records/fabric-trace.ts";
import { isPlainRecord } from "../../session/records/record-guards.ts";
import { readSourceHashes } from "../../session/records/source-hashes.ts";
import { parseCompactionDetails } from "./details.ts";

export {
	readSourceHashes,
	SOURCE_HASH_ALGORITHM,
	type SourceHashes,
	sourceHashesOf,
} from "../../session/records/source-hashes.ts";

export type AddressPart = { kind: "entry" } | { kind: "operation"; index: number } | { kind: "phase"; index: number };

export interface RecallAddress {
	entryId: string;
	part: AddressPart;
}

/** Parse `@id`, `id`, `id/<n>`, `id/phase:<n>`; `id/call:<x>` names the call entry itself. */
export function parseRecallAddress(text: string): RecallAddress | undefined {
	const match = /^@?([^/@\s]+)(?:\/(?:(\d+)|phase:(\d+)|call:[^/]+))?$/.exec(text);
	const entryId = match?.[1];
	if (!match || !entryId) return undefined;
	if (match[2] !== undefined) return { entryId, part: { kind: "operation", index: Number(match[2]) } };
	if (match[3] !== undefined) return { entryId, part: { kind: "phase", index: Number(match[3]) } };
	return { entryId, part: { kind: "entry" } };
}

/** Where the recorded hash came from. */
export interface HashRecord {
	hash: string;
	/** The compaction or branch-summary entry that recorded it. */
	recordedBy: string;
}

/** The latest recorded hash of `entryId` among the active branch's compactions and branch summaries. */
export function recordedHash(branch: readonly SessionEntry[], entryId: string): HashRecord | undefined {
	for (let index = branch.length - 1; index >= 0; index--) {
		const entry = branch[index];
		if (!entry || (entry.type !== "compaction" && entry.type !== "branch_summary")) continue;
		const hashes = readSourceHashes(isPlainRecord(entry.details) ? entry.details.sourceHashes : undefined);
		const valid =
			entry.type === "compaction"
				? parseCompactionDetails(entry.details).ok
				: parseBranchSummaryDetails(entry.details).ok;
		const hash = valid ? hashes?.entries[entryId] : undefined;
		if (hash) return { hash, recordedBy: entry.id };
	}
	return undefined;
}

/**
 * Branch index of the first entry the latest compaction kept (the
 * compaction's own index when it kept nothing); -1 when the branch has no
 * compaction. Everything before it left the window with that compaction.
 */
export function keptFromIndex(branch: readonly SessionEntry[]): number {
	for (let index = branch.length - 1; index >= 0; index--) {
		const entry = branch[index];
		if (entry?.type !== "compaction") continue;
		const kept = entry.firstKeptEntryId ? branch.findIndex((item) => item.id === entry.firstKeptEntryId) : -1;
		return kept === -1 ? index : kept;
	}
	return -1;
}

/** Every entry hash the valid compactions and branch summaries on the branch recorded, the latest record of each. */
export function recordedHashes(branch: readonly SessionEntry[]): Map<string, HashRecord> {
	const out = new Map<string, HashRecord>();
	for (let index = branch.length - 1; index >= 0; index--) {
		const entry = branch[index];
		if (!entry || (entry.type !== "compaction" && entry.type !== "branch_summary")) continue;
		const valid =
			entry.type === "compaction"
				? parseCompactionDetails(entry.details).ok
				: parseBranchSummaryDetails(entry.details).ok;
		const hashes = valid
			? readSourceHashes(isPlainRecord(entry.details) ? entry.details.sourceHashes : undefined)
			: undefined;
		for (const [id, hash] of Object.entries(hashes?.entries ?? {})) {
			if (!out.has(id)) out.set(id, { hash, recordedBy: entry.id });
		}
	}
	return out;
}

/**
 * Entries the window no longer shows because a compaction summarized them:
 * every entry a compaction or branch summary on the branch recorded a hash
 * for (on this branch or an earlier one), and every message before the
 * latest compaction's first kept entry (Pi's own compactions record no
 * hashes; those entries are still on the branch). In transcript order,
 * entries off the branch first.
 */
export function compactedEntryIds(branch: readonly SessionEntry[], hashes = recordedHashes(branch)): string[] {
	const keptFrom = keptFromIndex(branch);
	const onBranch = new Set(branch.map((entry) => entry.id));
	const ids = [...hashes.keys()].filter((id) => !onBranch.has(id));
	for (let index = 0; index < branch.length; index++) {
		const entry = branch[index];
		if (!entry) continue;
		const context = entry.type === "message" || entry.type === "custom_message";
		if (hashes.has(entry.id) || (index < keptFrom && context)) ids.push(entry.id);
	}
	return ids;
}

export type RecallRefusal =
	| "unparsable-address"
	| "foreign-address"
	| "missing-entry"
	| "tampered"
	| "unknown-operation";

export type RecallResult =
	| {
			ok: true;
			entry: SessionEntry;
			part: AddressPart;
			/** Exact canonical bytes of the addressed entry, operation or phase. */
			bytes: Uint8Array;
			/** The entry's hash, and whether a compaction recorded it (else computed now: never compacted). */
			entryHash: string;
			recorded?: HashRecord;
	  }
	| { ok: false; code: RecallRefusal; message: string };

export interface RecallInput {
	address: string;
	/** The active branch, root first. */
	branch: readonly SessionEntry[];
	/** Any entry of the session file, by id (earlier branches included). */
	entryById(id: string): SessionEntry | undefined;
	/** `recordedHashes(branch)`, when the caller recalls many entries of one branch. */
	hashes?: ReadonlyMap<string, HashRecord>;
	/** The branch entry with this id (an index the caller keeps); default: a scan of `branch`. */
	onBranch?: (id: string) => SessionEntry | undefined;
}

/** The raw nested records of a `fabric_exec` result, in the order normalization numbers them. */
function nestedRecords(entry: SessionEntry): { operations: unknown[]; phases: string[] } | undefined {
	if (entry.type !== "message" || entry.message.role !== "toolResult") return undefined;
	const details = (entry.message as { details?: unknown }).details;
	if (!isPlainRecord(details)) return undefined;
	if (details.trace !== undefined) {
		const trace = readFabricExecutionTraceV1(details.trace);
		if (!trace || !isPlainRecord(details.trace) || !Array.isArray(details.trace.operations)) return undefined;
		const raw = [...details.trace.operations].sort(
			(a, b) => Number((a as { sequence?: unknown }).sequence) - Number((b as { sequence?: unknown }).sequence),
		);
		return { operations: raw, phases: trace.phases };
	}
	const audits = readLegacyFabricAudits(details.audits);
	return audits && Array.isArray(details.audits) ? { operations: [...details.audits], phases: [] } : undefined;
}

function refuse(code: RecallRefusal, message: string): RecallResult {
	return { ok: false, code, message };
}

/** Resolve and check one address; see the module comment. */
export function recall(input: RecallInput): RecallResult {
	const address = parseRecallAddress(input.address);
	if (!address)
		return refuse(
			"unparsable-address",
			`"${input.address}" is not an entry address (@<entry-id>, <entry-id>/<n>, <entry-id>/phase:<n>).`,
		);
	const { entryId, part } = address;
	const recorded = input.hashes ? input.hashes.get(entryId) : recordedHash(input.branch, entryId);
	const onBranch = input.onBranch ? input.onBranch(entryId) : input.branch.find((entry) => entry.id === entryId);
	if (!recorded && !onBranch) {
		return refuse(
			"foreign-address",
			`@${entryId} belongs to no compaction on the active branch or its ancestors, and is not on this branch; it cannot be recalled here.`,
		);
	}
	const entry = onBranch ?? input.entryById(entryId);
	if (!entry)
		return refuse("missing-entry", `@${entryId} was compacted on this branch but the session file no longer holds it.`);
	const entryBytes = canonicalBytes(entry);
	const entryHash = sha256Hex(entryBytes);
	if (recorded && recorded.hash !== entryHash) {
		return refuse(
			"tampered",
			`@${entryId} was changed after compaction ${recorded.recordedBy} recorded it: sha256 ${entryHash} where ${recorded.hash} was recorded. The session log was edited; its text is not trusted.`,
		);
	}
	const base = { ok: true as const, entry, part, entryHash, ...(recorded ? { recorded } : {}) };
	if (part.kind === "entry") return { ...base, bytes: entryBytes };
	const nested = nestedRecords(entry);
	const item = part.kind === "operation" ? nested?.operations[part.index] : nested?.phases[part.index];
	if (item === undefined) {
		const what = part.kind === "operation" ? `operation ${part.index}` : `phase ${part.index}`;
		return refuse("unknown-operation", `@${entryId} has no ${what} (it is not a fabric_exec result with that many).`);
	}
	return { ...base, bytes: canonicalBytes(item) };
}

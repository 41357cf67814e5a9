/**
 * Branch-summary details envelope (`kind: "pi-fabric.branch-summary"`): the
 * typed facts a deterministic `/tree` summary persists in
 * `BranchSummaryEntry.details`, its bounded builder, and a strict validator.
 *
 * The envelope is the only part of a branch summary later compactions read;
 * its `summary` prose never is. Version 2 is current and adds `fabricRun`
 * facts (declared name and description with the paired outcome) and always
 * records `source.oldLeafId`, the canonical abandoned-leaf provenance. Strict
 * v1 envelopes stay readable as v1 and are never reinterpreted as v2: a v1
 * envelope holding a v2-only fact is invalid.
 *
 * Bounds: at most `MAX_BRANCH_FACTS` facts in at most
 * `MAX_BRANCH_ENVELOPE_BYTES` of JSON; run names and descriptions are capped
 * in UTF-8 bytes; JSON-valued fields are depth/node bounded. Every fact's
 * `address` is exactly `${entryId}/${subordinal}`.
 */

import { clipText, utf8ByteLength } from "../../text/utf8.ts";
import {
	type BranchFactDraft,
	type BranchFactV1,
	type BranchFactV2,
	FABRIC_EXECUTION_OUTCOMES,
	type FabricExecutionOutcome,
} from "./branch-fact-types.ts";
import { type BranchFactBounds, boundFact } from "./branch-facts.ts";
import {
	isCount,
	isNonEmptyString,
	isPlainRecord,
	isStringArray,
	type JsonValue,
	own,
	readBoundedJson,
} from "./record-guards.ts";
import type { SourceHashes } from "./source-hashes.ts";

/**
 * `details.kind` of a deterministic `/tree` branch-summary envelope: a wire
 * identifier (pi-fabric's name, kept exactly); `compaction/records/wire.ts`
 * lists it with the compactor's others.
 */
export const BRANCH_SUMMARY_KIND = "pi-fabric.branch-summary";
export const BRANCH_SUMMARY_VERSION = 2;
export const BRANCH_SUMMARY_VERSION_V1 = 1;
export const MAX_BRANCH_FACTS = 256;
/** Envelope ceiling: UTF-8 bytes of its JSON serialization (128 KiB). */
export const MAX_BRANCH_ENVELOPE_BYTES = 128 * 1024;
export const MAX_BRANCH_RUN_NAME_BYTES = 256;
export const MAX_BRANCH_RUN_DESCRIPTION_BYTES = 1024;
/** Structure bound for JSON-valued fact fields (custom details, operation args and result). */
export const BRANCH_JSON_BOUNDS = { maxDepth: 12, maxNodes: 2048 } as const;
export const MAX_BRANCH_SECTIONS = 32;
/** Rendered request text kept in the envelope, like the `[Compaction Request]` block. */
export const MAX_BRANCH_REQUEST_BYTES = 3 * 1024;

export type {
	BranchCustomMessageFact,
	BranchFactDraft,
	BranchFactV1,
	BranchFactV2,
	BranchOperationFact,
	BranchPhaseFact,
	BranchRunFact,
	BranchUserFact,
	FabricExecutionOutcome,
} from "./branch-fact-types.ts";
export { FABRIC_EXECUTION_OUTCOMES } from "./branch-fact-types.ts";

export interface BranchSummarySource {
	firstEntryId: string;
	lastEntryId: string;
	entryCount: number;
	/** `preparation.oldLeafId`; absent only on older v1 envelopes. */
	oldLeafId?: string | null;
}

export interface BranchSummaryRequest {
	text: string;
	sourceBytes: number;
	truncated: boolean;
}

export interface BranchSummaryDetailsV1 {
	kind: typeof BRANCH_SUMMARY_KIND;
	version: 1;
	source: BranchSummarySource;
	facts: BranchFactV1[];
	omittedFacts: number;
	sections: string[];
	request: BranchSummaryRequest;
}

export interface BranchSummaryDetailsV2 {
	kind: typeof BRANCH_SUMMARY_KIND;
	version: 2;
	source: BranchSummarySource & { oldLeafId: string | null };
	facts: BranchFactV2[];
	omittedFacts: number;
	sections: string[];
	request: BranchSummaryRequest;
	/** Source hashes of the summarized entries, for checked recall (optional; older envelopes lack it). */
	sourceHashes?: SourceHashes;
}

export type ParsedBranchSummaryDetails =
	| { ok: true; version: 1; details: BranchSummaryDetailsV1 }
	| { ok: true; version: 2; details: BranchSummaryDetailsV2 }
	| { ok: false; reason: string };

export interface BranchSummaryInput {
	source: { firstEntryId: string; lastEntryId: string; entryCount: number; oldLeafId: string | null };
	/** Facts in source order. */
	facts: readonly BranchFactDraft[];
	sections: readonly string[];
	request: BranchSummaryRequest;
}

/** Per-field bounds the builder applies; the validator checks only the envelope-wide ones. */
export const BRANCH_FACT_BOUNDS: BranchFactBounds = {
	identityBytes: 256,
	textBytes: 4 * 1024,
	errorBytes: 1024,
	jsonBytes: 16 * 1024,
	nameBytes: MAX_BRANCH_RUN_NAME_BYTES,
	descriptionBytes: MAX_BRANCH_RUN_DESCRIPTION_BYTES,
	json: BRANCH_JSON_BOUNDS,
};

function jsonBytes(value: unknown): number {
	return utf8ByteLength(JSON.stringify(value));
}

/**
 * Build a v2 envelope within every bound. Facts that cannot be bounded
 * (oversized identity fields or arguments) are left out and counted; past
 * `MAX_BRANCH_FACTS` the earliest and latest halves are kept; past the byte
 * ceiling facts are removed from the middle. `omittedFacts` counts them all.
 */
export function buildBranchSummaryDetails(input: BranchSummaryInput): BranchSummaryDetailsV2 {
	let omittedFacts = 0;
	let facts: BranchFactV2[] = [];
	for (const draft of input.facts) {
		const bounded = boundFact(draft, BRANCH_FACT_BOUNDS);
		if (bounded) facts.push(bounded);
		else omittedFacts++;
	}
	if (facts.length > MAX_BRANCH_FACTS) {
		const head = Math.ceil(MAX_BRANCH_FACTS / 2);
		omittedFacts += facts.length - MAX_BRANCH_FACTS;
		facts = [...facts.slice(0, head), ...facts.slice(facts.length - (MAX_BRANCH_FACTS - head))];
	}
	const request = clipText(input.request.text, MAX_BRANCH_REQUEST_BYTES);
	const envelope: BranchSummaryDetailsV2 = {
		kind: BRANCH_SUMMARY_KIND,
		version: BRANCH_SUMMARY_VERSION,
		source: { ...input.source },
		facts: [],
		omittedFacts: 0,
		sections: input.sections.slice(0, MAX_BRANCH_SECTIONS),
		request: {
			text: request.text,
			sourceBytes: input.request.sourceBytes,
			truncated: input.request.truncated || request.clipped,
		},
	};
	// Serialized size = empty envelope + each fact + one comma between facts; the
	// omitted counter is reserved at its widest (it can only be ≤ input length).
	const base = jsonBytes({ ...envelope, omittedFacts: omittedFacts + input.facts.length });
	const sizes = facts.map(jsonBytes);
	let total = base + sizes.reduce((sum, size) => sum + size, 0) + Math.max(0, facts.length - 1);
	while (total > MAX_BRANCH_ENVELOPE_BYTES && facts.length > 0) {
		const middle = Math.floor(facts.length / 2);
		total -= (sizes[middle] ?? 0) + (facts.length > 1 ? 1 : 0);
		facts.splice(middle, 1);
		sizes.splice(middle, 1);
		omittedFacts++;
	}
	envelope.facts = facts;
	envelope.omittedFacts = omittedFacts;
	return envelope;
}

class Invalid {
	readonly reason: string;
	constructor(reason: string) {
		this.reason = reason;
	}
}

function check(ok: boolean, reason: string): void {
	if (!ok) throw new Invalid(reason);
}

function readString(source: Record<string, unknown>, key: string, where: string, nonEmpty = false): string {
	const value = own(source, key);
	check(nonEmpty ? isNonEmptyString(value) : typeof value === "string", `${where}.${key} must be a string`);
	return value as string;
}

function readOptionalString(source: Record<string, unknown>, key: string, where: string): string | undefined {
	return own(source, key) === undefined ? undefined : readString(source, key, where);
}

function readOutcome(source: Record<string, unknown>, where: string): FabricExecutionOutcome {
	const value = own(source, "outcome");
	check(FABRIC_EXECUTION_OUTCOMES.includes(value as FabricExecutionOutcome), `${where}.outcome is not an outcome`);
	return value as FabricExecutionOutcome;
}

function readJson(source: Record<string, unknown>, key: string, where: string): JsonValue | undefined {
	const value = own(source, key);
	if (value === undefined) return undefined;
	check(readBoundedJson(value, BRANCH_JSON_BOUNDS).ok, `${where}.${key} must be bounded JSON`);
	return value as JsonValue;
}

function assign<T extends object>(target: T, optional: Record<string, unknown>): T {
	for (const [key, value] of Object.entries(optional)) {
		if (value !== undefined) (target as Record<string, unknown>)[key] = value;
	}
	return target;
}

function readFact(value: unknown, index: number, version: 1 | 2): BranchFactV2 {
	const where = `facts[${index}]`;
	check(isPlainRecord(value), `${where} must be an object`);
	const source = value as Record<string, unknown>;
	const entryId = readString(source, "entryId", where, true);
	const subordinal = readString(source, "subordinal", where, true);
	const address = readString(source, "address", where, true);
	check(address === `${entryId}/${subordinal}`, `${where}.address must be entryId/subordinal`);
	const base = { entryId, subordinal, address };
	switch (own(source, "kind")) {
		case "user":
			return { ...base, kind: "user", text: readString(source, "text", where) };
		case "customMessage": {
			const display = own(source, "display");
			check(typeof display === "boolean", `${where}.display must be a boolean`);
			return assign(
				{
					...base,
					kind: "customMessage" as const,
					customType: readString(source, "customType", where, true),
					text: readString(source, "text", where),
					display: display as boolean,
				},
				{ details: readJson(source, "details", where) },
			);
		}
		case "phase":
			return { ...base, kind: "phase", phase: readString(source, "phase", where, true) };
		case "operation": {
			const args = own(source, "args");
			check(isPlainRecord(args) && readBoundedJson(args, BRANCH_JSON_BOUNDS).ok, `${where}.args must be a JSON object`);
			return assign(
				{
					...base,
					kind: "operation" as const,
					ref: readString(source, "ref", where, true),
					tool: readString(source, "tool", where, true),
					args: args as { [key: string]: JsonValue },
					outcome: readOutcome(source, where),
				},
				{
					provider: readOptionalString(source, "provider", where),
					action: readOptionalString(source, "action", where),
					error: readOptionalString(source, "error", where),
					result: readJson(source, "result", where),
				},
			);
		}
		case "fabricRun": {
			check(version === 2, `${where}: fabricRun facts exist only in version 2`);
			const name = readString(source, "name", where, true);
			check(utf8ByteLength(name) <= MAX_BRANCH_RUN_NAME_BYTES, `${where}.name exceeds its byte bound`);
			const description = readOptionalString(source, "description", where);
			check(
				description === undefined || utf8ByteLength(description) <= MAX_BRANCH_RUN_DESCRIPTION_BYTES,
				`${where}.description exceeds its byte bound`,
			);
			return assign(
				{ ...base, kind: "fabricRun" as const, name, outcome: readOutcome(source, where) },
				{ description },
			);
		}
		default:
			throw new Invalid(`${where}.kind is not a known fact kind`);
	}
}

function readEnvelope(value: Record<string, unknown>, version: 1 | 2): ParsedBranchSummaryDetails {
	const sourceValue = own(value, "source");
	check(isPlainRecord(sourceValue), "source must be an object");
	const sourceRecord = sourceValue as Record<string, unknown>;
	const entryCount = own(sourceRecord, "entryCount");
	check(isCount(entryCount), "source.entryCount must be a non-negative integer");
	const source: BranchSummarySource = {
		firstEntryId: readString(sourceRecord, "firstEntryId", "source", true),
		lastEntryId: readString(sourceRecord, "lastEntryId", "source", true),
		entryCount: entryCount as number,
	};
	const oldLeafId = own(sourceRecord, "oldLeafId");
	if (version === 2 || oldLeafId !== undefined) {
		check(oldLeafId === null || isNonEmptyString(oldLeafId), "source.oldLeafId must be an entry id or null");
		source.oldLeafId = oldLeafId as string | null;
	}
	const factsValue = own(value, "facts");
	check(
		Array.isArray(factsValue) && factsValue.length <= MAX_BRANCH_FACTS,
		`facts must hold at most ${MAX_BRANCH_FACTS}`,
	);
	const facts = (factsValue as unknown[]).map((fact, index) => readFact(fact, index, version));
	const omittedFacts = own(value, "omittedFacts");
	check(isCount(omittedFacts), "omittedFacts must be a non-negative integer");
	const sections = own(value, "sections");
	check(isStringArray(sections, MAX_BRANCH_SECTIONS), "sections must be a bounded string list");
	const requestValue = own(value, "request");
	check(isPlainRecord(requestValue), "request must be an object");
	const requestRecord = requestValue as Record<string, unknown>;
	const sourceBytes = own(requestRecord, "sourceBytes");
	const truncated = own(requestRecord, "truncated");
	check(isCount(sourceBytes) && typeof truncated === "boolean", "request must hold sourceBytes and truncated");
	const request = {
		text: readString(requestRecord, "text", "request"),
		sourceBytes: sourceBytes as number,
		truncated: truncated as boolean,
	};
	const common = {
		kind: BRANCH_SUMMARY_KIND as typeof BRANCH_SUMMARY_KIND,
		omittedFacts: omittedFacts as number,
		sections: [...(sections as string[])],
		request,
	};
	if (version === 1) {
		const details: BranchSummaryDetailsV1 = { ...common, version: 1, source, facts: facts as BranchFactV1[] };
		check(jsonBytes(details) <= MAX_BRANCH_ENVELOPE_BYTES, "the envelope exceeds its byte ceiling");
		return { ok: true, version: 1, details };
	}
	const details: BranchSummaryDetailsV2 = {
		...common,
		version: 2,
		source: { ...source, oldLeafId: source.oldLeafId ?? null },
		facts,
	};
	check(jsonBytes(details) <= MAX_BRANCH_ENVELOPE_BYTES, "the envelope exceeds its byte ceiling");
	return { ok: true, version: 2, details };
}

/**
 * Strictly validate a branch-summary `details` value. Recognizes exactly
 * versions 1 and 2; returns the envelope rebuilt from validated fields only.
 * Never throws.
 */
export function parseBranchSummaryDetails(value: unknown): ParsedBranchSummaryDetails {
	try {
		check(isPlainRecord(value), "details must be an object");
		const record = value as Record<string, unknown>;
		if (own(record, "kind") !== BRANCH_SUMMARY_KIND) return { ok: false, reason: "not a Fabric branch summary" };
		const version = own(record, "version");
		if (version !== BRANCH_SUMMARY_VERSION_V1 && version !== BRANCH_SUMMARY_VERSION) {
			return { ok: false, reason: "unknown branch-summary version" };
		}
		return readEnvelope(record, version);
	} catch (error) {
		if (error instanceof Invalid) return { ok: false, reason: error.reason };
		return { ok: false, reason: "details could not be read" };
	}
}

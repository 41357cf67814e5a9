/**
 * Compaction details v2: the typed record a deterministic compaction persists in
 * `CompactionEntry.details`, its builder, and strict validators.
 *
 * Only the exact versions 1 and 2 with `compactor: "fabric"` are recognized.
 * Validation checks every known field's type and bounds and returns a record
 * rebuilt from those fields alone, so unknown members never pass through.
 * Neither v1 details nor rendered summary prose ever serve as semantic input;
 * the validators exist to count and classify prior markers. Older v2 records
 * stay readable: `strategy: "adaptive"` budgets, the legacy `commits`
 * omission counter, and records without the later additive fields
 * (`activity`, `thinking`, `dialogueBytes`, `decoderTruncated`,
 * `renderedOmittedBytes`, `carry`, budget `fixedContextEstimateTokens` and
 * `summaryReserveTokens`).
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { isCount, isNonEmptyString, isPlainRecord, isStringArray, own } from "../../session/records/record-guards.ts";
import { readSourceHashes, type SourceHashes } from "../../session/records/source-hashes.ts";
import { MAX_PRESERVE_ITEMS } from "./instructions.ts";

import { DETAILS_COMPACTOR_TAG } from "./wire.ts";

export { DETAILS_COMPACTOR_TAG };
export const DETAILS_VERSION = 2;
export const DETAILS_VERSION_V1 = 1;
/** Recall guidance recorded with the stable addresses: re-read source by entry-id range. */
export const RECALL_POINTER = "session-entry-id-range";
/** Most section headers a record may list (the summary has about a dozen blocks). */
export const MAX_DETAILS_SECTIONS = 64;

/** Inclusive range of session entry ids. */
export interface EntryRange {
	first: string;
	last: string;
}

export type InstructionPolicyMode = "none" | "plain" | "typed-v1";

export interface CompactionInstructionPolicy {
	mode: InstructionPolicyMode;
	canonicalized: boolean;
	/** UTF-8 bytes of `customInstructions` as received. */
	sourceBytes: number;
	/** Decoder or rendering truncation. */
	truncated: boolean;
	/** Decoder truncation of plain text alone. Optional when reading older v2 records. */
	decoderTruncated?: boolean;
	preserveCount: number;
	/** Preserve items left out; a valid v1 request never exceeds the item limit, so new records hold 0. */
	omittedPreserveCount: number;
	/** Bytes rendering left out of the request block. Optional when reading older v2 records. */
	renderedOmittedBytes?: number;
}

/** Per-projection omission counts plus the typed preserve and erased-thinking counts. */
export interface DetailsOmittedCounts {
	goal: number;
	files: number;
	/** Fabric activity omissions; absent on the oldest v2 records. */
	activity?: number;
	outstanding: number;
	earlierTurns: number;
	transcript: number;
	/** Omitted typed preserve items (0 for every valid v1 request). */
	preserve: number;
	/** Erased assistant thinking blocks (structural count). */
	thinking?: number;
	/** Protected-dialogue clipping in UTF-8 bytes, not events. */
	dialogueBytes?: number;
	/** Legacy commit-projection counter; accepted on old records, never written. */
	commits?: number;
}

export type BindingConstraint = "continuity" | "occupancy" | "reserve" | "reduction";
export const BINDING_CONSTRAINTS: readonly BindingConstraint[] = ["continuity", "occupancy", "reserve", "reduction"];

/**
 * Continuity budget numbers. New records use `strategy: "continuity"` and
 * carry every field; legacy `"adaptive"` records may lack the optional ones.
 */
export interface ContinuityBudgetDetails {
	strategy: "continuity" | "adaptive";
	/** Effective window (after the overflow clamp). */
	contextWindow: number;
	targetContextRatio: number;
	/** Final target after every ceiling. */
	targetContextTokens: number;
	reserveTokens: number;
	keepRecentTokens: number;
	rawTokensBefore: number;
	/** Structural fixed-context estimate (system prompt) the calibration used; optional on older records. */
	fixedContextEstimateTokens?: number;
	/** Calibration scale: above 1 for tokenization denser than Pi's estimate, below 1 for sparser. */
	tokenScale: number;
	fixedOverheadTokens: number;
	/** Calibrated reservation for the largest summary; optional on older records. */
	summaryReserveTokens?: number;
	retainedRawTokens: number;
	projectedTokensAfter: number;
	continuityTargetTokens?: number;
	occupancyCeilingTokens?: number;
	safeCeilingTokens?: number;
	reductionCeilingTokens?: number;
	rawTailTokenBudget?: number;
	bindingConstraint?: BindingConstraint;
}

export interface FabricCompactionDetailsV1 {
	compactor: "fabric";
	version: 1;
	sections: string[];
	summarizedEntryRange: EntryRange;
	sourceEntryCount: number;
	firstKeptEntryId: string;
	timestamp: string;
}

export interface FabricCompactionDetailsV2 {
	compactor: "fabric";
	version: 2;
	sections: string[];
	coverage: { cumulativeSourceRange: EntryRange; liveCutRange: EntryRange };
	counts: {
		branchEntries: number;
		cumulativeSourceEntries: number;
		sourceEvents: number;
		liveCutEntries: number;
		priorFabricV1: number;
		priorFabricV2: number;
	};
	omittedCounts: DetailsOmittedCounts;
	instructionPolicy: CompactionInstructionPolicy;
	stableAddresses: {
		firstKeptEntryId: string;
		cumulativeSourceRange: EntryRange;
		recall: typeof RECALL_POINTER;
	};
	/** Present only when continuity budgeting was active (model metadata known). */
	budget?: ContinuityBudgetDetails;
	/** Carry-forward block accounting, when that block was rendered. */
	carry?: { count: number; renderedOmittedBytes: number };
	/** Source hashes of the entries this compaction compacted (its live cut), for checked recall. Optional: older records lack it. */
	sourceHashes?: SourceHashes;
	/** Timestamp of the last summarized source entry. */
	timestamp: string;
}

export type ParsedCompactionDetails =
	| { ok: true; version: 1; details: FabricCompactionDetailsV1 }
	| { ok: true; version: 2; details: FabricCompactionDetailsV2 }
	| { ok: false; reason: string };

/** Everything a new v2 record needs; the builder adds the constant tags and derived addresses. */
export interface CompactionDetailsInput {
	sections: readonly string[];
	cumulativeSourceRange: EntryRange;
	liveCutRange: EntryRange;
	counts: FabricCompactionDetailsV2["counts"];
	omittedCounts: {
		goal: number;
		files: number;
		activity: number;
		outstanding: number;
		earlierTurns: number;
		transcript: number;
		dialogueBytes: number;
	};
	erasedThinkingBlocks: number;
	instructionPolicy: CompactionInstructionPolicy;
	firstKeptEntryId: string;
	timestamp: string;
	budget?: ContinuityBudgetDetails;
	carry?: { count: number; renderedOmittedBytes: number };
	sourceHashes?: SourceHashes;
}

/** Assemble a v2 record. The result always passes `parseCompactionDetails` when the input counts are valid. */
export function buildCompactionDetails(input: CompactionDetailsInput): FabricCompactionDetailsV2 {
	const details: FabricCompactionDetailsV2 = {
		compactor: DETAILS_COMPACTOR_TAG,
		version: DETAILS_VERSION,
		sections: [...input.sections],
		coverage: { cumulativeSourceRange: { ...input.cumulativeSourceRange }, liveCutRange: { ...input.liveCutRange } },
		counts: { ...input.counts },
		omittedCounts: {
			goal: input.omittedCounts.goal,
			files: input.omittedCounts.files,
			activity: input.omittedCounts.activity,
			outstanding: input.omittedCounts.outstanding,
			earlierTurns: input.omittedCounts.earlierTurns,
			transcript: input.omittedCounts.transcript,
			preserve: input.instructionPolicy.omittedPreserveCount,
			thinking: input.erasedThinkingBlocks,
			dialogueBytes: input.omittedCounts.dialogueBytes,
		},
		instructionPolicy: { ...input.instructionPolicy },
		stableAddresses: {
			firstKeptEntryId: input.firstKeptEntryId,
			cumulativeSourceRange: { ...input.cumulativeSourceRange },
			recall: RECALL_POINTER,
		},
		timestamp: input.timestamp,
	};
	if (input.budget) details.budget = { ...input.budget };
	if (input.carry) details.carry = { ...input.carry };
	if (input.sourceHashes)
		details.sourceHashes = { algorithm: input.sourceHashes.algorithm, entries: { ...input.sourceHashes.entries } };
	return details;
}

/** Thrown by the readers below to report the first invalid field; caught in `parseCompactionDetails`. */
class Invalid {
	readonly reason: string;
	constructor(reason: string) {
		this.reason = reason;
	}
}

function need<T>(ok: boolean, value: T, reason: string): T {
	if (!ok) throw new Invalid(reason);
	return value;
}

function record(value: unknown, path: string): Record<string, unknown> {
	return need(isPlainRecord(value), value as Record<string, unknown>, `${path} must be an object`);
}

function count(parent: Record<string, unknown>, key: string, path: string): number {
	const value = own(parent, key);
	return need(isCount(value), value as number, `${path}.${key} must be a non-negative integer`);
}

function optionalCount(parent: Record<string, unknown>, key: string, path: string): number | undefined {
	return own(parent, key) === undefined ? undefined : count(parent, key, path);
}

function bool(parent: Record<string, unknown>, key: string, path: string): boolean {
	const value = own(parent, key);
	return need(typeof value === "boolean", value as boolean, `${path}.${key} must be a boolean`);
}

function text(parent: Record<string, unknown>, key: string, path: string, nonEmpty: boolean): string {
	const value = own(parent, key);
	const ok = nonEmpty ? isNonEmptyString(value) : typeof value === "string";
	return need(ok, value as string, `${path}.${key} must be a ${nonEmpty ? "non-empty " : ""}string`);
}

function range(value: unknown, path: string): EntryRange {
	const source = record(value, path);
	return { first: text(source, "first", path, true), last: text(source, "last", path, true) };
}

function sections(parent: Record<string, unknown>): string[] {
	const value = own(parent, "sections");
	return [
		...need(isStringArray(value, MAX_DETAILS_SECTIONS), value as string[], "sections must be a bounded string list"),
	];
}

function withOptional<T extends object>(target: T, extras: Record<string, unknown>): T {
	for (const [key, value] of Object.entries(extras)) {
		if (value !== undefined) (target as Record<string, unknown>)[key] = value;
	}
	return target;
}

function readV1(source: Record<string, unknown>): FabricCompactionDetailsV1 {
	return {
		compactor: DETAILS_COMPACTOR_TAG,
		version: DETAILS_VERSION_V1,
		sections: sections(source),
		summarizedEntryRange: range(own(source, "summarizedEntryRange"), "summarizedEntryRange"),
		sourceEntryCount: count(source, "sourceEntryCount", "details"),
		firstKeptEntryId: text(source, "firstKeptEntryId", "details", false),
		timestamp: text(source, "timestamp", "details", true),
	};
}

function readOmitted(value: unknown): DetailsOmittedCounts {
	const path = "omittedCounts";
	const source = record(value, path);
	const counts: DetailsOmittedCounts = {
		goal: count(source, "goal", path),
		files: count(source, "files", path),
		outstanding: count(source, "outstanding", path),
		earlierTurns: count(source, "earlierTurns", path),
		transcript: count(source, "transcript", path),
		preserve: count(source, "preserve", path),
	};
	return withOptional(counts, {
		activity: optionalCount(source, "activity", path),
		thinking: optionalCount(source, "thinking", path),
		dialogueBytes: optionalCount(source, "dialogueBytes", path),
		commits: optionalCount(source, "commits", path),
	});
}

function readPolicy(value: unknown): CompactionInstructionPolicy {
	const path = "instructionPolicy";
	const source = record(value, path);
	const mode = own(source, "mode");
	const policy: CompactionInstructionPolicy = {
		mode: need(
			mode === "none" || mode === "plain" || mode === "typed-v1",
			mode as InstructionPolicyMode,
			`${path}.mode`,
		),
		canonicalized: bool(source, "canonicalized", path),
		sourceBytes: count(source, "sourceBytes", path),
		truncated: bool(source, "truncated", path),
		preserveCount: count(source, "preserveCount", path),
		omittedPreserveCount: count(source, "omittedPreserveCount", path),
	};
	need(policy.preserveCount <= MAX_PRESERVE_ITEMS, 0, `${path}.preserveCount exceeds ${MAX_PRESERVE_ITEMS}`);
	const decoderTruncated =
		own(source, "decoderTruncated") === undefined ? undefined : bool(source, "decoderTruncated", path);
	const renderedOmittedBytes = optionalCount(source, "renderedOmittedBytes", path);
	// `truncated` includes both decoder and rendering loss.
	need(!decoderTruncated || policy.truncated, 0, `${path}.truncated must include decoder truncation`);
	need(!renderedOmittedBytes || policy.truncated, 0, `${path}.truncated must include rendering loss`);
	return withOptional(policy, { decoderTruncated, renderedOmittedBytes });
}

function readBudget(value: unknown): ContinuityBudgetDetails {
	const path = "budget";
	const source = record(value, path);
	const strategy = own(source, "strategy");
	need(strategy === "continuity" || strategy === "adaptive", 0, `${path}.strategy must be "continuity" or "adaptive"`);
	const ratio = own(source, "targetContextRatio");
	const scale = own(source, "tokenScale");
	const budget: ContinuityBudgetDetails = {
		strategy: strategy as ContinuityBudgetDetails["strategy"],
		contextWindow: count(source, "contextWindow", path),
		targetContextRatio: need(
			typeof ratio === "number" && ratio > 0 && ratio <= 1,
			ratio as number,
			`${path}.targetContextRatio must be in (0, 1]`,
		),
		targetContextTokens: count(source, "targetContextTokens", path),
		reserveTokens: count(source, "reserveTokens", path),
		keepRecentTokens: count(source, "keepRecentTokens", path),
		rawTokensBefore: count(source, "rawTokensBefore", path),
		tokenScale: need(
			typeof scale === "number" && Number.isFinite(scale) && scale > 0,
			scale as number,
			`${path}.tokenScale must be a positive number`,
		),
		fixedOverheadTokens: count(source, "fixedOverheadTokens", path),
		retainedRawTokens: count(source, "retainedRawTokens", path),
		projectedTokensAfter: count(source, "projectedTokensAfter", path),
	};
	const continuity = strategy === "continuity";
	const extra = (key: string): number | undefined =>
		continuity ? count(source, key, path) : optionalCount(source, key, path);
	const binding = own(source, "bindingConstraint");
	need(
		(!continuity && binding === undefined) || BINDING_CONSTRAINTS.includes(binding as BindingConstraint),
		0,
		`${path}.bindingConstraint must name a constraint`,
	);
	return withOptional(budget, {
		fixedContextEstimateTokens: optionalCount(source, "fixedContextEstimateTokens", path),
		summaryReserveTokens: optionalCount(source, "summaryReserveTokens", path),
		continuityTargetTokens: extra("continuityTargetTokens"),
		occupancyCeilingTokens: extra("occupancyCeilingTokens"),
		safeCeilingTokens: extra("safeCeilingTokens"),
		reductionCeilingTokens: extra("reductionCeilingTokens"),
		rawTailTokenBudget: extra("rawTailTokenBudget"),
		bindingConstraint: binding,
	});
}

function readV2(source: Record<string, unknown>): FabricCompactionDetailsV2 {
	const coverage = record(own(source, "coverage"), "coverage");
	const counts = record(own(source, "counts"), "counts");
	const addresses = record(own(source, "stableAddresses"), "stableAddresses");
	need(own(addresses, "recall") === RECALL_POINTER, 0, "stableAddresses.recall is not a known pointer");
	const details: FabricCompactionDetailsV2 = {
		compactor: DETAILS_COMPACTOR_TAG,
		version: DETAILS_VERSION,
		sections: sections(source),
		coverage: {
			cumulativeSourceRange: range(own(coverage, "cumulativeSourceRange"), "coverage.cumulativeSourceRange"),
			liveCutRange: range(own(coverage, "liveCutRange"), "coverage.liveCutRange"),
		},
		counts: {
			branchEntries: count(counts, "branchEntries", "counts"),
			cumulativeSourceEntries: count(counts, "cumulativeSourceEntries", "counts"),
			sourceEvents: count(counts, "sourceEvents", "counts"),
			liveCutEntries: count(counts, "liveCutEntries", "counts"),
			priorFabricV1: count(counts, "priorFabricV1", "counts"),
			priorFabricV2: count(counts, "priorFabricV2", "counts"),
		},
		omittedCounts: readOmitted(own(source, "omittedCounts")),
		instructionPolicy: readPolicy(own(source, "instructionPolicy")),
		stableAddresses: {
			firstKeptEntryId: text(addresses, "firstKeptEntryId", "stableAddresses", false),
			cumulativeSourceRange: range(own(addresses, "cumulativeSourceRange"), "stableAddresses.cumulativeSourceRange"),
			recall: RECALL_POINTER,
		},
		timestamp: text(source, "timestamp", "details", true),
	};
	if (own(source, "budget") !== undefined) details.budget = readBudget(own(source, "budget"));
	const carry = own(source, "carry");
	if (carry !== undefined) {
		const carryRecord = record(carry, "carry");
		details.carry = {
			count: count(carryRecord, "count", "carry"),
			renderedOmittedBytes: count(carryRecord, "renderedOmittedBytes", "carry"),
		};
	}
	const hashes = own(source, "sourceHashes");
	if (hashes !== undefined) {
		const read = readSourceHashes(hashes);
		need(read !== undefined, 0, "sourceHashes is malformed");
		if (read) details.sourceHashes = read;
	}
	return details;
}

/**
 * Strictly validate persisted compaction details. Recognizes exactly
 * `compactor: "fabric"` with `version` 1 or 2; anything else is `ok: false`.
 * Never throws.
 */
export function parseCompactionDetails(value: unknown): ParsedCompactionDetails {
	try {
		const source = record(value, "details");
		if (own(source, "compactor") !== DETAILS_COMPACTOR_TAG)
			return { ok: false, reason: "not a Fabric compaction record" };
		const version = own(source, "version");
		if (version === DETAILS_VERSION_V1) return { ok: true, version: 1, details: readV1(source) };
		if (version === DETAILS_VERSION) return { ok: true, version: 2, details: readV2(source) };
		return { ok: false, reason: "unknown Fabric details version" };
	} catch (error) {
		if (error instanceof Invalid) return { ok: false, reason: error.reason };
		return { ok: false, reason: "details could not be read" };
	}
}

/** The recognized Fabric details version, or undefined. */
export function fabricDetailsVersion(value: unknown): 1 | 2 | undefined {
	const parsed = parseCompactionDetails(value);
	return parsed.ok ? parsed.version : undefined;
}

/** Count compaction entries whose details are recognized Fabric v1 or v2 records. */
export function countPriorCompactorMarkers(entries: readonly SessionEntry[]): {
	priorFabricV1: number;
	priorFabricV2: number;
} {
	let priorFabricV1 = 0;
	let priorFabricV2 = 0;
	for (const entry of entries) {
		if (entry.type !== "compaction") continue;
		const version = fabricDetailsVersion(entry.details);
		if (version === 1) priorFabricV1++;
		else if (version === 2) priorFabricV2++;
	}
	return { priorFabricV1, priorFabricV2 };
}

/**
 * One deterministic compaction, as a pure function of what `session_before_compact`
 * supplies: the active branch, Pi's preparation numbers, the model window and
 * the raw custom instructions.
 *
 * Steps: decode the instructions (the exact pi-vcc sentinel defers, a bad
 * typed request cancels), plan the live cut over the branch (budget.ts),
 * compile the summary over the raw prefix before the new kept boundary with
 * the kept tail for dialogue crossing (compile.ts), run reconstruction QA on
 * it (qa.ts), check that the rendered summary fits the plan's target, and
 * build details v2. A summary QA scores below 1 is never persisted: a summary
 * that lost its footer, broke a block ceiling or dropped a file or failure
 * address without an omission range would mislead the model, so the compactor
 * cancels instead ("qa-failed"). Any reason the compactor cannot produce a summary is
 * a typed cancellation with a bounded message; the hook decides whether to
 * show it. Identical input gives an identical result: no clock, no
 * randomness, no host state.
 */

import type { CompactionResult, SessionEntry } from "@earendil-works/pi-coding-agent";
import { buildSessionProjection, estimateTokens } from "@earendil-works/pi-coding-agent";
import { sourceHashesOf } from "../session/records/source-hashes.ts";
import { clipText } from "../text/utf8.ts";
import { type CompactionReason, type LiveCutPlan, planLiveCut } from "./cut/budget.ts";
import { budgetDetails, fitsAfterSummary, type SummaryFit } from "./cut/summary-fit.ts";
import { type QaReport, runQa, splitSections } from "./qa/qa.ts";
import {
	buildCompactionDetails,
	type CompactionDetailsInput,
	countPriorCompactorMarkers,
	type EntryRange,
	type FabricCompactionDetailsV2,
} from "./records/details.ts";
import { decodeCustomInstructions, type InstructionErrorCode } from "./records/instructions.ts";
import { type CompileSummaryResult, compileSummary } from "./summary/compile.ts";
import type { OmittedCounts } from "./summary/render.ts";
import { compactionInstructionPolicy, renderCompactionRequestBlock } from "./summary/request-render.ts";

/** Upper bound of a cancellation message shown to the user. */
export const MAX_CANCEL_MESSAGE_BYTES = 512;
/** Details timestamp when no summarized entry carries one (Pi always writes one). */
export const UNKNOWN_SOURCE_TIMESTAMP = "unknown";

export interface CompactionInput {
	/** `event.branchEntries`: the active branch, root first. */
	branchEntries: readonly SessionEntry[];
	/** `event.preparation.tokensBefore`. */
	tokensBefore: number;
	/** `event.preparation.settings.reserveTokens` / `.keepRecentTokens`. */
	reserveTokens: number;
	keepRecentTokens: number;
	/** Active model's window; absent selects the budget's fallback. */
	contextWindow?: number;
	targetContextRatio: number;
	reason: CompactionReason;
	/** `event.customInstructions`, raw. */
	customInstructions?: string;
	/** Structural estimate of context outside the entries (system prompt), if known. */
	fixedContextEstimate?: number;
	/** Per-entry structural estimate; default: Pi's estimate of what the entry projects to. */
	estimate?: (entry: SessionEntry) => number;
	/** Tool the summary names for exact recall. */
	recallTool?: string;
	/** The branch's carry-forward list, restated under `[Carry Forward]`. */
	carryForward?: readonly string[];
	/** One footer line naming the folds inside the summarized entries, so they stay one call away (fold runtime). */
	foldsNote?: (summarized: readonly SessionEntry[]) => string | undefined;
}

export type CancelCode =
	| "instruction-rejected"
	| "nothing-to-compact"
	| "no-raw-source"
	| "qa-failed"
	| "summary-does-not-fit"
	| "internal-error";

/** Failed QA probe ids named in a "qa-failed" cancellation, at most. */
export const MAX_CANCEL_PROBES_NAMED = 4;
/** Bytes of an unexpected error's own text kept in an "internal-error" cancellation. */
export const MAX_ERROR_TEXT_BYTES = 200;

export type CompactionOutcome =
	| {
			kind: "compaction";
			result: CompactionResult<FabricCompactionDetailsV2> & { details: FabricCompactionDetailsV2 };
			plan: LiveCutPlan;
			compiled: CompileSummaryResult;
			/** Reconstruction QA of the persisted summary (score 1). */
			qa: QaReport;
			/** What the user should know about this compaction (it met only the floor), when anything. */
			notice?: string;
	  }
	| {
			kind: "cancel";
			code: CancelCode;
			/** Decoder error code when `code` is "instruction-rejected". */
			instructionError?: InstructionErrorCode;
			message: string;
	  }
	/** The exact `__pi_vcc__` sentinel: the compactor takes no part. */
	| { kind: "defer"; why: "pi-vcc-sentinel" };

/**
 * Pi's structural estimate per entry, as the current context projects it: the
 * newest compaction counts its summary, entries omitted by a context edit or
 * outside the live window count 0, edited entries count their replacement.
 */
export function projectionEstimator(entries: readonly SessionEntry[]): (entry: SessionEntry) => number {
	const tokens = new Map<string, number>();
	if (entries.length > 0) {
		for (const projected of buildSessionProjection([...entries]).entries) {
			let sum = tokens.get(projected.sourceEntry.id) ?? 0;
			for (const message of projected.messages) sum += estimateTokens(message);
			tokens.set(projected.sourceEntry.id, sum);
		}
	}
	return (entry) => tokens.get(entry.id) ?? 0;
}

function cancel(code: CancelCode, text: string, instructionError?: InstructionErrorCode): CompactionOutcome {
	return {
		kind: "cancel",
		code,
		...(instructionError !== undefined ? { instructionError } : {}),
		message: clipText(text, MAX_CANCEL_MESSAGE_BYTES).text,
	};
}

/** Bounded notice for an unexpected exception while the compactor computed `subject` (e.g. "compaction"). */
export function internalErrorMessage(subject: string, error: unknown): string {
	const name = error instanceof Error ? error.name : typeof error;
	const detail = error instanceof Error ? error.message : String(error);
	const text = clipText(`${name}: ${detail}`.replace(/\s+/g, " "), MAX_ERROR_TEXT_BYTES).text;
	return clipText(`Deterministic ${subject} cancelled: internal error (${text}).`, MAX_CANCEL_MESSAGE_BYTES).text;
}

/**
 * The cancellation for an unexpected exception while computing a compaction:
 * the hook turns it into a bounded warning instead of an extension error.
 */
export function internalErrorCancel(error: unknown): CompactionOutcome {
	return cancel("internal-error", internalErrorMessage("compaction", error));
}

/** The "qa-failed" cancellation for a QA report below 1, naming the first failed probes; undefined at score 1. */
export function qaCancellation(qa: QaReport): CompactionOutcome | undefined {
	if (qa.score >= 1) return undefined;
	const failed = qa.probes.filter((probe) => !probe.passed).map((probe) => probe.id);
	const named = failed.slice(0, MAX_CANCEL_PROBES_NAMED).join(", ");
	const more = failed.length > MAX_CANCEL_PROBES_NAMED ? `, +${failed.length - MAX_CANCEL_PROBES_NAMED} more` : "";
	return cancel(
		"qa-failed",
		`Deterministic compaction cancelled: the summary failed reconstruction QA (${qa.passed} of ${qa.total} probes passed; failed: ${named}${more}).`,
	);
}

/** Details-schema omission counts from the renderer's per-projection counts. */
export function detailsOmittedCounts(counts: OmittedCounts): CompactionDetailsInput["omittedCounts"] {
	return {
		goal: counts.goal,
		files: counts.filesCreated + counts.filesWritten + counts.filesModified + counts.filesRead,
		activity: counts.activity,
		outstanding: counts.operations,
		earlierTurns: counts.turns,
		transcript: counts.transcript,
		dialogueBytes: counts.dialogueBytes,
	};
}

function idRange(entries: readonly SessionEntry[], start: number, end: number): EntryRange | undefined {
	const first = entries[start];
	const last = entries[end - 1];
	return first && last && end > start ? { first: first.id, last: last.id } : undefined;
}

/**
 * The footer line naming what stays raw. Compact-all says so and why: no
 * legal cut keeps a suffix within the raw-tail budget (the newest turn alone
 * is larger), so the model knows the summary is all it has.
 */
export function keptNote(plan: LiveCutPlan, entries: readonly SessionEntry[]): string {
	if (!plan.compactAll) {
		return `Kept raw after this summary: from @${entries[plan.keptIndex]?.id ?? plan.firstKeptEntryId} (~${plan.retainedRawTokens} tokens).`;
	}
	return `Kept raw after this summary: nothing (compact-all): no safe cut keeps a tail within the ~${plan.rawTailTokenBudget}-token raw budget.`;
}

function foldsNoteOf(input: CompactionInput, summarized: readonly SessionEntry[]): { foldsNote?: string } {
	const note = input.foldsNote?.(summarized);
	return note ? { foldsNote: note } : {};
}

/** Compute the deterministic compaction for one event; see the module comment. */
export function buildDeterministicCompaction(input: CompactionInput): CompactionOutcome {
	const decoded = decodeCustomInstructions(input.customInstructions, "compaction");
	if (decoded.ok && decoded.mode === "pi-vcc") return { kind: "defer", why: "pi-vcc-sentinel" };
	if (!decoded.ok) return cancel("instruction-rejected", decoded.error.message, decoded.error.code);

	const entries = input.branchEntries;
	const plan = planLiveCut(entries, {
		tokensBefore: input.tokensBefore,
		...(input.contextWindow !== undefined ? { contextWindow: input.contextWindow } : {}),
		reserveTokens: input.reserveTokens,
		keepRecentTokens: input.keepRecentTokens,
		targetContextRatio: input.targetContextRatio,
		reason: input.reason,
		estimate: input.estimate ?? projectionEstimator(entries),
		...(input.fixedContextEstimate !== undefined ? { fixedContextEstimate: input.fixedContextEstimate } : {}),
	});
	if (plan.liveCutEntries === 0) {
		return cancel(
			"nothing-to-compact",
			"Deterministic compaction cancelled: nothing to compact (no entry of the live window lies before a safe cut).",
		);
	}

	const rendered = renderCompactionRequestBlock(decoded.request);
	const compiled = compileSummary({
		entries: entries.slice(0, plan.keptIndex),
		keptEntries: entries.slice(plan.keptIndex),
		...(rendered.text !== "" ? { requestBlock: rendered.text } : {}),
		...(input.recallTool !== undefined ? { recallTool: input.recallTool } : {}),
		...(input.carryForward !== undefined && input.carryForward.length > 0 ? { carryForward: input.carryForward } : {}),
		keptNote: keptNote(plan, entries),
		...foldsNoteOf(input, entries.slice(0, plan.keptIndex)),
	});
	const cumulativeSourceRange = compiled.sourceRange
		? { first: compiled.sourceRange.firstEntryId, last: compiled.sourceRange.lastEntryId }
		: undefined;
	const liveCutRange = idRange(entries, plan.window.start, plan.keptIndex);
	if (compiled.sourceEntryCount === 0 || !cumulativeSourceRange || !liveCutRange) {
		return cancel("no-raw-source", "Deterministic compaction cancelled: the branch has no raw source before the cut.");
	}
	const qa = runQa(compiled.text, compiled.qa);
	const rejected = qaCancellation(qa);
	if (rejected) return rejected;
	const fit = fitsAfterSummary(plan, compiled.bytes, compiled.text.length);
	if (!fit.fits) {
		const projection =
			fit.projectedTokensAfter !== undefined && fit.limitTokens !== undefined
				? ` (${fit.projectedTokensAfter} projected tokens after compaction, target ${fit.limitTokens})`
				: ` (${compiled.bytes} bytes)`;
		return cancel(
			"summary-does-not-fit",
			`Deterministic compaction cancelled: the summary would not fit the context target${projection}.`,
		);
	}

	const details = buildCompactionDetails({
		sections: [...splitSections(compiled.text).keys()],
		cumulativeSourceRange,
		liveCutRange,
		counts: {
			branchEntries: entries.length,
			cumulativeSourceEntries: compiled.sourceEntryCount,
			sourceEvents: compiled.eventCount,
			liveCutEntries: plan.liveCutEntries,
			...countPriorCompactorMarkers(entries),
		},
		omittedCounts: detailsOmittedCounts(compiled.omittedCounts),
		erasedThinkingBlocks: compiled.erasedThinkingCount,
		instructionPolicy: compactionInstructionPolicy(decoded, rendered),
		firstKeptEntryId: plan.firstKeptEntryId,
		timestamp: compiled.sourceTimestamp || UNKNOWN_SOURCE_TIMESTAMP,
		...(plan.budget ? { budget: budgetDetails(plan.budget, compiled.bytes, compiled.text.length) } : {}),
		...(input.carryForward !== undefined && input.carryForward.length > 0
			? { carry: { count: input.carryForward.length, renderedOmittedBytes: compiled.carryForwardOmittedBytes } }
			: {}),
		sourceHashes: sourceHashesOf(entries.slice(plan.window.start, plan.keptIndex)),
	});
	return {
		kind: "compaction",
		result: {
			summary: compiled.text,
			firstKeptEntryId: plan.firstKeptEntryId,
			tokensBefore: input.tokensBefore,
			details,
		},
		plan,
		compiled,
		qa,
		...(fit.atFloor && fit.projectedTokensAfter !== undefined
			? { notice: floorNotice(fit.projectedTokensAfter, fit.atFloor) }
			: {}),
	};
}

/** The warning for a compaction accepted at the floor: what it could not give, why, and the setting to change. */
export function floorNotice(projectedTokens: number, floor: NonNullable<SummaryFit["atFloor"]>): string {
	const why =
		floor.binding === "reserve"
			? `compaction.reserveTokens (${floor.reserveTokens}) takes most of the ${floor.contextWindow}-token window it works with; ` +
				"the model has less room to answer than reserveTokens asks, and Pi may compact again after the next turn. " +
				"Lower compaction.reserveTokens for this model (a quarter of its window leaves room for both)."
			: `the ${floor.binding} ceiling of a ${floor.contextWindow}-token window is smaller than the system prompt, tools and summary; ` +
				"raise Max occupancy (compaction.targetContextRatio) or use a larger window.";
	return clipText(
		`Compacted everything: the smallest context this compaction can make (~${projectedTokens} tokens) is above its ${floor.targetTokens}-token target: ${why}`,
		MAX_CANCEL_MESSAGE_BYTES,
	).text;
}

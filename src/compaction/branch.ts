/**
 * Deterministic `/tree` branch summaries: a pure function of what
 * `session_before_tree` supplies.
 *
 * Only `preparation.entriesToSummarize` (the abandoned path, root first) is
 * compiled, so sibling branches never contaminate one another. No summary is
 * made when the user did not ask for one or the path is empty. Replacement
 * instructions (`replaceInstructions: true`) name a summarizer prompt a
 * deterministic projection cannot run, so the compactor defers to Pi. Tree
 * instructions go through the same decoder as compaction on the "tree"
 * surface: `__pi_vcc__` is ordinary text there, and a malformed typed request
 * cancels the navigation (fail closed).
 *
 * The details envelope carries typed facts later compactions re-read instead
 * of the summary prose: user requests, top-level custom messages, named Fabric
 * runs, phases, nested operations, and each paired plain tool call as an
 * operation (Pi's built-in tools under their `pi.<tool>` Fabric ref, so files
 * and failures keep their identity; other tools under their exact name). Facts
 * a nested branch summary already carries are re-emitted unchanged.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { NormalizedEvent } from "../session/events.ts";
import {
	type BranchFactDraft,
	type BranchSummaryDetailsV2,
	buildBranchSummaryDetails,
	MAX_BRANCH_ENVELOPE_BYTES,
	parseBranchSummaryDetails,
} from "../session/records/branch-details.ts";
import { FABRIC_EXEC_TOOL_NAME } from "../session/records/fabric-trace.ts";
import { isPlainRecord } from "../session/records/record-guards.ts";
import { sourceHashesOf } from "../session/records/source-hashes.ts";
import { utf8ByteLength } from "../text/utf8.ts";
import { runQa, splitSections } from "./qa/qa.ts";
import { decodeCustomInstructions, type InstructionErrorCode } from "./records/instructions.ts";
import { type CompileSummaryResult, compileSummary } from "./summary/compile.ts";
import { compactionInstructionPolicy, renderCompactionRequestBlock } from "./summary/request-render.ts";

/** Pi's built-in tools and the Fabric ref of the same operation. */
export const PI_TOOL_REFS: Readonly<Record<string, string>> = {
	read: "pi.read",
	grep: "pi.grep",
	find: "pi.find",
	ls: "pi.ls",
	edit: "pi.edit",
	write: "pi.write",
	bash: "pi.bash",
	powershell: "pi.powershell",
};
/** Provider part of a built-in tool's ref. */
export const PI_TOOL_PROVIDER = "pi";

/** The parts of Pi's `TreePreparation` the summary reads. */
export interface BranchSummaryPreparation {
	entriesToSummarize: readonly SessionEntry[];
	oldLeafId: string | null;
	userWantsSummary: boolean;
	customInstructions?: string;
	replaceInstructions?: boolean;
}

export type BranchSummaryOutcome =
	| { kind: "none"; why: "no-summary-wanted" | "replace-instructions" | "no-entries" }
	/** The summary failed reconstruction QA: defer to Pi's summarizer rather than block the navigation. */
	| { kind: "none"; why: "qa-failed"; message: string }
	| { kind: "cancel"; instructionError: InstructionErrorCode; message: string }
	| {
			kind: "summary";
			summary: string;
			details: BranchSummaryDetailsV2;
			compiled: CompileSummaryResult;
	  };

/** Subordinal of an event whose address is `${entryId}/${subordinal}`. */
function subordinalOf(event: NormalizedEvent): string | undefined {
	const prefix = `${event.entryId}/`;
	return event.address.startsWith(prefix) ? event.address.slice(prefix.length) : undefined;
}

/** The fact a raw event contributes, if any. */
export function factForEvent(event: NormalizedEvent): BranchFactDraft | undefined {
	if (event.origin !== "raw") return undefined;
	switch (event.kind) {
		case "user":
			return { kind: "user", entryId: event.entryId, subordinal: "user", text: event.text };
		case "custom":
			return {
				kind: "customMessage",
				entryId: event.entryId,
				subordinal: "custom",
				customType: event.customType,
				text: event.text,
				display: event.display,
				...(event.details !== undefined ? { details: event.details } : {}),
			};
		case "fabricRun":
			return {
				kind: "fabricRun",
				entryId: event.callEntryId,
				subordinal: `call:${event.toolCallId}`,
				name: event.name,
				...(event.description !== undefined ? { description: event.description } : {}),
				outcome: event.outcome,
			};
		case "fabricPhase": {
			const subordinal = subordinalOf(event);
			return subordinal ? { kind: "phase", entryId: event.entryId, subordinal, phase: event.phase } : undefined;
		}
		case "fabricOperation": {
			const subordinal = subordinalOf(event);
			if (!subordinal || !isPlainRecord(event.args)) return undefined;
			return {
				kind: "operation",
				entryId: event.entryId,
				subordinal,
				ref: event.ref,
				...(event.provider !== undefined ? { provider: event.provider } : {}),
				...(event.action !== undefined ? { action: event.action } : {}),
				tool: event.action ?? event.ref,
				args: event.args,
				outcome: event.outcome,
				...(event.error !== undefined ? { error: event.error } : {}),
				...(event.created ? { result: { created: true } } : {}),
			};
		}
		case "toolResult": {
			// Outer fabric_exec results contribute through their run and nested facts only.
			if (event.toolName === FABRIC_EXEC_TOOL_NAME || !event.call) return undefined;
			const builtIn = PI_TOOL_REFS[event.toolName];
			return {
				kind: "operation",
				entryId: event.entryId,
				subordinal: `tool:${event.toolCallId}`,
				ref: builtIn ?? event.toolName,
				...(builtIn ? { provider: PI_TOOL_PROVIDER, action: event.toolName } : {}),
				tool: event.toolName,
				args: event.call.args ?? {},
				outcome: event.isError ? "failed" : "succeeded",
				...(event.errorText ? { error: event.errorText } : {}),
				...(event.created ? { result: { created: true } } : {}),
			};
		}
		default:
			return undefined;
	}
}

/** Facts of the supplied path in source order; nested branch envelopes re-emit their own facts. */
export function branchFacts(entries: readonly SessionEntry[], events: readonly NormalizedEvent[]): BranchFactDraft[] {
	const byEntry = new Map<number, NormalizedEvent[]>();
	for (const event of events) {
		const list = byEntry.get(event.entryIndex) ?? [];
		list.push(event);
		byEntry.set(event.entryIndex, list);
	}
	const facts: BranchFactDraft[] = [];
	entries.forEach((entry, index) => {
		if (entry.type === "branch_summary") {
			const parsed = parseBranchSummaryDetails(entry.details);
			if (!parsed.ok) return;
			for (const { address: _address, ...draft } of parsed.details.facts) facts.push(draft as BranchFactDraft);
			return;
		}
		for (const event of byEntry.get(index) ?? []) {
			const fact = factForEvent(event);
			if (fact) facts.push(fact);
		}
	});
	return facts;
}

/**
 * The envelope plus the source hashes of the summarized entries, so an
 * abandoned branch's entries stay recallable (checked) from the branch that
 * holds the summary. Left out when it would push the envelope past its bound.
 */
function withSourceHashes(details: BranchSummaryDetailsV2, entries: readonly SessionEntry[]): BranchSummaryDetailsV2 {
	const hashed = { ...details, sourceHashes: sourceHashesOf(entries) };
	return utf8ByteLength(JSON.stringify(hashed)) <= MAX_BRANCH_ENVELOPE_BYTES ? hashed : details;
}

/** Compute the deterministic branch summary; see the module comment. */
export function buildDeterministicBranchSummary(
	preparation: BranchSummaryPreparation,
	recallTool?: string,
): BranchSummaryOutcome {
	if (!preparation.userWantsSummary) return { kind: "none", why: "no-summary-wanted" };
	if (preparation.replaceInstructions === true) return { kind: "none", why: "replace-instructions" };
	const entries = preparation.entriesToSummarize;
	const first = entries[0];
	const last = entries.at(-1);
	if (!first || !last) return { kind: "none", why: "no-entries" };
	const decoded = decodeCustomInstructions(preparation.customInstructions, "tree");
	if (!decoded.ok) return { kind: "cancel", instructionError: decoded.error.code, message: decoded.error.message };

	const rendered = renderCompactionRequestBlock(decoded.request);
	const compiled = compileSummary({
		entries,
		...(rendered.text !== "" ? { requestBlock: rendered.text } : {}),
		...(recallTool !== undefined ? { recallTool } : {}),
	});
	const qa = runQa(compiled.text, compiled.qa);
	if (qa.score < 1) {
		const failed = qa.probes.filter((probe) => !probe.passed).map((probe) => probe.id);
		return {
			kind: "none",
			why: "qa-failed",
			message: `Deterministic branch summary skipped: it failed reconstruction QA (${qa.passed} of ${qa.total} probes passed; failed: ${failed.slice(0, 4).join(", ")}); Pi summarizes this branch instead.`,
		};
	}
	const policy = compactionInstructionPolicy(decoded, rendered);
	const details = buildBranchSummaryDetails({
		source: {
			firstEntryId: first.id,
			lastEntryId: last.id,
			entryCount: entries.length,
			oldLeafId: preparation.oldLeafId,
		},
		facts: branchFacts(entries, compiled.qa.events),
		sections: [...splitSections(compiled.text).keys()],
		request: { text: rendered.text, sourceBytes: decoded.sourceBytes, truncated: policy.truncated },
	});
	return { kind: "summary", summary: compiled.text, details: withSourceHashes(details, entries), compiled };
}

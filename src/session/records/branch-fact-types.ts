/**
 * The typed facts of the branch-summary envelope, shared by the envelope
 * (branch-details.ts) and the per-fact bounding (branch-facts.ts) so neither
 * imports the other's module for its types.
 */

import type { JsonValue } from "./record-guards.ts";

export type FabricExecutionOutcome = "succeeded" | "failed" | "aborted" | "timed_out";
export const FABRIC_EXECUTION_OUTCOMES: readonly FabricExecutionOutcome[] = [
	"succeeded",
	"failed",
	"aborted",
	"timed_out",
];

interface BranchFactBase {
	entryId: string;
	subordinal: string;
	/** Always `${entryId}/${subordinal}`. */
	address: string;
}

export interface BranchUserFact extends BranchFactBase {
	kind: "user";
	text: string;
}

export interface BranchCustomMessageFact extends BranchFactBase {
	kind: "customMessage";
	customType: string;
	text: string;
	display: boolean;
	details?: JsonValue;
}

export interface BranchPhaseFact extends BranchFactBase {
	kind: "phase";
	phase: string;
}

export interface BranchOperationFact extends BranchFactBase {
	kind: "operation";
	ref: string;
	provider?: string;
	action?: string;
	tool: string;
	args: { [key: string]: JsonValue };
	outcome: FabricExecutionOutcome;
	error?: string;
	result?: JsonValue;
}

/** A completed named `fabric_exec` run (v2 only). */
export interface BranchRunFact extends BranchFactBase {
	kind: "fabricRun";
	name: string;
	description?: string;
	outcome: FabricExecutionOutcome;
}

export type BranchFactV1 = BranchUserFact | BranchCustomMessageFact | BranchPhaseFact | BranchOperationFact;
export type BranchFactV2 = BranchFactV1 | BranchRunFact;

/** A fact before the builder derives its address. */
export type BranchFactDraft = BranchFactV2 extends infer F
	? F extends BranchFactV2
		? Omit<F, "address">
		: never
	: never;

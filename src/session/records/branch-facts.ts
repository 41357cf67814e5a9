/**
 * Bounding of one branch-summary fact before it enters the envelope.
 *
 * Identity fields (ids, refs, tool and custom types, phases) are compared
 * exactly by later compactions, so an oversized one is never clipped: the
 * fact is left out instead. Free text (user and custom text, errors, run names
 * and descriptions) is clipped on whole code points; the exact source stays
 * recallable by the fact's entry address. JSON fields must be plain JSON
 * within structure and byte bounds: optional ones are dropped when they are
 * not, and a fact whose arguments are not is left out.
 */

import { clipText, utf8ByteLength } from "../../text/utf8.ts";
import type { BranchFactDraft, BranchFactV2, FabricExecutionOutcome } from "./branch-fact-types.ts";
import { isPlainRecord, type JsonBounds, type JsonValue, readBoundedJson } from "./record-guards.ts";

export interface BranchFactBounds {
	identityBytes: number;
	textBytes: number;
	errorBytes: number;
	jsonBytes: number;
	nameBytes: number;
	descriptionBytes: number;
	json: JsonBounds;
}

const OUTCOMES: ReadonlySet<string> = new Set(["succeeded", "failed", "aborted", "timed_out"]);

/** The bounded fact with its derived address, or undefined when it cannot be bounded. */
export function boundFact(draft: BranchFactDraft, bounds: BranchFactBounds): BranchFactV2 | undefined {
	const identity = (value: unknown): value is string =>
		typeof value === "string" && value.length > 0 && utf8ByteLength(value) <= bounds.identityBytes;
	const optionalIdentity = (value: unknown): boolean => value === undefined || identity(value);
	const clip = (value: string, maxBytes: number): string => clipText(value, maxBytes).text;
	const json = (value: unknown): value is JsonValue =>
		readBoundedJson(value, bounds.json).ok && utf8ByteLength(JSON.stringify(value)) <= bounds.jsonBytes;
	const outcome = (value: unknown): value is FabricExecutionOutcome => typeof value === "string" && OUTCOMES.has(value);

	if (!identity(draft.entryId) || !identity(draft.subordinal)) return undefined;
	const base = {
		entryId: draft.entryId,
		subordinal: draft.subordinal,
		address: `${draft.entryId}/${draft.subordinal}`,
	};
	switch (draft.kind) {
		case "user":
			return { ...base, kind: "user", text: clip(String(draft.text), bounds.textBytes) };
		case "customMessage": {
			if (!identity(draft.customType) || typeof draft.display !== "boolean") return undefined;
			const fact: BranchFactV2 = {
				...base,
				kind: "customMessage",
				customType: draft.customType,
				text: clip(String(draft.text), bounds.textBytes),
				display: draft.display,
			};
			if (draft.details !== undefined && json(draft.details)) fact.details = draft.details;
			return fact;
		}
		case "phase":
			return identity(draft.phase) ? { ...base, kind: "phase", phase: draft.phase } : undefined;
		case "operation": {
			if (!identity(draft.ref) || !identity(draft.tool) || !outcome(draft.outcome)) return undefined;
			if (!optionalIdentity(draft.provider) || !optionalIdentity(draft.action)) return undefined;
			if (!isPlainRecord(draft.args) || !json(draft.args)) return undefined;
			const fact: BranchFactV2 = {
				...base,
				kind: "operation",
				ref: draft.ref,
				tool: draft.tool,
				args: draft.args,
				outcome: draft.outcome,
			};
			if (draft.provider !== undefined) fact.provider = draft.provider;
			if (draft.action !== undefined) fact.action = draft.action;
			if (draft.error !== undefined) fact.error = clip(String(draft.error), bounds.errorBytes);
			if (draft.result !== undefined && json(draft.result)) fact.result = draft.result;
			return fact;
		}
		case "fabricRun": {
			const name = clip(String(draft.name), bounds.nameBytes);
			if (name === "" || !outcome(draft.outcome)) return undefined;
			const fact: BranchFactV2 = { ...base, kind: "fabricRun", name, outcome: draft.outcome };
			if (draft.description !== undefined) fact.description = clip(String(draft.description), bounds.descriptionBytes);
			return fact;
		}
		default:
			return undefined;
	}
}

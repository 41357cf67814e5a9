/**
 * Schemas of everything pi-fold persists in the session (fold records,
 * deltas, checkpoints), checked all the way down before anything is
 * trusted: a value that merely parses as JSON is not yet fold state. One
 * schema per persisted kind; the checks are compiled once.
 */

import type { ContextEditEntry } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { Compile } from "typebox/compile";
import { BRIEF_MAX_CHARS, finishBrief, truncateText } from "../briefs/brief.ts";
import type { FoldRecord } from "../lattice/records.ts";

export interface PendingMark {
	/** The fold the commit would create. */
	record: FoldRecord;
	origin: "agent" | "ladder";
}

/** Mutable fold state (records aside). Plain data; every change returns a new value. */
export interface FoldStateData {
	expanded: readonly string[];
	protected: readonly string[];
	/** Rebriefs: fold id → brief that replaces the record's. */
	briefs: Readonly<Record<string, string>>;
	/** Folds dissolved by reboundary; their records stay for history but no longer fold anything. */
	dissolved: readonly string[];
	marks: readonly PendingMark[];
	/**
	 * What an entry showed before pi-fold first folded it, when that was not
	 * its raw content (another extension's context edit). Expanding restores
	 * this, so expand is byte-identical to the never-folded window.
	 */
	baselines: Readonly<Record<string, ContextEditEntry["replacement"]>>;
}

export type FoldOp =
	| { op: "expand"; id: string }
	| { op: "refold"; id: string }
	| { op: "protect"; ids: string[] }
	| { op: "unprotect"; ids: string[] }
	| { op: "rebrief"; id: string; brief: string }
	| { op: "dissolve"; id: string }
	| { op: "restore"; id: string }
	| { op: "mark"; mark: PendingMark }
	| { op: "unmark"; id: string }
	| { op: "clear-marks"; ids: string[] }
	| { op: "baseline"; entries: Record<string, ContextEditEntry["replacement"]> };

/** Longest id a persisted record may carry (entry and tool-call ids from some providers are long). */
export const PERSISTED_ID_MAX = 256;

const Id = Type.String({ minLength: 1, maxLength: PERSISTED_ID_MAX });
const FoldId = Type.String({ pattern: "^f-[0-9a-f]{12,64}$" });
const Sha256 = Type.String({ pattern: "^[0-9a-f]{64}$" });
const Count = Type.Integer({ minimum: 0 });

const Part = Type.Union([
	Type.Object({ type: Type.Literal("entry"), entryId: Id }),
	Type.Object({ type: Type.Literal("fold"), foldId: FoldId }),
]);

const Attribution = Type.Object({
	provider: Type.String(),
	model: Type.String(),
	effort: Type.Optional(Type.String()),
});

/** A fold record as persisted. The brief's length is not bounded here: an overlong one is capped on read. */
const RecordSchema = Type.Object({
	id: FoldId,
	kind: Type.Union([Type.Literal("tool-batch"), Type.Literal("chapter"), Type.Literal("consolidation")]),
	parts: Type.Array(Part, { minItems: 1 }),
	brief: Type.String(),
	sourceHash: Sha256,
	sizes: Type.Object({
		sourceBytes: Count,
		briefBytes: Count,
		entryCount: Type.Integer({ minimum: 1 }),
		estimatedTokens: Type.Optional(Count),
	}),
	provenance: Type.Object({
		origin: Type.Union([Type.Literal("agent"), Type.Literal("ladder"), Type.Literal("command")]),
		briefGenerator: Type.Union([Type.Literal("deterministic"), Type.Literal("model"), Type.Literal("supplied")]),
		model: Type.Optional(Attribution),
	}),
});

const TextPart = Type.Object({ type: Type.Literal("text"), text: Type.String() });
const ImagePart = Type.Object({ type: Type.Literal("image"), data: Type.String(), mimeType: Type.String() });
/** What a context edit may put in place of an entry's content (Pi's ContextEditableContent), or null to omit it. */
const Replacement = Type.Union([
	Type.Null(),
	Type.Object({ content: Type.Union([Type.String(), Type.Array(Type.Union([TextPart, ImagePart]))]) }),
]);

const Mark = Type.Object({
	record: RecordSchema,
	origin: Type.Union([Type.Literal("agent"), Type.Literal("ladder")]),
});

const OpSchema = Type.Union([
	Type.Object({ op: Type.Literal("expand"), id: FoldId }),
	Type.Object({ op: Type.Literal("refold"), id: FoldId }),
	Type.Object({ op: Type.Literal("dissolve"), id: FoldId }),
	Type.Object({ op: Type.Literal("restore"), id: FoldId }),
	Type.Object({ op: Type.Literal("unmark"), id: FoldId }),
	Type.Object({ op: Type.Literal("protect"), ids: Type.Array(Id) }),
	Type.Object({ op: Type.Literal("unprotect"), ids: Type.Array(Id) }),
	Type.Object({ op: Type.Literal("clear-marks"), ids: Type.Array(FoldId) }),
	Type.Object({ op: Type.Literal("rebrief"), id: FoldId, brief: Type.String() }),
	Type.Object({ op: Type.Literal("mark"), mark: Mark }),
	Type.Object({ op: Type.Literal("baseline"), entries: Type.Record(Type.String(), Replacement) }),
]);

const StateDataSchema = Type.Object({
	expanded: Type.Array(FoldId),
	protected: Type.Array(Id),
	briefs: Type.Record(Type.String(), Type.String()),
	dissolved: Type.Array(FoldId),
	marks: Type.Array(Mark),
});
const BaselinesSchema = Type.Record(Type.String(), Replacement);

const recordCheck = Compile(RecordSchema);
const opCheck = Compile(OpSchema);
const stateCheck = Compile(StateDataSchema);
const baselinesCheck = Compile(BaselinesSchema);

/** Cap a brief read back from disk like a fresh one: a hand-edited 5 MB brief never reaches the window whole. */
export function capBrief(brief: string, id: string, toolName?: string): string {
	if (brief.length <= BRIEF_MAX_CHARS) return brief;
	return finishBrief(truncateText(brief, BRIEF_MAX_CHARS), id, toolName);
}

/** A persisted fold record, checked down to every part and size, its brief capped; undefined when malformed. */
export function decodeRecord(value: unknown): FoldRecord | undefined {
	if (!recordCheck.Check(value)) return undefined;
	const record = value as FoldRecord;
	const brief = capBrief(record.brief, record.id);
	return brief === record.brief ? record : { ...record, brief };
}

/** One persisted op, checked all the way down; rebriefs capped like fresh briefs. */
export function decodeOp(value: unknown): FoldOp | undefined {
	if (!opCheck.Check(value)) return undefined;
	const op = value as FoldOp;
	if (op.op === "rebrief") return { ...op, brief: capBrief(op.brief, op.id) };
	if (op.op === "mark") {
		const record = decodeRecord(op.mark.record);
		return record ? { ...op, mark: { ...op.mark, record } } : undefined;
	}
	return op;
}

/**
 * A checkpoint's state, checked all the way down; undefined when malformed.
 * Malformed baselines alone drop only the baselines (`badBaselines`), so
 * expansions and protections in the same checkpoint survive.
 */
export function decodeStateData(value: unknown): { data: FoldStateData; badBaselines: boolean } | undefined {
	if (!stateCheck.Check(value)) return undefined;
	const raw = value as Omit<FoldStateData, "baselines"> & { baselines?: unknown };
	const briefs: Record<string, string> = {};
	for (const [id, brief] of Object.entries(raw.briefs)) briefs[id] = capBrief(brief, id);
	const marks = raw.marks.flatMap((mark) => {
		const record = decodeRecord(mark.record);
		return record ? [{ ...mark, record }] : [];
	});
	const badBaselines = raw.baselines !== undefined && !baselinesCheck.Check(raw.baselines);
	const baselines = raw.baselines === undefined || badBaselines ? {} : (raw.baselines as FoldStateData["baselines"]);
	return {
		data: {
			expanded: raw.expanded,
			protected: raw.protected,
			briefs,
			dissolved: raw.dissolved,
			marks,
			baselines,
		},
		badBaselines,
	};
}

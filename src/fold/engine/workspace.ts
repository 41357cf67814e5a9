/**
 * The engine's contract with the actions: what every `active_context`
 * action reads (the workspace: one snapshot of the branch, the fold state and
 * the store), the change an action wants persisted, and the outcome the model
 * is shown. Plain types and the two ways an action says no. The engine builds
 * the workspace and applies the change; the actions (src/fold/actions/, a
 * layer above) are pure functions between the two.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { RecallRefusal } from "../../compaction/records/recall.ts";
import type { FoldLattice, FoldOrigin, FoldRecord, FoldRefusal, RefusalCode } from "../lattice/records.ts";
import type { BranchView } from "../lattice/units.ts";
import type { ResolvedOptions } from "../options.ts";
import type { WindowReading } from "../policy/budget.ts";
import type { FoldState } from "../state/state.ts";
import type { FoldOp } from "../state/state-schema.ts";
import type { FoldStore, FoldStoreErrorCode } from "../store/store.ts";
import type { RewriteCause } from "./instrument.ts";

/** What the next request holds now, and the budget it is served against (undefined: the window is unknown). */
export interface WindowRoom {
	reading: WindowReading;
	budget: number | undefined;
}

/** Everything an action may read. */
export interface FoldWorkspace {
	branch: readonly SessionEntry[];
	view: BranchView;
	state: FoldState;
	lattice: FoldLattice;
	store: FoldStore;
	options: ResolvedOptions;
	cwd: string;
	/** Branch index where the fresh tail starts; nothing at or after it folds. */
	freshTailStart: number;
	origin: FoldOrigin;
	/** Any entry of the session file by id (earlier branches too), for recalling compacted source; default: the branch. */
	sessionEntry?: (id: string) => SessionEntry | undefined;
	/** What the next request holds and its budget, for an expand's admission; absent: the window is unknown. */
	room?: () => WindowRoom;
}

/** What an action wants persisted. */
export interface FoldChange {
	records: FoldRecord[];
	ops: FoldOp[];
	causes: RewriteCause[];
}

/**
 * Why an action said no, by name: a lattice refusal, a store failure, a
 * recall refusal, or one of the actions' own. A host (and a test) can branch
 * on it; the text says the same to the model, with the next step.
 */
export type ActionErrorCode =
	| RefusalCode
	| FoldStoreErrorCode
	| RecallRefusal
	| "invalid-arguments"
	| "invalid-query"
	| "regex-timeout"
	| "compacted"
	| "already-expanded"
	| "not-expanded"
	| "not-marked"
	| "no-room"
	| "same-span"
	| "nothing-eligible";

export interface ActionOutcome {
	ok: boolean;
	/** Refusal or error code when not ok. */
	code?: ActionErrorCode;
	text: string;
	change?: FoldChange;
	/** The fold the action created or addressed. */
	foldId?: string;
}

export const failed = (code: ActionErrorCode, text: string): ActionOutcome => ({ ok: false, code, text });
export const fromRefusal = (refused: FoldRefusal): ActionOutcome => failed(refused.code, refused.message);

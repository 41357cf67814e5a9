/**
 * What every `active_context` action reads and returns: the workspace (one
 * snapshot of the branch, the fold state and the store), the change an
 * action wants persisted, and the outcome the model is shown. Plain types
 * and the two ways an action says no; the actions live beside it.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { RewriteCause } from "../engine/instrument.ts";
import type { FoldLattice, FoldOrigin, FoldRecord, FoldRefusal } from "../lattice/records.ts";
import type { BranchView } from "../lattice/units.ts";
import type { ResolvedOptions } from "../options.ts";
import type { FoldState } from "../state/state.ts";
import type { FoldOp } from "../state/state-schema.ts";
import type { FoldStore } from "../store/store.ts";
import type { WindowRoom } from "./expand-room.ts";

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

export interface ActionOutcome {
	ok: boolean;
	/** Refusal or error code when not ok. */
	code?: string;
	text: string;
	change?: FoldChange;
	/** The fold the action created or addressed. */
	foldId?: string;
}

export const failed = (code: string, text: string): ActionOutcome => ({ ok: false, code, text });
export const fromRefusal = (refused: FoldRefusal): ActionOutcome => failed(refused.code, refused.message);

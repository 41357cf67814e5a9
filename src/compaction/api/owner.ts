/**
 * Who produced a committed compaction: the deterministic compactor, another extension, or Pi.
 *
 * Classification reads only structural fields of the compaction entry:
 * details tagged `compactor: "fabric"` are the compactor's own; any other result an
 * extension supplied (`fromHook`) is "external"; everything else came from
 * Pi's summarizer. Before the first compaction on a branch the owner is
 * "none". Deriving it from the latest compaction entry of the active branch
 * keeps the answer right after reload or restart.
 */

import type { CompactionEntry, SessionEntry } from "@earendil-works/pi-coding-agent";
import { isPlainRecord } from "../../session/records/record-guards.ts";
import { DETAILS_COMPACTOR_TAG } from "../records/details.ts";

export type CompactionOwner = "none" | "fabric" | "external" | "pi";

/** Owner of one committed compaction entry. */
export function compactionOwnerOf(
	entry: Pick<CompactionEntry, "details" | "fromHook">,
): Exclude<CompactionOwner, "none"> {
	if (isPlainRecord(entry.details) && Object.hasOwn(entry.details, "compactor")) {
		if (entry.details.compactor === DETAILS_COMPACTOR_TAG) return "fabric";
	}
	return entry.fromHook === true ? "external" : "pi";
}

/** Owner of the latest compaction on a branch (root first), or "none". */
export function latestCompactionOwner(branch: readonly SessionEntry[]): CompactionOwner {
	for (let index = branch.length - 1; index >= 0; index--) {
		const entry = branch[index];
		if (entry?.type === "compaction") return compactionOwnerOf(entry);
	}
	return "none";
}

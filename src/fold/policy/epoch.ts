/**
 * Epoch scheduling's one placement rule: which agent folds skip the pending
 * mark and apply at once.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { estimateMessageTokens } from "../../session/tokens.ts";

/**
 * A fold followed by at most this many already-written tokens applies
 * immediately even in epoch mode: almost nothing after it is invalidated,
 * so waiting for a commit would only keep the mass in the window longer.
 */
export const EPOCH_IMMEDIATE_TAIL_TOKENS = 2_048;

/** True when an agent fold ending before entry index `end` sits in the last few messages of the branch. */
export function appliesImmediately(branch: readonly SessionEntry[], end: number): boolean {
	let after = 0;
	for (let i = end; i < branch.length; i++) {
		const entry = branch[i];
		if (entry?.type !== "message") continue;
		after += estimateMessageTokens(entry.message);
		if (after > EPOCH_IMMEDIATE_TAIL_TOKENS) return false;
	}
	return true;
}

/**
 * The replay benchmark's policies: src/cost/fold-replay.ts replays a branch
 * as recorded or through pi-fold's ladder; this module adds the benchmark's
 * reference, which plugs in as a `BoundaryPolicy`.
 *
 * - `recorded`: no folding; the prompts Pi built from the log.
 * - `ladder`: pi-fold's automatic ladder as the runtime runs it
 *   (`decideCommit` at each boundary, `planCommit` applied to the state,
 *   the fence before a request over the serving budget).
 * - `fold-all`: a reference: at every boundary, fold every completed tool
 *   batch except the newest whose results are larger than a brief.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { type BoundaryPolicy, type HostFor, type ReplayResult, replayBranch } from "../../src/cost/fold-replay.ts";
import { createFold } from "../../src/fold/lattice/lattice.ts";
import { indexLattice } from "../../src/fold/lattice/lattice-index.ts";
import { type FoldRecord, isRefusal } from "../../src/fold/lattice/records.ts";
import type { ResolvedOptions } from "../../src/fold/options.ts";
import { BRIEF_TOKENS_ESTIMATE } from "../../src/fold/policy/ladder.ts";

export type PolicyName = "recorded" | "ladder" | "fold-all";

export const POLICIES: readonly PolicyName[] = ["recorded", "ladder", "fold-all"];

/**
 * The reference policy: every completed tool batch before the newest context
 * unit, not already folded, whose results outweigh the brief that replaces them.
 */
export function foldAllPolicy(options: ResolvedOptions): BoundaryPolicy {
	return (engine, host) => {
		const view = engine.view;
		const reading = engine.reading(host);
		let lattice = engine.lattice();
		const placed = [...indexLattice(lattice, view).placed.values()];
		const newest = [...view.units].reverse().find((unit) => unit.context);
		const records: FoldRecord[] = [];
		for (const unit of view.units) {
			if (unit.kind !== "tool-batch" || !unit.completed || unit === newest) continue;
			if (unit.toolNames.includes(options.toolName)) continue;
			if (placed.some((fold) => unit.start < fold.end && fold.start < unit.end)) continue;
			let results = 0;
			for (let i = unit.start; i < unit.end; i++) {
				const entry = view.entries[i];
				if (entry?.type === "message" && entry.message.role === "toolResult")
					results += reading.entryTokens.get(entry.id) ?? 0;
			}
			if (results <= BRIEF_TOKENS_ESTIMATE) continue;
			const first = view.entries[unit.start]?.id ?? "";
			const made = createFold(lattice, view, { kind: "tool-batch", first }, { origin: "ladder", cwd: host.cwd });
			if (isRefusal(made)) continue;
			lattice = made.lattice;
			records.push(made.record);
		}
		if (records.length > 0) engine.apply({ ok: true, text: "", change: { records, ops: [], causes: [] } });
		return records.length;
	};
}

/** Replay a linear recorded branch through one of the benchmark's policies. */
export async function replayPolicy(
	recorded: readonly SessionEntry[],
	policy: PolicyName,
	options: ResolvedOptions,
	hostFor: HostFor,
): Promise<ReplayResult> {
	const chosen = policy === "fold-all" ? { name: policy, boundary: foldAllPolicy(options) } : policy;
	return replayBranch(recorded, chosen, options, hostFor);
}

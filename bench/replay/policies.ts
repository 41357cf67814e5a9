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
import { applyRecords, windowReading } from "../../src/cost/fold-shell.ts";
import { createFold } from "../../src/fold/lattice/lattice.ts";
import { indexLattice } from "../../src/fold/lattice/lattice-index.ts";
import { type FoldRecord, isRefusal } from "../../src/fold/lattice/records.ts";
import { analyzeBranch } from "../../src/fold/lattice/units.ts";
import type { ResolvedOptions } from "../../src/fold/options.ts";
import { BRIEF_TOKENS_ESTIMATE } from "../../src/fold/policy/ladder.ts";

export type PolicyName = "recorded" | "ladder" | "fold-all";

export const POLICIES: readonly PolicyName[] = ["recorded", "ladder", "fold-all"];

/**
 * The reference policy: every completed tool batch before the newest context
 * unit, not already folded, whose results outweigh the brief that replaces them.
 */
export function foldAllPolicy(options: ResolvedOptions): BoundaryPolicy {
	return (branch, shell, host) => {
		const view = analyzeBranch(branch, { readOnlyTools: options.readOnlyTools });
		const reading = windowReading(branch, shell, options, host.fixedText);
		const index = indexLattice(shell.lattice, view);
		const placed = [...index.placed.values()];
		const newest = [...view.units].reverse().find((unit) => unit.context);
		let lattice = shell.lattice;
		const records: FoldRecord[] = [];
		const sources = new Map<string, Uint8Array>();
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
			sources.set(made.record.sourceHash, made.plan.source);
		}
		if (records.length === 0) return undefined;
		const applied = applyRecords(shell, options, records, []);
		return { shell: applied.shell, custom: applied.entries, records, sources };
	};
}

/** Replay a linear recorded branch through one of the benchmark's policies. */
export function replayPolicy(
	recorded: readonly SessionEntry[],
	policy: PolicyName,
	options: ResolvedOptions,
	hostFor: HostFor,
): ReplayResult {
	const chosen = policy === "fold-all" ? { name: policy, boundary: foldAllPolicy(options) } : policy;
	return replayBranch(recorded, chosen, options, hostFor);
}

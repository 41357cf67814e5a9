/**
 * Projection candidates: one record per visible collapsed fold, in the
 * shape the spec's "Projection candidate records" table fixes, for a host
 * that ranks what could be expanded back into the window. Pure: the runtime
 * hands over its lattice, branch view and expanded set; nothing here reads
 * the session or changes the window.
 *
 * Sizes: `token_cost` is the brief standing in for the fold (what the
 * window pays now), `expansion_cost` the exact source (what expanding would
 * cost), both Pi's chars/4 estimate rounded up, at least 1. `raw_score` is
 * the exact bytes the fold saves, `score` that as a share of the source.
 */

import { PI_CHARS_PER_TOKEN } from "../session/tokens.ts";
import { foldTree } from "./lattice/lattice-view.ts";
import type { BriefGenerator, FoldLattice } from "./lattice/records.ts";
import type { BranchView } from "./lattice/units.ts";

/** Record format version the spec fixes. */
export const PROJECTION_CANDIDATE_VERSION = 1;
/** Generator version the spec fixes, kept so hosts that key on it interoperate. */
export const PROJECTION_GENERATOR_VERSION = "memory-slate-generators-v2";
/** Prefix of `key` and `collapse_key`. */
export const PROJECTION_KEY_PREFIX = "projection:";

export type ProjectionGenerator = "projection-model" | "projection-deterministic" | "projection-supplied";

export interface ProjectionCandidate {
	version: typeof PROJECTION_CANDIDATE_VERSION;
	key: string;
	kind: "projection";
	domain: "system";
	horizon: "working";
	source_id: string;
	source_version: string;
	route: { tool: string; arguments: { action: "expand"; id: string } };
	token_cost: number;
	expansion_cost: number;
	rank: number;
	score: number;
	raw_score: number;
	confidence: "exact";
	freshness: "current";
	locked_owner: false;
	collapse_key: string;
	generator: ProjectionGenerator;
	generator_version: typeof PROJECTION_GENERATOR_VERSION;
	recency: null;
}

/** What `setProjectionProvider` receives: call it for the current candidates (empty before a session starts). */
export type ProjectionProvider = () => ProjectionCandidate[];

const GENERATOR: Record<BriefGenerator, ProjectionGenerator> = {
	model: "projection-model",
	deterministic: "projection-deterministic",
	supplied: "projection-supplied",
};

const tokens = (chars: number): number => Math.max(1, Math.ceil(chars / PI_CHARS_PER_TOKEN));

export interface CandidateInput {
	lattice: FoldLattice;
	view: BranchView;
	expanded: ReadonlySet<string>;
	toolName: string;
}

/** One candidate per visible collapsed fold, in transcript order; `rank` is that order. */
export function projectionCandidates(input: CandidateInput): ProjectionCandidate[] {
	const rows = foldTree(input.lattice, input.view, input.expanded).filter((row) => row.state === "collapsed");
	const out: ProjectionCandidate[] = [];
	for (const row of rows) {
		const record = input.lattice.folds.get(row.id);
		if (!record) continue;
		const { sourceBytes, briefBytes, estimatedTokens } = record.sizes;
		const saved = Math.max(0, sourceBytes - briefBytes);
		const key = `${PROJECTION_KEY_PREFIX}${record.id}`;
		out.push({
			version: PROJECTION_CANDIDATE_VERSION,
			key,
			kind: "projection",
			domain: "system",
			horizon: "working",
			source_id: record.id,
			source_version: record.sourceHash,
			route: { tool: input.toolName, arguments: { action: "expand", id: record.id } },
			token_cost: tokens(record.brief.length),
			expansion_cost: estimatedTokens !== undefined ? Math.max(1, Math.ceil(estimatedTokens)) : tokens(sourceBytes),
			rank: out.length,
			score: sourceBytes > 0 ? Math.min(1, saved / sourceBytes) : 0,
			raw_score: saved,
			confidence: "exact",
			freshness: "current",
			locked_owner: false,
			collapse_key: key,
			generator: GENERATOR[record.provenance.briefGenerator],
			generator_version: PROJECTION_GENERATOR_VERSION,
			recency: null,
		});
	}
	return out;
}

/**
 * The fold engine's work between one response and the next request, driven
 * directly (no Pi), through the engine's own commit sequence: the turn
 * boundary (`boundary`: reconcile, the ladder's decision, a commit when it
 * decides one with its sources stored, the custom entries and drafts handed
 * over, here persisted) and the `context` hook (`prepareRequest`: the fence,
 * the request with any preview, the instrument). The Pi adapter calls the
 * same two (src/fold/pi/runtime.ts); real-runtime.ts times it through Pi's
 * handlers.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { appendSink } from "../../src/cost/fold-replay.ts";
import { FoldEngine } from "../../src/fold/engine/engine.ts";
import type { HostFacts } from "../../src/fold/engine/host-facts.ts";
import type { ResolvedOptions } from "../../src/fold/options.ts";
import { assistantTurn } from "./turns.ts";

/** What one boundary did, for the facts and to keep the work observable. */
export interface BoundaryRun {
	committed: boolean;
	folds: number;
	drafts: number;
	declined: string | undefined;
}

/** The branch loaded into an engine as at session start, with one request observed. */
export function engineOn(branch: readonly SessionEntry[], options: ResolvedOptions, host: HostFacts): FoldEngine {
	const engine = new FoldEngine(options);
	engine.reset(branch);
	engine.request(host);
	return engine;
}

// Its own id prefix: the fixture's folding already appended `replay-0…`, and a repeated id would loop Pi's parent walk.
const sink = appendSink("request-path-");

/** `turn_end`: the engine's boundary (a threshold-forced commit with `force`), its hand-off persisted. */
export async function boundaryStep(engine: FoldEngine, host: HostFacts, force?: "threshold"): Promise<BoundaryRun> {
	const forced = force ? await engine.commit(host, { force }) : undefined;
	const { commit = forced, handed } = await engine.boundary(host, forced ? "none" : "ladder");
	if (handed) engine.append(sink.persist(handed.custom, handed.drafts, engine.entries.at(-1)));
	return {
		committed: commit?.kind === "committed",
		folds: commit?.kind === "committed" ? commit.folds : 0,
		drafts: handed?.drafts.length ?? 0,
		declined: commit?.kind === "declined" ? commit.decision.declined : undefined,
	};
}

/** The `context` hook for the next request; returns the number of messages sent. */
export async function contextStep(engine: FoldEngine, host: HostFacts): Promise<number> {
	const outcome = await engine.prepareRequest(host);
	return outcome.sent?.length ?? engine.requestMessages().length;
}

/** One request as a session grows: the turn's entries arrive, the boundary, the next request. */
export async function requestPath(engine: FoldEngine, host: HostFacts, turn: number): Promise<number> {
	engine.append(assistantTurn(engine.entries.at(-1), turn));
	await boundaryStep(engine, host);
	return contextStep(engine, host);
}

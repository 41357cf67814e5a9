/**
 * The fold engine's work between one response and the next request, driven
 * directly (no Pi): the turn boundary (reconcile, the ladder's decision, a
 * commit when it decides one, the custom entries and drafts handed over and
 * persisted) and the `context` hook (the fence check, the request with any
 * preview, the instrument). The Pi adapter runs the same engine calls
 * (src/fold/pi/runtime.ts); real-runtime.ts times it through Pi's handlers.
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

/** `turn_end`: reconcile, decide, commit when decided, hand over and persist the entries and drafts. */
export function boundaryStep(engine: FoldEngine, host: HostFacts, force?: "threshold"): BoundaryRun {
	engine.reconcile();
	const plan = engine.planAutoCommit(host, force);
	const folds = plan.kind === "planned" ? plan.planned.change.records.length : 0;
	if (plan.kind === "planned") engine.applyCommit(plan);
	const handed = engine.boundaryEntries();
	if (handed) engine.append(sink.persist(handed.custom, handed.drafts, engine.entries.at(-1)));
	return {
		committed: plan.kind === "planned",
		folds,
		drafts: handed?.drafts.length ?? 0,
		declined: plan.kind === "declined" ? plan.decision.declined : undefined,
	};
}

/** The `context` hook for the next request; returns the number of messages sent. */
export function contextStep(engine: FoldEngine, host: HostFacts): number {
	if (engine.overBudget(host)) {
		const plan = engine.planAutoCommit(host, "fence");
		if (plan.kind === "planned") engine.applyCommit(plan);
	}
	const outcome = engine.request(host);
	return outcome.sent?.length ?? engine.requestMessages().length;
}

/** One request as a session grows: the turn's entries arrive, the boundary, the next request. */
export function requestPath(engine: FoldEngine, host: HostFacts, turn: number): number {
	engine.append(assistantTurn(engine.entries.at(-1), turn));
	boundaryStep(engine, host);
	return contextStep(engine, host);
}

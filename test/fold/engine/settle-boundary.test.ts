/**
 * The boundary before a run settles is listened to only when it can decide
 * something the last turn's boundary did not: Pi projects the whole branch
 * around every boundary handler, so an idle listener costs each run three
 * projections. The engine says when: after any applied change, never after
 * a decision with nothing applied since (which the settle boundary would
 * only repeat).
 */

import { describe, expect, it } from "vitest";
import { foldSpan } from "../../../src/fold/actions/actions.ts";
import { FoldEngine } from "../../../src/fold/engine/engine.ts";
import { modelHostFacts } from "../../../src/fold/engine/host-facts.ts";
import { resolveOptions } from "../../../src/fold/options.ts";
import { FoldBranch } from "../../fixtures/fold.ts";

const options = resolveOptions({ foldScheduling: "immediate" });

function session() {
	const b = new FoldBranch();
	for (const turn of ["one", "two", "three", "four"]) {
		b.user(`stage ${turn}`);
		b.tool({ id: turn, name: "bash", args: { command: turn } }, `${turn} output line\n`.repeat(1_500));
		b.assistant(`done ${turn}`);
	}
	return b.entries;
}

const roomy = modelHostFacts({ id: "m", contextWindow: 1_000_000 }, options, "", "/", { reserveTokens: 1_000 });

describe("the settle boundary", () => {
	it("is wanted after a reset, and not after a decision that applied nothing: a second decision is the same", async () => {
		const engine = new FoldEngine(options);
		engine.reset(session());
		expect(engine.settleBoundaryWanted()).toBe(true);
		const first = await engine.commit(roomy);
		expect(first.kind).toBe("declined");
		expect(engine.settleBoundaryWanted()).toBe(false);
		const again = await engine.commit(roomy);
		expect({ ...again, prepare: undefined }).toEqual({ ...first, prepare: undefined });
	});

	it("is wanted again once anything is applied: an action, or the ladder's own commit", async () => {
		const engine = new FoldEngine(options);
		engine.reset(session());
		await engine.commit(roomy);
		const folded = await foldSpan(engine.workspace("agent", "/"), ["two"]);
		expect(folded.ok, folded.text).toBe(true);
		engine.apply(folded);
		expect(engine.settleBoundaryWanted()).toBe(true);

		// Under pressure the ladder plans a commit; applying it leaves a follow-up decision to the settle boundary.
		const tight = modelHostFacts(
			{ id: "m", contextWindow: Math.ceil(engine.reading(roomy).total * 0.7) + 1_000 },
			options,
			"",
			"/",
			{ reserveTokens: 1_000 },
		);
		const commit = await engine.commit(tight, { force: "fence" });
		expect(commit.kind, JSON.stringify(commit.kind === "declined" ? commit.decision.declined : commit.kind)).toBe(
			"committed",
		);
		expect(commit.folded).toBe(true);
		expect(engine.settleBoundaryWanted()).toBe(true);
	});
});

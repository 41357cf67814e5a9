/**
 * A commit's reason, in words, is true to the session it is read from. The
 * ladder commits "for free" (`free-rewrite`) whenever the window is
 * rewritten anyway: after the agent's own fold at the same turn as well as
 * after a blocking tool left the cache cold. The phrase must hold for both;
 * it once named only the blocking tool, which the report then claimed for
 * sessions that never ran one.
 */

import { describe, expect, it } from "vitest";
import { foldSpan } from "../../../src/fold/actions/actions.ts";
import { FoldEngine } from "../../../src/fold/engine/engine.ts";
import { modelHostFacts } from "../../../src/fold/engine/host-facts.ts";
import { resolveOptions } from "../../../src/fold/options.ts";
import { commitReasonText } from "../../../src/fold/pi/commit-reasons.ts";
import { FoldBranch } from "../../fixtures/fold.ts";

const options = resolveOptions({ foldScheduling: "immediate" });
/**
 * A window the ten stages (~50k tokens) fill to half: no backstop, and the working set leaves the older
 * stages out of play long enough to have paid for their re-fetches, so what commits is the free rewrite.
 */
const roomy = modelHostFacts({ id: "m", contextWindow: 100_000 }, options, "", "/", { reserveTokens: 1_000 });

function session(tool: string) {
	const b = new FoldBranch();
	for (const turn of ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]) {
		b.user(`stage ${turn}`);
		b.tool(
			{ id: turn, name: turn === "four" ? tool : "bash", args: { command: turn } },
			`${turn} output\n`.repeat(1_500),
		);
		b.assistant(`done ${turn}`);
	}
	return b.entries;
}

/** The reason of the commit the ladder makes at the next boundary, in words. */
async function nextReason(engine: FoldEngine): Promise<string | undefined> {
	const commit = await engine.commit(roomy);
	return commit.kind === "committed" ? commitReasonText(commit.summary.reason) : undefined;
}

describe("the free commit's reason in words", () => {
	it("is true after the agent's own fold, in a session where no blocking tool ran", async () => {
		const engine = new FoldEngine(options);
		engine.reset(session("bash"));
		const folded = await foldSpan(engine.workspace("agent", "/"), ["two"]);
		engine.apply(folded);
		const reason = await nextReason(engine);
		expect(reason).toBe(commitReasonText("free-rewrite"));
		expect(reason).toContain("another change at the same turn");
	});

	it("is true after a blocking tool left the cache cold", async () => {
		const engine = new FoldEngine(options);
		engine.reset(session("Agent"));
		engine.toolCalled("Agent");
		const reason = await nextReason(engine);
		expect(reason).toBe(commitReasonText("free-rewrite"));
		expect(reason).toContain("a cache a blocking tool left cold");
	});
});

/**
 * An expand is never undone behind the agent's back (issue 18, item 5): the
 * agent is told the original shows "from the next request on", so the
 * ladder's commit at that very boundary must not fold it into a chapter,
 * span or consolidation; and an expand the serving budget cannot hold is
 * refused up front, naming the narrow read, instead of being admitted and
 * compacted away.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { expandFold, foldSpan } from "../../../src/fold/actions/actions.ts";
import { FoldEngine } from "../../../src/fold/engine/engine.ts";
import { type HostFacts, modelHostFacts } from "../../../src/fold/engine/host-facts.ts";
import { DEFAULT_BRAND_NOUN, resolveOptions } from "../../../src/fold/options.ts";
import { BACKSTOP_OCCUPANCY } from "../../../src/fold/policy/ladder.ts";
import { FoldBranch } from "../../fixtures/fold.ts";

const options = resolveOptions({ foldScheduling: "immediate" });
const RESERVE = 1_000;
const ALPHA = "alpha line of the stage one output\n";

/** Four turns: a large read the agent folds, a `!` command, two more stages, and a fresh tail that stays raw. */
function session(): SessionEntry[] {
	const b = new FoldBranch();
	b.user("stage one");
	b.tool({ id: "a", name: "read", args: { path: "a.txt" } }, ALPHA.repeat(700));
	b.assistant("read a");
	// A `!` command is a barrier: no deep span reaches across it, so stage one is a chapter on its own.
	b.bash("ls", 0);
	for (const [turn, size] of [
		["two", 600],
		["three", 600],
		["four", 2_400],
	] as const) {
		b.user(`stage ${turn}`);
		b.tool({ id: turn, name: "bash", args: { command: turn } }, `${turn} output line\n`.repeat(size));
		b.assistant(`done ${turn}`);
	}
	return b.entries;
}

function hostWith(budget: number): HostFacts {
	return modelHostFacts({ id: "m", contextWindow: budget + RESERVE }, options, "", "/", { reserveTokens: RESERVE });
}

/** An engine over the session with stage one's read folded by the agent, and that fold's id. */
async function foldedStageOne(): Promise<{ engine: FoldEngine; id: string }> {
	const engine = new FoldEngine(options);
	engine.reset(session());
	const folded = await foldSpan(engine.workspace("agent", "/"), ["a"]);
	expect(folded.ok, folded.text).toBe(true);
	engine.apply(folded);
	return { engine, id: folded.foldId ?? "" };
}

/** What the next request sends once every decided edit lands. */
function nextRequest(engine: FoldEngine, host: HostFacts): string {
	return JSON.stringify(engine.request(host).sent ?? engine.requestMessages());
}

describe("an expand the ladder would undo at the same boundary", () => {
	it("survives a commit under pressure: the ladder folds other spans around it", async () => {
		// The window with stage one expanded, measured first, sets a budget it fills to ~85%.
		const probe = await foldedStageOne();
		probe.engine.apply(await expandFold(probe.engine.workspace("agent", "/"), probe.id));
		const expandedTokens = probe.engine.reading(hostWith(1_000_000)).total;
		const host = hostWith(Math.ceil(expandedTokens / 0.85));

		const { engine, id } = await foldedStageOne();
		const expanded = await expandFold(engine.workspace("agent", "/", undefined, host), id);
		expect(expanded.ok, expanded.text).toBe(true);
		expect(expanded.text).toContain("show their original content from the next request on");
		expect(expanded.text).toMatch(/will hold ~8\d% of its budget: past 80% the automatic ladder folds other spans/);
		engine.apply(expanded);
		expect(engine.reading(host).total / (host.budget ?? 1)).toBeGreaterThanOrEqual(BACKSTOP_OCCUPANCY);

		const commit = await engine.commit(host);
		expect(commit.kind, JSON.stringify(commit.kind === "declined" ? commit.decision.declined : commit.kind)).toBe(
			"committed",
		);
		if (commit.kind !== "committed") return;
		expect(commit.folded).toBe(true);
		// The commit folded something else; stage one's output is in the very next request, raw.
		expect(engine.foldState.data.expanded).toContain(id);
		const sent = nextRequest(engine, host);
		expect(sent).toContain("alpha line of the stage one output");
		expect(sent).not.toContain(`[${DEFAULT_BRAND_NOUN} fold ${id}`);
		const created = commit.summary.folds.map((fold) => engine.lattice().folds.get(fold.id));
		for (const record of created) {
			if (!record) throw new Error("a committed fold is not in the lattice");
			const inner = record.parts.some((part) => part.type === "fold" && part.foldId === id);
			expect(inner, `${record.kind} ${record.id} absorbed the expanded fold`).toBe(false);
		}
	});

	it("is refused when the budget cannot hold it, naming a peek slice; nothing changes", async () => {
		const { engine, id } = await foldedStageOne();
		const folded = engine.reading(hostWith(1_000_000)).total;
		// Room for the window as it stands, not for stage one's ~6,000 tokens on top.
		const host = hostWith(folded + 1_000);
		const refused = await expandFold(engine.workspace("agent", "/", undefined, host), id);
		expect(refused).toMatchObject({ ok: false, code: "no-room" });
		expect(refused.change).toBeUndefined();
		expect(refused.text).toContain(`Expand of ${id} refused, nothing changed`);
		expect(refused.text).toMatch(new RegExp(`"action":"peek","id":"${id}","offset":0,"bytes":\\d+`));
		expect(engine.foldState.data.expanded).not.toContain(id);
	});
});

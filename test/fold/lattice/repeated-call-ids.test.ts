/**
 * Tool call ids that repeat (issue 33): a provider or local model server
 * numbering calls per response gives every reply's first call `call_0`.
 * Units, folds and the ladder go by what is unique on the branch (entry
 * ids), so a branch whose call ids repeat folds exactly as the same branch
 * with fresh ids; an agent naming a repeated id is refused with the calls it
 * could mean, never served the first.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { foldSpan, protectEntries } from "../../../src/fold/actions/actions.ts";
import { FoldEngine } from "../../../src/fold/engine/engine.ts";
import { modelHostFacts } from "../../../src/fold/engine/host-facts.ts";
import { createFold } from "../../../src/fold/lattice/lattice.ts";
import { emptyLattice, isRefusal } from "../../../src/fold/lattice/records.ts";
import { analyzeBranch } from "../../../src/fold/lattice/units.ts";
import { resolveOptions } from "../../../src/fold/options.ts";
import { FoldBranch } from "../../fixtures/fold.ts";
import { foldWorkspace } from "../../fixtures/workspace.ts";

const STAGE_TEXT = (turn: number, stage: number) =>
	`turn ${turn} stage ${stage}\n${`line of turn ${turn} stage ${stage} output\n`.repeat(200)}`;

/** Two user turns of four stage batches each; `repeat`: each turn's calls are call_0…call_3 again. */
function turns(repeat: boolean): SessionEntry[] {
	const b = new FoldBranch();
	for (let turn = 1; turn <= 2; turn++) {
		b.user(`turn ${turn}`);
		for (let stage = 0; stage < 4; stage++) {
			// Fresh ids as long as the repeated ones: folded byte counts match too.
			const id = repeat ? `call_${stage}` : `cal${turn}_${stage}`;
			b.tool({ id, name: "bash", args: { stage } }, STAGE_TEXT(turn, stage));
		}
		b.assistant(`turn ${turn} done`);
	}
	return b.entries;
}

/** The same branch with the call ids written out of it, so two branches can be compared entry for entry. */
const withoutCallIds = (value: unknown): string => JSON.stringify(value).replace(/call_\d|cal\d_\d/g, "call");

describe("repeated tool call ids", () => {
	it("cut units as fresh ids do: each batch is a unit of its own turn", () => {
		const repeated = analyzeBranch(turns(true));
		const fresh = analyzeBranch(turns(false));
		const shape = (view: typeof fresh) => view.units.map((unit) => [unit.kind, unit.start, unit.end, unit.completed]);
		expect(shape(repeated)).toEqual(shape(fresh));
		expect(repeated.units.filter((unit) => unit.kind === "tool-batch")).toHaveLength(8);
		expect(repeated.tools.callSpans.get("call_0")).toHaveLength(2);
	});

	it("fold a batch named by its entry id over that batch alone", () => {
		const entries = turns(true);
		const view = analyzeBranch(entries);
		// The second turn's first call, named by its assistant entry.
		const second = view.tools.callSpans.get("call_0")?.[1];
		const entryId = entries[second?.callIndex ?? -1]?.id ?? "";
		const made = createFold(emptyLattice(), view, { kind: "tool-batch", first: entryId }, { origin: "agent" });
		if (isRefusal(made)) throw new Error(made.message);
		expect(made.plan.start).toBe(second?.first);
		expect(made.plan.end).toBe((second?.last ?? 0) + 1);
	});

	it("refuse an agent's repeated call id with the calls it names, in fold and protect alike", async () => {
		const entries = turns(true);
		const space = foldWorkspace(entries);
		const calls = analyzeBranch(entries).tools.callSpans.get("call_1") ?? [];
		const candidates = calls.map((span) => entries[span.callIndex]?.id ?? "");
		const folded = await foldSpan({ ...space.ws(), origin: "command" }, ["call_1"]);
		expect(folded).toMatchObject({ ok: false, code: "ambiguous-id" });
		expect(folded.text).toContain(`names 2 calls on this branch`);
		for (const id of candidates) expect(folded.text).toContain(id);
		const protectedOutcome = protectEntries(space.ws(), ["call_1"], true);
		expect(protectedOutcome).toMatchObject({ ok: false, code: "ambiguous-id" });
		// A unique id still works.
		const unique = await foldSpan({ ...space.ws(), origin: "command" }, [candidates[0] ?? ""]);
		expect(unique.ok, unique.text).toBe(true);
	});

	it("commit as fresh ids do: the same folds, the same window", async () => {
		const options = resolveOptions({ summarizer: "deterministic" });
		const host = modelHostFacts({ id: "m", contextWindow: 16_000 }, options, "", "/", { reserveTokens: 1_000 });
		const run = async (repeat: boolean) => {
			const engine = new FoldEngine(options);
			engine.reset(turns(repeat));
			const commit = await engine.commit(host);
			if (commit.kind !== "committed") throw new Error(`no commit: ${commit.kind}`);
			const request = await engine.prepareRequest(host);
			return {
				folds: commit.summary.folds.map((fold) => fold.rung),
				freed: commit.summary.freedTokens,
				window: withoutCallIds(request.sent ?? engine.requestMessages()).replace(/f-[0-9a-f]+/g, "f-id"),
			};
		};
		const fresh = await run(false);
		expect(fresh.folds.length).toBeGreaterThan(0);
		expect(await run(true)).toEqual(fresh);
	});
});

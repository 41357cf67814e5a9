/**
 * A change that rewrites what the last request sent is announced as the
 * cause of that rewrite when it lands at a boundary, also when it leaves
 * nothing to draft: a fold only ever previewed (made by a command between
 * runs, never persisted) and then dissolved by a reboundary leaves the
 * persisted window as it was, yet the next request differs from the one
 * that showed the fold. Unannounced, the append-only tripwire would call
 * that rewrite unattributed.
 */

import { describe, expect, it } from "vitest";
import { foldSpan, reboundary } from "../../../src/fold/actions/actions.ts";
import { FoldEngine } from "../../../src/fold/engine/engine.ts";
import { modelHostFacts } from "../../../src/fold/engine/host-facts.ts";
import { resolveOptions } from "../../../src/fold/options.ts";
import { threeTurns } from "../../fixtures/fold.ts";
import { appendBoundary } from "../../fixtures/forge.ts";

const options = resolveOptions();
const host = modelHostFacts(undefined, options, "", "/");

describe("the causes a boundary announces", () => {
	it("name a reboundary that dissolves a fold never persisted: the request after it is no unattributed rewrite", async () => {
		const { entries } = threeTurns();
		const engine = new FoldEngine(options);
		engine.reset(entries);
		expect(engine.request(host).rewrite).toBeUndefined();

		// A command folds between runs: the next request previews the fold, nothing is persisted yet.
		const folded = await foldSpan({ ...engine.workspace("command", "/"), freshTailStart: entries.length }, ["c1"]);
		expect(folded.ok, folded.text).toBe(true);
		engine.apply(folded);
		const previewed = engine.request(host);
		expect(JSON.stringify(previewed.sent)).toContain(`fold ${folded.foldId}`);
		expect(previewed.rewrite?.causes).toEqual(["commit"]);

		// The agent dissolves it; the boundary persists the records only (the window is as persisted already).
		const dissolved = await reboundary(engine.workspace("agent", "/"), folded.foldId ?? "");
		expect(dissolved.ok, dissolved.text).toBe(true);
		engine.apply(dissolved);
		const handed = engine.boundaryEntries();
		expect(handed?.drafts).toEqual([]);
		const persisted = appendBoundary(entries, handed?.custom ?? []);
		engine.append(persisted.slice(entries.length));

		const next = engine.request(host);
		expect(next.sent).toBeUndefined();
		expect(next.rewrite?.causes).toEqual(["reboundary"]);
		expect(engine.instrument.unattributed).toBe(0);
	});
});

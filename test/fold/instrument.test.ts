import { describe, expect, it } from "vitest";
import {
	announce,
	CACHE_MISS_RATIO,
	emptyInstrument,
	firstDivergence,
	type InstrumentState,
	observeRequest,
	observeUsage,
} from "../../src/fold/instrument.ts";

const msg = (text: string) => ({ role: "user", content: [{ type: "text", text }] });

function run(state: InstrumentState, ...lists: unknown[][]): InstrumentState {
	return lists.reduce<InstrumentState>((current, list) => observeRequest(current, list).state, state);
}

describe("append-only instrument", () => {
	it("classifies initial, identical, append and rewrite", () => {
		let state = emptyInstrument();
		const kinds: string[] = [];
		for (const list of [[msg("a")], [msg("a")], [msg("a"), msg("b")], [msg("A"), msg("b")]]) {
			const result = observeRequest(state, list);
			kinds.push(result.kind);
			state = result.state;
		}
		expect(kinds).toEqual(["initial", "identical", "append", "rewrite"]);
		expect(state).toMatchObject({ requests: 4, identical: 1, appends: 1, rewrites: 1, unattributed: 1 });
		expect(state.history[0]).toMatchObject({ request: 4, firstDivergentIndex: 0, causes: [] });
	});

	it("treats a shortened list as a rewrite at the first missing index", () => {
		expect(firstDivergence(["a", "b", "c"], ["a", "b"])).toBe(2);
		expect(firstDivergence(["a"], ["a", "b"])).toBe(-1);
	});

	it("attributes a rewrite to the announced cause and consumes it", () => {
		let state = run(emptyInstrument(), [msg("a"), msg("b")]);
		state = announce(announce(state, "commit"), "commit");
		const rewrite = observeRequest(state, [msg("brief"), msg("b")]);
		expect(rewrite.event?.causes).toEqual(["commit"]);
		expect(rewrite.state).toMatchObject({ rewrites: 1, unattributed: 0, pendingCauses: [] });
		const next = observeRequest(rewrite.state, [msg("brief2"), msg("b")]);
		expect(next.state.unattributed).toBe(1);
	});

	it("an announced cause covers the next request only", () => {
		const state = announce(run(emptyInstrument(), [msg("a")]), "expand");
		const append = observeRequest(state, [msg("a"), msg("b")]);
		expect(append.kind).toBe("append");
		expect(append.state.pendingCauses).toEqual([]);
		const later = observeRequest(append.state, [msg("A"), msg("b")]);
		expect(later.event?.causes).toEqual([]);
		expect(later.state.unattributed).toBe(1);
	});

	it("separates provider-side cache misses from misses a rewrite paid for", () => {
		let state = run(emptyInstrument(), [msg("a")]);
		state = observeUsage(state, 1000, 0);
		state = run(state, [msg("a"), msg("b")]);
		state = observeUsage(state, 1100, CACHE_MISS_RATIO * 1000 - 1);
		expect(state.cacheMissesProviderSide).toBe(1);
		state = run(announce(state, "commit"), [msg("x")]);
		state = observeUsage(state, 300, 0);
		expect(state.cacheMissesAfterRewrite).toBe(1);
		state = run(state, [msg("x"), msg("y")]);
		state = observeUsage(state, 350, 300);
		expect(state).toMatchObject({ cacheMissesProviderSide: 1, cacheMissesAfterRewrite: 1 });
	});
});

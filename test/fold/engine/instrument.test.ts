import { describe, expect, it } from "vitest";
import {
	announce,
	CACHE_MISS_RATIO,
	emptyInstrument,
	firstDivergence,
	type InstrumentState,
	messageDigest,
	observeRequest,
	observeUsage,
	SAME_MESSAGE_MAX_DEPTH,
	sameMessage,
	sentDigests,
	strictFailure,
} from "../../../src/fold/engine/instrument.ts";

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

describe("what was sent against pi-fold's own list (issue 18, item 8)", () => {
	const digests = (list: unknown[]) => list.map(messageDigest);
	/** Observe a request whose sent list may differ from pi-fold's own. */
	const observe = (state: InstrumentState, sent: unknown[], own: unknown[] = sent) =>
		observeRequest(state, sent, digests(sent), digests(own));

	it("a rewrite pi-fold's own list does not explain is another extension's, whatever was announced", () => {
		const start = observe(emptyInstrument(), [msg("a"), msg("b")]).state;
		const foreign = observe(announce(start, "commit"), [msg("a"), msg("B"), msg("c")], [msg("a"), msg("b"), msg("c")]);
		expect(foreign.event?.causes).toEqual(["another-extension"]);
		expect(foreign.state).toMatchObject({ rewrites: 1, unattributed: 0, byOtherExtensions: 1 });
		expect(strictFailure(foreign.event ?? ({} as never))).toBe(true);
		// Sending the original again is a second rewrite on the wire, and again not ours.
		const back = observe(foreign.state, [msg("a"), msg("b"), msg("c"), msg("d")]);
		expect(back.event?.causes).toEqual(["another-extension"]);
		expect(back.state.byOtherExtensions).toBe(2);
	});

	it("a steady edit by another extension is no rewrite, and our own rewrite behind it stays ours", () => {
		const edited = (list: unknown[]) => [msg("EDITED"), ...list.slice(1)];
		let state = observe(emptyInstrument(), edited([msg("a"), msg("b")]), [msg("a"), msg("b")]).state;
		const append = observe(state, edited([msg("a"), msg("b"), msg("c")]), [msg("a"), msg("b"), msg("c")]);
		expect(append.kind).toBe("append");
		state = announce(append.state, "commit");
		const ours = observe(state, edited([msg("a"), msg("brief"), msg("c")]), [msg("a"), msg("brief"), msg("c")]);
		expect(ours.event?.causes).toEqual(["commit"]);
		expect(ours.state).toMatchObject({ unattributed: 0, byOtherExtensions: 0 });
		expect(strictFailure(ours.event ?? ({} as never))).toBe(false);
	});

	it("an edit before ours at the same request names both", () => {
		const state = announce(observe(emptyInstrument(), [msg("a"), msg("b"), msg("c")]).state, "commit");
		const both = observe(state, [msg("A"), msg("brief"), msg("c")], [msg("a"), msg("brief"), msg("c")]);
		expect(both.event?.causes).toEqual(["commit", "another-extension"]);
	});

	it("sent digests reuse ours for equal messages and hash the rest", () => {
		const own = [msg("a"), msg("b")];
		const ownDigests = ["memo-a", "memo-b"];
		expect(sentDigests([structuredClone(own[0]), msg("B"), msg("c")], own, ownDigests)).toEqual([
			"memo-a",
			messageDigest(msg("B")),
			messageDigest(msg("c")),
		]);
	});

	it("sameMessage is structural and bounded", () => {
		expect(sameMessage({ a: [1, { b: "x" }] }, { a: [1, { b: "x" }] })).toBe(true);
		expect(sameMessage({ a: [1, { b: "x" }] }, { a: [1, { b: "y" }] })).toBe(false);
		expect(sameMessage({ a: 1 }, { a: 1, b: 2 })).toBe(false);
		expect(sameMessage([1], { 0: 1 })).toBe(false);
		let deep: unknown = "leaf";
		for (let i = 0; i <= SAME_MESSAGE_MAX_DEPTH; i++) deep = [deep];
		// Too deep to compare: "different", so the caller hashes it (never a false "equal").
		expect(sameMessage(deep, structuredClone(deep))).toBe(false);
	});
});

describe("loadout: system prompt and tool set", () => {
	const sys = (content: string, tools: string[]) => ({
		role: "system" as const,
		content,
		toolsAdded: tools.map((name) => ({ name, description: name, parameters: {} })),
		timestamp: 0,
	});
	const user = { role: "user", content: "hi", timestamp: 1 };

	it("a changed system prompt or tool set is a rewrite, 'host' when Pi's own loadout changed, else unattributed", async () => {
		const { emptyInstrument, hostLoadout, observeLoadout, observeRequest, requestLoadout } = await import(
			"../../../src/fold/engine/instrument.ts"
		);
		let state = emptyInstrument();
		const step = (messages: unknown[], hostPrompt: string, hostTools: string[]) => {
			state = observeRequest(
				state,
				messages.filter((m) => (m as { role: string }).role !== "system"),
			).state;
			const result = observeLoadout(state, requestLoadout(messages), hostLoadout(hostPrompt, hostTools));
			state = result.state;
			return result.event;
		};
		expect(step([sys("p1", ["read"]), user], "p1", ["read"])).toBeUndefined();
		expect(step([sys("p1", ["read"]), user, user], "p1", ["read"])).toBeUndefined();
		expect(state.appends).toBe(1);
		// Pi's prompt changed: attributed to the host.
		const prompt = step([sys("p2", ["read"]), user, user], "p2", ["read"]);
		expect(prompt).toMatchObject({ causes: ["host"], loadout: { prompt: true, tools: false } });
		// A tool added by a later system message changes the tool set; Pi's active tools changed too.
		const tools = step([sys("p2", ["read"]), user, user, sys("", ["grep"])], "p2", ["read", "grep"]);
		expect(tools).toMatchObject({ causes: ["host"], loadout: { prompt: false, tools: true } });
		// The request's prompt changed but Pi's did not: something rewrote it behind Pi's back.
		const stray = step([sys("p3", ["read"]), user, user, sys("", ["grep"])], "p2", ["read", "grep"]);
		expect(stray).toMatchObject({ causes: [], loadout: { prompt: true, tools: false } });
		expect(state.loadout).toMatchObject({ promptChanges: 2, toolChanges: 1, unattributed: 1, observed: 5 });
		expect(state.rewrites).toBe(3);
		expect(state.unattributed).toBe(1);
		expect(state.identical + state.appends + state.rewrites).toBe(state.requests - 1);
	});
});

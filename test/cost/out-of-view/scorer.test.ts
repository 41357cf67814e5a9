import { describe, expect, it } from "vitest";
import { replyCharge, sessionCharge } from "../../../src/cost/out-of-view/charge.ts";
import { type ScoringEvent, type SentRequest, scoreReplies } from "../../../src/cost/out-of-view/scorer.ts";
import { outOfViewSummary } from "../../../src/cost/out-of-view/summary.ts";
import { callSegment, resultSegment, textSegment, type ViewMessage } from "../../../src/cost/out-of-view/view.ts";
import { testCard } from "../../fixtures/cost.ts";

const user = (text: string): ViewMessage => ({ role: "user", segments: textSegment("user", text) });
const said = (text: string, ...calls: [string, unknown][]): ViewMessage => ({
	role: "assistant",
	segments: [...textSegment("assistant", text), ...calls.map(([name, args]) => callSegment(name, args))],
});
const result = (text: string): ViewMessage => ({ role: "tool", segments: [resultSegment(text)] });
const brief = (text: string): ViewMessage => ({ role: "user", segments: textSegment("user", text) });
const system = (text: string): ViewMessage => ({ role: "system", segments: textSegment("system", text) });

const FILE = [
	"export function parseWidget(input: string) {",
	"  const widgetSize = measureWidget(input);",
	"  return widgetSize;",
	"}",
].join("\n");

const ask = user("Please fix the widget parser");
const read = said("Reading it.", ["read", { path: "src/widget.ts" }]);
const content = result(FILE);
const look = said("Looking at the tests.", ["bash", { command: "ls test" }]);
const listing = result("widget.test.ts");
const fix = said("parseWidget returns widgetSize unchanged; fixing it.", [
	"edit",
	{ path: "src/widget.ts", edits: [{ oldText: "  return widgetSize;", newText: "  return widgetSize + 1;" }] },
]);

/** The session with the last reply answered by `sent`. */
function session(sent: readonly ViewMessage[], declarations?: string[]): ScoringEvent[] {
	return [
		{ kind: "message", message: ask },
		{ kind: "reply", reply: read, sent: { messages: [ask] }, id: "r0" },
		{ kind: "message", message: content },
		{ kind: "reply", reply: look, sent: { messages: [ask, read, content] }, id: "r1" },
		{ kind: "message", message: listing },
		{
			kind: "reply",
			reply: fix,
			sent: { messages: sent, ...(declarations ? { declarations } : {}) } satisfies SentRequest,
			id: "r2",
		},
	];
}

function lastReply(events: ScoringEvent[]) {
	const scored = scoreReplies(events);
	const reply = scored.replies.at(-1);
	if (!reply) throw new Error("no reply scored");
	return { reply, scored };
}

describe("the out-of-view scorer", () => {
	it("finds every reference raw when the request sent the whole transcript", () => {
		const { reply } = lastReply(session([ask, read, content, look, listing]));
		const states = reply.references.map((reference) => `${reference.kind}:${reference.value}:${reference.state}`);
		expect(states).toEqual(
			expect.arrayContaining([
				"path:src/widget.ts:raw",
				"identifier:parseWidget:raw",
				"identifier:widgetSize:raw",
				"anchor:return widgetSize;:raw",
			]),
		);
		expect(reply.hiddenSources).toEqual([]);
		expect(reply.edits).toEqual([{ tool: "edit", anchors: 1, absent: 0, brief: 0 }]);
	});

	it("tells a reference shown only in a brief from one not shown at all", () => {
		const folded = brief("[folded: read src/widget.ts: defines parseWidget]");
		const { reply, scored } = lastReply(session([ask, folded, look, listing]));
		const state = (value: string) => reply.references.find((reference) => reference.value === value)?.state;
		expect(state("parseWidget")).toBe("brief");
		expect(state("src/widget.ts")).toBe("brief");
		expect(state("widgetSize")).toBe("absent");
		expect(state("return widgetSize;")).toBe("absent");
		expect(reply.edits).toEqual([{ tool: "edit", anchors: 1, absent: 1, brief: 0 }]);
		// One hidden source: the file's content, read two replies before (it came with request 1).
		expect(reply.hiddenSources).toEqual([{ segment: expect.any(Number), chars: FILE.length, age: 1 }]);
		expect(scored.segmentText(reply.hiddenSources[0]?.segment ?? -1)).toBe(FILE);
		const summary = outOfViewSummary(scored.replies);
		expect(summary).toMatchObject({
			replies: 3,
			repliesWithAbsent: 1,
			repliesWithBriefOnly: 0,
			edits: 1,
			editsWithAbsentAnchors: 1,
			medianAbsentAge: 1,
			hiddenSources: 1,
		});
	});

	it("needs no history for what the run's user text, the system prompt or the declarations say", () => {
		const events = session([system("You edit src/widget.ts."), ask, look, listing], ["measureWidget"]);
		events[0] = { kind: "message", message: user("Please fix parseWidget") };
		const { reply } = lastReply(events);
		const values = reply.references.map((reference) => reference.value);
		expect(values).not.toContain("parseWidget");
		expect(values).not.toContain("src/widget.ts");
		expect(values).toContain("widgetSize");
	});

	it("does not score a reply the replay did not send, and scores what it says as history", () => {
		const events: ScoringEvent[] = [
			{ kind: "message", message: ask },
			{ kind: "reply", reply: said("Using makeGadget here.") },
			{ kind: "message", message: user("go on") },
			{ kind: "reply", reply: said("So makeGadget it is."), sent: { messages: [user("go on")] }, id: "r1" },
		];
		const scored = scoreReplies(events);
		expect(scored.replies.map((reply) => reply.id)).toEqual(["r1"]);
		expect(scored.replies[0]?.references).toEqual([
			{ kind: "identifier", value: "makeGadget", state: "absent", age: 1, source: expect.any(Number) },
		]);
	});
});

describe("the charged cost", () => {
	const card = testCard();

	it("charges a search and a peek per hidden source, each re-sending the prompt at the cached rate", () => {
		// Search: 100,000 cached at $0.1/M, (5 × 230 / 4 = 288 + 40) fresh at $1/M, 40 out at $10/M.
		const search = (100_000 * 0.1 + 328 * 1 + 40 * 10) / 1e6;
		// Peek of a 4,000-character source: 1,000 + 40 fresh.
		const peek = (100_000 * 0.1 + 1_040 * 1 + 40 * 10) / 1e6;
		const charge = replyCharge({ card, scale: 1 }, 100_000, [{ chars: 4_000 }]);
		expect(charge.requests).toBe(2);
		expect(charge.cost).toBeCloseTo(search + peek, 12);
		expect(replyCharge({ card, scale: 1 }, 100_000, [{ chars: 4_000 }, { chars: 4_000 }]).cost).toBeCloseTo(
			2 * (search + peek),
			12,
		);
	});

	it("bills the added bytes as cache writes where the provider does, and refuses a reply it cannot price", () => {
		const writes = testCard({ freshInputBilling: "cacheWrite" });
		const charge = replyCharge({ card: writes, scale: 1 }, 0, [{ chars: 0 }]);
		// Fresh: search 328, peek 40, at the cache-write rate $1.25/M; outputs 2 × 40 at $10/M.
		expect(charge.cost).toBeCloseTo(((328 + 40) * 1.25 + 80 * 10) / 1e6, 12);
		const reply = { step: 3, id: "r3", references: [], edits: [], hiddenSources: [{ segment: 0, chars: 10, age: 1 }] };
		expect(() => sessionCharge({ card, scale: 1 }, [reply], () => undefined)).toThrow(/reply r3/);
		expect(sessionCharge({ card, scale: 1 }, [{ ...reply, hiddenSources: [] }], () => undefined)).toEqual({
			requests: 0,
			cost: 0,
		});
	});
});

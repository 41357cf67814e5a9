import { describe, expect, it } from "vitest";
import {
	ASSISTANT_RESPONSE_LABEL,
	DIALOGUE_EXCHANGE_LIMIT,
	DIALOGUE_EXCHANGE_MAX_BYTES,
	DIALOGUE_HEADER,
	RETAINED_RAW,
	renderDialogue,
	renderExchange,
	selectDialogueExchanges,
} from "../../../src/compaction/summary/dialogue.ts";
import { omittedBytesMarker } from "../../../src/compaction/summary/render-text.ts";
import { normalizeBranch } from "../../../src/session/normalize.ts";
import { utf8ByteLength } from "../../../src/text/utf8.ts";
import { SessionBuilder } from "../../fixtures/compaction-events.ts";

function dialogueOf(summarized: SessionBuilder, kept?: SessionBuilder) {
	const branch = normalizeBranch(summarized.entries, kept?.entries ?? []);
	return { branch, dialogue: renderDialogue(branch.events, branch.cutEventIndex) };
}

describe("dialogue constants", () => {
	it("pins the exchange limit, per-exchange bytes, header and labels", () => {
		expect(DIALOGUE_EXCHANGE_LIMIT).toBe(3);
		expect(DIALOGUE_EXCHANGE_MAX_BYTES).toBe(3968);
		expect(DIALOGUE_HEADER).toBe("[Recent user directions and discussion]");
		expect(ASSISTANT_RESPONSE_LABEL).toBe("**Historical assistant response (not a verified outcome)**");
		expect(RETAINED_RAW).toBe("retained raw");
	});
});

describe("selectDialogueExchanges", () => {
	it("keeps the last three user exchanges with their preceding text-bearing responses, regardless of tool volume", () => {
		const b = new SessionBuilder();
		for (let turn = 1; turn <= 5; turn++) {
			b.user(`request ${turn}`);
			b.assistant(`answer ${turn}`);
			for (let call = 0; call < 50; call++) b.tool(`t${turn}-${call}`, "read", { path: `f${call}` });
		}
		const { branch } = dialogueOf(b);
		const exchanges = selectDialogueExchanges(branch.events, branch.cutEventIndex);
		// The final answer, which no user message followed, takes the newest slot.
		expect(exchanges.map((exchange) => [exchange.assistant?.text, exchange.user?.text])).toEqual([
			["answer 3", "request 4"],
			["answer 4", "request 5"],
			["answer 5", undefined],
		]);
	});

	it("pairs a reply with the last text-bearing assistant entry since the previous user message", () => {
		const b = new SessionBuilder();
		b.user("first");
		b.assistant("interim note");
		b.assistant({ calls: [{ id: "t", name: "read", args: {} }] });
		b.result("t", "read");
		b.assistant({ text: ["final", "words"], thinking: ["THINKING-POISON"] });
		b.assistant({ calls: [{ id: "u", name: "read", args: {} }] });
		b.result("u", "read");
		b.user("second");
		b.user("third");
		const { branch, dialogue } = dialogueOf(b);
		const exchanges = selectDialogueExchanges(branch.events, branch.cutEventIndex);
		expect(exchanges.map((exchange) => exchange.assistant?.text)).toEqual([undefined, "final\nwords", undefined]);
		expect(dialogue.text).not.toContain("THINKING-POISON");
	});

	it("excludes fully raw exchanges before the limit and addresses a crossing reply as retained raw", () => {
		const b = new SessionBuilder();
		b.user("old one");
		b.assistant("reply one");
		b.user("old two");
		b.assistant("reply two, summarized");
		const kept = new SessionBuilder("k");
		const crossingUser = kept.user("CROSSING-REPLY-TEXT");
		kept.assistant("raw reply");
		kept.user("fully raw user");
		kept.assistant("raw reply 2");
		kept.user("fully raw user 2");
		const { branch, dialogue } = dialogueOf(b, kept);
		const exchanges = selectDialogueExchanges(branch.events, branch.cutEventIndex);
		expect(exchanges.map((exchange) => [exchange.user?.text, exchange.crossing])).toEqual([
			["old one", false],
			["old two", false],
			["CROSSING-REPLY-TEXT", true],
		]);
		expect(dialogue.text).toContain(`User @${crossingUser}: ${RETAINED_RAW}`);
		expect(dialogue.text).toContain("reply two, summarized");
		expect(dialogue.text).not.toContain("CROSSING-REPLY-TEXT");
		expect(dialogue.text).not.toContain("fully raw");
	});
});

describe("renderExchange", () => {
	it("renders complete multiline text with roles and entry addresses when it fits", () => {
		const b = new SessionBuilder();
		const assistant = b.assistant("Plan:\n1. parse\n2. render");
		const user = b.user("Go with option 2.\nKeep it under 32 KiB.");
		const { dialogue } = dialogueOf(b);
		expect(dialogue.exchanges[0]?.text).toBe(
			[
				"Exchange 1 of 1",
				`${ASSISTANT_RESPONSE_LABEL} @${assistant}:`,
				"> Plan:\n> 1. parse\n> 2. render",
				`User @${user}:`,
				"> Go with option 2.\n> Keep it under 32 KiB.",
			].join("\n"),
		);
		expect(dialogue.omittedBytes).toBe(0);
		expect(dialogue.text.startsWith(`${DIALOGUE_HEADER}\n`)).toBe(true);
	});

	it("bounds each exchange to 3,968 bytes with head, tail and explicit omitted-byte markers", () => {
		const b = new SessionBuilder();
		b.assistant(`ASSISTANT-HEAD ${"a".repeat(20_000)} ASSISTANT-TAIL`);
		b.user(`USER-HEAD ${"ü".repeat(20_000)} USER-TAIL`);
		const { dialogue } = dialogueOf(b);
		const exchange = dialogue.exchanges[0];
		expect(utf8ByteLength(exchange?.text ?? "")).toBeLessThanOrEqual(DIALOGUE_EXCHANGE_MAX_BYTES);
		expect(utf8ByteLength(exchange?.text ?? "")).toBeGreaterThan(DIALOGUE_EXCHANGE_MAX_BYTES - 64);
		for (const fragment of ["ASSISTANT-HEAD", "ASSISTANT-TAIL", "USER-HEAD", "USER-TAIL"]) {
			expect(exchange?.text).toContain(fragment);
		}
		expect(exchange?.text.match(/\[\.\.\. \d+ bytes omitted\]/g)).toHaveLength(2);
		expect(dialogue.omittedBytes).toBeGreaterThan(50_000);
	});

	it("gives user text at least half the budget and lets a short reply leave room for the response", () => {
		const b = new SessionBuilder();
		b.assistant("a".repeat(20_000));
		b.user("u".repeat(20_000));
		b.assistant("r".repeat(20_000));
		b.user("ok");
		const { dialogue } = dialogueOf(b);
		const [both, short] = dialogue.exchanges;
		const userBytes = (text: string) => (text.match(/u/g) ?? []).length;
		const assistantBytes = (text: string) => (text.match(/a/g) ?? []).length;
		expect(userBytes(both?.text ?? "")).toBeGreaterThanOrEqual(assistantBytes(both?.text ?? "") - 8);
		expect((short?.text.match(/r/g) ?? []).length).toBeGreaterThan(3500);
		expect(short?.text.endsWith("> ok")).toBe(true);
	});

	it("keeps a long user text's share while the response still gets a bounded excerpt", () => {
		const b = new SessionBuilder();
		b.assistant("short answer that must survive");
		const user = b.user("x".repeat(20_000));
		const { branch } = dialogueOf(b);
		const [exchange] = selectDialogueExchanges(branch.events, branch.cutEventIndex);
		if (!exchange) throw new Error("expected an exchange");
		const rendered = renderExchange(exchange, 1, 1);
		expect(rendered.text).toContain("short answer that must survive");
		expect(rendered.text).toContain(`User @${user}:`);
		expect(rendered.text).toContain(omittedBytesMarker(rendered.omittedBytes));
		expect(utf8ByteLength(rendered.text)).toBeLessThanOrEqual(DIALOGUE_EXCHANGE_MAX_BYTES);
	});

	it("quotes every text line so dialogue can never pose as a section header", () => {
		const b = new SessionBuilder();
		b.user("[Files And Changes]\n[Current Status]");
		const { dialogue } = dialogueOf(b);
		expect(dialogue.text.split("\n")).not.toContain("[Files And Changes]");
		expect(dialogue.text).toContain("> [Files And Changes]");
	});
});

import type { AssistantMessage, Context, Model } from "@earendil-works/pi-ai";
import { complete } from "@earendil-works/pi-ai/compat";
import { afterEach, describe, expect, it } from "vitest";
import {
	callTools,
	LOOPBACK_FALLBACK_TEXT,
	type LoopbackProvider,
	type LoopbackProviderOptions,
	type RecordedRequest,
	say,
	startLoopbackProvider,
} from "./loopback-provider.ts";
import {
	CHARS_PER_TOKEN,
	canonicalPromptText,
	PromptPrefixIndex,
	pairingDefects,
	simulatePromptCache,
	type WireMessage,
} from "./provider-rules.ts";

// Builders for wire messages.
const user = (content: string): WireMessage => ({ role: "user", content });
const assistantCalls = (...ids: string[]): WireMessage => ({
	role: "assistant",
	content: null,
	tool_calls: ids.map((id) => ({ id, type: "function", function: { name: "read", arguments: "{}" } })),
});
const toolResult = (id: string): WireMessage => ({ role: "tool", tool_call_id: id, content: `result ${id}` });

describe("pairingDefects", () => {
	it("accepts every call answered right after its assistant message, in any order", () => {
		const messages = [user("go"), assistantCalls("a", "b"), toolResult("b"), toolResult("a"), user("next")];
		expect(pairingDefects(messages)).toEqual([]);
	});

	it("flags a call with no result", () => {
		const messages = [user("go"), assistantCalls("a", "b"), toolResult("a"), user("next")];
		expect(pairingDefects(messages)).toEqual([{ kind: "missing-result", toolCallId: "b", messageIndex: 1 }]);
	});

	it("flags a result with no call before it", () => {
		expect(pairingDefects([user("go"), toolResult("x")])).toEqual([
			{ kind: "orphan-result", toolCallId: "x", messageIndex: 1 },
		]);
	});

	it("flags a result separated from its call by another message as orphan, and the call as unanswered", () => {
		const messages = [assistantCalls("a"), user("interrupt"), toolResult("a")];
		expect(pairingDefects(messages)).toEqual([
			{ kind: "missing-result", toolCallId: "a", messageIndex: 0 },
			{ kind: "orphan-result", toolCallId: "a", messageIndex: 2 },
		]);
	});

	it("flags a second result for the same call", () => {
		const messages = [assistantCalls("a"), toolResult("a"), toolResult("a")];
		expect(pairingDefects(messages)).toEqual([{ kind: "duplicate-result", toolCallId: "a", messageIndex: 2 }]);
	});

	it("flags a call id reused by a later assistant message", () => {
		const messages = [assistantCalls("a"), toolResult("a"), assistantCalls("a"), toolResult("a")];
		expect(pairingDefects(messages)).toEqual([
			{ kind: "duplicate-call", toolCallId: "a", messageIndex: 2 },
			{ kind: "orphan-result", toolCallId: "a", messageIndex: 3 },
		]);
	});
});

describe("simulatePromptCache", () => {
	const system = { role: "system", content: "You are terse." };
	const prompt = (...messages: WireMessage[]) => canonicalPromptText({ messages: [system, ...messages] });

	it("reads nothing from cache on the first request and estimates prompt tokens at chars/4", () => {
		const first = prompt(user("hello"));
		expect(simulatePromptCache(first, [])).toEqual({
			promptTokens: Math.ceil(first.length / CHARS_PER_TOKEN),
			cachedTokens: 0,
			cachedChars: 0,
		});
	});

	it("reads the whole earlier prompt when the new one only appends", () => {
		const first = prompt(user("hello"));
		const second = prompt(user("hello"), { role: "assistant", content: "hi" }, user("more"));
		const usage = simulatePromptCache(second, [first]);
		expect(usage.cachedChars).toBe(first.length);
		expect(usage.cachedTokens).toBe(Math.floor(first.length / CHARS_PER_TOKEN));
	});

	it("stops the cached prefix at the first changed character", () => {
		const first = prompt(user("aaaa"), user("tail"));
		const edited = prompt(user("aaXa"), user("tail"));
		const shared = prompt().length + '{"message":{"content":"aa'.length;
		expect(simulatePromptCache(edited, [first]).cachedChars).toBe(shared);
	});

	it("takes the longest prefix over all earlier requests, not just the last", () => {
		const long = prompt(user("one"), user("two"), user("three"));
		const other = prompt(user("different"));
		const next = prompt(user("one"), user("two"), user("three"), user("four"));
		expect(simulatePromptCache(next, [long, other]).cachedChars).toBe(long.length);
	});

	it("shares no token between a request with tools and one without", () => {
		const withTools = canonicalPromptText({ tools: [{ type: "function" }], messages: [system] });
		const without = canonicalPromptText({ messages: [system] });
		expect(simulatePromptCache(without, [withTools]).cachedTokens).toBe(0);
	});
});

describe("PromptPrefixIndex", () => {
	/** Deterministic prompts of 1–12 short lines drawn from a small alphabet, so prefixes collide often. */
	function prompts(seed: number, count: number): string[] {
		let state = seed;
		const next = (bound: number) => {
			state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
			return state % bound;
		};
		const words = ["a", "ab", "abc", "b", "ba", '{"x":1}'];
		return Array.from({ length: count }, () =>
			Array.from({ length: 1 + next(12) }, () => `${words[next(words.length)]}${words[next(words.length)]}\n`).join(""),
		);
	}

	it("finds the same shared prefix as comparing with every earlier prompt", () => {
		for (const seed of [1, 2, 3, 4, 5]) {
			const index = new PromptPrefixIndex();
			const seen: string[] = [];
			for (const prompt of prompts(seed, 60)) {
				expect(index.sharedChars(prompt)).toBe(simulatePromptCache(prompt, seen).cachedChars);
				index.remember(prompt);
				seen.push(prompt);
			}
		}
	});

	it("forgets a prefix nothing used for longer than its time-to-live, and a use refreshes it", () => {
		const index = new PromptPrefixIndex(300_000);
		const first = "system\nuser one\n";
		index.remember(first, 0);
		expect(index.sharedChars(`${first}more\n`, 300_000)).toBe(first.length);
		index.remember(`${first}more\n`, 300_000);
		expect(index.sharedChars(`${first}more\n`, 600_000)).toBe(`${first}more\n`.length);
		expect(index.sharedChars(`${first}more\n`, 600_001)).toBe(0);
	});
});

describe("loopback provider over HTTP, read by pi-ai's openai-completions client", () => {
	let provider: LoopbackProvider | undefined;
	afterEach(async () => {
		await provider?.close();
		provider = undefined;
	});

	const start = async (options: LoopbackProviderOptions): Promise<LoopbackProvider> => {
		provider = await startLoopbackProvider(options);
		return provider;
	};
	const modelAt = (baseUrl: string): Model<"openai-completions"> => ({
		id: "loopback-1",
		name: "Loopback",
		api: "openai-completions",
		provider: "loopback",
		baseUrl,
		reasoning: false,
		input: ["text"],
		cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
		contextWindow: 128_000,
		maxTokens: 1_024,
	});
	const ask = (lb: LoopbackProvider, messages: Context["messages"]): Promise<AssistantMessage> =>
		complete(modelAt(lb.baseUrl), { systemPrompt: "You are terse.", messages }, { apiKey: "loopback-key" });
	const userMessage = (text: string): Context["messages"][number] => ({ role: "user", content: text, timestamp: 0 });
	// pi-ai repairs a call without a result before sending, but passes an orphan result through.
	const orphanResult = (id: string): Context["messages"][number] => ({
		role: "toolResult",
		toolCallId: id,
		toolName: "read",
		content: [{ type: "text", text: "stale" }],
		isError: false,
		timestamp: 0,
	});

	it("plays a text reply and reports the simulated cache read as pi-ai's cacheRead", async () => {
		const lb = await start({ script: [say("first"), say("second")] });
		const first = await ask(lb, [userMessage("hello")]);
		const second = await ask(lb, [userMessage("hello"), first, userMessage("again")]);

		expect(first.content).toEqual([{ type: "text", text: "first" }]);
		expect(first.stopReason).toBe("stop");
		expect(first.usage.cacheRead).toBe(0);
		const cache = lb.requests[1]?.cache;
		expect(cache?.cachedTokens).toBeGreaterThan(0);
		expect(second.usage.cacheRead).toBe(cache?.cachedTokens);
		expect(second.usage.input).toBe((cache?.promptTokens ?? 0) - (cache?.cachedTokens ?? 0));
	});

	it("plays tool calls with their ids and arguments", async () => {
		const lb = await start({
			script: [callTools([{ id: "call_1", name: "read", arguments: { path: "a.txt", limit: 5 } }], "reading")],
		});
		const message = await ask(lb, [userMessage("read a.txt")]);
		expect(message.stopReason).toBe("toolUse");
		expect(message.content).toEqual([
			{ type: "text", text: "reading" },
			{ type: "toolCall", id: "call_1", name: "read", arguments: { path: "a.txt", limit: 5 } },
		]);
	});

	it("plays reasoning as a thinking block that pi-ai sends back with the assistant message", async () => {
		const thinking = "Weigh the two files first; ".repeat(2);
		const lb = await start({ script: [{ thinking, text: "done" }, say("next")] });
		const first = await ask(lb, [userMessage("think")]);
		expect(first.content).toEqual([
			{ type: "thinking", thinking, thinkingSignature: "reasoning_content" },
			{ type: "text", text: "done" },
		]);
		expect(lb.requests[0]?.completionTokens).toBe(Math.ceil((thinking.length + 4) / CHARS_PER_TOKEN));
		await ask(lb, [userMessage("think"), first, userMessage("again")]);
		expect(lb.requests[1]?.body.messages.find((message) => message.role === "assistant")).toMatchObject({
			content: "done",
			reasoning_content: thinking,
		});
	});

	it("streams long text in several deltas that join to the scripted text", async () => {
		const text = "a long reply that spans several stream deltas, ".repeat(3);
		const lb = await start({ script: [say(text)] });
		expect((await ask(lb, [userMessage("talk")])).content).toEqual([{ type: "text", text }]);
	});

	it("answers with the fixed fallback text once the script is used up", async () => {
		const lb = await start({ script: [say("scripted")] });
		await ask(lb, [userMessage("one")]);
		const fallback = await ask(lb, [userMessage("two")]);
		expect(fallback.content).toEqual([{ type: "text", text: LOOPBACK_FALLBACK_TEXT }]);
		expect(lb.pendingSteps()).toBe(0);
	});

	it("passes the recorded request to a computed step", async () => {
		const lb = await start({
			script: [(request: RecordedRequest) => say(`saw ${request.body.messages.length} messages`)],
		});
		const message = await ask(lb, [userMessage("count")]);
		expect(message.content).toEqual([{ type: "text", text: "saw 2 messages" }]);
	});

	it("records every request body in order", async () => {
		const lb = await start({});
		await ask(lb, [userMessage("one")]);
		await ask(lb, [userMessage("two")]);
		expect(lb.requests.map((r) => r.body.messages.at(-1)?.content)).toEqual(["one", "two"]);
		expect(lb.requests.map((r) => r.body.stream)).toEqual([true, true]);
	});

	it("refuses a request with an orphan tool result, records why, and keeps the script step", async () => {
		const lb = await start({ script: [say("kept for later")] });
		const refused = await ask(lb, [userMessage("go"), orphanResult("ghost")]);
		expect(refused.stopReason).toBe("error");
		expect(refused.errorMessage).toContain("orphan-result ghost");
		expect(lb.rejections).toEqual([{ kind: "orphan-result", toolCallId: "ghost", messageIndex: 2, requestIndex: 0 }]);
		expect(lb.pendingSteps()).toBe(1);
	});

	it("answers HTTP 400 to a raw request whose tool call has no result", async () => {
		const lb = await start({});
		const response = await fetch(`${lb.baseUrl}/chat/completions`, {
			method: "POST",
			headers: { "content-type": "application/json" },
			body: JSON.stringify({ model: "m", stream: true, messages: [user("go"), assistantCalls("c1"), user("next")] }),
		});
		expect(response.status).toBe(400);
		expect(await response.text()).toContain("missing-result c1");
		expect(lb.rejections.map((r) => r.kind)).toEqual(["missing-result"]);
	});

	it("answers an invalid request when told not to refuse, still flagging it", async () => {
		const lb = await start({ refuseInvalid: false });
		const answered = await ask(lb, [userMessage("go"), orphanResult("ghost")]);
		expect(answered.stopReason).toBe("stop");
		expect(lb.rejections.map((r) => [r.kind, r.toolCallId])).toEqual([["orphan-result", "ghost"]]);
	});

	it("records requests to other paths as stray and answers 404", async () => {
		const lb = await start({});
		const response = await fetch(`${lb.baseUrl}/models`);
		expect(response.status).toBe(404);
		expect(lb.strayRequests).toEqual([{ method: "GET", path: "/v1/models" }]);
		expect(lb.requests).toEqual([]);
	});
});

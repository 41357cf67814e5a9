/**
 * The fold runtime in the real Pi 1.6.0 host (SDK, faux model): folding,
 * peeking and expanding through the `active_context` tool, checked against
 * the exact messages each request carried.
 */

import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { JsonObject, Message } from "@earendil-works/pi-ai";
import type { ExtensionAPI, InlineExtension } from "@earendil-works/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { type FoldRuntime, STRICT_APPEND_ONLY_ENV } from "../../src/fold/pi/runtime.ts";
import { registerRuntime } from "../../src/register.ts";
import { canonicalJson } from "../../src/session/canonical.ts";
import { callTools, createSdkHarness, reply, type SdkHarness, toolCall } from "../harness/sdk.ts";
import { takeProblems } from "../harness/tripwire.ts";

const SECRET_A = "ALPHA-CONTENT-7f3a";
const SECRET_B = "BRAVO-CONTENT-91c2";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Harness with the fold runtime loaded; the runtime is returned so tests can read its instrument.
 * `neighbours`: other extensions, loaded before and after pi-fold.
 */
async function foldHarness(
	persist = false,
	neighbours: { before?: InlineExtension[]; after?: InlineExtension[] } = {},
): Promise<{ harness: SdkHarness; runtime: () => FoldRuntime }> {
	let runtime: FoldRuntime | undefined;
	const extension = (pi: ExtensionAPI) => {
		runtime = registerRuntime(pi);
	};
	const extensions = [...(neighbours.before ?? []), extension, ...(neighbours.after ?? [])];
	const harness = await createSdkHarness({ extensions, tools: ["read", "active_context"], persist });
	cleanups.push(() => harness.dispose());
	// a.txt is large enough that folding it visibly shrinks the window (~5k tokens).
	// First lines show in the brief (a brief names what each call returned); the secrets are past them.
	writeFileSync(join(harness.cwd, "a.txt"), `alpha file\n${SECRET_A}\n${"alpha line of filler text\n".repeat(800)}`);
	writeFileSync(join(harness.cwd, "b.txt"), `bravo file\n${SECRET_B}\n`);
	return {
		harness,
		runtime: () => {
			if (!runtime) throw new Error("fold runtime not loaded");
			return runtime;
		},
	};
}

const withoutSystem = (messages: readonly Message[]) => messages.filter((m) => m.role !== "system");
const text = (messages: readonly Message[]) => canonicalJson(withoutSystem(messages));

/** Read both files in one tool batch, then fold it through the tool. Returns the fold id. */
async function readThenFold(harness: SdkHarness, runtime: () => FoldRuntime): Promise<string> {
	harness.enqueue(
		callTools([toolCall("read", { path: "a.txt" }, "call_a"), toolCall("read", { path: "b.txt" }, "call_b")]),
		reply("Read both files."),
	);
	await harness.run("Read a.txt and b.txt.");
	harness.enqueue(
		callTools([toolCall("active_context", { action: "fold", ids: ["call_a"] }, "call_fold")]),
		reply("Folded."),
	);
	await harness.run("Fold the reads.");
	const status = runtime().status(harness.session.extensionRunner.createContext());
	const fold = status.folds[0];
	if (!fold) throw new Error("no fold was created");
	return fold.id;
}

describe("fold runtime in Pi", () => {
	it("folds a tool batch: the next request carries the brief and none of the folded bytes", async () => {
		const { harness, runtime } = await foldHarness();
		const id = await readThenFold(harness, runtime);
		const beforeFold = harness.requests[2]?.messages ?? [];
		expect(text(beforeFold)).toContain(SECRET_A);
		const afterFold = harness.requests.at(-1)?.messages ?? [];
		const window = text(afterFold);
		expect(window).not.toContain(SECRET_A);
		expect(window).not.toContain(SECRET_B);
		expect(window).toContain(`fold ${id}`);
		const brief = withoutSystem(afterFold).find((m) => m.role === "toolResult" && m.toolCallId === "call_a");
		expect(JSON.stringify(brief?.content)).toContain(
			JSON.stringify(`active_context {"action":"peek","id":"${id}"}`).slice(1, -1),
		);
		// Call/result shells stay, so the provider sees every call answered.
		expect(
			withoutSystem(afterFold)
				.filter((m) => m.role === "toolResult")
				.map((m) => (m as { toolCallId: string }).toolCallId),
		).toEqual(["call_a", "call_b", "call_fold"]);
		// Pi's own accounting reflects the folded window.
		const projection = harness.session.sessionManager.buildSessionProjection();
		expect(canonicalJson(projection.messages)).not.toContain(SECRET_A);
		expect(runtime().status(harness.session.extensionRunner.createContext()).instrument.unattributed).toBe(0);
		// This session has no file, so the store lives in memory, and status says so.
		const shown = await harness.run("/context");
		expect(shown.join("\n")).toMatch(/Store: in memory \(this session has no file/);
	});

	it("peek returns the exact bytes as a pure append; expand restores byte-identical messages", async () => {
		const { harness, runtime } = await foldHarness();
		const id = await readThenFold(harness, runtime);
		const neverFolded = withoutSystem(harness.requests[2]?.messages ?? []);

		harness.enqueue(callTools([toolCall("active_context", { action: "peek", id }, "call_peek")]), reply("Peeked."));
		await harness.run("Peek at it.");
		const beforePeek = harness.requests.at(-3)?.messages ?? [];
		const peekRequest = harness.requests.at(-1)?.messages ?? [];
		const peekResult = withoutSystem(peekRequest).find((m) => m.role === "toolResult" && m.toolCallId === "call_peek");
		const peekText = canonicalJson(peekResult);
		expect(peekText).toContain(SECRET_A);
		expect(peekText).toContain("verified");
		// Pure append: the request before the peek result is a prefix of the one after it.
		expect(text(peekRequest).startsWith(text(beforePeek).slice(0, -1))).toBe(true);

		harness.enqueue(
			callTools([toolCall("active_context", { action: "expand", id }, "call_expand")]),
			reply("Expanded."),
		);
		await harness.run("Expand it.");
		const expanded = withoutSystem(harness.requests.at(-1)?.messages ?? []);
		// The span the fold covered is byte-identical to the never-folded request.
		expect(canonicalJson(expanded.slice(0, neverFolded.length))).toBe(canonicalJson(neverFolded));
		const instrument = runtime().status(harness.session.extensionRunner.createContext()).instrument;
		expect(instrument.unattributed).toBe(0);
		expect(instrument.history.map((event) => event.causes)).toEqual([["commit"], ["expand"]]);
	});

	it("refuses malformed arguments with a clear error and changes nothing", async () => {
		const { harness, runtime } = await foldHarness();
		const id = await readThenFold(harness, runtime);
		const bad: [string, JsonObject][] = [
			["bad_type", { action: "peek", id: 42 }],
			["bad_action", { action: "explode" }],
			["no_id", { action: "expand" }],
			["path_id", { action: "peek", id: "../../etc/passwd" }],
			["unknown_id", { action: "expand", id: "f-000000000000" }],
		];
		const before = harness.session.sessionManager.getBranch().filter((e) => e.type !== "message").length;
		harness.enqueue(
			callTools(bad.map(([name, args]) => toolCall("active_context", args, `call_${name}`))),
			reply("Done."),
		);
		await harness.run("Try these.");
		const results = withoutSystem(harness.requests.at(-1)?.messages ?? []).filter(
			(m): m is Extract<Message, { role: "toolResult" }> =>
				m.role === "toolResult" && m.toolCallId.startsWith("call_") && bad.some(([n]) => m.toolCallId === `call_${n}`),
		);
		expect(results).toHaveLength(bad.length);
		for (const result of results) {
			expect(result.isError).toBe(true);
			expect(canonicalJson(result.content).length).toBeGreaterThan(20);
		}
		const byId = Object.fromEntries(results.map((r) => [r.toolCallId, canonicalJson(r.content)]));
		expect(byId.call_unknown_id).toContain("status");
		expect(byId.call_no_id).toMatch(/id/);
		// Nothing changed: no new state or edit entries, and the fold is still collapsed.
		const after = harness.session.sessionManager.getBranch().filter((e) => e.type !== "message").length;
		expect(after).toBe(before);
		expect(runtime().status(harness.session.extensionRunner.createContext()).folds[0]).toMatchObject({
			id,
			state: "collapsed",
		});
	});
});

describe("naming entries", () => {
	it("status detail window gives the entry ids the agent folds a text-only exchange by", async () => {
		const { harness, runtime } = await foldHarness();
		harness.enqueue(reply(`The first answer mentions ${SECRET_B}.`));
		await harness.run("First question?");
		harness.enqueue(reply("Second answer."));
		await harness.run("Second question?");
		harness.enqueue(
			callTools([toolCall("active_context", { action: "status", detail: "window" }, "call_window")]),
			reply("Listed."),
		);
		await harness.run("Which entries are there?");
		const listed = withoutSystem(harness.requests.at(-1)?.messages ?? []).find(
			(m) => m.role === "toolResult" && m.toolCallId === "call_window",
		);
		const text = listed?.role === "toolResult" && listed.content[0]?.type === "text" ? listed.content[0].text : "";
		const first = /(\S+) user "First question\?"/.exec(text)?.[1];
		const answer = /(\S+) assistant "The first answer/.exec(text)?.[1];
		expect(first && answer).toBeTruthy();
		harness.enqueue(
			callTools([toolCall("active_context", { action: "fold", ids: [first ?? "", answer ?? ""] }, "call_fold")]),
			reply("Folded."),
		);
		await harness.run("Fold the first exchange.");
		expect(runtime().status(harness.session.extensionRunner.createContext()).folds).toMatchObject([
			{ kind: "chapter", firstEntryId: first },
		]);
		// The exchange is gone from the window (only the listing's own preview still quotes it).
		const assistantTexts = withoutSystem(harness.requests.at(-1)?.messages ?? []).filter((m) => m.role === "assistant");
		expect(JSON.stringify(assistantTexts)).not.toContain(SECRET_B);
	});
});

describe("several active_context calls in one assistant message", () => {
	it("run one after another: the second plans against the first's fold, and no request breaks a pairing", async () => {
		const { harness, runtime } = await foldHarness();
		const ctx = () => harness.session.extensionRunner.createContext();
		harness.enqueue(callTools([toolCall("read", { path: "a.txt" }, "call_a")]), reply("Read a."));
		await harness.run("Read a.txt.");
		harness.enqueue(reply("Noted."));
		await harness.run("Thanks.");
		const conversation = harness.session.sessionManager
			.getBranch()
			.filter((entry) => entry.type === "message" && entry.message.role !== "system");
		const [ask, , , answer] = conversation;
		harness.enqueue(
			callTools([
				toolCall("active_context", { action: "fold", ids: [ask?.id ?? "", answer?.id ?? ""] }, "call_chapter"),
				toolCall("active_context", { action: "fold", ids: ["call_a"] }, "call_batch"),
				toolCall("active_context", { action: "protect", ids: ["call_a"] }, "call_protect"),
			]),
			reply("Done."),
		);
		await harness.run("Fold the first exchange and its read.");
		const results = withoutSystem(harness.requests.at(-1)?.messages ?? []).filter(
			(m): m is Extract<Message, { role: "toolResult" }> =>
				m.role === "toolResult" && m.toolCallId.startsWith("call_") && m.toolCallId !== "call_a",
		);
		const byId = Object.fromEntries(results.map((r) => [r.toolCallId, r]));
		expect(byId.call_chapter?.isError, JSON.stringify(byId.call_chapter?.content)).toBe(false);
		// The batch now lies inside the chapter fold the first call made.
		expect(byId.call_batch?.isError).toBe(true);
		expect(JSON.stringify(byId.call_batch?.content)).toContain("inside-fold");
		expect(byId.call_protect?.isError).toBe(false);
		const status = runtime().status(ctx());
		expect(status.folds.map((fold) => fold.kind)).toEqual(["chapter"]);
		expect(status.counts.protectedEntries).toBe(2);
		expect(lastWindow(harness)).not.toContain(SECRET_A);
	});
});

describe("every window-changing verb is one attributed rewrite", () => {
	it("expand, refold, rebrief and reboundary each land as one rewrite with their own cause", async () => {
		const { harness, runtime } = await foldHarness();
		const ctx = () => harness.session.extensionRunner.createContext();
		harness.enqueue(callTools([toolCall("read", { path: "a.txt" }, "call_a")]), reply("Read a."));
		await harness.run("Read a.txt.");
		harness.enqueue(callTools([toolCall("read", { path: "b.txt" }, "call_b")]), reply("Read b."));
		await harness.run("Read b.txt.");
		const act = async (args: JsonObject, callId: string) => {
			harness.enqueue(callTools([toolCall("active_context", args, callId)]), reply("ok"));
			await harness.run(`Do ${callId}.`);
			const result = withoutSystem(harness.requests.at(-1)?.messages ?? []).find(
				(m) => m.role === "toolResult" && m.toolCallId === callId,
			);
			expect(result && "isError" in result && result.isError).toBe(false);
		};
		const tokensRaw = ctx().getContextUsage()?.tokens ?? 0;
		expect(tokensRaw).toBeGreaterThan(5000);
		await act({ action: "fold", ids: ["call_a"] }, "call_fold");
		const id = runtime().status(ctx()).folds[0]?.id ?? "";
		// Pi's own accounting sees the folded window once the boundary has committed it.
		expect(ctx().getContextUsage()?.tokens ?? 0).toBeLessThan(tokensRaw - 4000);
		await act({ action: "expand", id }, "call_expand");
		await act({ action: "refold", id }, "call_refold");
		const before = runtime().status(ctx()).folds[0]?.briefBytes ?? 0;
		await act({ action: "rebrief", id, brief: "Read a.txt; it holds the alpha marker." }, "call_rebrief");
		expect(lastWindow(harness)).toContain("it holds the alpha marker");
		const after = runtime().status(ctx()).folds[0]?.briefBytes ?? 0;
		expect(after).not.toBe(before);
		expect(after).toBeGreaterThan("Read a.txt; it holds the alpha marker.".length);
		await act({ action: "reboundary", id, ids: ["call_a", "call_b"] }, "call_reboundary");
		await act({ action: "protect", ids: ["call_b"] }, "call_protect");
		const instrument = runtime().status(ctx()).instrument;
		expect(instrument.unattributed).toBe(0);
		expect(instrument.history.map((event) => event.causes)).toEqual([
			["commit"],
			["expand"],
			["refold"],
			["rebrief"],
			["reboundary"],
		]);
		// protect moved nothing: the request after it was an append.
		expect(instrument.lastKind).toBe("append");
	});
});

describe("rewrites by other extensions (issue 18, item 8)", () => {
	/** An extension whose `context` handler rewrites message 1 on its third request only. */
	const rewriterOfMessageOne = (pi: ExtensionAPI) => {
		let calls = 0;
		pi.on("context", (event) => {
			calls++;
			const target = event.messages[1];
			if (calls !== 3 || target?.role !== "assistant") return undefined;
			const messages = [...event.messages];
			messages[1] = { ...target, content: [{ type: "text", text: "rewritten by another extension" }] };
			return { messages };
		});
	};

	for (const order of ["before", "after"] as const) {
		it(`a rewrite of message 1 by an extension loaded ${order} pi-fold is seen, named and fails strict mode`, async () => {
			expect(process.env[STRICT_APPEND_ONLY_ENV]).toBe("1");
			const { harness, runtime } = await foldHarness(false, { [order]: [rewriterOfMessageOne] });
			const ctx = () => harness.session.extensionRunner.createContext();
			harness.enqueue(reply("One."), reply("Two."), reply("Three."), reply("Four."));
			await harness.run("first");
			await harness.run("second");
			// Request 3 carries the rewritten message 1; request 4 the original again: two rewrites on the wire.
			await expect(harness.run("third")).rejects.toThrow(
				/pi-fold: rewrite by another extension at request 3: message 1/,
			);
			await expect(harness.run("fourth")).rejects.toThrow(
				/pi-fold: rewrite by another extension at request 4: message 1/,
			);
			expect(takeProblems()).toEqual([
				expect.stringMatching(
					/extension error \(context_with_system\): pi-fold: rewrite by another extension at request 3/,
				),
				expect.stringMatching(
					/extension error \(context_with_system\): pi-fold: rewrite by another extension at request 4/,
				),
			]);
			const wire = harness.requests.map((request) => withoutSystem(request.messages));
			expect(JSON.stringify(wire[2]?.[1])).toContain("rewritten by another extension");
			expect(JSON.stringify(wire[3]?.[1])).not.toContain("rewritten by another extension");
			const instrument = runtime().status(ctx()).instrument;
			expect(instrument).toMatchObject({ requests: 4, rewrites: 2, unattributed: 0, byOtherExtensions: 2 });
			expect(instrument.history.map((event) => [event.request, event.firstDivergentIndex, event.causes])).toEqual([
				[3, 1, ["another-extension"]],
				[4, 1, ["another-extension"]],
			]);
			const shown = (await harness.run("/context")).join("\n");
			expect(shown).toContain("2 rewrites, 0 unattributed, 2 by other extensions");
		});
	}
});

describe("another process on the session file (issue 18, item 14)", () => {
	it("an entry another process appended before this one's own next turn is still seen: warned once, folding stops", async () => {
		const { harness, runtime } = await foldHarness(true);
		harness.enqueue(reply("One."), reply("Two."), reply("Three."));
		expect(await harness.run("first")).toEqual([]);
		const file = harness.session.sessionManager.getSessionFile() ?? "";
		const leaf = harness.session.sessionManager.getLeafId();
		// Another Pi appends a line; this process then writes its own turn after it, before its boundary looks.
		const foreign = {
			type: "custom",
			customType: "other",
			id: "f0reign1",
			parentId: leaf,
			timestamp: new Date().toISOString(),
		};
		appendFileSync(file, `${JSON.stringify(foreign)}\n`);
		const warned = await harness.run("second");
		expect(warned.filter((text) => text.includes("another process is writing this session file"))).toEqual([
			expect.stringContaining("entry f0reign1 is not this process's"),
		]);
		const ctx = harness.session.extensionRunner.createContext();
		expect(await runtime().engine.commit(runtime().hostFacts(ctx), { force: "fence" })).toEqual({
			kind: "off",
			folded: false,
		});
		// Said once.
		expect((await harness.run("third")).filter((text) => text.includes("another process"))).toEqual([]);
	});
});

function lastWindow(harness: SdkHarness): string {
	return JSON.stringify(withoutSystem(harness.requests.at(-1)?.messages ?? []));
}

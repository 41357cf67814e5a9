/**
 * The deterministic compactor in the real Pi 1.6.0 host: `/compact` and overflow
 * recovery through the CLI in RPC mode against the loopback provider (which
 * refuses any request with broken tool pairing), the "pi" engine deferring to
 * Pi's summarizer, a malformed typed request cancelling, and, in-process with
 * the faux model, compacting twice (the first kept tail survives into the
 * second summary), `/tree` branch summaries and the repair of another
 * compactor's orphaning cut.
 */

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Message } from "@earendil-works/pi-ai";
import type { InlineExtension } from "@earendil-works/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { registerCompaction } from "../../src/compaction/pi/hook.ts";
import { parseCompactionDetails } from "../../src/compaction/records/details.ts";
import { COMPACT_REQUEST_PREFIX, encodePreserveRequest } from "../../src/compaction/records/instructions.ts";
import piFold, { registerPiFold } from "../../src/index.ts";
import { parseBranchSummaryDetails } from "../../src/session/records/branch-details.ts";
import { utf8ByteLength } from "../../src/text/utf8.ts";
import {
	type LoopbackProvider,
	callTools as loopbackCallTools,
	overflowError,
	say,
	startLoopbackProvider,
} from "../harness/loopback-provider.ts";
import { createPiSandbox, onlySessionFile, type PiSandbox, readSessionFile } from "../harness/pi-cli.ts";
import { type PiRpc, type RpcRecord, startRpc } from "../harness/pi-rpc.ts";
import { pairingDefects, type WireMessage } from "../harness/provider-rules.ts";
import {
	callTools,
	createSdkHarness,
	FAUX_MODEL_ID,
	FAUX_PROVIDER_ID,
	reply,
	type SdkHarness,
	toolCall,
} from "../harness/sdk.ts";
import { takeProblems } from "../harness/tripwire.ts";

/** Turns played before compacting; each reads a file of about 1,600 tokens. */
const TURNS = 12;
const MAX_SUMMARY_BYTES = 32 * 1024;
const RPC_COMPACT_TIMEOUT_MS = 60_000;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface CliSession {
	provider: LoopbackProvider;
	sandbox: PiSandbox;
	rpc: PiRpc;
}

/** A CLI session in RPC mode with `TURNS` turns of file reading already played. */
async function cliSession(settings: Record<string, unknown>, contextWindow?: number): Promise<CliSession> {
	const provider = await startLoopbackProvider();
	cleanups.push(() => provider.close());
	const sandbox = createPiSandbox({ baseUrl: provider.baseUrl, settings, ...(contextWindow ? { contextWindow } : {}) });
	cleanups.push(() => sandbox.dispose());
	for (let turn = 1; turn <= TURNS; turn++) {
		writeFileSync(join(sandbox.cwd, `notes-${turn}.md`), `Note ${turn}: a line of project notes.\n`.repeat(170));
	}
	const rpc = startRpc(sandbox);
	cleanups.push(async () => {
		await rpc.close();
	});
	for (let turn = 1; turn <= TURNS; turn++) {
		provider.enqueue(
			loopbackCallTools([{ id: `call_${turn}`, name: "read", arguments: { path: `notes-${turn}.md` } }]),
			say(`Notes ${turn} describe part ${turn} of the project.`),
		);
		const { response } = await rpc.promptAndSettle(`Turn ${turn}: read notes-${turn}.md and summarize it.`);
		expect(response.success, response.error).toBe(true);
	}
	return { provider, sandbox, rpc };
}

function compactionEntries(sandbox: PiSandbox): Record<string, unknown>[] {
	return readSessionFile(onlySessionFile(sandbox)).filter((entry) => entry.type === "compaction");
}

function notices(records: readonly RpcRecord[]): string[] {
	return records.flatMap((record) =>
		record.type === "extension_ui_request" && record.method === "notify" ? [String(record.message)] : [],
	);
}

/** Wire-shaped messages of a pi-ai request, for the provider's pairing rule. */
function wire(messages: readonly Message[]): WireMessage[] {
	return messages.map((message) => {
		if (message.role === "assistant") {
			const calls = message.content.flatMap((part) => (part.type === "toolCall" ? [{ id: part.id }] : []));
			return calls.length > 0 ? { role: "assistant", tool_calls: calls } : { role: "assistant" };
		}
		if (message.role === "toolResult") return { role: "tool", tool_call_id: message.toolCallId };
		return { role: message.role };
	});
}

describe("Fabric compaction in the CLI (RPC mode, loopback provider)", () => {
	it("/compact writes a bounded Fabric v2 compaction, and the next request is accepted", async () => {
		const { provider, sandbox, rpc } = await cliSession({ compaction: { keepRecentTokens: 4_000 } });
		const encoded = encodePreserveRequest({ instructions: "Keep the notes index.", preserve: ["release v1.2"] });
		if (!encoded.ok) throw new Error(encoded.error.message);
		const requestsBefore = provider.requests.length;

		const response = await rpc.send({ type: "compact", customInstructions: encoded.text }, RPC_COMPACT_TIMEOUT_MS);
		expect(response.success, response.error).toBe(true);
		// Deterministic: compacting asked no model.
		expect(provider.requests.length).toBe(requestsBefore);

		const [entry, ...more] = compactionEntries(sandbox);
		expect(more).toEqual([]);
		expect(entry).toMatchObject({ fromHook: true, summary: (response.data as { summary: string }).summary });
		const summary = String(entry?.summary);
		expect(utf8ByteLength(summary)).toBeLessThanOrEqual(MAX_SUMMARY_BYTES);
		expect(summary).toContain("- release v1.2");
		const parsed = parseCompactionDetails(entry?.details);
		expect(parsed).toMatchObject({ ok: true, version: 2 });
		if (parsed.ok && parsed.version === 2) {
			expect(parsed.details.instructionPolicy).toMatchObject({ mode: "typed-v1", preserveCount: 1 });
			expect(parsed.details.stableAddresses.firstKeptEntryId).toBe(entry?.firstKeptEntryId);
		}

		const next = await rpc.promptAndSettle("Which notes did you read?");
		expect(next.response.success, next.response.error).toBe(true);
		const after = provider.requests.slice(requestsBefore);
		expect(after).toHaveLength(1);
		expect(after[0]?.defects).toEqual([]);
		expect(after[0]?.reply).toBeDefined();
		expect(JSON.stringify(after[0]?.body.messages)).toContain("[Recent user directions and discussion]");
		expect(provider.rejections).toEqual([]);
	});

	it("recovers from a context overflow with a Fabric summary, and the retried request is accepted", async () => {
		const { provider, sandbox, rpc } = await cliSession(
			{ compaction: { keepRecentTokens: 4_000, reserveTokens: 4_000 } },
			32_000,
		);
		expect(compactionEntries(sandbox)).toEqual([]);
		provider.enqueue(overflowError());
		const since = rpc.mark();

		const { response } = await rpc.promptAndSettle("Read every note again.");

		expect(response.success, response.error).toBe(true);
		const end = rpc.records.slice(since).find((record) => record.type === "compaction_end");
		expect(end).toMatchObject({ reason: "overflow", aborted: false, willRetry: true });
		const [entry] = compactionEntries(sandbox);
		expect(parseCompactionDetails(entry?.details)).toMatchObject({ ok: true, version: 2 });
		const failedIndex = provider.requests.findIndex((request) => request.failure !== undefined);
		const retried = provider.requests.slice(failedIndex + 1);
		expect(retried).toHaveLength(1);
		expect(retried[0]?.defects).toEqual([]);
		expect(retried[0]?.reply).toBeDefined();
		expect(JSON.stringify(retried[0]?.body.messages)).toContain("[Recent user directions and discussion]");
		expect(provider.rejections).toEqual([]);
		// Pi omits the failed reply before recovering; the fold runtime must leave that edit alone.
		const entries = readSessionFile(onlySessionFile(sandbox));
		const omitted = entries.filter((e) => e.type === "context_edit" && e.replacement === null).map((e) => e.targetId);
		expect(omitted.length).toBeGreaterThan(0);
		const restored = entries.filter(
			(e) => e.type === "context_edit" && e.replacement !== null && omitted.includes(e.targetId),
		);
		expect(restored).toEqual([]);
	});

	it('defers to Pi\'s own summarizer with compaction.engine "pi" in settings.json', async () => {
		const { sandbox, rpc } = await cliSession({ compaction: { keepRecentTokens: 4_000, engine: "pi" } });

		const response = await rpc.send({ type: "compact" }, RPC_COMPACT_TIMEOUT_MS);

		expect(response.success, response.error).toBe(true);
		const [entry] = compactionEntries(sandbox);
		// Pi's summarizer asked the loopback model, whose fallback answer is "ok".
		expect(String(entry?.summary)).toMatch(/^ok\n/);
		expect(entry?.fromHook).toBe(false);
		expect(parseCompactionDetails(entry?.details).ok).toBe(false);
		expect(entry?.details).toHaveProperty("readFiles");
	});

	it("cancels a malformed typed preserve request with a message naming the error", async () => {
		const { sandbox, rpc } = await cliSession({ compaction: { keepRecentTokens: 4_000 } });
		const since = rpc.mark();

		const response = await rpc.send(
			{ type: "compact", customInstructions: `${COMPACT_REQUEST_PREFIX}{"version":1,"preserve":[42]}` },
			RPC_COMPACT_TIMEOUT_MS,
		);

		expect(response.success).toBe(false);
		expect(response.error).toBe("Compaction cancelled");
		const shown = notices(rpc.records.slice(since));
		expect(shown).toHaveLength(1);
		expect(shown[0]).toContain("(invalid-type)");
		expect(shown[0]).toContain("preserve item 0 must be a string");
		expect(compactionEntries(sandbox)).toEqual([]);
	});
});

describe("Fabric compaction in-process (SDK, faux model)", () => {
	async function sdk(options: Parameters<typeof createSdkHarness>[0]): Promise<SdkHarness> {
		const harness = await createSdkHarness(options);
		cleanups.push(() => harness.dispose());
		return harness;
	}

	/** Scripted turns that each read a file (about 1,100 tokens a turn); returns the harness after playing them. */
	async function played(
		extensions: InlineExtension[],
		turns = 8,
		options: Partial<Parameters<typeof createSdkHarness>[0]> = {},
	): Promise<SdkHarness> {
		const harness = await sdk({
			extensions,
			tools: ["read"],
			settings: { compaction: { keepRecentTokens: 1_500 } },
			...options,
		});
		for (let turn = 1; turn <= turns; turn++) {
			writeFileSync(join(harness.cwd, `part-${turn}.md`), `Part ${turn} of the design.\n`.repeat(200));
			harness.enqueue(
				callTools([toolCall("read", { path: `part-${turn}.md` }, `call_${turn}`)]),
				reply(`Read part ${turn}.`),
			);
			await harness.run(`Turn ${turn}: read part-${turn}.md.`);
			// A compaction Fabric triggers at the settled boundary runs in the background.
			await harness.session.waitForIdle();
		}
		return harness;
	}

	function compactors(harness: SdkHarness): unknown[] {
		return harness.session.sessionManager
			.getBranch()
			.flatMap((entry) => (entry.type === "compaction" ? [(entry.details as { compactor?: unknown }).compactor] : []));
	}

	const FAUX_KEY = `${FAUX_PROVIDER_ID}/${FAUX_MODEL_ID}`;

	it("compacts by itself at a settled boundary once the model's token threshold is reached", async () => {
		// Pi's own automatic compaction stays off (the harness default): only Fabric can trigger.
		const fold: InlineExtension = (pi) => {
			registerPiFold(pi, { compaction: { tokenThresholds: { [FAUX_KEY]: 5_000 } } });
		};
		const harness = await played([fold], 3);
		expect(compactors(harness)).toEqual([]);
		expect(harness.session.getContextUsage()?.tokens).toBeLessThan(5_000);

		harness.enqueue(callTools([toolCall("read", { path: "part-3.md" }, "call_again")]), reply("Read it again."));
		await harness.run("Read part-3.md again.");
		await harness.session.waitForIdle();

		expect(compactors(harness)).toEqual(["fabric"]);
		expect(harness.ui.notifications).toEqual([]);
	});

	it("defers Pi's threshold compaction while the model's own threshold is not reached", async () => {
		const options = {
			contextWindow: 10_000,
			settings: { compaction: { enabled: true, keepRecentTokens: 1_500, reserveTokens: 2_000 } },
		};
		const control = await played([piFold], 8, options);
		expect(compactors(control)).toEqual(["fabric"]);

		const high: InlineExtension = (pi) => {
			registerPiFold(pi, { compaction: { tokenThresholds: { [FAUX_KEY]: 100_000 } } });
		};
		const deferred = await played([high], 8, options);
		expect(compactors(deferred)).toEqual([]);
		// The one notice is the settings warning: a threshold above the model's window is never reached (issue 19.4).
		expect(deferred.ui.notifications).toHaveLength(1);
		expect(deferred.ui.notifications[0]).toMatchObject({ level: "warning" });
		expect(String(deferred.ui.notifications[0]?.message)).toMatch(
			/compaction\.tokenThresholds\["faux\/faux-1"\] = 100000: is larger than faux\/faux-1's context window of 10,000 tokens/,
		);
	});

	it("a summary's entry address leads back to exact source through active_context peek", async () => {
		const harness = await played([piFold], 4, { tools: ["read", "active_context"] });
		const compaction = await harness.session.compact();
		const readResult = harness.session.sessionManager
			.getBranch()
			.find(
				(entry) =>
					entry.type === "message" && entry.message.role === "toolResult" && entry.message.toolCallId === "call_1",
			);
		if (!readResult) throw new Error("no read result");
		expect(compaction.summary).toContain(`@${readResult.id}`);
		// The footer's recall example is a real entry id of the summarized range.
		expect(compaction.summary).toMatch(/active_context \{"action":"peek","id":"[0-9a-f]{8}"\}/);
		expect(compaction.summary).not.toContain('"id":"<entry-id>"');

		harness.enqueue(
			callTools([toolCall("active_context", { action: "peek", id: `@${readResult.id}` }, "call_recall")]),
			reply("Recalled."),
		);
		await harness.run("What exactly did part 1 say?");
		const window = harness.requests.at(-1)?.messages ?? [];
		const recalled = window.find((m) => m.role === "toolResult" && m.toolCallId === "call_recall");
		expect(recalled && "isError" in recalled && recalled.isError).toBe(false);
		const text =
			recalled?.role === "toolResult" && recalled.content[0]?.type === "text" ? recalled.content[0].text : "";
		// The entry comes back as canonical JSON, so the file's exact text appears as its JSON string.
		expect(text).toContain(JSON.stringify("Part 1 of the design.\n".repeat(200)));
		expect(text).toContain("sha256");
	});

	/** Turns that each read a file of about 3,300 tokens: a context past the summary's 8,192-token reservation. */
	async function readTurns(harness: SdkHarness, from: number, count: number): Promise<void> {
		for (let turn = from; turn < from + count; turn++) {
			writeFileSync(join(harness.cwd, `part-${turn}.md`), `Part ${turn} of the design.\n`.repeat(600));
			harness.enqueue(
				callTools([toolCall("read", { path: `part-${turn}.md` }, `call_${turn}`)]),
				reply(`Read part ${turn}.`),
			);
			await harness.run(`Turn ${turn}: read part-${turn}.md.`);
		}
	}

	// Issue 31, item 3: Pi keeps keepRecentTokens raw after a compaction, and what that kept tail alone held reaches
	// the summary too, so the next compaction, which summarizes the tail from far back, still carries it.
	it("compacting twice keeps what the first kept tail alone held in the second summary", async () => {
		// The compactor alone: a fold the ladder commits (its timing follows the machine's load) would replace the
		// kept tail's write with a brief, and the typed facts this test follows with it.
		const compactorOnly: InlineExtension = (pi) => {
			registerCompaction(pi);
		};
		const harness = await sdk({
			extensions: [compactorOnly],
			tools: ["read", "write"],
			settings: { compaction: { keepRecentTokens: 1_500 } },
			contextWindow: 100_000,
		});
		await readTurns(harness, 1, 4);
		harness.enqueue(
			callTools(
				[toolCall("write", { path: "tail-only.ts", content: "export const parseBazQux = 1;\n" }, "call_tail")],
				"The old tokenizer drops escapes, so I'm switching to the streaming parser instead.",
			),
			reply("Renamed parseFooBar to parseBazQux."),
		);
		await harness.run("Rename parseFooBar to parseBazQux for PR #4821.");

		const first = await harness.session.compact();
		const branch = harness.session.sessionManager.getBranch();
		const kept = branch.findIndex((entry) => entry.id === first.firstKeptEntryId);
		const write = branch.findIndex(
			(entry) =>
				entry.type === "message" && entry.message.role === "toolResult" && entry.message.toolCallId === "call_tail",
		);
		// Pi's keepRecentTokens meaning holds: the last turn stays raw after the first compaction.
		expect(kept).toBeGreaterThan(0);
		expect(write).toBeGreaterThan(kept);
		for (const fact of ["tail-only.ts", "#4821", "parseBazQux", "switching to the streaming parser"]) {
			expect(first.summary, fact).toContain(fact);
		}

		await readTurns(harness, 5, 4);
		const second = await harness.session.compact();
		const after = harness.session.sessionManager.getBranch();
		const secondKept = after.findIndex((entry) => entry.id === second.firstKeptEntryId);
		const writeAfter = after.findIndex(
			(entry) =>
				entry.type === "message" && entry.message.role === "toolResult" && entry.message.toolCallId === "call_tail",
		);
		// The first tail is summarized now, not kept: only the summary can carry it.
		expect(secondKept).toBeGreaterThan(writeAfter);
		for (const fact of ["tail-only.ts", "#4821", "switching to the streaming parser"]) {
			expect(second.summary, fact).toContain(fact);
		}
		expect((second.details as { compactor?: string }).compactor).toBe("fabric");
	});

	it('defers to Pi with compaction.engine "pi" passed as a registration option', async () => {
		const harness = await played([
			(pi) => {
				registerPiFold(pi, { compaction: { engine: "pi" } });
			},
		]);
		const result = await harness.session.compact();
		expect(parseCompactionDetails(result.details).ok).toBe(false);
		expect(result.summary).toMatch(/^ok\n/);
	});

	it("writes a deterministic /tree branch summary with typed v2 details and no model call", async () => {
		const harness = await played([piFold], 4);
		const branch = harness.session.sessionManager.getBranch();
		const oldLeaf = branch.at(-1)?.id;
		const target = branch.find((entry) => entry.type === "message" && entry.message.role === "user");
		if (!target || !oldLeaf) throw new Error("no user entry");
		const requestsBefore = harness.requests.length;

		const navigation = await harness.session.navigateTree(target.id, { summarize: true });

		expect(navigation.cancelled).toBe(false);
		expect(harness.requests.length).toBe(requestsBefore);
		const summaryEntry = harness.session.sessionManager.getBranch().find((entry) => entry.type === "branch_summary");
		if (summaryEntry?.type !== "branch_summary") throw new Error("no branch summary");
		expect(summaryEntry.summary).toContain("Turn 4: read part-4.md.");
		const parsed = parseBranchSummaryDetails(summaryEntry.details);
		expect(parsed).toMatchObject({ ok: true, version: 2 });
		if (parsed.ok && parsed.version === 2) {
			expect(parsed.details.source.oldLeafId).toBe(oldLeaf);
			expect(parsed.details.facts.some((fact) => fact.kind === "operation" && fact.ref === "pi.read")).toBe(true);
		}
	});

	/** Loaded after pi-fold, so Pi keeps its result: a raw tail that starts at a tool result. */
	const orphaningCompactor: InlineExtension = (pi) => {
		pi.on("session_before_compact", (event) => {
			const orphan = event.branchEntries.findLast(
				(entry) => entry.type === "message" && entry.message.role === "toolResult",
			);
			if (!orphan) return undefined;
			return {
				compaction: {
					summary: "External summary.",
					firstKeptEntryId: orphan.id,
					tokensBefore: event.preparation.tokensBefore,
					details: { compactor: "external" },
				},
			};
		});
	};

	/** Compact with the orphaning compactor, prompt once, and return what the model received. */
	async function afterOrphaningCut(fold: InlineExtension): Promise<{ harness: SdkHarness; sent: Message[] }> {
		const harness = await played([fold, orphaningCompactor], 4);
		await harness.session.compact();
		const roles = harness.session.sessionManager.buildSessionProjection().messages.map((message) => message.role);
		const summaryAt = roles.indexOf("compactionSummary");
		expect(roles.slice(summaryAt, summaryAt + 2)).toEqual(["compactionSummary", "toolResult"]);
		const requestsBefore = harness.requests.length;
		await harness.run("What did the parts say?");
		return { harness, sent: harness.requests[requestsBefore]?.messages ?? [] };
	}

	it("repairs the orphan another compactor's cut leaves, and warns once that it won", async () => {
		const { harness, sent } = await afterOrphaningCut(piFold);

		expect(pairingDefects(wire(sent))).toEqual([]);
		expect(sent.some((message) => message.role === "toolResult")).toBe(false);
		const warnings = harness.ui.notifications.filter((notice) => notice.message.includes("another extension"));
		expect(warnings).toHaveLength(1);
		expect(warnings[0]?.level).toBe("warning");
	});

	it("shows why: with repairOrphans off, Pi sends the orphaned result to the provider", async () => {
		const { sent } = await afterOrphaningCut((pi) => {
			registerPiFold(pi, { compaction: { repairOrphans: false } });
		});

		expect(pairingDefects(wire(sent)).map((defect) => defect.kind)).toEqual(["orphan-result"]);
		// The suite's tripwire saw the same orphan; this test expects it, so it takes it.
		expect(takeProblems()).toEqual([expect.stringMatching(/orphan-result/)]);
	});
});

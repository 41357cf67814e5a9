/**
 * One engine in Pi and alone. Each real log's opening turns are played in
 * real Pi (SDK harness, pi-ai's faux model answering each request with the
 * recorded reply, tools serving the recorded results by call id, pi-fold
 * loaded as a user loads it). Then the fold engine alone replays the log
 * Pi wrote, in Pi's event order (src/fold/engine/headless.ts, the driver
 * the replay and `pi-fold report` use): every custom entry and
 * `context_edit` it decides must be the next such entry Pi persisted, byte
 * for byte (so every commit and fold id too), every request it would send
 * must be the one Pi sent, and its status must equal the one Pi's runtime
 * reports.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import { fauxAssistantMessage } from "@earendil-works/pi-ai";
import type { ContextEditEntryDraft, ExtensionAPI, SessionEntry } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { afterAll, describe, expect, it } from "vitest";
import type { QueuedEntry } from "../../src/fold/engine/commit.ts";
import { FoldEngine } from "../../src/fold/engine/engine.ts";
import { playBranch, type Sink } from "../../src/fold/engine/headless.ts";
import { messageDigest } from "../../src/fold/engine/instrument.ts";
import { resolveOptions } from "../../src/fold/options.ts";
import type { FoldRuntime } from "../../src/fold/pi/runtime.ts";
import { registerRuntime } from "../../src/register.ts";
import { canonicalJson } from "../../src/session/canonical.ts";
import { REAL_SESSIONS, realBranch } from "../fixtures/fold.ts";
import { type RecordedScript, recordedScript } from "../harness/recorded-session.ts";
import { createSdkHarness, type SdkHarness } from "../harness/sdk.ts";

const OPTIONS = { summarizer: "deterministic" } as const;
const PREFIX = resolveOptions(OPTIONS).entryTypePrefix;
/** A window the real logs' requests fit (Anthropic's), so no request meets the fence. */
const CONTEXT_WINDOW = 200_000;
/** Opening turns played per log: enough requests for the ladder to commit several times, a few seconds of Pi. */
const TURNS = { beforeCompaction: 12, large: 8 } as const;
const TOOL_NAMES = ["read", "bash", "edit", "write"];

const harnesses: SdkHarness[] = [];
afterAll(async () => {
	for (const harness of harnesses) await harness.dispose();
});

/** Tools named as the log's, each answering a call with the result the log recorded for its id. */
function recordedTools(script: RecordedScript) {
	return (pi: ExtensionAPI) => {
		for (const name of TOOL_NAMES) {
			pi.registerTool({
				name,
				label: name,
				description: `Recorded ${name}.`,
				parameters: Type.Object({}, { additionalProperties: true }),
				async execute(toolCallId) {
					const recorded = script.results.get(toolCallId)?.[0];
					if (!recorded)
						return {
							content: [{ type: "text", text: `no recorded result for ${toolCallId}` }],
							details: {},
							isError: true,
						};
					return { content: recorded.content, details: recorded.details ?? {}, isError: recorded.isError };
				},
			});
		}
	};
}

/** The recorded reply as the faux model's answer (a failed reply fails the request). */
function replyOf(reply: AssistantMessage) {
	return fauxAssistantMessage(reply.content, {
		stopReason: reply.stopReason,
		...(reply.errorMessage ? { errorMessage: reply.errorMessage } : {}),
	});
}

/** Play the log's opening turns in real Pi; returns the harness, the runtime and what each request carried. */
async function playInPi(name: keyof typeof TURNS) {
	const script = recordedScript(realBranch(REAL_SESSIONS[name]));
	let runtime: FoldRuntime | undefined;
	const sent: AgentMessage[][] = [];
	const harness = await createSdkHarness({
		extensions: [
			recordedTools(script),
			(pi: ExtensionAPI) => {
				runtime = registerRuntime(pi, OPTIONS);
			},
			// Registered after pi-fold, so it sees the messages pi-fold let go out.
			(pi: ExtensionAPI) => {
				pi.on("context", (event) => {
					sent.push(structuredClone(event.messages));
				});
			},
		],
		tools: [...TOOL_NAMES, "active_context"],
		contextWindow: CONTEXT_WINDOW,
		settings: { retry: { enabled: false } },
		ui: "none",
	});
	harnesses.push(harness);
	for (const turn of script.turns.slice(0, TURNS[name])) {
		const failed = turn.requests.findIndex((request) => request.failed);
		const requests = failed === -1 ? turn.requests : turn.requests.slice(0, failed + 1);
		harness.enqueue(...requests.map((request) => replyOf(request.reply)));
		await harness.run(turn.text || "(empty)");
		// Replies a run did not reach are dropped, so the next turn starts with its own.
		while (harness.pendingSteps() > 0) await harness.run("(continue)");
	}
	if (!runtime) throw new Error("pi-fold did not register");
	return { harness, runtime, sent };
}

const isOwn = (entry: SessionEntry): boolean =>
	entry.type === "context_edit" || (entry.type === "custom" && entry.customType.startsWith(`${PREFIX}:`));

/** Pi stores a string replacement of a reply or tool result as one text part. */
const normalized = (draft: ContextEditEntryDraft) =>
	draft.replacement === null || typeof draft.replacement.content !== "string"
		? draft.replacement
		: { content: [{ type: "text", text: draft.replacement.content }] };

/** A sink over the log Pi wrote: each recorded entry must come next; what the engine persists must be what Pi did. */
function logSink(log: readonly SessionEntry[]) {
	let at = 0;
	const where = () => `log entry ${at} (${log[at]?.type} ${log[at]?.id})`;
	const sink: Sink = {
		place(entry) {
			expect(log[at], `${where()}: Pi persisted something the engine did not decide before it`).toBe(entry);
			at++;
			return entry;
		},
		persist(custom: readonly QueuedEntry[], drafts: readonly ContextEditEntryDraft[]) {
			const out: SessionEntry[] = [];
			for (const item of custom) {
				const entry = log[at];
				expect(entry?.type === "custom" ? [entry.customType, canonicalJson(entry.data)] : entry, where()).toEqual([
					item.customType,
					canonicalJson(item.data),
				]);
				if (entry) out.push(entry);
				at++;
			}
			for (const draft of drafts) {
				const entry = log[at];
				expect(
					entry?.type === "context_edit" ? [entry.targetId, canonicalJson(entry.replacement)] : entry,
					where(),
				).toEqual([draft.targetId, canonicalJson(normalized(draft))]);
				if (entry) out.push(entry);
				at++;
			}
			return out;
		},
	};
	return { sink, consumed: () => at };
}

describe.each(Object.keys(TURNS) as (keyof typeof TURNS)[])("engine parity on %s", (name) => {
	it("the engine alone decides what Pi persisted, sends what Pi sent, and reports Pi's status", async () => {
		const { harness, runtime, sent } = await playInPi(name);
		const ctx = harness.session.extensionRunner.createContext();
		const piStatus = runtime.status(ctx);
		const log = harness.session.sessionManager.getBranch();
		const commits = log.filter((entry) => entry.type === "custom" && entry.customType === `${PREFIX}:commit`);
		// The prefix is long enough to cross commits, and the loadout never changed (the driver holds it fixed).
		expect(commits.length).toBeGreaterThanOrEqual(2);
		expect(piStatus.instrument.loadout).toMatchObject({ promptChanges: 0, toolChanges: 0 });
		const loadout = piStatus.instrument.loadout;
		if (!loadout.lastSent || !loadout.lastHost) throw new Error("Pi observed no loadout");

		const engine = new FoldEngine(resolveOptions(OPTIONS));
		engine.reset([]);
		const host = runtime.hostFacts(ctx);
		const { sink, consumed } = logSink(log);
		const requests: string[][] = [];
		await playBranch(
			engine,
			log.filter((entry) => !isOwn(entry)),
			{
				sink,
				hostFor: () => host,
				decide: "ladder",
				loadout: { sent: loadout.lastSent, host: loadout.lastHost },
				onRequest: (_entry, messages) => requests.push(messages.map(messageDigest)),
			},
		);
		expect(consumed()).toBe(log.length);
		expect(requests).toEqual(sent.map((messages) => messages.map(messageDigest)));
		const { summarizer: _summarizer, ...expected } = piStatus;
		const { servingBudget: _budget, occupancy: _occupancy, ...budget } = piStatus.budget;
		expect(engine.status(budget, host, piStatus.evidence)).toEqual(expected);
	});
});

/**
 * The engine's contract suite (test/contract/cases.ts): every case runs in
 * real Pi 1.6.0 first (SDK harness, faux model, pi-fold loaded as a user
 * loads it); then the headless player replays the log Pi wrote, and must
 * persist every custom entry and `context_edit` Pi persisted, byte for byte,
 * send every request Pi sent and report Pi's status; then the report's
 * replay decides anew over the log without pi-fold's entries. Each host's
 * run is held to the case's expectations and to `holdsAlways`. A host a
 * case names in `cannot` is skipped, with that reason in the test's name.
 * One Pi run per case serves all three hosts.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { ContextEditEntryDraft, ExtensionAPI, SessionEntry } from "@earendil-works/pi-coding-agent";
import { afterAll, describe, expect, it } from "vitest";
import { replayBranch } from "../../src/cost/fold-replay.ts";
import { NATIVE_SUMMARY_CHARS } from "../../src/cost/native-replay.ts";
import type { CommitOutcome } from "../../src/fold/engine/automatic.ts";
import type { CommitSummary, QueuedEntry } from "../../src/fold/engine/commit.ts";
import { FoldEngine } from "../../src/fold/engine/engine.ts";
import { playBranch, type Sink } from "../../src/fold/engine/headless.ts";
import type { HostFacts } from "../../src/fold/engine/host-facts.ts";
import { messageDigest } from "../../src/fold/engine/instrument.ts";
import type { StatusDetails } from "../../src/fold/engine/status-facts.ts";
import type { FoldRecord } from "../../src/fold/lattice/records.ts";
import { resolveOptions } from "../../src/fold/options.ts";
import type { FoldRuntime } from "../../src/fold/pi/runtime.ts";
import { PI_DEFAULT_RESERVE_TOKENS } from "../../src/fold/policy/budget.ts";
import { registerRuntime } from "../../src/register.ts";
import { canonicalJson } from "../../src/session/canonical.ts";
import type { Calibration } from "../../src/session/tokens.ts";
import {
	CONTRACT_CASES,
	type ContractCase,
	type ContractRun,
	holdsAlways,
	type PiSession,
	requestTokens,
} from "../contract/cases.ts";
import { createSdkHarness, type SdkHarness } from "../harness/sdk.ts";

const PREFIX = resolveOptions().entryTypePrefix;
/** Provider tokens per estimated token as the faux model counts them: its usage is the same chars/4 estimate. */
const FAUX_CALIBRATION: Calibration = { overhead: 0, scale: 1, charsPerToken: 4, points: 0, method: "identity" };
const harnesses: SdkHarness[] = [];
afterAll(async () => {
	for (const harness of harnesses) await harness.dispose();
});

const isOwn = (entry: SessionEntry): boolean =>
	entry.type === "context_edit" || (entry.type === "custom" && entry.customType.startsWith(`${PREFIX}:`));

const commitsOf = (branch: readonly SessionEntry[]): CommitSummary[] =>
	branch.flatMap((entry) =>
		entry.type === "custom" && entry.customType === `${PREFIX}:commit`
			? [(entry.data as { summary: CommitSummary }).summary]
			: [],
	);

/** Fold records persisted on the branch: those a commit carries and those an action wrote on their own. */
const recordsOf = (branch: readonly SessionEntry[]): FoldRecord[] =>
	branch.flatMap((entry) => {
		if (entry.type !== "custom") return [];
		const data = entry.data as { record?: FoldRecord; records?: FoldRecord[] };
		if (entry.customType === `${PREFIX}:fold` && data.record) return [data.record];
		if (entry.customType === `${PREFIX}:commit`) return data.records ?? [];
		return [];
	});

const compactionsOf = (branch: readonly SessionEntry[]) => branch.filter((entry) => entry.type === "compaction").length;

interface PiResult {
	run: ContractRun;
	log: SessionEntry[];
	/** The messages of every request pi-fold let go out, in order. */
	sent: AgentMessage[][];
	/** Host facts at the end of the run, and at its start (before Pi showed its compaction settings). */
	host: HostFacts;
	firstHost: HostFacts;
	status: StatusDetails;
}

/** Play the case in real Pi. */
async function runInPi(c: ContractCase): Promise<PiResult> {
	let runtime: FoldRuntime | undefined;
	const sent: AgentMessage[][] = [];
	const extensions = [
		c.tools,
		(pi: ExtensionAPI) => {
			runtime = registerRuntime(pi, c.options);
		},
		// Registered after pi-fold, so it sees the messages pi-fold let go out.
		(pi: ExtensionAPI) => {
			pi.on("context", (event) => {
				sent.push(structuredClone(event.messages));
			});
		},
	];
	const open = async (resume?: SdkHarness) => {
		const harness = await createSdkHarness({
			extensions,
			tools: [...c.toolNames, "active_context"],
			contextWindow: c.contextWindow,
			settings: { retry: { enabled: false }, ...c.settings },
			...(c.persist ? { persist: true } : {}),
			...(resume ? { resume } : {}),
		});
		// Only the newest harness of a case is disposed: a resumed one shares the closed one's directories.
		if (resume) harnesses.splice(harnesses.indexOf(resume), 1, harness);
		else harnesses.push(harness);
		return harness;
	};
	let harness = await open();
	const requests: number[] = [];
	const live = () => {
		if (!runtime) throw new Error("pi-fold did not register");
		return { runtime, ctx: harness.session.extensionRunner.createContext() };
	};
	const firstHost = live().runtime.hostFacts(live().ctx);
	const session: PiSession = {
		get harness() {
			return harness;
		},
		nextWindow: () => live().runtime.nextWindow(live().ctx).reading.total,
		budget: () => live().runtime.nextWindow(live().ctx).budget ?? 0,
		resume: async () => {
			requests.push(...harness.requests.map((request) => requestTokens(request.messages)));
			await harness.close();
			harness = await open(harness);
			return harness;
		},
	};
	await c.drive(session);
	requests.push(...harness.requests.map((request) => requestTokens(request.messages)));
	const { runtime: last, ctx } = live();
	const status = last.status(ctx);
	const host = last.hostFacts(ctx);
	const log = harness.session.sessionManager.getBranch();
	return {
		run: {
			host: "pi",
			commits: commitsOf(log),
			requests,
			budget: host.budget,
			compactions: compactionsOf(log),
			cancelledCompactions: status.automatic.cancelledCompactions,
			unattributed: status.instrument.unattributed,
			records: recordsOf(log),
			branch: log,
		},
		log,
		sent,
		host,
		firstHost,
		status,
	};
}

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

/** The headless player over Pi's log: the same entries, the same requests, the same status, and its own run. */
async function runHeadless(c: ContractCase, pi: PiResult): Promise<ContractRun> {
	const loadout = pi.status.instrument.loadout;
	if (!loadout.lastSent || !loadout.lastHost) throw new Error("Pi observed no loadout");
	const engine = new FoldEngine(resolveOptions(c.options));
	engine.reset([]);
	const { sink, consumed } = logSink(pi.log);
	const digests: string[][] = [];
	const requests: number[] = [];
	const outcomes: CommitOutcome[] = [];
	await playBranch(
		engine,
		pi.log.filter((entry) => !isOwn(entry)),
		{
			sink,
			hostFor: () => pi.host,
			decide: "ladder",
			loadout: { sent: loadout.lastSent, host: loadout.lastHost },
			onRequest: (_entry, messages) => {
				digests.push(messages.map(messageDigest));
				requests.push(requestTokens(messages as Parameters<typeof requestTokens>[0]));
			},
			onOutcome: (outcome) => outcomes.push(outcome),
		},
	);
	expect(consumed()).toBe(pi.log.length);
	expect(digests).toEqual(pi.sent.map((messages) => messages.map(messageDigest)));
	const { summarizer: _summarizer, ...expected } = pi.status;
	const { servingBudget: _budget, occupancy: _occupancy, ...budget } = pi.status.budget;
	const status = engine.status(budget, pi.host, pi.status.evidence);
	expect(status).toEqual(expected);
	const branch = [...engine.entries];
	return {
		host: "headless",
		commits: commitsOf(branch),
		requests,
		budget: pi.host.budget,
		compactions: compactionsOf(branch),
		cancelledCompactions: status.automatic.cancelledCompactions,
		unattributed: status.instrument.unattributed,
		records: recordsOf(branch),
		branch,
		outcomes,
	};
}

/** The report's replay over the log without pi-fold's entries: its own decisions, Pi's threshold modelled. */
async function runReplay(c: ContractCase, pi: PiResult): Promise<ContractRun> {
	const recorded = pi.log.filter((entry) => !isOwn(entry));
	const compaction = c.settings?.compaction;
	const threshold =
		compaction?.enabled === true
			? {
					settings: {
						contextWindow: c.contextWindow,
						reserveTokens: compaction.reserveTokens ?? PI_DEFAULT_RESERVE_TOKENS,
						keepRecentTokens: compaction.keepRecentTokens ?? 20_000,
						summaryChars: NATIVE_SUMMARY_CHARS,
					},
					// The faux model reports Pi's own estimate (chars/4) as usage: what Pi's line is checked against.
					calibration: FAUX_CALIBRATION,
					cwd: pi.host.cwd,
				}
			: undefined;
	// The report's replay reads the model's facts, not what Pi's compaction events later showed the runtime.
	const host = threshold ? pi.firstHost : pi.host;
	const result = await replayBranch(recorded, "ladder", resolveOptions(c.options), () => host, threshold);
	return {
		host: "replay",
		commits: commitsOf(result.branch),
		requests: result.requests.map((request) => request.context.reduce((total, message) => total + message.tokens, 0)),
		budget: host.budget,
		compactions: result.compactions,
		cancelledCompactions: result.cancelledCompactions,
		unattributed: result.unattributed,
		records: recordsOf(result.branch),
		branch: result.branch,
	};
}

const piRuns = new Map<string, Promise<PiResult>>();
const piRun = (c: ContractCase): Promise<PiResult> => {
	const known = piRuns.get(c.name);
	if (known) return known;
	const started = runInPi(c);
	piRuns.set(c.name, started);
	return started;
};

const hostTitle = (label: string, cannot: string | undefined) => (cannot ? `${label}: cannot, ${cannot}` : label);

describe.each(CONTRACT_CASES.map((c) => [c.name, c] as const))("contract: %s", (_name, c) => {
	it(`in Pi: ${c.says}`, async () => {
		const { run } = await piRun(c);
		c.expect(run);
		holdsAlways(run);
	});

	it.skipIf(c.cannot?.headless !== undefined)(
		hostTitle("the headless player persists what Pi did and holds to the same", c.cannot?.headless),
		async () => {
			const run = await runHeadless(c, await piRun(c));
			c.expect(run);
			holdsAlways(run);
		},
	);

	it.skipIf(c.cannot?.replay !== undefined)(
		hostTitle("the report's replay decides the same way", c.cannot?.replay),
		async () => {
			const run = await runReplay(c, await piRun(c));
			c.expect(run);
			holdsAlways(run);
		},
	);
});

/**
 * The engine's host when no Pi runs: a recorded linear branch played back
 * in the order Pi 1.6.0 raises its events, so a replay (`pi-fold report`'s
 * "would have saved", the benchmarks) runs exactly the decisions the Pi
 * adapter runs.
 *
 * Per recorded assistant message: the `context` hook (the engine's
 * `prepareRequest`: the fence commit when the request is over budget, then
 * the request with any preview), then the message joins the branch, with
 * its usage, and its blocking tool calls. After each turn (the message and
 * the tool results that follow it) the `turn_end` boundary (the engine's
 * `boundary`: reconcile, the automatic commit, the custom entries and
 * drafts handed off). The steps are the engine's; the player orders only
 * events, as Pi raises them. A turn after which no assistant message
 * follows before the next user message ends the run: the
 * `agent_before_settle` boundary, then `agent_settled` (reconcile, and
 * whatever is still queued is persisted). A compaction entry announces
 * itself as Pi's does.
 *
 * What a boundary persists and where a recorded entry stands on the branch
 * is the `Sink`'s business: a replay appends new entries, a parity check
 * compares them with a log Pi wrote.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { ContextEditEntryDraft, SessionEntry } from "@earendil-works/pi-coding-agent";
import { promptTokensOf } from "../../session/tokens.ts";
import type { CommitOutcome, PrepareHint } from "./automatic.ts";
import type { QueuedEntry } from "./commit.ts";
import type { BoundaryDecider, FoldEngine } from "./engine.ts";
import type { HostFacts } from "./host-facts.ts";
import type { LoadoutDigests } from "./instrument.ts";
import type { RequestOutcome } from "./request-digests.ts";

/** Where entries go: recorded ones onto the branch, and what the engine hands a boundary. */
export interface Sink {
	/** A recorded entry as it stands on the branch after `last` (a replay relinks it; a log keeps it). */
	place(entry: SessionEntry, last: SessionEntry | undefined): SessionEntry;
	/** Persist a boundary's (or a settled run's) custom entries and drafts; returns them as branch entries. */
	persist(
		custom: readonly QueuedEntry[],
		drafts: readonly ContextEditEntryDraft[],
		last: SessionEntry | undefined,
	): SessionEntry[];
}

export type { BoundaryDecider };

export interface PlayOptions {
	sink: Sink;
	/** Host facts for the request a recorded assistant entry answers (its model's budget and prices). */
	hostFor: (assistant: SessionEntry) => HostFacts;
	decide: BoundaryDecider;
	/** What the request carries before its messages (for the instrument's loadout counts), when known. */
	loadout?: { sent: LoadoutDigests; host: LoadoutDigests };
	/** Each request as the `context` hook decided it, with the messages that go out. */
	onRequest?: (assistant: SessionEntry, messages: readonly AgentMessage[], outcome: RequestOutcome) => void;
	/** Each automatic commit that created folds: how many, and whether the fence forced it. */
	onCommit?: (folds: number, fence: boolean) => void;
	/** Every automatic commit's outcome, folds or not (the ladder's decisions, for checks of its rule). */
	onOutcome?: (outcome: CommitOutcome, fence: boolean) => void;
	/** Before a recorded entry joins the branch: where a replay runs what Pi does there (its threshold compaction). */
	beforeEntry?: (entry: SessionEntry) => Promise<void> | void;
	/** What an automatic commit decision hands the model summarizer to prepare (as the Pi adapter passes it on). */
	onPrepare?: (hint: PrepareHint) => void;
}

const isMessage = (entry: SessionEntry | undefined, role: string): boolean =>
	entry?.type === "message" && entry.message.role === role;

/** Tool names an assistant entry calls. */
function calledTools(entry: SessionEntry): string[] {
	if (entry.type !== "message" || entry.message.role !== "assistant") return [];
	return entry.message.content.flatMap((part) => (part.type === "toolCall" ? [part.name] : []));
}

/** Play `recorded` through `engine` (reset on the empty branch first); the engine's branch is the played one. */
export async function playBranch(
	engine: FoldEngine,
	recorded: readonly SessionEntry[],
	options: PlayOptions,
): Promise<void> {
	const { sink } = options;
	const last = () => engine.entries.at(-1);
	const persist = (custom: readonly QueuedEntry[], drafts: readonly ContextEditEntryDraft[]) => {
		if (custom.length + drafts.length > 0) engine.append(sink.persist(custom, drafts, last()));
	};
	// What the Pi adapter does with a commit's outcome: the summarizer prepares, the counts see the folds.
	const committed = (commit: CommitOutcome | undefined, fence: boolean) => {
		if (commit) options.onOutcome?.(commit, fence);
		if (commit?.prepare) options.onPrepare?.(commit.prepare);
		if (commit?.kind === "committed" && commit.folded) options.onCommit?.(commit.folds, fence);
	};
	const boundary = async (host: HostFacts) => {
		const { commit, handed } = await engine.boundary(host, options.decide);
		committed(commit, false);
		if (handed) persist(handed.custom, handed.drafts);
	};
	// The model that serves the next request: a boundary reads that model's facts (the last one's after the end).
	const nextAssistant: (SessionEntry | undefined)[] = new Array(recorded.length + 1).fill(undefined);
	for (let i = recorded.length - 1; i >= 0; i--)
		nextAssistant[i] = isMessage(recorded[i], "assistant") ? recorded[i] : nextAssistant[i + 1];
	let lastAssistant: SessionEntry | undefined;

	for (const [index, entry] of recorded.entries()) {
		await options.beforeEntry?.(entry);
		if (isMessage(entry, "assistant")) {
			lastAssistant = entry;
			const host = options.hostFor(entry);
			const outcome = await engine.prepareRequest(host, undefined, { fence: options.decide === "ladder" });
			committed(outcome.commit, true);
			if (options.loadout) engine.loadout(options.loadout.sent, options.loadout.host);
			options.onRequest?.(entry, outcome.sent ?? engine.requestMessages(), outcome);
			for (const tool of calledTools(entry)) engine.toolCalled(tool);
		}
		engine.append([sink.place(entry, last())]);
		if (entry.type === "compaction") engine.compacted();
		if (entry.type === "message" && entry.message.role === "assistant" && entry.message.usage) {
			engine.usage(promptTokensOf(entry.message.usage), entry.message.usage.cacheRead ?? 0);
		}
		const next = recorded[index + 1];
		const turnEnds =
			(isMessage(entry, "assistant") || (isMessage(entry, "toolResult") && lastAssistant !== undefined)) &&
			!isMessage(next, "toolResult");
		if (!turnEnds || !lastAssistant) continue;
		const upcoming = nextAssistant[index + 1];
		const host = options.hostFor(upcoming ?? lastAssistant);
		await boundary(host);
		if (!runContinues(recorded, index + 1)) {
			if (options.decide !== "ladder" || engine.settleBoundaryWanted()) await boundary(host);
			engine.reconcile();
			persist(engine.takeQueued(), []);
		}
	}
}

/** True when the next message after `from` is an assistant's: the agent asks again without a new user message. */
function runContinues(recorded: readonly SessionEntry[], from: number): boolean {
	for (let i = from; i < recorded.length; i++) {
		const entry = recorded[i];
		if (entry?.type !== "message") continue;
		return entry.message.role === "assistant";
	}
	return false;
}

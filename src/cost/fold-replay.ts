/**
 * Replay of a recorded linear branch through pi-fold's fold engine: the
 * request sequence the engine would have made Pi send. `pi-fold report`
 * says with it what pi-fold would have saved; the replay benchmark
 * (bench/replay/) replays through it, its fold-all reference policy plugged
 * in as a `BoundaryPolicy`.
 *
 * The engine runs as in Pi (src/fold/engine/headless.ts plays the branch in
 * Pi's event order): before every recorded assistant message the `context`
 * hook decides that request's prompt; after every turn the boundary decides
 * and whatever it persists (custom entries, `context_edit` drafts) is
 * appended before the next recorded entry, relinked so Pi's projection walks
 * through it. What the log recorded stays as it happened: user messages,
 * tool results, model and thinking changes, and Pi's compactions, which stay
 * where they were (the replay does not re-decide Pi's compaction).
 *
 * Cost: the engine keeps the branch view and Pi's projection current as the
 * branch grows, so a replay is linear in the branch plus the windows sent.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { PrepareHint } from "../fold/engine/automatic.ts";
import { FoldEngine } from "../fold/engine/engine.ts";
import { playBranch, type Sink } from "../fold/engine/headless.ts";
import { type HostFacts, type ModelFacts, modelHostFacts } from "../fold/engine/host-facts.ts";
import type { ResolvedOptions } from "../fold/options.ts";
import { tokenPrices } from "../fold/policy/budget.ts";
import { type FoldStore, FoldStoreError } from "../fold/store/store.ts";
import { NAMED_RATE_CARDS, type RateCard } from "../pricing/rate-card.ts";
import type { Calibration } from "../session/tokens.ts";
import { catalogModel, catalogRateCard } from "./catalog.ts";
import {
	type NativeCompaction,
	piChecksBefore,
	piCompaction,
	piContextTokens,
	type SummaryRequest,
} from "./native-replay.ts";
import { promptMessageMemo, requestOf, type SessionRequest } from "./session-requests.ts";
import { summarizerReplay } from "./summarizer-replay.ts";

/** What a reference policy does at a boundary: folds applied to the engine's state; returns how many. */
export type BoundaryPolicy = (engine: FoldEngine, host: HostFacts) => number;

/** Host facts for the request a recorded assistant entry answered (its model's budget and prices). */
export type HostFor = (assistant: SessionEntry) => HostFacts;

export interface ReplayResult {
	policy: string;
	/** One per recorded assistant message, in order; `context` is what this policy would have sent. */
	requests: SessionRequest[];
	/** Boundaries that created at least one fold. */
	commits: number;
	/** …of which the fence forced before a request over budget. */
	fenceCommits: number;
	/** Index of the first request each commit shaped, in order. */
	commitRequests: number[];
	folds: number;
	/** Rewrites the instrument saw, and those without an announced cause (should be 0). */
	rewrites: number;
	unattributed: number;
	/** Largest request, in Pi's estimate (system prompt included). */
	peakEstimate: number;
	/** The replayed branch at the end (recorded entries plus what the policy appended). */
	branch: SessionEntry[];
	/** Pi's threshold compactions the replay ran (with `pi`), and their summarization requests. */
	compactions: number;
	summaries: SummaryRequest[];
	/** Threshold checks a ladder commit answered instead (Pi's compaction cancelled, as the runtime does). */
	cancelledCompactions: number;
	/** The model summarizer's requests (with `pi`, unless the options make briefs deterministic). */
	sideRequests: readonly SummaryRequest[];
}

/** Pi's threshold compaction, run in a replay where Pi would check it (`native-replay.ts`). */
export interface PiThreshold {
	settings: NativeCompaction;
	/** Provider tokens per estimated token: what Pi's usage-based reading says. */
	calibration: Calibration;
	/** Working directory the summarizer's fact lines are relative to. */
	cwd: string;
}

/** Sees each request a replay makes: the recorded reply's entry id and the messages the engine sent for it. */
export type RequestObserver = (entryId: string, messages: readonly AgentMessage[]) => void;

/** Card for a model the catalog does not know: the spec's measured card (the report says when it was used). */
export const FALLBACK_CARD_NAME = "gpt-5.6";

/** `provider/model` of an assistant entry ("/" when it names none). */
export function modelKeyOf(entry: SessionEntry): string {
	const message = entry.type === "message" ? (entry.message as AssistantMessage) : undefined;
	return `${message?.provider ?? ""}/${message?.model ?? ""}`;
}

/** The rate card for `provider/model`, and whether it is the fallback. */
export function cardForModelKey(modelKey: string): { card: RateCard; fallback: boolean } {
	const at = modelKey.indexOf("/");
	const card = at > 0 ? catalogRateCard(modelKey.slice(0, at), modelKey.slice(at + 1)) : undefined;
	if (card) return { card, fallback: false };
	const fallback = NAMED_RATE_CARDS[FALLBACK_CARD_NAME];
	if (!fallback) throw new Error(`rate card ${FALLBACK_CARD_NAME} missing`);
	return { card: fallback, fallback: true };
}

/**
 * Host facts per model, derived as the runtime derives them (`modelHostFacts`)
 * from the catalog's model with its window (or `contextWindow`, the window a
 * user runs it at) and output reservation; the card's prices; a system prompt
 * of `fixedTokens` tokens.
 */
export function hostFacts(modelKey: string, fixedTokens: number, cwd: string, contextWindow?: number): HostFacts {
	const at = modelKey.indexOf("/");
	const model = at > 0 ? catalogModel(modelKey.slice(0, at), modelKey.slice(at + 1)) : undefined;
	const facts: ModelFacts | undefined = model
		? { id: model.id, api: model.api, contextWindow: contextWindow ?? model.contextWindow, maxTokens: model.maxTokens }
		: contextWindow === undefined
			? undefined
			: { id: modelKey, contextWindow };
	return {
		...modelHostFacts(facts, { providerTotalWindow: undefined }, "", cwd),
		prices: tokenPrices(cardForModelKey(modelKey).card),
		fixedTokens,
	};
}

/** Id prefix of entries the replay appends (boundary custom entries and context edits). */
export const APPENDED_ID_PREFIX = "replay-";

/** A replay's sink: recorded entries relinked after what was appended, boundary output appended with new ids. */
export function appendSink(idPrefix = APPENDED_ID_PREFIX): Sink {
	let appended = 0;
	const link = (body: Record<string, unknown>, last: SessionEntry | undefined) =>
		({
			...body,
			id: `${idPrefix}${appended++}`,
			parentId: last?.id ?? null,
			timestamp: last?.timestamp ?? "1970-01-01T00:00:00.000Z",
		}) as SessionEntry;
	return {
		place: (entry, last) => {
			const parentId = last?.id ?? null;
			return entry.parentId === parentId ? entry : { ...entry, parentId };
		},
		persist: (custom, drafts, last) => {
			const out: SessionEntry[] = [];
			for (const body of [
				...custom.map((entry) => ({ type: "custom", customType: entry.customType, data: entry.data })),
				...drafts.map((draft) => ({ ...draft })),
			])
				out.push(link(body, out.at(-1) ?? last));
			return out;
		},
	};
}

/**
 * The store a replay commits to: the commit sequence hands it every new
 * fold's source (which the plan hashed from those very bytes), and it keeps
 * none, since nothing peeks a replay; a replay of a long session would
 * otherwise hold every consolidation's bytes again in memory.
 */
function replayStore(): FoldStore {
	const kept = (hash: string): never => {
		throw new FoldStoreError("missing", `a replay keeps no fold sources (sha256 ${hash})`);
	};
	return {
		kind: "memory",
		readOnly: false,
		location: "memory (a replay keeps no sources)",
		put: async (source, options) => ({
			hash: options?.expectedHash ?? "",
			bytes: source.byteLength,
			reused: false,
			repaired: false,
			location: "replay",
		}),
		read: async (hash) => kept(hash),
		has: async () => false,
		verify: async (hash) => kept(hash),
		locate: (hash) => `replay:sha256/${hash}`,
	};
}

/**
 * Replay a linear recorded branch. `"recorded"` folds nothing (the prompts Pi
 * built from the log); `"ladder"` runs pi-fold's engine as in Pi, the fence
 * included; a `BoundaryPolicy` decides at each boundary instead of the
 * ladder, without the fence. With `pi`, Pi's threshold compaction runs where
 * Pi checks it: with the ladder, a forced commit that gets the window under
 * Pi's line cancels it (the runtime's `session_before_compact`), else Pi
 * compacts the replayed branch. `observe` sees each request's messages as sent.
 */
export async function replayBranch(
	recorded: readonly SessionEntry[],
	policy: "recorded" | "ladder" | { name: string; boundary: BoundaryPolicy },
	options: ResolvedOptions,
	hostFor: HostFor,
	pi?: PiThreshold,
	observe?: RequestObserver,
): Promise<ReplayResult> {
	const engine = new FoldEngine(options);
	// A replay is never peeked: each fold's source is accounted for and let go, not kept in memory.
	engine.reset([], replayStore());
	const toPrompt = promptMessageMemo();
	const result: ReplayResult = {
		policy: typeof policy === "string" ? policy : policy.name,
		requests: [],
		commits: 0,
		fenceCommits: 0,
		commitRequests: [],
		folds: 0,
		rewrites: 0,
		unattributed: 0,
		peakEstimate: 0,
		branch: [],
		compactions: 0,
		summaries: [],
		cancelledCompactions: 0,
		sideRequests: [],
	};
	const summarizer =
		pi && policy === "ladder" && options.summarizer !== "deterministic"
			? summarizerReplay(pi.calibration, pi.cwd)
			: undefined;
	const counted = (folds: number, fence: boolean) => {
		result.commits++;
		result.commitRequests.push(result.requests.length);
		result.folds += folds;
		if (fence) result.fenceCommits++;
	};
	let lastHost: HostFacts | undefined;
	// Pi's first threshold check shows the runtime Pi's reserve (`session_before_compact`): its budget follows.
	let shownReserve = false;
	const hostAt: HostFor = (entry) => {
		const host = hostFor(entry);
		if (!pi || !shownReserve) return host;
		const line = pi.settings.contextWindow - pi.settings.reserveTokens;
		return { ...host, budget: Math.min(host.budget ?? line, line) };
	};
	const threshold = async (entry: SessionEntry): Promise<void> => {
		if (!pi || !piChecksBefore(entry, engine.entries)) return;
		const line = pi.settings.contextWindow - pi.settings.reserveTokens;
		if (piContextTokens(engine.entries, pi.calibration) <= line) return;
		shownReserve = true;
		const host = entry.type === "message" && entry.message.role === "assistant" ? hostAt(entry) : lastHost;
		if (policy === "ladder" && host) {
			// The runtime's `session_before_compact`: a lossless commit under Pi's line cancels Pi's compaction.
			const commit = await engine.commit(host, { force: "threshold", under: line });
			if (commit.prepare) summarizer?.prepare(commit.prepare);
			if (commit.kind === "committed" && commit.folded) {
				counted(commit.folds, false);
				engine.cancelledCompaction();
				result.cancelledCompactions++;
				return;
			}
		}
		const id = `${APPENDED_ID_PREFIX}compaction-${result.compactions + 1}`;
		const compacted = piCompaction(engine.entries, pi.settings, pi.calibration, { id, timestamp: entry.timestamp });
		if (!compacted) return;
		engine.append([compacted.entry]);
		engine.compacted();
		result.compactions++;
		result.summaries.push(...compacted.summaries);
	};
	await playBranch(engine, recorded, {
		sink: appendSink(),
		beforeEntry: threshold,
		...(summarizer ? { onPrepare: (hint: PrepareHint) => summarizer.prepare(hint) } : {}),
		hostFor: hostAt,
		decide:
			typeof policy === "string"
				? policy === "ladder"
					? "ladder"
					: "none"
				: (running, host) => {
						const folds = policy.boundary(running, host);
						if (folds > 0) counted(folds, false);
					},
		onRequest: (entry, messages, outcome) => {
			lastHost = hostAt(entry);
			if (outcome.rewrite) {
				result.rewrites++;
				if (outcome.rewrite.causes.length === 0) result.unattributed++;
			}
			result.peakEstimate = Math.max(result.peakEstimate, outcome.tokens);
			const reply = (entry as Extract<SessionEntry, { type: "message" }>).message as AssistantMessage;
			result.requests.push(requestOf(reply, entry.id, messages.map(toPrompt)));
			observe?.(entry.id, messages);
		},
		onCommit: counted,
	});
	result.branch = [...engine.entries];
	if (summarizer) result.sideRequests = summarizer.requests;
	return result;
}

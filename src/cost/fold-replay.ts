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

import type { AssistantMessage } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { FoldEngine } from "../fold/engine/engine.ts";
import { playBranch, type Sink } from "../fold/engine/headless.ts";
import type { HostFacts } from "../fold/engine/host-facts.ts";
import type { ResolvedOptions } from "../fold/options.ts";
import { servingBudget, tokenPrices } from "../fold/policy/budget.ts";
import { catalogModel, catalogRateCard } from "./catalog.ts";
import { NAMED_RATE_CARDS, type RateCard } from "./rate-card.ts";
import { promptMessageMemo, type SessionRequest } from "./session-requests.ts";

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
}

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

/** Host facts per model: catalog window and output reservation, the card's prices, a system prompt of `fixedTokens` tokens. */
export function hostFacts(modelKey: string, fixedTokens: number, cwd: string): HostFacts {
	const at = modelKey.indexOf("/");
	const model = at > 0 ? catalogModel(modelKey.slice(0, at), modelKey.slice(at + 1)) : undefined;
	return {
		budget: servingBudget({
			tokens: null,
			descriptor: model?.contextWindow,
			providerTotalWindow: undefined,
			outputReservation: model?.maxTokens,
		}),
		prices: tokenPrices(cardForModelKey(modelKey).card),
		fixedTokens,
		cwd,
	};
}

/** Id prefix of entries the replay appends (boundary custom entries and context edits). */
export const APPENDED_ID_PREFIX = "replay-";

/** A replay's sink: recorded entries relinked after what was appended, boundary output appended with new ids. */
export function appendSink(): Sink {
	let appended = 0;
	const link = (body: Record<string, unknown>, last: SessionEntry | undefined) =>
		({
			...body,
			id: `${APPENDED_ID_PREFIX}${appended++}`,
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
 * Replay a linear recorded branch. `"recorded"` folds nothing (the prompts Pi
 * built from the log); `"ladder"` runs pi-fold's engine as in Pi, the fence
 * included; a `BoundaryPolicy` decides at each boundary instead of the
 * ladder, without the fence.
 */
export function replayBranch(
	recorded: readonly SessionEntry[],
	policy: "recorded" | "ladder" | { name: string; boundary: BoundaryPolicy },
	options: ResolvedOptions,
	hostFor: HostFor,
): ReplayResult {
	const engine = new FoldEngine(options);
	engine.reset([]);
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
	};
	const counted = (folds: number, fence: boolean) => {
		result.commits++;
		result.commitRequests.push(result.requests.length);
		result.folds += folds;
		if (fence) result.fenceCommits++;
	};
	playBranch(engine, recorded, {
		sink: appendSink(),
		hostFor,
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
			if (outcome.rewrite) {
				result.rewrites++;
				if (outcome.rewrite.causes.length === 0) result.unattributed++;
			}
			result.peakEstimate = Math.max(result.peakEstimate, outcome.tokens);
			result.requests.push(requestOf(entry, messages.map(toPrompt)));
		},
		onCommit: counted,
	});
	result.branch = [...engine.entries];
	return result;
}

/** The replayed request in the shape the cost model takes, with the recorded message's facts. */
function requestOf(entry: SessionEntry, context: SessionRequest["context"]): SessionRequest {
	const message = entry.type === "message" ? (entry.message as AssistantMessage) : undefined;
	const request: SessionRequest = { entryId: entry.id, modelKey: modelKeyOf(entry), context, output: 0 };
	request.output = message?.usage?.output ?? 0;
	if (typeof message?.timestamp === "number" && Number.isFinite(message.timestamp)) request.time = message.timestamp;
	if (message?.usage) {
		request.recorded = {
			input: message.usage.input ?? 0,
			cacheRead: message.usage.cacheRead ?? 0,
			cacheWrite: message.usage.cacheWrite ?? 0,
			output: message.usage.output ?? 0,
		};
	}
	return request;
}

/**
 * Replay of a recorded linear branch through a fold policy: the request
 * sequence the policy would have sent, rebuilt incrementally. Written for the
 * replay benchmark (bench/replay/) and moved here with its API so
 * `pi-fold report` can say what pi-fold would have saved; the benchmark
 * replays through this module, its fold-all reference policy
 * (bench/replay/policies.ts) plugged in as a `BoundaryPolicy`.
 *
 * The recorded entries are appended one by one. Before every recorded
 * assistant message the `context` hook runs on the branch so far and its
 * messages are that request's prompt. After every finished turn (the
 * assistant message and the tool results that follow it, where Pi fires
 * `turn_end` / `agent_before_settle`) the policy runs and whatever it
 * persists (custom entries, `context_edit` drafts) is appended before the
 * next recorded entry, relinked so Pi's projection walks through it. What the
 * log recorded stays as it happened: user messages, tool results, model and
 * thinking changes, and Pi's compactions, which stay where they were (the
 * replay does not re-decide Pi's compaction).
 *
 * Cost: every request rebuilds Pi's projection of the branch so far, so a
 * replay is O(requests × branch length) — seconds for a log of 500 requests.
 */

import type { AssistantMessage } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { announce } from "../fold/engine/instrument.ts";
import type { ResolvedOptions } from "../fold/options.ts";
import { servingBudget, tokenPrices } from "../fold/policy/budget.ts";
import { PI_CHARS_PER_TOKEN } from "../session/tokens.ts";
import { catalogModel, catalogRateCard } from "./catalog.ts";
import {
	type AppliedChange,
	commitDecision,
	contextHook,
	emptyShell,
	type HostFacts,
	ladderDecision,
	pendingDrafts,
	persistBoundary,
	type ShellState,
} from "./fold-shell.ts";
import { NAMED_RATE_CARDS, type RateCard } from "./rate-card.ts";
import { promptMessageMemo, type SessionRequest } from "./session-requests.ts";

/** What one policy does at a boundary: the change to apply, if any. */
export type BoundaryPolicy = (
	branch: readonly SessionEntry[],
	shell: ShellState,
	host: HostFacts,
) => AppliedChange | undefined;

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

function isAssistant(entry: SessionEntry | undefined): boolean {
	return entry?.type === "message" && entry.message.role === "assistant";
}

function isToolResult(entry: SessionEntry | undefined): boolean {
	return entry?.type === "message" && entry.message.role === "toolResult";
}

/** Tool names an assistant entry calls. */
function calledTools(entry: SessionEntry): string[] {
	if (entry.type !== "message" || entry.message.role !== "assistant") return [];
	return entry.message.content.flatMap((part) => (part.type === "toolCall" ? [part.name] : []));
}

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

/** Host facts per model: catalog window and output reservation, the card's prices, a system prompt of `fixedTokens`. */
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
		fixedText: " ".repeat(fixedTokens * PI_CHARS_PER_TOKEN),
		cwd,
	};
}

/** pi-fold's automatic ladder as the runtime runs it at a boundary. */
export function ladderPolicy(options: ResolvedOptions): BoundaryPolicy {
	return (branch, shell, host) => commitDecision(ladderDecision(branch, shell, options, host), shell, options, host);
}

function relink(entry: SessionEntry, parentId: string | null): SessionEntry {
	return entry.parentId === parentId ? entry : { ...entry, parentId };
}

/**
 * Replay a linear recorded branch. `"recorded"` folds nothing (the prompts Pi
 * built from the log); `"ladder"` runs pi-fold's ladder and, when the budget
 * is known, its fence before a request over budget; a `BoundaryPolicy` runs
 * at each boundary without the fence.
 */
export function replayBranch(
	recorded: readonly SessionEntry[],
	policy: "recorded" | "ladder" | { name: string; boundary: BoundaryPolicy },
	options: ResolvedOptions,
	hostFor: HostFor,
): ReplayResult {
	const name = typeof policy === "string" ? policy : policy.name;
	const boundary =
		policy === "ladder" ? ladderPolicy(options) : typeof policy === "string" ? undefined : policy.boundary;
	const fenced = policy === "ladder";
	const toPrompt = promptMessageMemo();
	let branch: SessionEntry[] = [];
	let shell = emptyShell();
	const result: ReplayResult = {
		policy: name,
		requests: [],
		commits: 0,
		fenceCommits: 0,
		commitRequests: [],
		folds: 0,
		rewrites: 0,
		unattributed: 0,
		peakEstimate: 0,
		branch,
	};
	const apply = (change: AppliedChange, fence: boolean) => {
		const persisted = persistBoundary(branch, change.shell, options, change.custom);
		branch = persisted.branch;
		shell = persisted.shell;
		if (change.records.length === 0) return;
		result.commits++;
		result.commitRequests.push(result.requests.length);
		result.folds += change.records.length;
		if (fence) result.fenceCommits++;
	};
	// The model that will serve the next request: the host facts at a boundary are that model's.
	const nextAssistant: (SessionEntry | undefined)[] = new Array(recorded.length + 1).fill(undefined);
	for (let i = recorded.length - 1; i >= 0; i--)
		nextAssistant[i] = isAssistant(recorded[i]) ? recorded[i] : nextAssistant[i + 1];

	recorded.forEach((entry, index) => {
		if (isAssistant(entry)) {
			const host = hostFor(entry);
			if (fenced && host.budget !== undefined) {
				const before = contextHook(branch, shell, options, host);
				if (before.tokens > host.budget) {
					// The runtime's fence: fold whatever is eligible now. The preview and the boundary that
					// persists it send the same bytes, so the drafts are persisted here at once.
					const made = ladderDecision(branch, shell, options, host, "fence");
					const change = commitDecision(made, shell, options, host);
					if (change) apply(change, true);
				}
			}
			const sent = contextHook(branch, shell, options, host);
			shell = sent.shell;
			if (sent.event) {
				result.rewrites++;
				if (sent.event.causes.length === 0) result.unattributed++;
			}
			result.peakEstimate = Math.max(result.peakEstimate, sent.tokens);
			result.requests.push(requestOf(entry, sent.messages.map(toPrompt)));
			for (const tool of calledTools(entry)) if (options.blockingTools.includes(tool)) shell.coldCache = true;
		}
		branch = [...branch, relink(entry, branch.at(-1)?.id ?? null)];
		// Pi announces its compaction to the runtime (`session_compact`).
		if (entry.type === "compaction") shell = { ...shell, instrument: announce(shell.instrument, "compaction") };
		const turnEnds =
			(isAssistant(entry) || (isToolResult(entry) && branch.some(isAssistant))) && !isToolResult(recorded[index + 1]);
		const next = nextAssistant[index + 1];
		if (!boundary || !turnEnds || !next) return;
		const change = boundary(branch, shell, hostFor(next));
		if (change) apply(change, false);
		else if (pendingDrafts(branch, shell, options).length > 0)
			apply({ shell, custom: [], records: [], sources: new Map() }, false);
	});
	result.branch = branch;
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

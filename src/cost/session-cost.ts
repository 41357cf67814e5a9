/**
 * A session's cost from its own ledger: the usage every assistant message
 * recorded, the cost Pi logged for it, and the same usage re-priced with rate
 * cards — the catalog card of each request's own model, and optionally one
 * named card for every request. Pure over session entries; the card lookup is
 * a parameter so callers (and tests) decide where cards come from.
 */

import type { AssistantMessage } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { longContextThreshold, type RateCard } from "../pricing/rate-card.ts";
import {
	addCost,
	type CostParts,
	cacheShareOf,
	priceSession,
	type SessionPrice,
	type TokenUsage,
	ZERO_COST,
} from "./price.ts";

/** One billed request as the session recorded it. */
export interface RecordedRequest {
	entryId: string;
	provider: string;
	model: string;
	usage: TokenUsage;
	/** `usage.cost.total` as Pi logged it. */
	recordedCost: number;
}

/** Requests of one model, priced with that model's card when one is known. */
export interface ModelGroup {
	provider: string;
	model: string;
	requests: number;
	/** Both undefined when no card is known for the model; its requests stay unpriced. */
	card?: RateCard;
	price?: SessionPrice;
}

export interface CatalogPrice {
	groups: ModelGroup[];
	tiered: CostParts;
	flat: CostParts;
	surcharge: number;
	requestsAboveTier: number;
	unpricedRequests: number;
}

export interface SessionCost {
	requests: RecordedRequest[];
	/** Σ recorded cost, exactly as Pi's ledger says. */
	recordedCost: number;
	usage: Required<TokenUsage>;
	cacheShare: number;
	/** Largest recorded prompt and the entry that carried it (null when no request recorded a prompt). */
	peakPrompt: { tokens: number; entryId: string } | null;
	/** Each request re-priced with its own model's card. */
	catalog: CatalogPrice;
	/** Every request re-priced with the card the caller named, if any. */
	card?: SessionPrice;
	/** Long-context threshold the counts below use (named card, else lowest catalog tier), null when none. */
	threshold: number | null;
	requestsAboveThreshold: number;
}

/**
 * Whether any request recorded what it sent (fresh input, cache read or
 * cache write). Converted logs and some older ones record only output: every
 * price of what was sent, cache share and peak is then unknown, not zero.
 */
export function promptUsageRecorded(cost: SessionCost): boolean {
	return cost.usage.input + cost.usage.cacheRead + cost.usage.cacheWrite > 0;
}

export type CardLookup = (provider: string, model: string) => RateCard | undefined;

/** Every assistant message that recorded usage, in file order (all branches: each was billed). */
export function recordedRequests(entries: readonly SessionEntry[]): RecordedRequest[] {
	const requests: RecordedRequest[] = [];
	for (const entry of entries) {
		if (entry.type !== "message" || entry.message.role !== "assistant") continue;
		const message = entry.message as AssistantMessage;
		const usage = message.usage;
		if (!usage) continue;
		const one: TokenUsage = {
			input: usage.input ?? 0,
			cacheRead: usage.cacheRead ?? 0,
			cacheWrite: usage.cacheWrite ?? 0,
			output: usage.output ?? 0,
		};
		if (usage.cacheWrite1h !== undefined) one.cacheWrite1h = usage.cacheWrite1h;
		requests.push({
			entryId: entry.id,
			provider: message.provider ?? "",
			model: message.model ?? "",
			usage: one,
			recordedCost: usage.cost?.total ?? 0,
		});
	}
	return requests;
}

/** Re-price each request with its own model's card; requests of unknown models stay unpriced. */
export function priceByModel(requests: readonly RecordedRequest[], cardFor: CardLookup): CatalogPrice {
	const byModel = new Map<string, { provider: string; model: string; usages: TokenUsage[] }>();
	for (const request of requests) {
		const key = `${request.provider}\u0000${request.model}`;
		let group = byModel.get(key);
		if (!group) {
			group = { provider: request.provider, model: request.model, usages: [] };
			byModel.set(key, group);
		}
		group.usages.push(request.usage);
	}
	const result: CatalogPrice = {
		groups: [],
		tiered: ZERO_COST,
		flat: ZERO_COST,
		surcharge: 0,
		requestsAboveTier: 0,
		unpricedRequests: 0,
	};
	for (const group of byModel.values()) {
		const card = cardFor(group.provider, group.model);
		const entry: ModelGroup = { provider: group.provider, model: group.model, requests: group.usages.length };
		if (card) {
			const price = priceSession(card, group.usages);
			entry.card = card;
			entry.price = price;
			result.tiered = addCost(result.tiered, price.tiered);
			result.flat = addCost(result.flat, price.flat);
			result.surcharge += price.surcharge;
			result.requestsAboveTier += price.requestsAboveTier;
		} else {
			result.unpricedRequests += group.usages.length;
		}
		result.groups.push(entry);
	}
	result.groups.sort(
		(a, b) => b.requests - a.requests || `${a.provider}/${a.model}`.localeCompare(`${b.provider}/${b.model}`),
	);
	return result;
}

/** The whole cost picture of a session's recorded usage. */
export function sessionCost(
	entries: readonly SessionEntry[],
	options: { cardFor: CardLookup; card?: RateCard },
): SessionCost {
	const requests = recordedRequests(entries);
	const usage: Required<TokenUsage> = { input: 0, cacheRead: 0, cacheWrite: 0, cacheWrite1h: 0, output: 0 };
	let recordedCost = 0;
	let peakPrompt: SessionCost["peakPrompt"] = null;
	for (const request of requests) {
		const one = request.usage;
		usage.input += one.input;
		usage.cacheRead += one.cacheRead;
		usage.cacheWrite += one.cacheWrite;
		usage.cacheWrite1h += one.cacheWrite1h ?? 0;
		usage.output += one.output;
		recordedCost += request.recordedCost;
		const prompt = one.input + one.cacheRead + one.cacheWrite;
		if (prompt > 0 && (peakPrompt === null || prompt > peakPrompt.tokens))
			peakPrompt = { tokens: prompt, entryId: request.entryId };
	}
	const catalog = priceByModel(requests, options.cardFor);
	const cost: SessionCost = {
		requests,
		recordedCost,
		usage,
		cacheShare: cacheShareOf(usage),
		peakPrompt,
		catalog,
		threshold: null,
		requestsAboveThreshold: 0,
	};
	if (options.card)
		cost.card = priceSession(
			options.card,
			requests.map((request) => request.usage),
		);
	cost.threshold = options.card ? longContextThreshold(options.card) : lowestCatalogThreshold(catalog);
	const threshold = cost.threshold;
	if (threshold !== null) {
		cost.requestsAboveThreshold = requests.filter(
			(request) => request.usage.input + request.usage.cacheRead + request.usage.cacheWrite > threshold,
		).length;
	}
	return cost;
}

function lowestCatalogThreshold(catalog: CatalogPrice): number | null {
	let lowest: number | null = null;
	for (const group of catalog.groups) {
		const threshold = group.card ? longContextThreshold(group.card) : null;
		if (threshold !== null && (lowest === null || threshold < lowest)) lowest = threshold;
	}
	return lowest;
}

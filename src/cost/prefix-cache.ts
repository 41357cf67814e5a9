/**
 * The positional prefix-cache model: how much of each request's prompt a
 * provider can serve from its cache.
 *
 * A provider caches prefixes of the prompts it has already seen, so the part
 * of a request it can replay is the longest common prefix with ANY earlier
 * request, not only the previous one (returning to an old branch still hits).
 * Everything after the first differing message is fresh input, however small
 * the difference: one changed byte at message K re-bills every message from K
 * on.
 *
 * Model, stated so its limits are visible:
 * - Granularity is the message. A message matches when its digest matches;
 *   a partially matching message counts as fresh from its start, so cached
 *   tokens are a lower bound where providers match inside a message.
 * - By default the cache is ideal: no eviction, no expiry, no block
 *   rounding. `ttlSeconds` expires prefixes unused for that long (a hit
 *   refreshes them); `minCachedTokens` models a provider's minimum cacheable
 *   prefix (a shorter match is served fresh). Both default off.
 *
 * Cost: every request is walked once through a trie keyed by message digest
 * (a node is one distinct prefix), looking up and inserting in the same pass,
 * so the whole sequence costs O(total messages across requests) map steps and
 * the trie holds one node per distinct prefix — linear in session length for
 * an append-only session, whose requests share their prefixes.
 */

/** One message of a prompt as the cache sees it: an identity and a size. */
export interface PromptMessage {
	/** Equal digests mean byte-identical messages (e.g. sha256 of canonical JSON). */
	digest: string;
	/** Token size of the message (estimated or calibrated). */
	tokens: number;
}

/** One request: its prompt, in order, and optionally when it was sent. */
export interface PromptRequest {
	messages: readonly PromptMessage[];
	/** Send time in ms (any fixed epoch); only read when the cache has a time-to-live. */
	time?: number;
}

export interface PrefixCacheOptions {
	/** A common prefix shorter than this many tokens is not served from cache. Default 0. */
	minCachedTokens?: number;
	/**
	 * Cached prefixes expire this long after the last request that used them
	 * (each hit refreshes them, as Anthropic's and OpenAI's caches do). Default:
	 * never. Requests without a `time` never expire anything.
	 */
	ttlSeconds?: number;
}

const MS_PER_SECOND = 1000;

/** What the cache model says about one request. */
export interface CachedRequest {
	/** Position in the request sequence (0-based). */
	index: number;
	promptMessages: number;
	promptTokens: number;
	/** Messages / tokens of the longest prefix shared with any earlier request (0 when below the minimum). */
	cachedMessages: number;
	cachedTokens: number;
	/** promptTokens − cachedTokens. */
	freshTokens: number;
	/** Most recent earlier request that holds the whole cached prefix, or null when nothing was cached. */
	matchedRequest: number | null;
}

export interface PrefixCacheResult {
	requests: CachedRequest[];
	promptTokens: number;
	cachedTokens: number;
	freshTokens: number;
	/** Pooled cache share: Σ cached / Σ prompt (0 for an empty sequence). */
	cacheShare: number;
}

interface TrieNode {
	children: Map<string, TrieNode>;
	/** Latest request whose prompt passed through this prefix. */
	lastRequest: number;
	/** When that request was sent (ms), if requests carry times. */
	lastUsedAt: number | undefined;
}

/**
 * Incremental form of the model, for callers that see requests one at a time
 * (a live session). `observe` returns the same numbers `simulatePrefixCache`
 * gives for that position in the sequence.
 */
export class PrefixCache {
	private readonly root: TrieNode = { children: new Map(), lastRequest: -1, lastUsedAt: undefined };
	private readonly minCachedTokens: number;
	private readonly ttlMs: number | undefined;
	private count = 0;

	constructor(options: PrefixCacheOptions = {}) {
		this.minCachedTokens = options.minCachedTokens ?? 0;
		this.ttlMs = options.ttlSeconds === undefined ? undefined : options.ttlSeconds * MS_PER_SECOND;
	}

	/** Number of requests observed so far. */
	get size(): number {
		return this.count;
	}

	/** Match one request against every earlier one, then remember its prompt. */
	observe(request: PromptRequest): CachedRequest {
		const index = this.count++;
		const now = request.time;
		let node = this.root;
		let matchedMessages = 0;
		let matchedTokens = 0;
		let matchedRequest: number | null = null;
		let promptTokens = 0;
		let matching = true;
		for (const message of request.messages) {
			promptTokens += message.tokens;
			let child = node.children.get(message.digest);
			if (!child) {
				child = { children: new Map(), lastRequest: index, lastUsedAt: now };
				node.children.set(message.digest, child);
				matching = false;
			} else if (matching && this.isAlive(child, now)) {
				matchedMessages++;
				matchedTokens += message.tokens;
				matchedRequest = child.lastRequest;
			} else {
				// Past a mismatch, or expired: written afresh from here on (an expired node's descendants
				// were last used no later than it, so they are expired too).
				matching = false;
			}
			child.lastRequest = index;
			if (now !== undefined) child.lastUsedAt = now;
			node = child;
		}
		const cached = matchedMessages > 0 && matchedTokens >= this.minCachedTokens;
		return {
			index,
			promptMessages: request.messages.length,
			promptTokens,
			cachedMessages: cached ? matchedMessages : 0,
			cachedTokens: cached ? matchedTokens : 0,
			freshTokens: cached ? promptTokens - matchedTokens : promptTokens,
			matchedRequest: cached ? matchedRequest : null,
		};
	}

	private isAlive(node: TrieNode, now: number | undefined): boolean {
		if (this.ttlMs === undefined || now === undefined || node.lastUsedAt === undefined) return true;
		return now - node.lastUsedAt <= this.ttlMs;
	}
}

/** Run the cache model over a whole request sequence. */
export function simulatePrefixCache(
	requests: readonly PromptRequest[],
	options: PrefixCacheOptions = {},
): PrefixCacheResult {
	const cache = new PrefixCache(options);
	const results = requests.map((request) => cache.observe(request));
	return summarizeCachedRequests(results);
}

/** Totals and pooled share over per-request results. */
export function summarizeCachedRequests(requests: CachedRequest[]): PrefixCacheResult {
	let promptTokens = 0;
	let cachedTokens = 0;
	for (const request of requests) {
		promptTokens += request.promptTokens;
		cachedTokens += request.cachedTokens;
	}
	return {
		requests,
		promptTokens,
		cachedTokens,
		freshTokens: promptTokens - cachedTokens,
		cacheShare: promptTokens > 0 ? cachedTokens / promptTokens : 0,
	};
}

/**
 * The append-only instrument: every request's projection compared with the
 * previous one.
 *
 * A provider prefix cache is positional, so the only question is where the
 * new message list first differs from the last one sent. Identical or a pure
 * append is free; anything else is a rewrite, and every rewrite must have a
 * cause the runtime announced beforehand (a commit, expand, refold, rebrief,
 * reboundary, a compaction or a `/tree` navigation). A rewrite without one is unattributed: a bug.
 * Provider-reported cache reads are tracked separately, so a miss on a
 * projection nobody rewrote is visible as provider-side.
 *
 * The loadout. The `context` event carries no system messages, so the
 * message comparison cannot see the system prompt or the declared tools,
 * which sit in front of every message and move the cached prefix just the
 * same. `observeLoadout` compares them per request (from
 * `context_with_system`, which sees the request's system messages): the
 * leading system message's prompt, and the effective tool set after every
 * system message's additions and removals. A change is a loadout rewrite;
 * its cause is "host" when Pi's own loadout (its system prompt and active
 * tool names) changed too, since pi-fold never changes either, and it is
 * unattributed otherwise (something rewrote the request behind Pi's back).
 *
 * What is compared is what the provider is sent, not what pi-fold meant to
 * send: other extensions' `context` handlers run on the same list, before or
 * after ours. Each request therefore carries two digest lists, the messages
 * that went out and pi-fold's own (Pi's projection with pi-fold's edits). A
 * rewrite of what went out that pi-fold's own list does not explain (its own
 * list appended, or first changed later) is "another-extension": counted
 * apart, never excused by a cause pi-fold announced, and as fatal as an
 * unattributed rewrite in strict mode.
 */

import { canonicalJson, sha256Hex } from "../../session/canonical.ts";

/**
 * Why the window may change. Besides the spec's six, "navigation" covers a
 * `/tree` move: the human switched branches, so the next request shows the
 * other branch's window.
 */
export type RewriteCause =
	| "commit"
	| "expand"
	| "refold"
	| "rebrief"
	| "reboundary"
	| "compaction"
	| "navigation"
	| "host"
	| "another-extension";
export type RequestKind = "initial" | "identical" | "append" | "rewrite";

/** Hex digits kept of each message digest. */
export const MESSAGE_DIGEST_LENGTH = 16;
/** Rewrite events kept for status. */
export const REWRITE_HISTORY_LIMIT = 64;
/** A cache read below this share of the previous prompt counts as a miss. */
export const CACHE_MISS_RATIO = 0.5;

export interface RewriteEvent {
	request: number;
	firstDivergentIndex: number;
	previousLength: number;
	length: number;
	causes: RewriteCause[];
	/** Present on a loadout rewrite: which of the system prompt and tool set changed. */
	loadout?: { prompt: boolean; tools: boolean };
}

/** Digests of what sits before the messages: the system prompt and the tool set. */
export interface LoadoutDigests {
	prompt: string;
	tools: string;
}

export interface LoadoutCounts {
	/** Requests whose loadout was observed. */
	observed: number;
	promptChanges: number;
	toolChanges: number;
	/** Loadout changes with no host change behind them. */
	unattributed: number;
	/** What the last request sent, and Pi's own loadout then. */
	lastSent: LoadoutDigests | undefined;
	lastHost: LoadoutDigests | undefined;
}

export interface InstrumentState {
	/** Digests of the messages the last request sent. */
	digests: readonly string[];
	/** Digests of pi-fold's own list for that request (Pi's projection with pi-fold's edits). */
	ownDigests: readonly string[];
	requests: number;
	identical: number;
	appends: number;
	rewrites: number;
	unattributed: number;
	/** Rewrites of what was sent that pi-fold's own list does not explain: another extension's. */
	byOtherExtensions: number;
	history: readonly RewriteEvent[];
	/** Causes announced and not yet consumed by a rewrite. */
	pendingCauses: readonly RewriteCause[];
	lastKind: RequestKind | undefined;
	lastPromptTokens: number | undefined;
	cacheMissesProviderSide: number;
	cacheMissesAfterRewrite: number;
	loadout: LoadoutCounts;
}

export function emptyInstrument(): InstrumentState {
	return {
		digests: [],
		ownDigests: [],
		requests: 0,
		identical: 0,
		appends: 0,
		rewrites: 0,
		unattributed: 0,
		byOtherExtensions: 0,
		history: [],
		pendingCauses: [],
		lastKind: undefined,
		lastPromptTokens: undefined,
		cacheMissesProviderSide: 0,
		cacheMissesAfterRewrite: 0,
		loadout: {
			observed: 0,
			promptChanges: 0,
			toolChanges: 0,
			unattributed: 0,
			lastSent: undefined,
			lastHost: undefined,
		},
	};
}

/** Short SHA-256 digest of one message's canonical JSON. */
export function messageDigest(message: unknown): string {
	if (typeof message !== "object" || message === null)
		return sha256Hex(canonicalJson(message)).slice(0, MESSAGE_DIGEST_LENGTH);
	let digest = digestMemo.get(message);
	if (digest === undefined) {
		digest = sha256Hex(canonicalJson(message)).slice(0, MESSAGE_DIGEST_LENGTH);
		digestMemo.set(message, digest);
	}
	return digest;
}

/**
 * Digests by message object. Session messages are immutable once persisted
 * and Pi's projection hands out the same objects request after request, so
 * each is hashed once instead of on every request.
 */
const digestMemo = new WeakMap<object, string>();

/** Nesting past which `sameMessage` stops comparing and answers "different" (the caller then hashes). */
export const SAME_MESSAGE_MAX_DEPTH = 64;

/**
 * Structural equality of two messages as JSON (what `structuredClone` keeps).
 * Pi hands each `context` handler a clone, so identity cannot tell whether a
 * handler changed a message; comparing is several times cheaper than hashing
 * the clone. Only "equal" is trusted: a false "different" costs a hash.
 */
export function sameMessage(a: unknown, b: unknown, depth = 0): boolean {
	if (a === b) return true;
	if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
	if (depth >= SAME_MESSAGE_MAX_DEPTH || Array.isArray(a) !== Array.isArray(b)) return false;
	if (Array.isArray(a) && Array.isArray(b)) {
		if (a.length !== b.length) return false;
		for (let i = 0; i < a.length; i++) if (!sameMessage(a[i], b[i], depth + 1)) return false;
		return true;
	}
	const left = a as Record<string, unknown>;
	const right = b as Record<string, unknown>;
	const keys = Object.keys(left);
	if (keys.length !== Object.keys(right).length) return false;
	for (const key of keys)
		if (!Object.hasOwn(right, key) || !sameMessage(left[key], right[key], depth + 1)) return false;
	return true;
}

/**
 * Digests of the messages a request sent, given pi-fold's own list for it
 * and that list's digests: a sent message equal to our message at its place
 * takes our (memoized) digest; any other is hashed.
 */
export function sentDigests(
	sent: readonly unknown[],
	own: readonly unknown[],
	ownDigests: readonly string[],
): string[] {
	return sent.map((message, index) =>
		index < own.length && sameMessage(message, own[index])
			? (ownDigests[index] ?? messageDigest(message))
			: messageDigest(message),
	);
}

/** Announce that the next rewrite is expected and why. */
export function announce(state: InstrumentState, cause: RewriteCause): InstrumentState {
	return state.pendingCauses.includes(cause) ? state : { ...state, pendingCauses: [...state.pendingCauses, cause] };
}

/** First index where two digest lists differ, or -1 when `previous` is a prefix of `next`. */
export function firstDivergence(previous: readonly string[], next: readonly string[]): number {
	for (let index = 0; index < previous.length; index++) {
		if (index >= next.length || previous[index] !== next[index]) return index;
	}
	return -1;
}

/**
 * Record one request's message list. Announced causes cover this request
 * only: every announcement happens right before the request it explains, so
 * a cause left over (its edits were already previewed, say) must not excuse
 * some later rewrite. `own`: the digests of pi-fold's own list for the
 * request when something else may have changed what was sent (the same as
 * `digests` when nothing could).
 */
export function observeRequest(
	state: InstrumentState,
	messages: readonly unknown[],
	digests: readonly string[] = messages.map(messageDigest),
	own: readonly string[] = digests,
): { state: InstrumentState; kind: RequestKind; event?: RewriteEvent } {
	const requests = state.requests + 1;
	const base = { ...state, digests, ownDigests: own, requests, pendingCauses: [] };
	if (state.requests === 0) return { state: { ...base, lastKind: "initial" }, kind: "initial" };
	const divergent = firstDivergence(state.digests, digests);
	if (divergent === -1) {
		const identical = digests.length === state.digests.length;
		const kind: RequestKind = identical ? "identical" : "append";
		return {
			state: {
				...base,
				identical: state.identical + (identical ? 1 : 0),
				appends: state.appends + (identical ? 0 : 1),
				lastKind: kind,
			},
			kind,
		};
	}
	// pi-fold's own list changed no earlier than what was sent: someone else rewrote the sent prefix first.
	const ownDivergent = firstDivergence(state.ownDigests, own);
	const foreign = ownDivergent === -1 || divergent < ownDivergent;
	const event: RewriteEvent = {
		request: requests,
		firstDivergentIndex: divergent,
		previousLength: state.digests.length,
		length: digests.length,
		// Our announced causes stand beside the other extension's only when our own list was rewritten too.
		causes: foreign
			? [...(ownDivergent === -1 ? [] : state.pendingCauses), "another-extension"]
			: [...state.pendingCauses],
	};
	return {
		state: {
			...base,
			rewrites: state.rewrites + 1,
			unattributed: state.unattributed + (event.causes.length === 0 ? 1 : 0),
			byOtherExtensions: state.byOtherExtensions + (foreign ? 1 : 0),
			history: [...state.history, event].slice(-REWRITE_HISTORY_LIMIT),
			pendingCauses: [],
			lastKind: "rewrite",
		},
		kind: "rewrite",
		event,
	};
}

/** True when a rewrite must fail in strict mode: nobody announced it, or another extension made it. */
export function strictFailure(event: RewriteEvent): boolean {
	return event.causes.length === 0 || event.causes.includes("another-extension");
}

/**
 * Record the prompt size and cache read the provider reported for the last
 * request. A low cache read after an append is the provider's doing; after a
 * rewrite it is the price of that rewrite.
 */
export function observeUsage(state: InstrumentState, promptTokens: number, cacheRead: number): InstrumentState {
	const previous = state.lastPromptTokens;
	let next = { ...state, lastPromptTokens: promptTokens };
	if (previous !== undefined && previous > 0 && cacheRead < CACHE_MISS_RATIO * previous) {
		if (state.lastKind === "rewrite") next = { ...next, cacheMissesAfterRewrite: state.cacheMissesAfterRewrite + 1 };
		else if (state.lastKind === "append" || state.lastKind === "identical") {
			next = { ...next, cacheMissesProviderSide: state.cacheMissesProviderSide + 1 };
		}
	}
	return next;
}

interface SystemLike {
	role: "system";
	content?: unknown;
	sections?: unknown;
	toolsAdded?: readonly { name: string }[];
	toolsRemoved?: readonly { name: string }[];
}

const isSystem = (message: unknown): message is SystemLike =>
	typeof message === "object" && message !== null && (message as { role?: unknown }).role === "system";

/**
 * Digests of a request's loadout: the leading system message's prompt
 * (content and sections), and the tool set every system message declares,
 * in order, additions replacing a same-named definition and removals
 * dropping it. Later prompt sections are instructions appended in the
 * transcript, which the message comparison treats as appends.
 */
export function requestLoadout(messages: readonly unknown[]): LoadoutDigests {
	const first = messages[0];
	const lead = isSystem(first) ? { content: first.content ?? "", sections: first.sections ?? null } : null;
	const tools = new Map<string, unknown>();
	for (const message of messages) {
		if (!isSystem(message)) continue;
		for (const tool of message.toolsAdded ?? []) tools.set(tool.name, tool);
		for (const tool of message.toolsRemoved ?? []) tools.delete(tool.name);
	}
	const sorted = [...tools.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, tool]) => tool);
	return {
		prompt: sha256Hex(canonicalJson(lead)).slice(0, MESSAGE_DIGEST_LENGTH),
		tools: sha256Hex(canonicalJson(sorted)).slice(0, MESSAGE_DIGEST_LENGTH),
	};
}

/** Digests of Pi's own loadout: its system prompt text and its active tool names. */
export function hostLoadout(systemPrompt: string, activeTools: readonly string[]): LoadoutDigests {
	return {
		prompt: sha256Hex(systemPrompt).slice(0, MESSAGE_DIGEST_LENGTH),
		tools: sha256Hex(canonicalJson([...activeTools].sort())).slice(0, MESSAGE_DIGEST_LENGTH),
	};
}

/**
 * Record one request's loadout, after `observeRequest` recorded its
 * messages. A change is counted as a rewrite of this request (unless its
 * messages already made it one), with cause "host" when Pi's own loadout
 * changed too.
 */
export function observeLoadout(
	state: InstrumentState,
	sent: LoadoutDigests,
	host: LoadoutDigests,
): { state: InstrumentState; event?: RewriteEvent } {
	const previous = state.loadout;
	const loadout: LoadoutCounts = { ...previous, observed: previous.observed + 1, lastSent: sent, lastHost: host };
	if (!previous.lastSent) return { state: { ...state, loadout } };
	const prompt = previous.lastSent.prompt !== sent.prompt;
	const tools = previous.lastSent.tools !== sent.tools;
	if (!prompt && !tools) return { state: { ...state, loadout } };
	const hostChanged =
		previous.lastHost !== undefined &&
		((prompt && previous.lastHost.prompt !== host.prompt) || (tools && previous.lastHost.tools !== host.tools));
	const causes: RewriteCause[] = hostChanged ? ["host"] : [];
	const event: RewriteEvent = {
		request: state.requests,
		firstDivergentIndex: 0,
		previousLength: state.digests.length,
		length: state.digests.length,
		causes,
		loadout: { prompt, tools },
	};
	const counted = {
		...loadout,
		promptChanges: previous.promptChanges + (prompt ? 1 : 0),
		toolChanges: previous.toolChanges + (tools ? 1 : 0),
		unattributed: previous.unattributed + (hostChanged ? 0 : 1),
	};
	// A request the messages already made a rewrite is one rewrite, not two; its kind stays.
	const wasRewrite = state.lastKind === "rewrite";
	const next: InstrumentState = {
		...state,
		loadout: counted,
		rewrites: state.rewrites + (wasRewrite ? 0 : 1),
		appends: state.appends - (state.lastKind === "append" ? 1 : 0),
		identical: state.identical - (state.lastKind === "identical" ? 1 : 0),
		unattributed: state.unattributed + (hostChanged ? 0 : 1),
		history: [...state.history, event].slice(-REWRITE_HISTORY_LIMIT),
		lastKind: "rewrite",
	};
	return { state: next, event };
}

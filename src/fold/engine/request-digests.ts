/**
 * The digest bookkeeping behind the append-only instrument: each request's
 * message digests, memoized from the last request's, and pi-fold's own list
 * for the request in flight until the host shows what was actually sent.
 * The comparison itself is `observeRequest` (instrument.ts); this module only
 * keeps the lists it compares, so the engine hashes what a request appends,
 * not the whole window.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { FenceVerdict } from "../policy/budget.ts";
import { type InstrumentState, messageDigest, observeRequest, type RewriteEvent, sentDigests } from "./instrument.ts";

/** What one request's `context` hook decided. */
export interface RequestOutcome {
	/** Messages to send instead of the host's (a preview of drafts not yet persisted); undefined: send as they are. */
	sent: AgentMessage[] | undefined;
	/** Set when the request must not go out (over the serving budget after every lossless fold). */
	refused: Extract<FenceVerdict, { ok: false }> | undefined;
	/**
	 * A rewrite of what the previous request sent, with its announced causes (none: unattributed).
	 * Undefined too when the request is observed later, through `sent` (the final list).
	 */
	rewrite: RewriteEvent | undefined;
	/** Estimated prompt tokens of what goes out (or would have), system prompt included. */
	tokens: number;
}

interface DigestedList {
	messages: readonly AgentMessage[];
	digests: readonly string[];
}

export class RequestDigests {
	/** The last digested request's messages and their digests. */
	private last: DigestedList | undefined;
	/** pi-fold's own list for the request in flight, until `sent` observes what actually went out. */
	private awaiting: DigestedList | undefined;

	/**
	 * Digests of a request's messages. Messages the last digested request
	 * carried (the same objects, in the same places) keep their digests, so a
	 * request that appends digests only what it appends.
	 */
	of(messages: readonly AgentMessage[]): string[] {
		const last = this.last;
		const digests: string[] = [];
		let same = 0;
		if (last)
			while (same < messages.length && same < last.messages.length && messages[same] === last.messages[same]) same++;
		for (let i = 0; i < messages.length; i++)
			digests.push(i < same && last ? (last.digests[i] ?? "") : messageDigest(messages[i]));
		this.last = { messages: [...messages], digests };
		return digests;
	}

	/** Hold pi-fold's own list (and its digests) until the host shows the final one; undefined drops it. */
	await(own: DigestedList | undefined): void {
		this.awaiting = own;
	}

	/**
	 * Observe what the awaited request actually sent, after every handler ran:
	 * compared with the previous request's, and with pi-fold's own list to tell
	 * another extension's rewrite from ours. Undefined when nothing is awaited.
	 */
	sent(
		state: InstrumentState,
		messages: readonly AgentMessage[],
	): { state: InstrumentState; event: RewriteEvent | undefined } | undefined {
		const own = this.awaiting;
		if (!own) return undefined;
		this.awaiting = undefined;
		const digests = sentDigests(messages, own.messages, own.digests);
		const observed = observeRequest(state, messages, digests, own.digests);
		return { state: observed.state, event: observed.event };
	}
}

/**
 * What goes out: the request the `context` hook prepares and the instrument
 * that observes it. Owns the causes announced for the next rewrite, the
 * instrument's state and each request's digests; reads the window through a
 * small interface (`RequestWindow`), so it holds no copy of the branch.
 *
 * A request previews decided edits not yet persisted (over what Pi built from
 * the session; anything another handler appended stays after it), is refused
 * past the provider's limit, and is observed: at once, or once the host
 * shows the final list (`sent`), so another extension's rewrite is told
 * from ours. The first request after a reset may go out as Pi built it,
 * before the branch is built (`RequestWindow.deferred`).
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { ContextEditEntryDraft } from "@earendil-works/pi-coding-agent";
import { repairToolPairing } from "../../session/tool-pairing.ts";
import { fenceVerdict } from "../policy/budget.ts";
import type { HostFacts } from "./host-facts.ts";
import {
	announce,
	emptyInstrument,
	firstDivergence,
	type InstrumentState,
	type LoadoutDigests,
	messageDigest,
	observeLoadout,
	observeRequest,
	observeUsage,
	type RewriteCause,
	type RewriteEvent,
} from "./instrument.ts";
import { RequestDigests, type RequestOutcome } from "./request-digests.ts";
import { startsWith } from "./session-facts.ts";

/** The engine's window as the request path reads it. */
export interface RequestWindow {
	/** Pi's projection of the persisted session (the branch built first). */
	persisted(): readonly AgentMessage[];
	/** Decided edits not yet persisted. */
	drafts(): ContextEditEntryDraft[];
	/** Pi's projection once `drafts` are persisted. */
	drafted(drafts: readonly ContextEditEntryDraft[]): readonly AgentMessage[];
	/** Estimated prompt tokens of `messages` (default: the persisted projection) plus the fixed part. */
	tokens(messages: readonly AgentMessage[] | undefined, fixedTokens: number): number;
	/**
	 * The branch is still unbuilt, every fold entry on it decoded, and every
	 * brief the persisted window shows is its live record's, over entries on
	 * the branch (`persistedBriefsHold`): the window Pi built from the
	 * session carries only folds that peek and expand answer.
	 */
	deferred(): boolean;
}

export class Requests {
	private instrumentState: InstrumentState = emptyInstrument();
	/** Why the next window rewrite happens; handed to the instrument when edits land. */
	private readonly causes = new Set<RewriteCause>();
	/** Each request's digests (memoized), and pi-fold's own list until `sent` observes what went out. */
	private readonly digests = new RequestDigests();
	/** No request since the last reset: only the first may go out before the branch is built. */
	private firstRequest = true;
	/** Requests refused past the provider's limit. */
	fenceRefusals = 0;

	/** A new branch: causes of the old one's rewrites do not carry over. */
	reset(): void {
		this.causes.clear();
		this.firstRequest = true;
	}

	get instrument(): InstrumentState {
		return this.instrumentState;
	}

	/** An event of the host's that rewrites the next window (navigation, compaction). */
	hostRewrite(cause: RewriteCause): void {
		this.instrumentState = announce(this.instrumentState, cause);
	}

	/** Causes a change brings with it; announced when its edits land. */
	note(causes: readonly RewriteCause[]): void {
		for (const cause of causes) this.causes.add(cause);
	}

	/** Whether a rewrite is pending anyway (an action announced one), and whether a reboundary is among its causes. */
	get pending(): { any: boolean; reboundary: boolean } {
		return { any: this.causes.size > 0, reboundary: this.causes.has("reboundary") };
	}

	usage(promptTokens: number, cacheRead: number): void {
		this.instrumentState = observeUsage(this.instrumentState, promptTokens, cacheRead);
	}

	loadout(sent: LoadoutDigests, host: LoadoutDigests): void {
		this.instrumentState = observeLoadout(this.instrumentState, sent, host).state;
	}

	/**
	 * Edits land at a boundary: announce their causes (a commit when none was
	 * recorded) when the next window (`next`: the persisted one with the drafts
	 * applied; none when nothing drafted or announced can change it) changes
	 * what the last request sent; edits the `context` hook already previewed
	 * change nothing the provider has not seen.
	 */
	landing(next: readonly AgentMessage[] | undefined): void {
		const rewrites =
			next !== undefined && firstDivergence(this.instrumentState.ownDigests, next.map(messageDigest)) !== -1;
		if (rewrites) this.announceCauses();
		else this.causes.clear();
	}

	private announceCauses(): void {
		if (this.causes.size === 0) this.causes.add("commit");
		for (const cause of this.causes) this.instrumentState = announce(this.instrumentState, cause);
		this.causes.clear();
	}

	/**
	 * The `context` hook after any fence commit: preview drafts not yet
	 * persisted, refuse a request past the limit, and observe what goes out.
	 * `messages` default to Pi's projection of the session (a host without
	 * Pi). With `awaitSent`, the request is observed by `sent`.
	 */
	request(
		window: RequestWindow,
		host: HostFacts,
		brandNoun: string,
		messages?: readonly AgentMessage[],
		awaitSent = false,
	): RequestOutcome {
		this.digests.await(undefined);
		const first = this.firstRequest;
		this.firstRequest = false;
		// A resumed long session's first request goes out as Pi built it, under budget, before the branch is built.
		const overBudget = () => host.budget !== undefined && window.tokens(messages, host.fixedTokens) > host.budget;
		if (first && messages !== undefined && window.deferred() && !overBudget())
			return this.observe(window, host, brandNoun, { sent: messages, own: messages }, awaitSent);
		const persisted = window.persisted();
		const hostList = messages ?? persisted;
		const drafts = window.drafts();
		let preview: AgentMessage[] | undefined;
		if (drafts.length > 0 && startsWith(hostList, persisted)) {
			// Other handlers (orphan repair among them) ran on the host's list; the preview replaces it, so it is
			// held to the same pairing rule: whatever the drafts do, no request goes out with an orphan result.
			const drafted = [...window.drafted(drafts), ...hostList.slice(persisted.length)];
			preview = repairToolPairing(drafted).messages;
			this.announceCauses();
		}
		// pi-fold's own list: the preview, or Pi's projection (its objects' digests memoized) when nothing was
		// previewed and no handler added or removed messages. Whether a handler changed one is `sent`'s question.
		const own = !preview && hostList.length === persisted.length ? persisted : (preview ?? hostList);
		return this.observe(window, host, brandNoun, { sent: preview ?? hostList, own, preview }, awaitSent);
	}

	/** Measure what goes out, refuse it past the limit, and observe pi-fold's own list now or at `sent`. */
	private observe(
		window: RequestWindow,
		host: HostFacts,
		brandNoun: string,
		lists: { sent: readonly AgentMessage[]; own: readonly AgentMessage[]; preview?: AgentMessage[] },
		awaitSent: boolean,
	): RequestOutcome {
		const tokens = window.tokens(lists.sent, host.fixedTokens);
		// Past Pi's line (the budget) Pi compacts; only past the provider's own limit is a request refused.
		const verdict = fenceVerdict(tokens, host.limit ?? host.budget, brandNoun);
		if (!verdict.ok) {
			this.fenceRefusals++;
			return { sent: undefined, refused: verdict, rewrite: undefined, tokens };
		}
		const digests = this.digests.of(lists.own);
		if (awaitSent) {
			this.digests.await({ messages: lists.own, digests });
			return { sent: lists.preview, refused: undefined, rewrite: undefined, tokens };
		}
		const observed = observeRequest(this.instrumentState, lists.own, digests);
		this.instrumentState = observed.state;
		return { sent: lists.preview, refused: undefined, rewrite: observed.event, tokens };
	}

	/**
	 * What the prepared request actually sent, after every handler ran (system
	 * messages excluded): compared with the previous request's, and with
	 * pi-fold's own list. Nothing when no request is awaiting (it was refused).
	 */
	sent(messages: readonly AgentMessage[]): RewriteEvent | undefined {
		const observed = this.digests.sent(this.instrumentState, messages);
		if (!observed) return undefined;
		this.instrumentState = observed.state;
		return observed.event;
	}
}

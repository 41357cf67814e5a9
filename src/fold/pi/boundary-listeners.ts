/**
 * Boundary handlers registered only while they can hand something over. Pi
 * builds the branch's boundary context before and after every handler of a
 * boundary, and projects the branch again when it commits the drafts, so a
 * handler that returns nothing still costs each turn three projections of
 * the whole branch: about 0.4 s a turn at 50,000 branch entries, where Pi
 * with no handler pays nothing (bench/results/commit-cost.md, the resume
 * table). Pi's `on` returns an unsubscribe, so a handler comes and goes.
 */

/** A handler subscribed while wanted, unsubscribed otherwise. */
export class ListenerWhileWanted {
	private off: (() => void) | undefined;
	private readonly subscribe: () => () => void;

	constructor(subscribe: () => () => void) {
		this.subscribe = subscribe;
	}

	get listening(): boolean {
		return this.off !== undefined;
	}

	want(wanted: boolean): void {
		if (wanted && !this.off) this.off = this.subscribe();
		else if (!wanted && this.off) {
			this.off();
			this.off = undefined;
		}
	}
}

/**
 * Whether the turn whose request is being prepared may end without our
 * `turn_end` boundary: the first request after a reset (start, resume,
 * reload, tree navigation) that went out from the log's own window, with
 * the branch not yet built and nothing committed for it. That request wrote
 * the prompt cache cold; a commit at the boundary right after it would
 * rewrite what was just written, and the ladder has nothing newer to
 * decide on than the session it resumed, plus one reply. The next request
 * listens again; anything that changes the fold state in between (an
 * action, a threshold or overflow fold) is handed over at the settle
 * boundary or the next turn's.
 */
export function quietFirstTurn(input: { firstSinceReset: boolean; built: boolean; committed: boolean }): boolean {
	return input.firstSinceReset && !input.built && !input.committed;
}

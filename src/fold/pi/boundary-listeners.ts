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

	want(wanted: boolean): void {
		if (wanted && !this.off) this.off = this.subscribe();
		else if (!wanted && this.off) {
			this.off();
			this.off = undefined;
		}
	}
}

/**
 * Whether the turn in flight may end without our `turn_end` boundary: it
 * is quiet when its request was the first after a reset (start, resume,
 * reload, tree navigation) and went out from the log's own window, with the
 * branch not yet built and nothing committed for it. That request wrote the
 * prompt cache cold; a commit at the boundary right after it would rewrite
 * what was just written, and the ladder has nothing newer to decide on than
 * the session it resumed, plus one reply. The next request listens again;
 * a change during the quiet turn (an action, a threshold or overflow fold)
 * is handed over at this turn's boundaries after all.
 */
export class QuietFirstTurn {
	private requested = false;
	/** The turn in flight goes without a `turn_end` handler… */
	quiet = false;
	/** …unless the fold state changed during it. */
	changed = false;

	reset(): void {
		this.requested = false;
		this.quiet = false;
	}

	/** A request is about to go out: `built` and `committed` say whether it needed the branch or a commit. */
	request(built: boolean, committed: boolean): void {
		this.quiet = !this.requested && !built && !committed;
		this.requested = true;
		this.changed = false;
	}
}

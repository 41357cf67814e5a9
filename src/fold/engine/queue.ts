/**
 * Custom entries the engine decided and the host has not persisted yet. They
 * leave at a turn boundary (or when the host flushes while Pi is idle); Pi
 * drops a whole boundary when any draft in it is invalid, so what the last
 * boundary took is kept until the next one shows it landed, and queued again
 * if it did not. Only the entries appended since the hand-off are searched.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { type QueuedEntry, requeueLost } from "./commit.ts";

export class EntryQueue {
	private queued: QueuedEntry[] = [];
	private inFlight: QueuedEntry[] = [];
	/** Branch length at the last hand-off: what Pi persisted from it lands after. */
	private handedAt = 0;

	get size(): number {
		return this.queued.length;
	}

	push(...entries: QueuedEntry[]): void {
		this.queued.push(...entries);
	}

	/** Everything queued, for a host that persists it now (Pi idle, a settled run). */
	take(): QueuedEntry[] {
		const queued = this.queued;
		this.queued = [];
		return queued;
	}

	/** Everything queued, handed to a boundary of a branch `branchLength` entries long. */
	handOff(branchLength: number): QueuedEntry[] {
		const taken = this.take();
		this.inFlight.push(...taken);
		this.handedAt = branchLength;
		return taken;
	}

	/** Queue again, in front, what the last hand-off took and `branch` does not hold after it. */
	reconcile(branch: readonly SessionEntry[]): void {
		if (this.inFlight.length === 0) return;
		this.queued = requeueLost(this.inFlight, this.queued, branch.slice(this.handedAt));
		this.inFlight = [];
	}

	/** The branch was replaced: whatever was handed over is looked for on all of it. */
	branchReplaced(): void {
		this.handedAt = 0;
	}

	clear(): void {
		this.queued = [];
		this.inFlight = [];
		this.handedAt = 0;
	}
}

/**
 * What the next request will hold, kept current as the branch grows: Pi's
 * projection of the branch (window.ts), its estimated tokens per branch
 * position for the ladder's range sums (branch-tokens.ts), the drafts that
 * move it to the fold state (drafts.ts), and the window once those drafts
 * are persisted. The engine asks it for readings, messages and sizes; it
 * decides nothing.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { ContextEditEntryDraft, SessionEntry } from "@earendil-works/pi-coding-agent";
import { estimateMessagesTokens } from "../../session/tokens.ts";
import type { WindowReading } from "../policy/budget.ts";
import type { BranchTracker } from "./branch.ts";
import { BranchTokens } from "./branch-tokens.ts";
import { type DraftsInput, DraftsMemo } from "./drafts.ts";
import { type DraftedWindow, WindowModel } from "./window.ts";

export class NextWindow {
	private readonly branch: BranchTracker;
	private readonly window = new WindowModel();
	private readonly tokens = new BranchTokens();
	private readonly memo = new DraftsMemo();
	/** The window with some drafts applied, for those drafts. */
	private drafted: { drafts: readonly ContextEditEntryDraft[]; window: DraftedWindow } | undefined;
	/** The last host message list measured, and its tokens, so a request is measured once. */
	private measured: { messages: readonly AgentMessage[]; length: number; tokens: number } | undefined;

	constructor(branch: BranchTracker) {
		this.branch = branch;
	}

	/** The tracker's branch was replaced: project and count everything again. */
	reset(): void {
		this.window.reset(this.branch.entries);
		this.countTokens();
		this.memo.clear();
	}

	/** `fresh` was appended to the tracker's branch (already in it). */
	append(fresh: readonly SessionEntry[]): void {
		const entries = this.branch.entries;
		const start = entries.length - fresh.length;
		let all = false;
		fresh.forEach((entry, offset) => {
			const changed = this.window.append(entry, entries);
			if (changed === "all") all = true;
			if (all) return;
			const tokens = this.window.reading(0).entryTokens;
			this.tokens.set(start + offset, tokens.get(entry.id) ?? 0);
			for (const id of changed) {
				const at = this.branch.view.indexById.get(id);
				if (id !== entry.id && at !== undefined) this.tokens.set(at, tokens.get(id) ?? 0);
			}
		});
		if (all) this.countTokens();
	}

	/** Count every branch position's window tokens again (a new branch, a compaction). */
	private countTokens(): void {
		const tokens = this.window.reading(0).entryTokens;
		this.tokens.reset(this.branch.entries.map((entry) => tokens.get(entry.id) ?? 0));
	}

	/** Edits that move the persisted window to the fold state. */
	drafts(input: Omit<DraftsInput, "branch" | "window">): ContextEditEntryDraft[] {
		return this.memo.drafts({ ...input, branch: this.branch, window: this.window });
	}

	/** The window once `drafts` are persisted (the same object while the drafts are). */
	withDrafts(drafts: readonly ContextEditEntryDraft[]): DraftedWindow {
		if (this.drafted?.drafts !== drafts) this.drafted = { drafts, window: this.window.withDrafts(drafts) };
		return this.drafted.window;
	}

	/** The reading of the window `drafts` make, with range sums by branch position. */
	reading(fixedTokens: number, drafts: readonly ContextEditEntryDraft[]): WindowReading {
		const base = this.tokens;
		const plain = drafts.length === 0 ? this.window.reading(fixedTokens) : this.withDrafts(drafts).reading(fixedTokens);
		// Two entries with one id would share a count: the ladder sums per entry instead.
		if (this.branch.hasDuplicateIds) return plain;
		if (drafts.length === 0) return { ...plain, rangeTokens: (start, end) => base.sum(start, end) };
		const indexOf = (id: string) => this.branch.view.indexById.get(id) ?? -1;
		const shifts = [...this.withDrafts(drafts).changed].map(([id, delta]) => [indexOf(id), delta] as const);
		return {
			...plain,
			rangeTokens: (start, end) => {
				let total = base.sum(start, end);
				for (const [at, delta] of shifts) if (at >= start && at < end) total += delta;
				return total;
			},
		};
	}

	/** The request's messages as Pi builds them from the session (system messages excluded). */
	messages(): AgentMessage[] {
		return this.window.messages();
	}

	/** Estimated prompt tokens of a request: its messages plus the fixed part. */
	requestTokens(messages: readonly AgentMessage[], fixedTokens: number): number {
		if (messages === this.window.messages()) return this.window.reading(fixedTokens).total;
		const known = this.measured;
		if (known?.messages !== messages || known.length !== messages.length)
			this.measured = { messages, length: messages.length, tokens: estimateMessagesTokens(messages) };
		return (this.measured?.tokens ?? 0) + fixedTokens;
	}
}

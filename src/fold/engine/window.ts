/**
 * Pi's projection of the active branch (what `buildSessionProjection` would
 * return, and what the next request's messages are), kept current as entries
 * are appended, with the window reading the ladder measures: estimated
 * tokens per projected entry and their total.
 *
 * Each entry is projected once, by Pi's own `sessionEntryToContextMessages`
 * (unedited) or by Pi's projection of the entry with its latest edit; an
 * appended `context_edit` re-projects its one target; a compaction (which
 * changes which entries Pi projects at all) or a replaced branch re-projects
 * everything through Pi's `buildContextEntries`. Drafts not yet persisted
 * are read as an overlay of their targets, never by projecting the branch
 * again.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import {
	buildContextEntries,
	buildSessionProjection,
	type ContextEditEntry,
	type ContextEditEntryDraft,
	type SessionEntry,
	sessionEntryToContextMessages,
} from "@earendil-works/pi-coding-agent";
import { estimateMessageTokens } from "../../session/tokens.ts";
import type { WindowReading } from "../policy/budget.ts";

/** Id prefix of the stand-in edit entries drafts are projected through (never persisted). */
const DRAFT_ID_PREFIX = "pi-fold-draft-";

function withoutSystem(messages: readonly AgentMessage[]): AgentMessage[] {
	return messages.filter((message) => message.role !== "system");
}

function visibleTokens(messages: readonly AgentMessage[]): number {
	let tokens = 0;
	for (const message of messages) if (message.role !== "system") tokens += estimateMessageTokens(message);
	return tokens;
}

/** One entry as Pi projects it at `position` of its context entries, given the entry's latest edit. */
function project(entry: SessionEntry, edit: ContextEditEntry | undefined, position: number): AgentMessage[] {
	// Only the newest compaction, at position 0, contributes its summary.
	if (entry.type === "compaction" && position > 0) return [];
	if (!edit) return sessionEntryToContextMessages(entry);
	if (edit.replacement === null) return [];
	const linked: SessionEntry = { ...edit, parentId: entry.id };
	return buildSessionProjection([entry, linked], linked.id).entries[0]?.messages ?? [];
}

/**
 * Context positions by entry id: one number per id, a list only for an id
 * that repeats (a hand-edited log), so projecting a long branch allocates
 * nothing per entry.
 */
class PositionIndex {
	private readonly first = new Map<string, number>();
	private readonly repeats = new Map<string, number[]>();

	get size(): number {
		return this.first.size;
	}

	has(id: string): boolean {
		return this.first.has(id);
	}

	keys(): MapIterator<string> {
		return this.first.keys();
	}

	clear(): void {
		this.first.clear();
		this.repeats.clear();
	}

	add(id: string, position: number): void {
		if (!this.first.has(id)) {
			this.first.set(id, position);
			return;
		}
		const more = this.repeats.get(id);
		if (more) more.push(position);
		else this.repeats.set(id, [position]);
	}

	/** The positions of `id`, in order (none when Pi does not project it). */
	of(id: string): readonly number[] {
		const at = this.first.get(id);
		if (at === undefined) return [];
		const more = this.repeats.get(id);
		return more ? [at, ...more] : [at];
	}

	/** Sum of `value` over the positions of `id`; undefined when it has none. */
	sum(id: string, value: (position: number) => number): number | undefined {
		const at = this.first.get(id);
		if (at === undefined) return undefined;
		let total = value(at);
		const more = this.repeats.get(id);
		if (more) for (const position of more) total += value(position);
		return total;
	}
}

/** Estimated tokens per projected entry, read through the model's arrays (no copy per request). */
class EntryTokens implements ReadonlyMap<string, number> {
	private readonly positions: PositionIndex;
	private readonly tokensAt: (position: number) => number;

	constructor(positions: PositionIndex, tokensAt: (position: number) => number) {
		this.positions = positions;
		this.tokensAt = tokensAt;
	}

	get size(): number {
		return this.positions.size;
	}

	get(id: string): number | undefined {
		return this.positions.sum(id, this.tokensAt);
	}

	has(id: string): boolean {
		return this.positions.has(id);
	}

	forEach(each: (value: number, key: string, map: ReadonlyMap<string, number>) => void): void {
		for (const id of this.positions.keys()) each(this.get(id) ?? 0, id, this);
	}

	*entries(): MapIterator<[string, number]> {
		for (const id of this.positions.keys()) yield [id, this.get(id) ?? 0];
	}

	*keys(): MapIterator<string> {
		yield* this.positions.keys();
	}

	*values(): MapIterator<number> {
		for (const id of this.positions.keys()) yield this.get(id) ?? 0;
	}

	[Symbol.iterator](): MapIterator<[string, number]> {
		return this.entries();
	}
}

/** What the window will be once some drafts are persisted. */
export interface DraftedWindow {
	/** Entry id → how many tokens the drafts add to it (negative: remove). */
	changed: ReadonlyMap<string, number>;
	reading: (fixedTokens: number) => WindowReading;
	/** The request's messages (system messages excluded), as the context event would carry them. */
	messages: () => AgentMessage[];
}

export class WindowModel {
	private context: SessionEntry[] = [];
	private projected: AgentMessage[][] = [];
	private tokens: number[] = [];
	private readonly positions = new PositionIndex();
	private edits = new Map<string, ContextEditEntry>();
	private entryTotal = 0;
	/** The flat message list without system messages, correct for context positions before `validTo`. */
	private readonly visible: AgentMessage[] = [];
	/** Context position → where its messages start in `visible`. */
	private readonly offsets: number[] = [];
	private validTo = 0;
	private readonly entryTokens = new EntryTokens(this.positions, (position) => this.tokens[position] ?? 0);

	/** Project the branch ending at `leaf` (default: its last entry) again: start, resume, a replaced branch, a compaction. */
	reset(branch: readonly SessionEntry[], leaf = branch.at(-1)?.id): void {
		this.context = leaf === undefined ? [] : buildContextEntries(branch as SessionEntry[], leaf);
		this.projected = [];
		this.tokens = [];
		this.positions.clear();
		this.edits = new Map();
		this.entryTotal = 0;
		this.visible.length = 0;
		this.offsets.length = 0;
		this.validTo = 0;
		for (const entry of this.context) if (entry.type === "context_edit") this.edits.set(entry.targetId, entry);
		this.context.forEach((entry, position) => {
			const messages = project(entry, this.edits.get(entry.id), position);
			const tokens = visibleTokens(messages);
			this.projected.push(messages);
			this.tokens.push(tokens);
			this.entryTotal += tokens;
			this.positions.add(entry.id, position);
		});
	}

	/**
	 * An entry appended to the branch; `branch` holds it (and may hold later
	 * ones), for a compaction's re-projection. Returns the ids whose tokens may
	 * have changed, or "all" when everything was projected again.
	 */
	append(entry: SessionEntry, branch: readonly SessionEntry[]): readonly string[] | "all" {
		if (entry.type === "compaction") {
			this.reset(branch, entry.id);
			return "all";
		}
		const position = this.context.length;
		this.context.push(entry);
		this.positions.add(entry.id, position);
		const messages = project(entry, this.edits.get(entry.id), position);
		const tokens = visibleTokens(messages);
		this.projected.push(messages);
		this.tokens.push(tokens);
		this.entryTotal += tokens;
		if (entry.type !== "context_edit") return [entry.id];
		this.edits.set(entry.targetId, entry);
		for (const at of this.positions.of(entry.targetId)) this.reproject(at);
		return [entry.id, entry.targetId];
	}

	/** True when Pi projects this entry (a compaction drops what it summarized). */
	inWindow(id: string): boolean {
		return this.positions.has(id);
	}

	/** The window reading: tokens per projected entry, the fixed part, the total. */
	reading(fixedTokens: number): WindowReading {
		return { entryTokens: this.entryTokens, fixedTokens, total: fixedTokens + this.entryTotal };
	}

	/** The request's messages as Pi builds them from the session (system messages excluded). */
	messages(): AgentMessage[] {
		// Only the part after the earliest re-projected entry is laid out again.
		if (this.validTo < this.projected.length) {
			this.visible.length = this.offsets[this.validTo] ?? this.visible.length;
			this.offsets.length = this.validTo;
			for (let at = this.validTo; at < this.projected.length; at++) {
				this.offsets.push(this.visible.length);
				for (const message of this.projected[at] ?? []) if (message.role !== "system") this.visible.push(message);
			}
			this.validTo = this.projected.length;
		}
		return this.visible;
	}

	/** The window once `drafts` are persisted (Pi applies the latest edit per target). */
	withDrafts(drafts: readonly ContextEditEntryDraft[]): DraftedWindow {
		const replaced = new Map<number, AgentMessage[]>();
		const latest = new Map<string, ContextEditEntryDraft>();
		for (const draft of drafts) latest.set(draft.targetId, draft);
		let index = 0;
		for (const [targetId, draft] of latest) {
			const edit: ContextEditEntry = {
				...draft,
				id: `${DRAFT_ID_PREFIX}${index++}`,
				parentId: targetId,
				timestamp: "1970-01-01T00:00:00.000Z",
			};
			for (const at of this.positions.of(targetId)) {
				const entry = this.context[at];
				if (entry) replaced.set(at, project(entry, edit, at));
			}
		}
		let total = this.entryTotal;
		const over = new Map<number, number>();
		const changed = new Map<string, number>();
		for (const [at, messages] of replaced) {
			const tokens = visibleTokens(messages);
			over.set(at, tokens);
			total += tokens - (this.tokens[at] ?? 0);
			const id = this.context[at]?.id;
			if (id !== undefined) changed.set(id, (changed.get(id) ?? 0) + tokens - (this.tokens[at] ?? 0));
		}
		const entryTokens = new EntryTokens(this.positions, (at) => over.get(at) ?? this.tokens[at] ?? 0);
		return {
			changed,
			reading: (fixedTokens) => ({ entryTokens, fixedTokens, total: fixedTokens + total }),
			messages: () => this.messagesWith(replaced),
		};
	}

	/** The request's messages with some positions' messages replaced, laid out from the current list. */
	private messagesWith(replaced: ReadonlyMap<number, AgentMessage[]>): AgentMessage[] {
		const base = this.messages();
		const out: AgentMessage[] = [];
		let copied = 0;
		for (const at of [...replaced.keys()].sort((a, b) => a - b)) {
			const start = this.offsets[at] ?? base.length;
			for (let i = copied; i < start; i++) out.push(base[i] as AgentMessage);
			out.push(...withoutSystem(replaced.get(at) ?? []));
			copied = this.offsets[at + 1] ?? base.length;
		}
		for (let i = copied; i < base.length; i++) out.push(base[i] as AgentMessage);
		return out;
	}

	private reproject(position: number): void {
		const entry = this.context[position];
		if (!entry) return;
		const messages = project(entry, this.edits.get(entry.id), position);
		const tokens = visibleTokens(messages);
		this.entryTotal += tokens - (this.tokens[position] ?? 0);
		this.projected[position] = messages;
		this.tokens[position] = tokens;
		this.validTo = Math.min(this.validTo, position);
	}
}

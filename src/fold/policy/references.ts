/**
 * The branch's reference index: for every entry, the newest message that
 * pointed back at what it holds. The working-set rule folds by this last
 * reference, not by age: a file read three steps ago that the agent named in
 * its last reply is in use; one read forty steps ago and never named since
 * is not.
 *
 * A reference is a path, code identifier, hex id or URL
 * (src/text/references.ts) in a message the agent or the person wrote (an
 * assistant message's text and call arguments, a user message). It refreshes
 * the newest earlier entry holding the same token: that is the copy the
 * model would read it from, so older copies may go. A path also refreshes
 * the newest result of a call that named it (the read of that file, a run of
 * that script), found by any trailing part of the path (`src/a.ts` finds a
 * read of `/repo/src/a.ts`); a name refreshes the newest result that
 * declares it (`declaredNames`), so talking about a function keeps the read
 * of the file that defines it in play, the file an edit will quote.
 *
 * The index grows with the branch: a view's entries only ever get appended
 * (src/fold/engine/branch.ts), so each entry is read once. A replaced
 * branch starts a new index.
 *
 * It reads only the suffix it is asked about. A reference points back, and
 * it refreshes the *newest* holder of a token, so the last reference of an
 * entry depends on nothing older than the entry itself: an index read from
 * entry `s` answers every entry at or after `s` exactly as one read from the
 * start would. The ladder asks about raw units, which on a long resumed
 * session are its last few hundred entries of tens of thousands (the first
 * boundary after `pi --session <file> -p hi` read the whole branch: half a
 * second at 50,000 entries). A question about an older entry reads further
 * back, at least doubling what is covered, so a walk back over the branch
 * costs at most twice one full read. One table is kept for the whole branch
 * however little is covered: which results read which paths (a cheap pass
 * over call arguments). A path refreshes the read of its *longest* trailing
 * part that any earlier read was named by, so whether a shorter part
 * applies depends on reads older than the covered suffix.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { FILE_ACTIONS, PATCH_TOOLS } from "../../session/facts.ts";
import { declaredNames } from "../../text/declared-names.ts";
import { contentText } from "../../text/lines.ts";
import { isPathToken, pathKeys, pathTokens, referenceTokens } from "../../text/references.ts";
import type { BranchView, StructuralUnit } from "../lattice/units.ts";

/** Where each entry of the branch was last referenced. */
export interface ReferenceIndex {
	/** Index of the newest entry that referenced the entry at `at` (`at` itself when none did). */
	lastReferenceOf(at: number): number;
	/** The oldest entry read so far: questions about older entries read further back first. */
	readonly readFrom: number;
}

/** The index's state over the entries from `from` on. */
interface Coverage {
	/** The first entry read. */
	from: number;
	/** Entry `from + k` → index of the newest entry that referenced it. */
	lastReference: number[];
	/** Token → index of the newest entry holding it. */
	newest: Map<string, number>;
	/** Name → index of the newest tool result that declares it (`declaredNames`: the file that defines it). */
	newestDeclaring: Map<string, number>;
}

/** An index over one entries array: the coverage read so far, and the view that reads more. */
class GrowingIndex implements ReferenceIndex {
	private coverage: Coverage;
	private view: BranchView;
	private reads = new ReadTable();

	constructor(view: BranchView) {
		this.view = view;
		this.coverage = emptyCoverage(view.entries.length);
	}

	/** The index brought up to `view`'s entries (the same array, grown in place): only appended entries are read. */
	update(view: BranchView): this {
		this.view = view;
		const entries = view.entries;
		// The coverage always ends where the read table does: the table tells a replaced branch from a grown one.
		if (!this.reads.grows(entries)) {
			this.coverage = emptyCoverage(entries.length);
			this.reads = new ReadTable();
		}
		this.reads.readUpTo(view);
		readUpTo(this.coverage, view, this.reads, entries.length);
		return this;
	}

	get readFrom(): number {
		return this.coverage.from;
	}

	lastReferenceOf(at: number): number {
		if (at < this.coverage.from) this.readBackTo(at);
		return this.coverage.lastReference[at - this.coverage.from] ?? at;
	}

	/** Read from `at` (or further back, to at least double the coverage) to the entries read so far. */
	private readBackTo(at: number): void {
		const { from, lastReference } = this.coverage;
		const end = from + lastReference.length;
		const start = Math.max(0, Math.min(at, end - 2 * (end - from) - 1));
		this.coverage = emptyCoverage(start);
		readUpTo(this.coverage, this.view, this.reads, end);
	}
}

function emptyCoverage(from: number): Coverage {
	return {
		from,
		lastReference: [],
		newest: new Map(),
		newestDeclaring: new Map(),
	};
}

/** Every tool result that read a path, by path key, over the whole branch (grown with it). */
class ReadTable {
	/** Path key → indices of the results whose call named it, ascending. */
	private readonly byKey = new Map<string, number[]>();
	private end = 0;
	private tail: SessionEntry | undefined;

	/** False when `entries` is not this table's branch grown (a replaced branch). */
	grows(entries: readonly SessionEntry[]): boolean {
		return this.end <= entries.length && (this.end === 0 || entries[this.end - 1] === this.tail);
	}

	readUpTo(view: BranchView): void {
		const entries = view.entries;
		for (let i = this.end; i < entries.length; i++) {
			const entry = entries[i];
			if (entry?.type !== "message" || entry.message.role !== "toolResult") continue;
			for (const path of calledPaths(view, i, entry.message.toolCallId)) {
				for (const key of pathKeys(path)) {
					const list = this.byKey.get(key);
					if (list) list.push(i);
					else this.byKey.set(key, [i]);
				}
			}
		}
		this.end = entries.length;
		this.tail = entries.at(-1);
	}

	/** The newest result before entry `before` whose call named `key`. */
	newestBefore(key: string, before: number): number | undefined {
		const list = this.byKey.get(key);
		if (!list) return undefined;
		let lo = 0;
		let hi = list.length;
		while (lo < hi) {
			const mid = (lo + hi) >> 1;
			if ((list[mid] ?? before) < before) lo = mid + 1;
			else hi = mid;
		}
		return lo > 0 ? list[lo - 1] : undefined;
	}
}

function readUpTo(coverage: Coverage, view: BranchView, reads: ReadTable, end: number): void {
	for (let i = coverage.from + coverage.lastReference.length; i < end; i++) note(coverage, view, reads, i);
}

/** One index per entries array: the engine's view grows its array in place. */
const indexes = new WeakMap<readonly SessionEntry[], GrowingIndex>();

/** The reference index of a view's branch, brought up to date with its entries (reading only what is asked about). */
export function referenceIndex(view: BranchView): ReferenceIndex {
	let index = indexes.get(view.entries);
	if (!index) {
		index = new GrowingIndex(view);
		indexes.set(view.entries, index);
	}
	return index.update(view);
}

/** Read entry `i`: the references it makes, then the tokens it holds. */
function note(index: Coverage, view: BranchView, reads: ReadTable, i: number): void {
	index.lastReference.push(i);
	const entry = view.entries[i];
	if (entry?.type !== "message") return;
	const message = entry.message;
	if (message.role === "toolResult") {
		const text = contentText(message.content);
		hold(index, referenceTokens(text), i);
		for (const name of declaredNames(text)) index.newestDeclaring.set(name, i);
		return;
	}
	const text = writtenText(entry);
	if (text === undefined) return;
	const tokens = referenceTokens(text);
	for (const token of tokens) {
		refresh(index, index.newest.get(token), i);
		refresh(index, index.newestDeclaring.get(token), i);
		if (isPathToken(token)) {
			// The longest trailing part of the path some read was named by.
			for (const key of pathKeys(token)) {
				const read = reads.newestBefore(key, i);
				if (read === undefined) continue;
				refresh(index, read, i);
				break;
			}
		}
	}
	hold(index, tokens, i);
}

function refresh(index: Coverage, target: number | undefined, by: number): void {
	if (target === undefined) return;
	const at = target - index.from;
	// A target before the covered suffix is not asked about (a question about it reads back first).
	if (at >= 0 && (index.lastReference[at] ?? -1) < by) index.lastReference[at] = by;
}

function hold(index: Coverage, tokens: Iterable<string>, i: number): void {
	for (const token of tokens) index.newest.set(token, i);
}

/** Text the agent or the person wrote in an entry: a user message, or an assistant's text and call arguments. */
function writtenText(entry: SessionEntry): string | undefined {
	if (entry.type !== "message") return undefined;
	const message = entry.message;
	if (message.role === "user") return contentText(message.content);
	if (message.role !== "assistant") return undefined;
	const parts: string[] = [];
	for (const part of message.content) {
		if (part.type === "text") parts.push(part.text);
		else if (part.type === "toolCall") parts.push(argumentStrings(part.arguments));
	}
	return parts.join("\n");
}

/** Every string inside a call's arguments, joined: paths and names sit in whichever key the tool chose. */
function argumentStrings(value: unknown): string {
	const out: string[] = [];
	const walk = (item: unknown, depth: number): void => {
		if (typeof item === "string") out.push(item);
		else if (depth > 8 || item === null || typeof item !== "object") return;
		else for (const child of Array.isArray(item) ? item : Object.values(item)) walk(child, depth + 1);
	};
	walk(value, 0);
	return out.join("\n");
}

/** Argument keys that carry the text a call writes or replaces: its result holds none of the file. */
const CHANGE_ARG_KEYS = ["oldText", "newText", "old_string", "new_string", "old_str", "new_str", "edits", "content"];
/** The marker a patch envelope (Codex `apply_patch`) starts with. */
const PATCH_MARK = "*** Begin Patch";

/**
 * True for a call that changes a file (an edit, a write, a patch): its result
 * says only that it worked, so it must not stand in for the read that holds
 * the file's text, which the next edit of the file quotes.
 */
function changesFile(name: string, args: unknown): boolean {
	const action = FILE_ACTIONS[name.toLowerCase()];
	if (action === "edit" || action === "write" || PATCH_TOOLS.has(name)) return true;
	if (typeof args !== "object" || args === null) return false;
	if (CHANGE_ARG_KEYS.some((key) => key in args)) return true;
	return argumentStrings(args).includes(PATCH_MARK);
}

/**
 * Paths named by the arguments of the call the result at `resultIndex`
 * answers, when the call reads rather than changes them. The span is the one
 * holding this result (call ids repeat on a branch; session/closure.ts pairs
 * each result with its call).
 */
function calledPaths(view: BranchView, resultIndex: number, toolCallId: string): string[] {
	const span = view.tools.callSpans.get(toolCallId)?.find((s) => s.resultIndices.includes(resultIndex));
	const call = span ? view.entries[span.callIndex] : undefined;
	if (call?.type !== "message" || call.message.role !== "assistant") return [];
	for (const part of call.message.content) {
		if (part.type !== "toolCall" || part.id !== toolCallId) continue;
		return changesFile(part.name, part.arguments) ? [] : pathTokens(argumentStrings(part.arguments));
	}
	return [];
}

/** Index of the newest entry that referenced anything inside a unit (its newest entry when nothing did). */
export function unitLastReference(index: ReferenceIndex, unit: Pick<StructuralUnit, "start" | "end">): number {
	let last = unit.end - 1;
	for (let i = unit.start; i < unit.end; i++) last = Math.max(last, index.lastReferenceOf(i));
	return last;
}

/** Requests sent since anything in `[start, end)` was last referenced (assistant responses after that entry). */
export function requestsSinceReference(
	view: BranchView,
	index: ReferenceIndex,
	range: Pick<StructuralUnit, "start" | "end">,
): number {
	const total = view.responsesBefore[view.entries.length] ?? 0;
	return total - (view.responsesBefore[unitLastReference(index, range) + 1] ?? total);
}

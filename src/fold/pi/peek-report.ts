/**
 * `/context peek <id> [page]` for a person: the fold's (or pending mark's)
 * brief in full, then its verified source as readable entries (who said
 * what, which tool ran, and all of it), instead of the canonical JSON the
 * model's `peek` returns. The source comes a page at a time (a few screens;
 * an entry longer than a page goes on over the next), in the TUI as in
 * print mode, and the last line names the command for the next page;
 * `pageShowing` finds the page a search hit is on. Pure formatting over the
 * `peek` action's text; reading and verifying stay in `peek.ts` and
 * `source-read.ts` (src/fold/actions/).
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { FoldDetail } from "../engine/status-facts.ts";
import { COMMIT_MOMENTS } from "./commit-reasons.ts";
import { readableBytes } from "./context-report.ts";

/** Characters of one entry on a one-line row (the tool row's expanded peek); `/context peek` shows entries whole. */
export const PEEK_ENTRY_CHARS = 400;
/** Characters of source on one page of `/context peek`: a few screens. A page ends at a line; a longer line goes on. */
export const PEEK_PAGE_CHARS = 8_000;
/** An entry whose text is one line this short shares its head line ("e1 user: hello"). */
const INLINE_TEXT_CHARS = 120;
/** Fold ids suggested when a peek names none that exists. */
const SUGGESTED_IDS = 5;

/** A pending mark as a peek shows it: not folded yet. */
export interface MarkDetail {
	kind: string;
	entryCount: number;
	sourceBytes: number;
}

export interface PeekReportInput {
	id: string;
	/** Text of a successful `peek` action: header lines, a blank line, canonical JSON lines. */
	outcomeText: string;
	fold: FoldDetail | undefined;
	mark?: MarkDetail;
	brief: string | undefined;
	compacted: boolean;
	command: string;
	/** The page asked for (1-based), of `peekSourcePages(outcomeText)`. */
	page: number;
}

function oneLine(text: string, max: number): string {
	const flat = text.replace(/\s+/g, " ").trim();
	return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function textParts(content: unknown, separator = " "): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.map((part: { type?: string; text?: string; name?: string; arguments?: unknown }) => {
			if (part?.type === "text") return part.text ?? "";
			if (part?.type === "toolCall") return `→ ${part.name ?? "tool"} ${JSON.stringify(part.arguments ?? {})}`;
			if (part?.type === "image") return "[image]";
			return "";
		})
		.filter(Boolean)
		.join(separator);
}

/** Who an entry is from, and what it holds, as `describeSourceEntry` and `sourceEntryLines` head it. */
function entryHead(entry: SessionEntry): { head: string; content: unknown } | undefined {
	if (entry.type === "custom_message") return { head: `${entry.id} ${entry.customType}`, content: entry.content };
	if (entry.type !== "message") return undefined;
	const message = entry.message;
	if (message.role === "toolResult")
		return {
			head: `${entry.id} ${message.toolName} result${message.isError ? " failed" : ""}`,
			content: message.content,
		};
	if (message.role === "user" || message.role === "assistant")
		return { head: `${entry.id} ${message.role}`, content: message.content };
	return undefined;
}

/** One readable line for a session entry of a fold's source (a tool row's expanded peek). */
export function describeSourceEntry(entry: SessionEntry): string {
	const described = entryHead(entry);
	if (described) return `${described.head}: ${oneLine(textParts(described.content), PEEK_ENTRY_CHARS)}`;
	if (entry.type !== "message") return `${entry.id} (${entry.type})`;
	return `${entry.id} ${entry.message.role}`;
}

/** A session entry of a fold's source as a person reads it whole: its head, then every line of its text, indented. */
export function sourceEntryLines(entry: SessionEntry): string[] {
	const described = entryHead(entry);
	if (!described) return [describeSourceEntry(entry)];
	const text = textParts(described.content, "\n").replace(/\s+$/, "");
	const lines = text.split("\n");
	if (lines.length === 1 && (lines[0] ?? "").length <= INLINE_TEXT_CHARS)
		return [`${described.head}: ${lines[0] ?? ""}`];
	return [`${described.head}:`, ...lines.map((line) => `  ${line}`)];
}

/** Split a peek text into its header and source lines. */
function splitPeek(text: string): { header: string[]; source: string[] } {
	const at = text.indexOf("\n\n");
	if (at === -1) return { header: text.split("\n"), source: [] };
	return { header: text.slice(0, at).split("\n"), source: text.slice(at + 2).split("\n") };
}

/** A line of a peek's source, with the entry it belongs to (its position and id). */
interface PeekLine {
	text: string;
	entry: number;
	entryId: string;
}

/** The source of a peek, cut into pages of about PEEK_PAGE_CHARS. */
export interface PeekPages {
	pages: PeekLine[][];
	entries: number;
}

/** Every source entry of a peek text, whole, as lines (indented under the report's "Source:" heading). */
function sourceLines(lines: readonly string[]): PeekLine[] {
	const out: PeekLine[] = [];
	let entry = 0;
	for (const line of lines) {
		if (line.trim() === "") continue;
		entry++;
		let parsed: SessionEntry | undefined;
		try {
			parsed = JSON.parse(line) as SessionEntry;
		} catch {
			out.push({ text: "  … (an entry cut at the end of this slice)", entry, entryId: "" });
			continue;
		}
		for (const text of sourceEntryLines(parsed)) out.push({ text: `  ${text}`, entry, entryId: parsed.id });
	}
	return out;
}

/** A peek's source in pages: each at most `pageChars` characters, a longer line split over pages. */
export function peekSourcePages(outcomeText: string, pageChars = PEEK_PAGE_CHARS): PeekPages {
	const lines = sourceLines(splitPeek(outcomeText).source);
	const pages: PeekLine[][] = [[]];
	let used = 0;
	for (const line of lines) {
		for (let at = 0; at === 0 || at < line.text.length; at += pageChars) {
			const text = at === 0 ? line.text.slice(0, pageChars) : `    ${line.text.slice(at, at + pageChars)}`;
			if (used > 0 && used + text.length > pageChars) {
				pages.push([]);
				used = 0;
			}
			pages.at(-1)?.push({ ...line, text });
			used += text.length + 1;
		}
	}
	return { pages, entries: lines.at(-1)?.entry ?? 0 };
}

/**
 * The page (1-based) where entry `entryId` shows text that `matches`, else
 * where the entry starts; undefined when the source has no such entry. A
 * search hit's "See it" names it, so the person lands on the fact.
 */
export function pageShowing(paged: PeekPages, entryId: string, matches: (text: string) => boolean): number | undefined {
	let first: number | undefined;
	for (const [index, page] of paged.pages.entries()) {
		const lines = page.filter((line) => line.entryId === entryId);
		if (lines.length === 0) continue;
		first ??= index + 1;
		if (matches(lines.map((line) => line.text).join("\n"))) return index + 1;
	}
	return first;
}

/** The page asked for, and the line under it: which page this is and the command for the next. */
function pageOf(paged: PeekPages, input: PeekReportInput): { shown: string[]; footer: string | undefined } {
	const page = paged.pages[input.page - 1] ?? [];
	const shown = page.map((line) => line.text);
	if (paged.pages.length <= 1) return { shown, footer: undefined };
	const from = page[0]?.entry ?? 0;
	const to = page.at(-1)?.entry ?? from;
	const previous = paged.pages[input.page - 2]?.at(-1)?.entry;
	// An entry the page before began goes on here: say so above its rest.
	if (previous !== undefined && previous === from) shown.unshift(`  (entry ${from} continued)`);
	const where = `Page ${input.page} of ${paged.pages.length} (entries ${from}–${to} of ${paged.entries}).`;
	const next =
		input.page < paged.pages.length
			? ` Next: /${input.command} peek ${input.id} ${input.page + 1}`
			: ` The last page; the first: /${input.command} peek ${input.id} 1`;
	return { shown, footer: where + next };
}

export function formatPeekReport(input: PeekReportInput): string {
	const { header } = splitPeek(input.outcomeText);
	const range = /Bytes (\d+)–(\d+) of (\d+)/.exec(header.join(" "));
	const hash = /sha256 ([0-9a-f]{64})/.exec(header.join(" "))?.[1];
	const shown = range ? Number(range[2]) - Number(range[1]) : undefined;
	const total = range ? Number(range[3]) : undefined;
	const lines: string[] = [];
	const { fold, mark } = input;
	if (mark) {
		lines.push(
			`Pending mark ${input.id}: a ${mark.kind} of ${mark.entryCount} entries (${readableBytes(mark.sourceBytes)}), not folded yet; its entries show raw in the window until it lands.`,
			`It lands at the next commit, with any other marks: ${COMMIT_MOMENTS}`,
			"Brief it will show:",
			...(input.brief ?? "").split("\n").map((line) => `  ${line}`),
		);
	} else if (fold) {
		const state = input.compacted ? "removed by a compaction" : fold.state;
		lines.push(
			`Fold ${fold.id}: ${fold.kind}, ${state}, entries ${fold.firstEntryId}…${fold.lastEntryId} (${fold.entryCount} entries), ${readableBytes(fold.sourceBytes)} of source shown to the model as a ${readableBytes(fold.briefBytes)} brief.`,
		);
		lines.push("Brief:", ...(input.brief ?? "").split("\n").map((line) => `  ${line}`));
	} else {
		lines.push(`Session entry ${input.id.replace(/^@/, "")}, read from the session log.`);
	}
	const verified = hash ? `sha256 ${hash.slice(0, 12)}… verified` : "verified";
	const partial =
		shown !== undefined && total !== undefined && shown < total
			? `, the first ${readableBytes(shown)} of ${readableBytes(total)}`
			: "";
	const paged = pageOf(peekSourcePages(input.outcomeText), input);
	lines.push(`Source (${verified}${partial}):`, ...paged.shown);
	if (partial) lines.push("  … more follows; the model reads the rest with its peek action (offset).");
	if (paged.footer) lines.push(paged.footer);
	if (fold)
		lines.push(
			fold.state === "collapsed" && !input.compacted
				? "The window is unchanged. The model can expand this fold to restore the span in place."
				: "The window is unchanged.",
		);
	return lines.join("\n");
}

/** A peek of an id that is neither a fold nor an entry on this branch, in the person's terms. */
export function unknownPeekId(id: string, folds: readonly { id: string }[], command: string): string {
	if (id === "") return `Name a fold: /${command} peek <fold id>. /${command} lists the folds with their ids.`;
	const near = folds.filter((fold) => fold.id.startsWith(id.slice(0, 4))).slice(-SUGGESTED_IDS);
	const some = (near.length > 0 ? near : folds.slice(-SUGGESTED_IDS)).map((fold) => fold.id);
	return [
		`No fold or entry "${id}" on this branch.`,
		some.length > 0
			? `Folds you can peek: ${some.join(", ")}${folds.length > some.length ? ` (all: /${command} tree)` : ""}.`
			: "There are no folds yet.",
	].join(" ");
}

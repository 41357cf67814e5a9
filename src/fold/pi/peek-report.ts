/**
 * `/context peek <id> [page]` for a person: the fold's (or pending mark's)
 * brief in full, then its verified source as readable entries (who said
 * what, which tool ran), instead of the canonical JSON the model's `peek`
 * returns. Outside the TUI the entries come a page at a time and the last
 * line names the command for the next page; the TUI view scrolls, so there
 * a peek without a page shows every entry. Pure formatting over the `peek`
 * action's text; reading and verifying stay in `peek.ts` and
 * `source-read.ts` (src/fold/actions/).
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { FoldDetail } from "../engine/status-facts.ts";
import { COMMIT_MOMENTS } from "./commit-reasons.ts";
import { readableBytes } from "./context-report.ts";

/** Characters of one entry shown in a peek; the whole source is one model `peek` away. */
export const PEEK_ENTRY_CHARS = 400;
/** Source entries on one page of a plain-text peek: at most ~8 KB, about a screenful. */
export const PEEK_PAGE_ENTRIES = 20;
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
	/** The page asked for (1-based) and entries per page; undefined: every entry (the TUI scrolls). */
	page?: { number: number; entries: number };
}

function oneLine(text: string, max: number): string {
	const flat = text.replace(/\s+/g, " ").trim();
	return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function textParts(content: unknown): string {
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
		.join(" ");
}

/** One readable line for a session entry of a fold's source. */
export function describeSourceEntry(entry: SessionEntry): string {
	if (entry.type === "custom_message")
		return `${entry.id} ${entry.customType}: ${oneLine(textParts(entry.content), PEEK_ENTRY_CHARS)}`;
	if (entry.type !== "message") return `${entry.id} (${entry.type})`;
	const message = entry.message;
	if (message.role === "toolResult") {
		const status = message.isError ? " failed" : "";
		return `${entry.id} ${message.toolName} result${status}: ${oneLine(textParts(message.content), PEEK_ENTRY_CHARS)}`;
	}
	if (message.role === "user" || message.role === "assistant")
		return `${entry.id} ${message.role}: ${oneLine(textParts(message.content), PEEK_ENTRY_CHARS)}`;
	return `${entry.id} ${message.role}`;
}

/** Split a peek text into its header and source lines. */
function splitPeek(text: string): { header: string[]; source: string[] } {
	const at = text.indexOf("\n\n");
	if (at === -1) return { header: text.split("\n"), source: [] };
	return { header: text.slice(0, at).split("\n"), source: text.slice(at + 2).split("\n") };
}

function sourceLines(lines: readonly string[]): string[] {
	return lines
		.filter((line) => line.trim() !== "")
		.map((line) => {
			try {
				return `  ${describeSourceEntry(JSON.parse(line) as SessionEntry)}`;
			} catch {
				return "  … (an entry cut at the end of this slice)";
			}
		});
}

/** Pages of `count` entries, `per` to a page (at least one page). */
export function peekPages(count: number, per: number): number {
	return Math.max(1, Math.ceil(count / per));
}

/** The entries of the page asked for, and the line under them: which page this is and the command for the next. */
function pageOf(
	entries: readonly string[],
	input: PeekReportInput,
): { shown: readonly string[]; footer: string | undefined } {
	const page = input.page;
	if (!page || entries.length <= page.entries) return { shown: entries, footer: undefined };
	const pages = peekPages(entries.length, page.entries);
	const first = (page.number - 1) * page.entries;
	const shown = entries.slice(first, first + page.entries);
	const where = `Page ${page.number} of ${pages} (entries ${first + 1}–${first + shown.length} of ${entries.length}).`;
	const next =
		page.number < pages
			? ` Next: /${input.command} peek ${input.id} ${page.number + 1}`
			: ` The last page; the first: /${input.command} peek ${input.id} 1`;
	return { shown, footer: where + next };
}

export function formatPeekReport(input: PeekReportInput): string {
	const { header, source } = splitPeek(input.outcomeText);
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
	const paged = pageOf(sourceLines(source), input);
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

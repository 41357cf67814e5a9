/**
 * Search over what the window no longer shows: the exact source of every
 * fold at any depth, the session's evidence artifacts, and the entries
 * compaction summaries cover. Pure over plain inputs: each source is data
 * (its id, where it sits, which of its lines it owns) plus a reader that
 * returns verified bytes or a named failure; the output is hits.
 *
 * A fold's source is the canonical JSON of its leaf entries, one per line.
 * Each fold searches only the lines it owns directly; a line inside a child
 * fold is searched in the child's own (verified) source, so every hit names
 * the innermost fold holding it, with the byte offset in that fold's source
 * and the `peek` slice that reads around it. Text the shell marks hidden
 * (echoes of text found in its original) is never matched, though it stays
 * in the source and its offsets. A compacted entry or an
 * evidence artifact is one source of its own. Sources are read in
 * transcript order until `SEARCH_MAX_SCAN_BYTES`; a reader's failure (a
 * blob whose hash fails, an edited log) is listed with its code, never
 * skipped in silence. Hits are sorted by where they sit in the transcript.
 */

import type { LineMatch, Matcher } from "../../text/matcher.ts";
import { utf8ByteLength } from "../../text/utf8.ts";
import type { FoldKind } from "../lattice/records.ts";

/** Hits one page shows when no limit is given. */
export const SEARCH_PAGE_HITS = 10;
/** Most hits one page may show. */
export const SEARCH_MAX_HITS = 20;
/** Hits counted in all; past it the count says "at least". */
export const SEARCH_COUNT_MAX = 1000;
/** Source bytes one search reads; sources past it are named as not searched. */
export const SEARCH_MAX_SCAN_BYTES = 256 * 1024 * 1024;
/** Source bytes scanned together in one matcher run (one sandboxed regex run each). */
export const SEARCH_BATCH_BYTES = 8 * 1024 * 1024;
/** Time a regular expression may run over all sources together. */
export const SEARCH_REGEX_BUDGET_MS = 2_000;
/** Characters of context around a hit (the match itself included), cut at the stored text's line breaks. */
export const SEARCH_CONTEXT_CHARS = 160;
/**
 * A small source gets less context: at most one character per this many of its bytes (and never less than
 * SEARCH_CONTEXT_MIN_CHARS), so a hit in a short result stays small next to reading that result.
 */
export const SEARCH_CONTEXT_SHARE = 8;
/** Least context around a hit in a small source (the match itself is always shown, up to SEARCH_CONTEXT_CHARS). */
export const SEARCH_CONTEXT_MIN_CHARS = 40;
/** Characters of context kept before the match (at most half the room the match leaves). */
const CONTEXT_BEFORE_CHARS = 60;
/** The peek a hit spells out starts this many bytes before the match… */
export const SEARCH_PEEK_BEFORE = 300;
/** …and reads this many bytes after it; a source no larger than that slice is read whole instead. */
export const SEARCH_PEEK_AFTER = 700;

/** Verified bytes, or why they could not be read. */
export type SourceBytes = { ok: true; bytes: Uint8Array } | { ok: false; code: string; message: string };

/**
 * Text search leaves out of an entry: all of it (`true`), or each occurrence of these exact substrings of its
 * canonical JSON line. The shell names what echoes text found in its original (see search-action.ts).
 */
export type Hidden = true | readonly string[];

/** Who owns one line of a fold's source: an entry of its own, or a child fold (searched on its own). */
export type LineOwner = { entryId: string; order: number; what: string; hidden?: Hidden } | { child: string };

export type SearchSource =
	| {
			kind: "fold";
			id: string;
			foldKind: FoldKind;
			parentId?: string;
			/** One owner per line of the source, in order. */
			lines: readonly LineOwner[];
			read(): Promise<SourceBytes>;
	  }
	| { kind: "entry"; id: string; order: number; what: string; hidden?: readonly string[]; read(): Promise<SourceBytes> }
	| { kind: "evidence"; id: string; order: number; read(): Promise<SourceBytes> };

export interface SearchHit {
	source: SearchSource["kind"];
	/** Fold id, entry id, or `evidence:<sha256>`: what `peek` takes. */
	id: string;
	foldKind?: FoldKind;
	parentId?: string;
	/** The entry holding the hit (fold and entry sources). */
	entryId?: string;
	/** What that entry is ("repo_stage result", "assistant"). */
	what?: string;
	/** Transcript position used for ordering (entry index on the branch). */
	order: number;
	/** Byte offset of the match in the source, and its length in bytes. */
	offset: number;
	length: number;
	totalBytes: number;
	/** One line of the stored text around the match. */
	context: string;
	/** The slice `peek` reads around the match. */
	peek: { offset: number; bytes: number };
}

export interface SourceFailure {
	source: SearchSource["kind"];
	id: string;
	code: string;
	message: string;
}

export interface SearchResult {
	/** The page of hits, in transcript order. */
	hits: SearchHit[];
	/** Index of the first hit shown. */
	offset: number;
	/** Hits found (at most SEARCH_COUNT_MAX). */
	total: number;
	/** True when counting stopped at SEARCH_COUNT_MAX. */
	countCapped: boolean;
	searched: Record<SearchSource["kind"], { count: number; bytes: number }>;
	failures: SourceFailure[];
	/** Sources left unread because the scan bound was reached. */
	notScanned: number;
	/** The regular expression ran out of time: nothing is reported as found. */
	timedOut: boolean;
}

export interface SearchInput {
	matcher: Matcher;
	sources: readonly SearchSource[];
	offset: number;
	limit: number;
	/** Defaults to the module's bounds; tests pass smaller ones. */
	maxScanBytes?: number;
	regexBudgetMs?: number;
	now?: () => number;
}

const decoder = new TextDecoder();

/** Byte offset of each line's start: 0 and every byte after a "\n" (canonical JSON never holds a raw newline in a line). */
export function lineStarts(bytes: Uint8Array): number[] {
	const starts = [0];
	for (let at = bytes.indexOf(0x0a); at !== -1 && at + 1 < bytes.length; at = bytes.indexOf(0x0a, at + 1))
		starts.push(at + 1);
	return starts;
}

/** Characters of context a hit in a source of `totalBytes` shows: SEARCH_CONTEXT_CHARS, less for a small source. */
function contextChars(totalBytes: number): number {
	return Math.max(
		SEARCH_CONTEXT_MIN_CHARS,
		Math.min(SEARCH_CONTEXT_CHARS, Math.floor(totalBytes / SEARCH_CONTEXT_SHARE)),
	);
}

/**
 * The match with up to `chars` (at most SEARCH_CONTEXT_CHARS) around it, within one stored text line (JSON writes a
 * line break as "\n"). The match itself is shown up to SEARCH_CONTEXT_CHARS whatever `chars` is.
 */
export function contextLine(line: string, index: number, length: number, chars = SEARCH_CONTEXT_CHARS): string {
	const shown = Math.min(length, SEARCH_CONTEXT_CHARS);
	const room = Math.max(0, Math.min(chars, SEARCH_CONTEXT_CHARS) - shown);
	const breakBefore = index > 0 ? line.lastIndexOf("\\n", index - 1) : -1;
	const lineStart = breakBefore === -1 ? 0 : breakBefore + 2;
	const start = Math.max(lineStart, index - Math.min(CONTEXT_BEFORE_CHARS, Math.floor(room / 2)));
	const breakAfter = line.indexOf("\\n", index + length);
	const lineEnd = breakAfter === -1 ? line.length : breakAfter;
	const end = Math.min(lineEnd, index + length + room - (index - start));
	const head = `${start > lineStart ? "…" : ""}${line.slice(start, index)}`;
	if (shown < length) return `${head}${line.slice(index, index + shown)}…`;
	return `${head}${line.slice(index, end)}${end < lineEnd ? "…" : ""}`;
}

/**
 * The slice a hit's peek reads: SEARCH_PEEK_BEFORE bytes before the match to SEARCH_PEEK_AFTER after it, or the
 * whole source when it is no larger than that (the model then reads all of a small result in the one call).
 */
function peekSlice(offset: number, length: number, totalBytes: number): { offset: number; bytes: number } {
	if (totalBytes <= SEARCH_PEEK_BEFORE + length + SEARCH_PEEK_AFTER) return { offset: 0, bytes: totalBytes };
	const start = Math.max(0, offset - SEARCH_PEEK_BEFORE);
	return { offset: start, bytes: Math.min(totalBytes - start, offset - start + length + SEARCH_PEEK_AFTER) };
}

function toHit(
	source: SearchSource,
	lines: readonly string[],
	starts: readonly number[],
	totalBytes: number,
	[lineIndex, index, length]: LineMatch,
): SearchHit {
	const line = lines[lineIndex] ?? "";
	const offset = (starts[lineIndex] ?? 0) + utf8ByteLength(line.slice(0, index));
	const bytes = utf8ByteLength(line.slice(index, index + length));
	const peek = peekSlice(offset, bytes, totalBytes);
	const base = {
		source: source.kind,
		id: source.id,
		offset,
		length: bytes,
		totalBytes,
		context: contextLine(line, index, length, contextChars(totalBytes)),
		peek,
	};
	if (source.kind === "fold") {
		const owner = source.lines[lineIndex];
		const entry = owner && "entryId" in owner ? owner : undefined;
		return {
			...base,
			foldKind: source.foldKind,
			...(source.parentId ? { parentId: source.parentId } : {}),
			...(entry ? { entryId: entry.entryId, what: entry.what } : {}),
			order: entry?.order ?? 0,
		};
	}
	if (source.kind === "entry") return { ...base, entryId: source.id, what: source.what, order: source.order };
	return { ...base, order: source.order };
}

/**
 * A line with each occurrence of the hidden substrings overwritten by NUL characters of the same UTF-16 length, so
 * nothing there matches and every other match keeps its index in the stored line.
 */
function withHidden(line: string, hidden: Hidden | undefined): string {
	if (hidden === true) return "";
	let shown = line;
	for (const text of hidden ?? []) if (text.length > 0) shown = shown.replaceAll(text, "\0".repeat(text.length));
	return shown;
}

/** The lines a source searches: a fold's own lines only (a child's lines become empty strings), hidden text left out. */
function searchable(source: SearchSource, lines: string[]): string[] {
	if (source.kind === "evidence") return lines;
	if (source.kind === "entry") return source.hidden ? lines.map((line) => withHidden(line, source.hidden)) : lines;
	return lines.map((line, index) => {
		const owner = source.lines[index];
		return owner && "entryId" in owner ? withHidden(line, owner.hidden) : "";
	});
}

function sourceText(bytes: Uint8Array): string[] {
	const text = decoder.decode(bytes);
	// A source ends with "\n" after its last entry; an artifact or single entry may not.
	const lines = text.split("\n");
	if (lines.length > 1 && lines.at(-1) === "") lines.pop();
	return lines;
}

/** A read source waiting in the current scan batch. */
interface Pending {
	source: SearchSource;
	bytes: Uint8Array;
	lines: string[];
}

/**
 * Run one search. Sources are read one at a time, in the order given, and
 * scanned in batches of about `SEARCH_BATCH_BYTES`: one sandboxed regex run
 * per batch, since each run with a timeout has a fixed cost that hundreds of
 * small folds would otherwise pay one by one.
 */
export async function searchSources(input: SearchInput): Promise<SearchResult> {
	const maxScan = input.maxScanBytes ?? SEARCH_MAX_SCAN_BYTES;
	const now = input.now ?? (() => performance.now());
	const deadline = now() + (input.regexBudgetMs ?? SEARCH_REGEX_BUDGET_MS);
	const searched: SearchResult["searched"] = {
		fold: { count: 0, bytes: 0 },
		entry: { count: 0, bytes: 0 },
		evidence: { count: 0, bytes: 0 },
	};
	const failures: SourceFailure[] = [];
	const found: SearchHit[] = [];
	let total = 0;
	let scanned = 0;
	let notScanned = 0;
	let timedOut = false;
	let batch: Pending[] = [];
	let batchBytes = 0;
	const flush = (): void => {
		if (batch.length === 0) return;
		const lines = batch.flatMap((pending) => searchable(pending.source, pending.lines));
		const scan = input.matcher.scan(lines, SEARCH_COUNT_MAX, SEARCH_COUNT_MAX - total, deadline - now());
		if (scan.timedOut) timedOut = true;
		else {
			// A regular expression can match the characters that blank hidden text ("[^a]"); such a match is no hit.
			const stored = batch.flatMap((pending) => pending.lines);
			const shown = scan.matches.filter(
				([line, index, length]) =>
					lines[line]?.slice(index, index + length) === stored[line]?.slice(index, index + length),
			);
			total += scan.total - (scan.matches.length - shown.length);
			collectHits(batch, shown, found);
		}
		batch = [];
		batchBytes = 0;
	};
	for (const source of input.sources) {
		if (timedOut || scanned >= maxScan || total >= SEARCH_COUNT_MAX) {
			if (!timedOut && total < SEARCH_COUNT_MAX) notScanned++;
			continue;
		}
		const read = await source.read();
		if (!read.ok) {
			failures.push({ source: source.kind, id: source.id, code: read.code, message: read.message });
			continue;
		}
		scanned += read.bytes.length;
		searched[source.kind].count++;
		searched[source.kind].bytes += read.bytes.length;
		batch.push({ source, bytes: read.bytes, lines: sourceText(read.bytes) });
		batchBytes += read.bytes.length;
		if (batchBytes >= SEARCH_BATCH_BYTES) flush();
	}
	flush();
	const ordered = found.sort((a, b) => a.order - b.order || a.offset - b.offset);
	const offset = Math.min(input.offset, ordered.length);
	return {
		hits: timedOut ? [] : ordered.slice(offset, offset + input.limit),
		offset,
		total: timedOut ? 0 : total,
		countCapped: total >= SEARCH_COUNT_MAX,
		searched,
		failures,
		notScanned,
		timedOut,
	};
}

/** Turn a batch's matches (line numbers across the batch, in order) into hits of their own sources. */
function collectHits(batch: readonly Pending[], matches: readonly LineMatch[], found: SearchHit[]): void {
	let at = 0;
	let base = 0;
	let starts: number[] | undefined;
	for (const [line, index, length] of matches) {
		while (at < batch.length && line >= base + (batch[at]?.lines.length ?? 0)) {
			base += batch[at]?.lines.length ?? 0;
			at++;
			starts = undefined;
		}
		const pending = batch[at];
		if (!pending) break;
		starts ??= lineStarts(pending.bytes);
		found.push(toHit(pending.source, pending.lines, starts, pending.bytes.length, [line - base, index, length]));
	}
}

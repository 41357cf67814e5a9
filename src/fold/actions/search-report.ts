/**
 * What a search says: to the model (short, every hit with the exact `peek`
 * call that reads around it, the next page spelled out) and to the person
 * at `/context search` (readable sizes, the fold's place, the command that
 * shows it). Pure formatting over a `SearchResult`.
 */

import { readableBytes } from "../../text/bytes.ts";
import { KIND_LABELS } from "../briefs/brief.ts";
import { PEEK_MAX_BYTES } from "./peek.ts";
import type { SearchHit, SearchResult, SourceFailure } from "./search.ts";
import { SEARCH_COUNT_MAX, SEARCH_MAX_SCAN_BYTES } from "./search.ts";

/** Unreadable sources named one by one; the rest are counted. */
export const SEARCH_FAILURES_LISTED = 5;

export interface SearchAsked {
	query: string;
	regex: boolean;
	toolName: string;
}

const integer = new Intl.NumberFormat("en-US");
const plural = (count: number, one: string, many = `${one}s`) => `${integer.format(count)} ${count === 1 ? one : many}`;

/** The model's label: the query, and "(regex)" when it is one (a literal is the default it asked for). */
function modelQueryLabel(asked: SearchAsked): string {
	return `${JSON.stringify(asked.query)}${asked.regex ? " (regex)" : ""}`;
}

function queryLabel(asked: SearchAsked): string {
	return `${JSON.stringify(asked.query)} (${asked.regex ? "regular expression" : "literal"})`;
}

/**
 * "41 folds (3.5 MB), 2 evidence artifacts (240.0 KB)": what was read and verified, per kind. For the model
 * (`brief`), every character of a search result sits in the window and a lookup should cost less than
 * re-reading a small result: kinds with nothing in them are left out, and so are the sizes when there are
 * hits (they matter only to say how much was searched in vain).
 */
function searchedText(result: SearchResult, brief = false): string {
	const { fold, evidence, entry } = result.searched;
	const sized = !brief || result.total === 0;
	const part = (count: number, bytes: number, one: string, many?: string) =>
		`${plural(count, one, many)}${sized && count > 0 ? ` (${readableBytes(bytes)})` : ""}`;
	const parts = [
		{ count: fold.count, text: part(fold.count, fold.bytes, "fold") },
		{ count: evidence.count, text: part(evidence.count, evidence.bytes, "evidence artifact") },
		{ count: entry.count, text: part(entry.count, entry.bytes, "compacted entry", "compacted entries") },
	];
	const shown = brief ? parts.filter((kind, index) => index === 0 || kind.count > 0) : parts;
	return shown.map((kind) => kind.text).join(", ");
}

function countText(result: SearchResult, one = "hit", many = `${one}s`): string {
	if (result.total === 0) return `no ${many}`;
	return result.countCapped ? `at least ${integer.format(SEARCH_COUNT_MAX)} ${many}` : plural(result.total, one, many);
}

/** What holds a hit, for the model; the peek call after it names the fold, entry or artifact it reads. */
function whereForModel(hit: SearchHit): string {
	if (hit.source === "evidence") return "evidence artifact";
	if (hit.source === "entry") return `compacted ${hit.what ?? "entry"}`;
	if (hit.entryId) return `entry ${hit.entryId}${hit.what ? ` (${hit.what})` : ""}`;
	return hit.foldKind ? KIND_LABELS[hit.foldKind].toLowerCase() : "fold";
}

/** The exact peek that reads around a hit: without offset and bytes when its slice is the whole source. */
function peekArgs(hit: SearchHit): Record<string, unknown> {
	const whole = hit.peek.offset === 0 && hit.peek.bytes === hit.totalBytes && hit.totalBytes <= PEEK_MAX_BYTES;
	return whole
		? { action: "peek", id: hit.id }
		: { action: "peek", id: hit.id, offset: hit.peek.offset, bytes: hit.peek.bytes };
}

function failureLines(failures: readonly SourceFailure[]): string[] {
	if (failures.length === 0) return [];
	const listed = failures
		.slice(0, SEARCH_FAILURES_LISTED)
		.map((failure) => `- ${failure.source} ${failure.id}: ${failure.code}: ${failure.message}`);
	const rest = failures.length - listed.length;
	return [
		`Not searched, ${plural(failures.length, "source")} failed verification or could not be read:`,
		...listed,
		...(rest > 0 ? [`- and ${rest} more`] : []),
	];
}

function limitsLine(result: SearchResult): string[] {
	return result.notScanned > 0
		? [
				`Not scanned: ${plural(result.notScanned, "source")} past the ${readableBytes(SEARCH_MAX_SCAN_BYTES)} a search reads.`,
			]
		: [];
}

/**
 * The tool result: a header, then per hit a line naming what holds it, its byte offset in the source and the
 * peek call that reads around it, and an indented line of context; then paging and failures.
 */
export function searchResultText(result: SearchResult, asked: SearchAsked): string {
	const first = result.offset + 1;
	const last = result.offset + result.hits.length;
	const shown = result.hits.length > 0 && result.hits.length < result.total ? ` (${first}–${last} shown)` : "";
	const lines = [
		`Search ${modelQueryLabel(asked)}: ${countText(result)}${shown} in ${searchedText(result, true)}, sha256-verified; window unchanged.${result.total === 0 ? " Entries shown raw in the window are not searched." : ""}`,
	];
	result.hits.forEach((hit, index) => {
		const call = `${asked.toolName} ${JSON.stringify(peekArgs(hit))}`;
		lines.push(`${result.offset + index + 1}. ${whereForModel(hit)}, byte ${hit.offset}: ${call}`, `   ${hit.context}`);
	});
	if (last < Math.min(result.total, SEARCH_COUNT_MAX)) {
		const next = { action: "search", query: asked.query, ...(asked.regex ? { regex: true } : {}), offset: last };
		lines.push(`More hits: ${asked.toolName} ${JSON.stringify(next)}`);
	}
	lines.push(...limitsLine(result), ...failureLines(result.failures));
	return lines.join("\n");
}

/** The refusal when a regular expression ran out of time: nothing is reported as found. */
export function searchTimeoutText(asked: SearchAsked, budgetMs: number): string {
	return `The regular expression ${JSON.stringify(asked.query)} ran past its ${budgetMs / 1000} s budget and was stopped, so nothing is reported. Search a literal text instead, or a pattern without nested repetition such as (a+)+.`;
}

function whereForPerson(hit: SearchHit, command: string, toolName: string, page: number | undefined): string[] {
	const see = `See it: /${command} peek ${hit.id}${page === undefined ? "" : ` ${page}`}`;
	const at = `at ${readableBytes(hit.offset)} of ${readableBytes(hit.totalBytes)}`;
	const what = hit.what
		? `, in ${hit.what.startsWith("assistant") || hit.what === "user" ? `a ${hit.what} message` : `a ${hit.what}`}`
		: "";
	if (hit.source === "fold") {
		const kind = hit.foldKind ? KIND_LABELS[hit.foldKind].toLowerCase() : "fold";
		return [`Fold ${hit.id} (${kind}${hit.parentId ? `, inside ${hit.parentId}` : ""})${what}, ${at}:`, see];
	}
	if (hit.source === "entry") return [`Compacted session entry ${hit.id}${what}, ${at}:`, see];
	const call = JSON.stringify({ action: "peek", id: hit.id });
	return [`Evidence artifact ${hit.id.slice(0, 21)}…, ${at}:`, `The model reads it with ${toolName} ${call}`];
}

/** `/context search <text>` for the person. */
export function searchReport(
	result: SearchResult,
	asked: SearchAsked & {
		command: string;
		/** The `/context peek` page that shows a hit, when the caller paged its source. */
		pageOf?: (hit: SearchHit) => number | undefined;
	},
): string {
	const count = countText(result, "match", "matches");
	const lines = [
		`Search for ${queryLabel(asked)} in what the window no longer shows: ${count}.`,
		`Searched ${searchedText(result)}; every source's sha256 was checked. Entries shown raw in the window are not searched.`,
	];
	result.hits.forEach((hit, index) => {
		const [head, see] = whereForPerson(hit, asked.command, asked.toolName, asked.pageOf?.(hit));
		lines.push(`  ${index + 1}. ${head}`, `       ${hit.context}`, `     ${see}`);
	});
	const rest = Math.min(result.total, SEARCH_COUNT_MAX) - result.hits.length;
	if (rest > 0) lines.push(`  … and ${plural(rest, "more match", "more matches")}; narrow the text to see them here.`);
	lines.push(...limitsLine(result), ...failureLines(result.failures));
	return lines.join("\n");
}

/**
 * Part lists: how the fold store keeps a source that is made of other
 * sources without storing their bytes again.
 *
 * A consolidation's source is the canonical bytes of every entry it covers,
 * and most of those bytes are already stored as its children's sources.
 * Stored whole, each new top-level consolidation repeated the whole history
 * (a 3,000-entry session kept 428 MB of sources beside a 21 MB log). So a
 * source with cut points is stored as a part list: `<hash>.parts` beside the
 * blobs, naming in order the SHA-256 and size of each part (a child fold's
 * source, or the run of entries between children), each part a blob of its
 * own or a part list itself. The bytes are the same as the whole blob's, so
 * the source hash, the fold id, peek offsets and the log check do not change.
 *
 * This module owns the list's text form and its checks; store.ts composes
 * and verifies. The text is line-based and deterministic:
 *
 *     pi-fold-source-parts 1
 *     sha256 <hash of the whole source>
 *     bytes <size of the whole source>
 *     part <sha256> <bytes>          (one line per part, in order)
 *     check <sha256 of every line above, newlines included>
 *
 * The check line catches a damaged list before anything trusts it: gc would
 * otherwise keep the wrong parts and remove the right ones. The whole source
 * is still verified against its hash on every read.
 */

import { isSha256Hex, sha256Hex } from "../../session/canonical.ts";

/** First line of every part list (format name and version). */
export const PARTS_HEADER = "pi-fold-source-parts 1";
/** Suffix of a part list's name beside the blobs: `sha256/<ab>/<hash>.parts`. */
export const PARTS_SUFFIX = ".parts";

export interface SourcePart {
	hash: string;
	bytes: number;
}

export interface PartList {
	/** SHA-256 of the whole source the parts compose. */
	hash: string;
	/** Size of the whole source. */
	bytes: number;
	parts: SourcePart[];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** The stored form of a part list. */
export function encodePartList(list: PartList): Uint8Array {
	const body = [
		PARTS_HEADER,
		`sha256 ${list.hash}`,
		`bytes ${list.bytes}`,
		...list.parts.map((part) => `part ${part.hash} ${part.bytes}`),
	]
		.map((line) => `${line}\n`)
		.join("");
	return encoder.encode(`${body}check ${sha256Hex(body)}\n`);
}

const SIZE = /^(0|[1-9][0-9]{0,15})$/;

function size(text: string | undefined): number | undefined {
	if (text === undefined || !SIZE.test(text)) return undefined;
	const value = Number(text);
	return Number.isSafeInteger(value) ? value : undefined;
}

/**
 * Parse a stored part list for the source `hash`; a string says what is
 * wrong with it. Every part is at least one byte, so composing a list can
 * never do more work than the size it claims.
 */
export function parsePartList(raw: Uint8Array, hash: string): PartList | string {
	let text: string;
	try {
		text = decoder.decode(raw);
	} catch {
		return "it is not UTF-8 text";
	}
	const lines = text.split("\n");
	if (lines.pop() !== "") return "its last line is cut off";
	const checkLine = lines.pop() ?? "";
	const body = lines.map((line) => `${line}\n`).join("");
	if (checkLine !== `check ${sha256Hex(body)}`) return "its check line does not match its contents";
	const [header, hashLine, bytesLine, ...partLines] = lines;
	if (header !== PARTS_HEADER) return `its first line is not "${PARTS_HEADER}"`;
	if (hashLine !== `sha256 ${hash}`) return `it names another source (${hashLine ?? "nothing"})`;
	const total = size(bytesLine?.startsWith("bytes ") ? bytesLine.slice(6) : undefined);
	if (total === undefined) return "its size line is malformed";
	const parts: SourcePart[] = [];
	let sum = 0;
	for (const line of partLines) {
		const [word, partHash = "", partSize, ...rest] = line.split(" ");
		const bytes = size(partSize);
		if (word !== "part" || rest.length > 0 || !isSha256Hex(partHash) || bytes === undefined || bytes === 0)
			return `part line ${parts.length + 1} is malformed`;
		parts.push({ hash: partHash, bytes });
		sum += bytes;
	}
	if (parts.length < 2) return "it has fewer than two parts";
	if (sum !== total) return `its parts add up to ${sum} bytes, not the ${total} it states`;
	return { hash, bytes: total, parts };
}

/**
 * Byte ranges `[start, end)` of a source cut at `cuts` (offsets strictly
 * inside it, ascending; others are ignored), or the whole source as one range.
 */
export function cutRanges(length: number, cuts: readonly number[] | undefined): [number, number][] {
	const inside = [...new Set(cuts ?? [])].filter((cut) => Number.isSafeInteger(cut) && cut > 0 && cut < length);
	inside.sort((a, b) => a - b);
	const ranges: [number, number][] = [];
	let start = 0;
	for (const cut of inside) {
		ranges.push([start, cut]);
		start = cut;
	}
	ranges.push([start, length]);
	return ranges;
}

/**
 * Briefs that outlived their record. The window shows a fold's brief through
 * `context_edit` entries; the fold's record is a separate state line. When
 * that line is skipped on load (damaged, forged, cut by a crash in another
 * writer) the edits remain, and the brief would go on advertising an id that
 * `peek` and `expand` answer with unknown-fold. This module finds, from the
 * edits alone, which entries show such a brief (its header, or a batch
 * pointer naming the fold) and which entries the same chapter omitted, so the
 * engine restores them to their raw content at the next request: a brief
 * never outlives its record.
 *
 * Only entries whose edit names a fold the state does not hold are claimed;
 * every other edit (another extension's, Pi's omission of a failed reply)
 * stays where it is.
 *
 * Before the branch is built (a resumed session's first request), the same
 * reading says whether every brief the persisted window shows can go out as
 * it is: `persistedBriefsHold`.
 */

import type { ContextEditEntry, SessionEntry } from "@earendil-works/pi-coding-agent";
import { type FoldLattice, isRefusal, leafEntryIds } from "../lattice/records.ts";
import { isEditableEntry } from "../lattice/units.ts";
import { batchPointerText, briefText } from "./materialize.ts";

function escapeRegExp(text: string): string {
	return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The brand noun's default before issue 19.5: sessions folded then carry briefs headed with it. */
const EARLIER_DEFAULT_BRAND_NOUN = "active-context";

/** The patterns of a brief's header and a batch pointer under one brand noun (or the earlier default). */
function briefPatterns(brandNoun: string): { brief: RegExp; pointer: RegExp } {
	const brand = `(?:${escapeRegExp(brandNoun)}|${EARLIER_DEFAULT_BRAND_NOUN})`;
	return {
		brief: new RegExp(`^\\[${brand} fold (f-[0-9a-f]+) · [a-z-]+ · (\\d+) entries · `),
		pointer: new RegExp(`^\\[${brand} fold (f-[0-9a-f]+): result folded;`),
	};
}

/** The fold a window text names as its own brief or batch pointer, with the entry count a brief states. */
function foldNamedBy(
	text: string,
	patterns: ReturnType<typeof briefPatterns>,
): { id: string; entryCount: number } | undefined {
	const brief = patterns.brief.exec(text);
	if (brief?.[1]) return { id: brief[1], entryCount: Number(brief[2]) };
	const pointer = patterns.pointer.exec(text);
	return pointer?.[1] ? { id: pointer[1], entryCount: 1 } : undefined;
}

function replacementText(edit: ContextEditEntry): string | undefined {
	const content = edit.replacement?.content;
	if (typeof content === "string") return content;
	const first = Array.isArray(content) ? content[0] : undefined;
	return first && first.type === "text" ? first.text : undefined;
}

/**
 * Entry ids whose current edit belongs to a fold `known` does not hold: the
 * entry carrying the brief or pointer, and the entries omitted after a brief
 * within the entry count it states.
 */
export function strayBriefEntries(
	entries: readonly SessionEntry[],
	edits: ReadonlyMap<string, ContextEditEntry>,
	brandNoun: string,
	known: (foldId: string) => boolean,
): string[] {
	const stray: string[] = [];
	// Compiled once per call: a resume checks every edited entry of the branch.
	const patterns = briefPatterns(brandNoun);
	entries.forEach((entry, index) => {
		const edit = edits.get(entry.id);
		const text = edit ? replacementText(edit) : undefined;
		const named = text === undefined ? undefined : foldNamedBy(text, patterns);
		if (!named || known(named.id)) return;
		stray.push(entry.id);
		// A chapter omits every other editable entry of its span; the span holds the brief's carrier.
		for (let at = index + 1; at < Math.min(entries.length, index + named.entryCount); at++) {
			const next = entries[at];
			if (!next || !isEditableEntry(next)) continue;
			if (edits.get(next.id)?.replacement !== null) break;
			stray.push(next.id);
		}
	});
	return stray;
}

/**
 * Whether every brief and batch pointer the branch's latest edits show is one
 * the live lattice answers: its record decoded and is live, the text is the
 * one the engine would draft for it (a hand-written or stale brief is not),
 * and every entry the fold covers is on the branch. One pass over the
 * branch's entries, no view and no projection: a resumed session's first
 * request may go out as Pi built it only when this holds (engine.ts).
 */
export function persistedBriefsHold(branch: readonly SessionEntry[], lattice: FoldLattice, brandNoun: string): boolean {
	const latest = new Map<string, ContextEditEntry>();
	const onBranch = new Set<string>();
	for (const entry of branch) {
		onBranch.add(entry.id);
		if (entry.type === "context_edit") latest.set(entry.targetId, entry);
	}
	const patterns = briefPatterns(brandNoun);
	for (const edit of latest.values()) {
		const text = replacementText(edit);
		const named = text === undefined ? undefined : foldNamedBy(text, patterns);
		if (!named) continue;
		const record = lattice.folds.get(named.id);
		if (!record) return false;
		const drafted = [briefText(record, record.brief, brandNoun), batchPointerText(record, brandNoun)];
		if (!drafted.includes(text ?? "")) return false;
		const leaves = leafEntryIds(lattice, record.id);
		if (isRefusal(leaves) || leaves.some((id) => !onBranch.has(id))) return false;
	}
	return true;
}

/**
 * `peek`: the exact source of a fold at any depth, of a pending mark, or of
 * one session entry or operation address, optionally a byte slice, through
 * the verified read. Changes nothing; the window stays as it is.
 */

import { recallReport } from "../../compaction/records/recall-report.ts";
import { briefFacts, labelRanges, truncateText } from "../briefs/brief.ts";
import { type ActionOutcome, type FoldWorkspace, failed } from "../engine/workspace.ts";
import { childFoldIds, type FoldRecord, isRefusal, withRecord } from "../lattice/records.ts";
import { findRecord, leafEntries, readSource } from "./source-read.ts";

/** Most bytes one peek may return. */
export const PEEK_MAX_BYTES = 48_000;

/**
 * Exact source of one fold at any depth, or of one session entry (compaction
 * summaries address entries, and a single entry inside a fold is a narrow
 * read), optionally a byte slice. Changes nothing.
 */
export async function peekFold(ws: FoldWorkspace, id: string, offset?: number, bytes?: number): Promise<ActionOutcome> {
	const mark = ws.lattice.folds.has(id) ? undefined : ws.state.data.marks.find((m) => m.record.id === id);
	if (mark) return peekMark(ws, mark.record, offset, bytes);
	if (!ws.lattice.folds.has(id)) return peekEntry(ws, id, offset, bytes);
	const record = findRecord(ws, id);
	if ("ok" in record) return record;
	const slice = await readSource(ws, record, offset ?? 0, bytes ?? PEEK_MAX_BYTES);
	if ("ok" in slice) return slice;
	const children = childFoldIds(record);
	const next = nextPage(ws, id, slice.nextOffset);
	const header = [
		`Fold ${record.id} (${record.kind}), source sha256 ${record.sourceHash} verified.`,
		`Bytes ${slice.offset}–${slice.end} of ${slice.totalBytes}, one canonical JSON session entry per line. ${next}`,
		...(children.length > 0 ? [`Child folds, each peekable: ${childList(ws, children)}.`] : []),
		"The window is unchanged; expand restores this span in place.",
	];
	return { ok: true, foldId: record.id, text: `${header.join("\n")}\n\n${slice.text}` };
}

/** Peek of a pending mark (epoch scheduling): its verified source, and that nothing is folded yet. */
async function peekMark(
	ws: FoldWorkspace,
	record: FoldRecord,
	offset = 0,
	bytes = PEEK_MAX_BYTES,
): Promise<ActionOutcome> {
	// A mark is a record not yet committed; read it through the same verified read as a fold.
	const slice = await readSource({ ...ws, lattice: withRecord(ws.lattice, record) }, record, offset, bytes);
	if ("ok" in slice) return slice;
	const next = nextPage(ws, record.id, slice.nextOffset);
	const header = [
		`${record.id} is a pending mark (${record.kind}, ${record.sizes.entryCount} entries): it folds at the next commit; until then its entries show raw in the window. Source sha256 ${record.sourceHash} verified.`,
		`Bytes ${slice.offset}–${slice.end} of ${slice.totalBytes}, one canonical JSON session entry per line. ${next}`,
		`Withdraw it with ${ws.options.toolName} ${JSON.stringify({ action: "unmark", id: record.id })}.`,
	];
	return { ok: true, foldId: record.id, text: `${header.join("\n")}\n\n${slice.text}` };
}

/** Most child folds a peek header names; a consolidation of more lists the rest by count. */
const PEEK_CHILDREN_LISTED = 64;
/** Bound on one child's label summary in a peek header. */
const PEEK_CHILD_LABEL_CHARS = 60;

/** Child fold ids with the step labels each covers, so a narrow peek can go straight to the right one. */
function childList(ws: FoldWorkspace, children: readonly string[]): string {
	const listed = children.slice(0, PEEK_CHILDREN_LISTED).map((id) => {
		const entries = leafEntries(ws, id);
		const labels = isRefusal(entries) ? [] : labelRanges(briefFacts(entries).labels);
		return labels.length > 0 ? `${id} (${truncateText(labels.join(", "), PEEK_CHILD_LABEL_CHARS)})` : id;
	});
	const rest = children.length - listed.length;
	return rest > 0 ? `${listed.join(", ")} and ${rest} more` : listed.join(", ");
}

/** Peek of an entry or operation address; the checks and wording live in src/compaction/records/recall-report.ts. */
function peekEntry(ws: FoldWorkspace, id: string, offset = 0, bytes = PEEK_MAX_BYTES): ActionOutcome {
	const report = recallReport({
		address: id,
		branch: ws.branch,
		entryById: (entryId) => ws.sessionEntry?.(entryId),
		toolName: ws.options.toolName,
		offset,
		bytes,
	});
	return report.ok ? { ok: true, text: report.text } : failed(report.code, report.text);
}

/** A peek call, as the model writes it. */
export function peekCall(ws: FoldWorkspace, id: string, slice?: { offset: number; bytes?: number }): string {
	return `${ws.options.toolName} ${JSON.stringify({ action: "peek", id, ...slice })}`;
}

/** The line after a page of source: where it ends, or the call that reads on. */
function nextPage(ws: FoldWorkspace, id: string, nextOffset: number | undefined): string {
	return nextOffset === undefined
		? "This is the end of the source."
		: `More follows: ${peekCall(ws, id, { offset: nextOffset })}`;
}

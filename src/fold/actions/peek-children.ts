/**
 * `peek` with `children: true`: the folds inside a fold, nested ones
 * included and indented, in transcript order, each with its id, kind, size
 * and its brief's first line (what tells it from its neighbours: a tool
 * batch's call and result, a chapter's counts and label ranges). Paged by
 * `offset`/`limit` and bounded by `CHILDREN_MAX_CHARS`, with the next page's
 * call spelled out, so a fact inside a consolidation is a listing and one
 * peek away. Reads records only: no source is read and nothing changes.
 */

import { truncateText } from "../../text/bounded.ts";
import { readableBytes } from "../../text/bytes.ts";
import { briefWhat, KIND_LABELS } from "../briefs/brief.ts";
import type { ActionOutcome, FoldWorkspace } from "../engine/workspace.ts";
import { foldTree } from "../lattice/lattice-view.ts";
import { unknownFold } from "../lattice/records.ts";

/** Rows a page shows when no limit is given. */
export const CHILDREN_PAGE_ROWS = 50;
/** Most characters of one listing, whatever the page size. */
export const CHILDREN_MAX_CHARS = 6_000;
/** Characters of a row's first line. */
export const CHILDREN_ROW_CHARS = 160;

/** List the folds inside `id`, one page. */
export function listChildren(ws: FoldWorkspace, id: string, offset = 0, limit = CHILDREN_PAGE_ROWS): ActionOutcome {
	const record = ws.lattice.folds.get(id);
	if (!record) return { ok: false, code: "unknown-fold", text: unknownFold(id).message };
	const rows = foldTree(ws.lattice, ws.view);
	const inside = new Set([id]);
	const self = rows.find((row) => row.id === id);
	if (!self) return { ok: false, code: "unknown-fold", text: unknownFold(id).message };
	const descendants = rows.filter((row) => {
		if (row.parentId === null || !inside.has(row.parentId)) return false;
		inside.add(row.id);
		return true;
	});
	const kind = KIND_LABELS[record.kind].toLowerCase();
	if (descendants.length === 0)
		return {
			ok: true,
			foldId: id,
			text: `Fold ${id} (${kind}) holds no folds: its source is entries only. Read it: ${ws.options.toolName} ${JSON.stringify({ action: "peek", id })}`,
		};
	const direct = descendants.filter((row) => row.parentId === id).length;
	const start = Math.min(offset, descendants.length);
	const lines: string[] = [];
	let used = 0;
	let end = start;
	for (const row of descendants.slice(start, start + limit)) {
		const brief = ws.lattice.folds.get(row.id)?.brief ?? "";
		const indent = "  ".repeat(row.depth - self.depth - 1);
		const text = `${indent}${row.id} ${KIND_LABELS[row.kind].toLowerCase()}, ${readableBytes(row.sourceBytes)}: ${truncateText(briefWhat(brief, row.id), CHILDREN_ROW_CHARS)}`;
		if (lines.length > 0 && used + text.length + 1 > CHILDREN_MAX_CHARS) break;
		lines.push(text);
		used += text.length + 1;
		end++;
	}
	const more =
		end < descendants.length
			? `More: ${ws.options.toolName} ${JSON.stringify({ action: "peek", id, children: true, offset: end })}`
			: "This is the last of them.";
	const header = [
		`Folds inside ${kind} ${id}: ${direct} directly, ${descendants.length} in all, in transcript order (nested ones indented); rows ${start + 1}–${end} of ${descendants.length}.`,
		`Each id is peekable on its own: ${ws.options.toolName} {"action":"peek","id":"<id>"}. The window is unchanged.`,
	];
	return { ok: true, foldId: id, text: [...header, ...lines, more].join("\n") };
}

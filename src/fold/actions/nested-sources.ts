/**
 * The sources of nested folds, read through their root's. A fold's source is
 * the canonical line of each of its leaf entries, in order, so a fold inside
 * another holds a run of its ancestor's lines. Search reads every placed
 * fold; reading each from the store composed its children's parts again at
 * every depth, so a long session's history was read, hashed and checked
 * against the log once per level (five seconds a search on a 20,000-entry
 * session; `npm run bench -- search-cost`).
 *
 * Here a root is read once with the full check (`readSource`: blob, record
 * and log agree), and each fold inside it is served the run of lines its
 * leaves occupy, checked against its own SHA-256 and size before it is
 * served. A run that does not hash to the fold's source, or a root that
 * cannot be read, falls back to the fold's own verified read: a damaged
 * root never hides a healthy child, and a wrong run is never served.
 */

import { sha256Hex } from "../../session/canonical.ts";
import type { FoldWorkspace } from "../engine/workspace.ts";
import type { FoldPlacement } from "../lattice/lattice-index.ts";
import type { FoldRecord } from "../lattice/records.ts";
import { lineStarts, type SourceBytes } from "./search.ts";
import { readSource } from "./source-read.ts";

/** Where a fold's lines sit in its root's source. */
interface Place {
	root: FoldRecord;
	/** Index of its first line in the root's source. */
	line: number;
}

/** The root read last: every fold inside it follows it in transcript order, so one is kept at a time. */
interface ReadRoot {
	id: string;
	read: SourceBytes;
	starts?: number[];
}

export class NestedSources {
	private readonly lineCounts = new Map<string, number>();
	private readonly places = new Map<string, Place>();
	private last: ReadRoot | undefined;
	private readonly ws: FoldWorkspace;

	constructor(ws: FoldWorkspace, placements: readonly FoldPlacement[]) {
		this.ws = ws;
		for (const placement of placements) {
			if (placement.parentId === undefined) this.place(placement.record, placement.record, 0, 0);
		}
	}

	/** Lines in a placed fold's source: one per leaf entry (0 for a fold under no placed root). */
	lines(id: string): number {
		return this.lineCounts.get(id) ?? 0;
	}

	/** A fold's verified source bytes: a root's own read, a nested fold's run of its root's lines when that run hashes to it. */
	async read(record: FoldRecord): Promise<SourceBytes> {
		const place = this.places.get(record.id);
		if (!place || place.root.id === record.id) return (await this.rootRead(record)).read;
		const root = await this.rootRead(place.root);
		if (root.read.ok) {
			const bytes = root.read.bytes;
			root.starts ??= lineStarts(bytes);
			const start = root.starts[place.line];
			const end = root.starts[place.line + this.lines(record.id)] ?? bytes.length;
			if (start !== undefined) {
				const run = bytes.subarray(start, end);
				if (run.length === record.sizes.sourceBytes && sha256Hex(run) === record.sourceHash)
					return { ok: true, bytes: run };
			}
		}
		return ownRead(this.ws, record);
	}

	private async rootRead(root: FoldRecord): Promise<ReadRoot> {
		if (this.last?.id !== root.id) this.last = { id: root.id, read: await ownRead(this.ws, root) };
		return this.last;
	}

	/** Record where `record` and every fold under it start in `root`'s lines, and their line counts; returns the line after `record`'s last. */
	private place(root: FoldRecord, record: FoldRecord, line: number, depth: number): number {
		this.places.set(record.id, { root, line });
		let at = line;
		for (const part of record.parts) {
			const child = part.type === "fold" ? this.ws.lattice.folds.get(part.foldId) : undefined;
			// A placed lattice has no cycle; the bound only keeps a forged one from recursing forever.
			if (part.type === "entry") at++;
			else if (child && depth < this.ws.lattice.folds.size) at = this.place(root, child, at, depth + 1);
		}
		this.lineCounts.set(record.id, at - line);
		return at;
	}
}

/** A fold's own verified read (store, record and log), as search takes it. */
async function ownRead(ws: FoldWorkspace, record: FoldRecord): Promise<SourceBytes> {
	const slice = await readSource(ws, record);
	return "ok" in slice
		? { ok: false, code: slice.code ?? "unreadable", message: slice.text }
		: { ok: true, bytes: slice.bytes };
}

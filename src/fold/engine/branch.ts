/**
 * The active branch as the engine sees it, kept current as entries are
 * appended: the structural view the fold rules read (entries, index by id,
 * tool call spans, units), the latest `context_edit` per target, and the
 * order edits arrived in. Appending costs what was appended plus the units
 * it reopens (normally the last one); only `reset` (start, resume, tree
 * navigation, a branch that did not grow) walks the whole branch.
 *
 * The view is one object, updated in place while the branch only grows:
 * entries before the old end keep their index, so anything placed on the
 * branch (folds, indexes keyed by the view) stays valid. `reset` replaces it.
 */

import type { ContextEditEntry, SessionEntry } from "@earendil-works/pi-coding-agent";
import { noteToolSpans, type ToolCallSpan } from "../../session/closure.ts";
import {
	analyzeBranch,
	type BranchView,
	cutUnits,
	isResponse,
	type StructuralUnit,
	spansByFirstIndex,
} from "../lattice/units.ts";

/** A view the tracker may grow: the same shape as `BranchView`, writable. */
interface GrowingView extends BranchView {
	entries: SessionEntry[];
	indexById: Map<string, number>;
	units: StructuralUnit[];
	unitOf: number[];
	responsesBefore: number[];
	batchUnits: number[];
}

export class BranchTracker {
	private growing: GrowingView;
	private spansByFirst = new Map<number, ToolCallSpan[]>();
	private edits = new Map<string, ContextEditEntry>();
	/** Target of every `context_edit` on the branch, in branch order. */
	private editTargets: string[] = [];
	/** Bumped whenever the branch is replaced or a compaction lands: what Pi projects moved wholesale. */
	private structure = 0;
	/** Some id names two entries of the branch (a hand-edited log): lookups by id see the first. */
	private duplicateIds = false;

	private readOnlyTools: ReadonlySet<string>;

	constructor(readOnlyTools: ReadonlySet<string>) {
		this.readOnlyTools = readOnlyTools;
		this.growing = this.analyze([]);
	}

	/** The current view (the same object until the next `reset` or `renew`). */
	get view(): BranchView {
		return this.growing;
	}

	get entries(): readonly SessionEntry[] {
		return this.growing.entries;
	}

	/** Latest `context_edit` per target on the whole branch (later edits win, as in Pi's projection). */
	get latestEdits(): ReadonlyMap<string, ContextEditEntry> {
		return this.edits;
	}

	/** How many `context_edit` entries the branch holds; `editTargetsSince(n)` names those after the first n. */
	get editCount(): number {
		return this.editTargets.length;
	}

	editTargetsSince(count: number): readonly string[] {
		return this.editTargets.slice(count);
	}

	/** True when two entries of the branch share an id. */
	get hasDuplicateIds(): boolean {
		return this.duplicateIds;
	}

	/** Changes when the branch is replaced or compacted. */
	get structureVersion(): number {
		return this.structure;
	}

	/** Replace the branch (start, resume, navigation, or a branch that did not just grow). */
	reset(entries: readonly SessionEntry[], readOnlyTools: ReadonlySet<string> = this.readOnlyTools): void {
		this.readOnlyTools = readOnlyTools;
		this.growing = this.analyze(entries);
		this.edits = new Map();
		this.editTargets = [];
		for (const entry of entries) this.noteEdit(entry);
		this.structure++;
	}

	/** A new view object over the same branch, so caches keyed by the old one are not reused. */
	renew(): void {
		this.growing = { ...this.growing };
	}

	/** Entries appended at the end of the branch, in order. */
	append(fresh: readonly SessionEntry[]): void {
		if (fresh.length === 0) return;
		const view = this.growing;
		const oldEnd = view.entries.length;
		// The first index whose unit may change: where a span that reaches the new entries began.
		let reopen = oldEnd;
		const touched = (span: ToolCallSpan, opened: boolean): void => {
			if (opened) {
				const list = this.spansByFirst.get(span.first);
				if (list) list.push(span);
				else this.spansByFirst.set(span.first, [span]);
			} else if (span.first < oldEnd) reopen = Math.min(reopen, span.first);
		};
		for (const entry of fresh) {
			const index = view.entries.length;
			view.entries.push(entry);
			view.responsesBefore.push((view.responsesBefore[index] ?? 0) + (isResponse(entry) ? 1 : 0));
			if (!view.indexById.has(entry.id)) view.indexById.set(entry.id, index);
			else this.duplicateIds = true;
			noteToolSpans(entry, index, view.tools, touched);
			this.noteEdit(entry);
			if (entry.type === "compaction") this.structure++;
		}
		const unit = reopen < oldEnd ? view.unitOf[reopen] : undefined;
		const from = unit === undefined ? oldEnd : (view.units[unit]?.start ?? oldEnd);
		if (unit !== undefined) {
			view.units.length = unit;
			view.unitOf.length = from;
			while ((view.batchUnits.at(-1) ?? -1) >= unit) view.batchUnits.pop();
		}
		for (const cut of cutUnits(view.entries, from, this.spansByFirst, this.readOnlyTools, view.units.length)) {
			view.units.push(cut);
			if (cut.kind === "tool-batch") view.batchUnits.push(cut.index);
			for (let i = cut.start; i < cut.end; i++) view.unitOf.push(cut.index);
		}
	}

	private noteEdit(entry: SessionEntry): void {
		if (entry.type !== "context_edit") return;
		this.edits.set(entry.targetId, entry);
		this.editTargets.push(entry.targetId);
	}

	private analyze(entries: readonly SessionEntry[]): GrowingView {
		const view = analyzeBranch([...entries], { readOnlyTools: this.readOnlyTools });
		this.spansByFirst = spansByFirstIndex(view.tools.spans);
		this.duplicateIds = view.indexById.size < view.entries.length;
		return view as GrowingView;
	}
}

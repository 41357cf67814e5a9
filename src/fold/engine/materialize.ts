/**
 * From fold state to the model window: which entries show a brief, which are
 * omitted, which show their original bytes, and the `context_edit` drafts
 * that make Pi's own projection say so.
 *
 * A collapsed chapter or consolidation puts its brief on its first editable
 * entry (same role) and omits the rest. A collapsed tool batch keeps its
 * call/result shells: the assistant entry stays, the first result's content
 * becomes the brief and every other result a one-line pointer to it. Showing
 * an entry raw after an edit means a replacement with its exact original
 * content, since on a branch the latest edit per target wins.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type {
	ContextEditableContent,
	ContextEditEntry,
	ContextEditEntryDraft,
	SessionEntry,
	SessionProjection,
} from "@earendil-works/pi-coding-agent";
import { buildSessionProjection } from "@earendil-works/pi-coding-agent";
import { canonicalJson } from "../../session/canonical.ts";
import { DROPPED_STOP_REASONS } from "../../session/closure.ts";
import { latestEdits } from "../../session/projection.ts";
import { indexLattice } from "../lattice/lattice-index.ts";
import { childFoldIds, type FoldLattice, type FoldRecord, leafEntryIds, parentMap } from "../lattice/records.ts";
import { analyzeBranch, type BranchView, isEditableEntry } from "../lattice/units.ts";

export type DesiredContent = { kind: "omit" } | { kind: "replace"; content: ContextEditableContent };

export interface WindowPlan {
	/** Entries whose window content differs from their raw content. Absent = raw. */
	desired: ReadonlyMap<string, DesiredContent>;
	/** Collapsed folds whose brief is in the window, in transcript order of their first leaf. */
	visible: string[];
}

export interface PlanInput {
	lattice: FoldLattice;
	expanded: ReadonlySet<string>;
	/** The brief to show; default: the record's own (a live lattice already carries rebriefs). */
	briefOf?: (record: FoldRecord) => string;
	brandNoun: string;
	/**
	 * Entries Pi still projects. A compaction may keep only the tail of a
	 * collapsed fold; the brief then moves to the first entry still shown, so
	 * the kept part never vanishes without its brief. Default: all.
	 */
	inWindow?: (entryId: string) => boolean;
	/**
	 * The branch's view. Only folds the lattice index places on it show a
	 * brief (the same placement and shape checks every action and `verify`
	 * apply), so a forged or damaged record never reaches the window. Default:
	 * analyzed from the branch `planWindow` gets.
	 */
	view?: BranchView;
}

/** Folds whose brief shows: collapsed folds with every ancestor expanded (among those `placed`, default all). */
export function visibleCollapsedFolds(
	lattice: FoldLattice,
	expanded: ReadonlySet<string>,
	placed: (id: string) => boolean = () => true,
): string[] {
	const parents = parentMap(lattice);
	const visible: string[] = [];
	const visit = (id: string): void => {
		const record = lattice.folds.get(id);
		if (!record || !placed(id)) return;
		if (!expanded.has(id)) {
			visible.push(id);
			return;
		}
		for (const child of childFoldIds(record)) visit(child);
	};
	for (const id of lattice.folds.keys()) if (!parents.has(id)) visit(id);
	return visible;
}

/** The text a collapsed fold shows in place of its span. */
export function briefText(record: FoldRecord, brief: string, brandNoun: string): string {
	const { entryCount, sourceBytes } = record.sizes;
	return `[${brandNoun} fold ${record.id} · ${record.kind} · ${entryCount} entries · ${sourceBytes} bytes folded]\n${brief}`;
}

/** Pointer shown by every result of a folded tool batch except the first, which carries the brief. */
export function batchPointerText(record: FoldRecord, brandNoun: string): string {
	return `[${brandNoun} fold ${record.id}: result folded; the brief is on this batch's first result]`;
}

function isToolResult(entry: SessionEntry): boolean {
	return entry.type === "message" && entry.message.role === "toolResult";
}

/** An assistant message Pi never sends (aborted or failed) cannot carry a brief: it would vanish with it. */
function isDroppedByHost(entry: SessionEntry): boolean {
	return (
		entry.type === "message" && entry.message.role === "assistant" && DROPPED_STOP_REASONS.has(entry.message.stopReason)
	);
}

/** Plan the window for the branch: what every folded entry should show. */
export function planWindow(branch: readonly SessionEntry[], input: PlanInput): WindowPlan {
	const desired = new Map<string, DesiredContent>();
	const visible: string[] = [];
	const view = input.view ?? analyzeBranch(branch);
	const entryOf = entryLookup(branch, view);
	const index = indexLattice(input.lattice, view);
	const withView = { ...input, view };
	for (const id of visibleCollapsedFolds(input.lattice, input.expanded, (foldId) => index.placed.has(foldId))) {
		const placed = placeFold(id, entryOf, withView);
		if (!placed) continue;
		for (const [entryId, content] of placed) desired.set(entryId, content);
		visible.push(id);
	}
	return { desired, visible };
}

/**
 * A branch entry by id, the last one winning where an id repeats. The view's
 * index answers when it is this branch's and no id repeats (the usual case:
 * no map of the whole branch is built per plan).
 */
function entryLookup(branch: readonly SessionEntry[], view: BranchView): (id: string) => SessionEntry | undefined {
	if (view.entries === branch && view.indexById.size === branch.length) {
		return (id) => {
			const at = view.indexById.get(id);
			return at === undefined ? undefined : branch[at];
		};
	}
	const byId = new Map(branch.map((entry) => [entry.id, entry]));
	return (id) => byId.get(id);
}

/** What the entries of one visible collapsed fold show, or undefined when it cannot be shown here. */
export function placeFold(
	id: string,
	entryOf: (entryId: string) => SessionEntry | undefined,
	input: PlanInput,
): Map<string, DesiredContent> | undefined {
	const record = input.lattice.folds.get(id);
	const leaves = leafEntryIds(input.lattice, id);
	if (!record || !Array.isArray(leaves)) return undefined;
	if (input.view && !indexLattice(input.lattice, input.view).placed.has(id)) return undefined;
	const entries = leaves.map(entryOf).filter((entry): entry is SessionEntry => !!entry);
	// A fold whose entries are not all on this branch cannot be shown here; its span stays raw.
	if (entries.length !== leaves.length) return undefined;
	const inWindow = input.inWindow;
	const shown = inWindow ? entries.filter((entry) => inWindow(entry.id)) : entries;
	if (shown.length === 0) return undefined;
	const text = briefText(record, input.briefOf?.(record) ?? record.brief, input.brandNoun);
	return record.kind === "tool-batch" ? planToolBatch(shown, record, text, input.brandNoun) : planChapter(shown, text);
}

function planChapter(entries: readonly SessionEntry[], text: string): Map<string, DesiredContent> | undefined {
	const carrier = entries.find((entry) => isEditableEntry(entry) && !isDroppedByHost(entry));
	if (!carrier) return undefined;
	const plan = new Map<string, DesiredContent>();
	for (const entry of entries) {
		if (!isEditableEntry(entry)) continue;
		plan.set(entry.id, entry === carrier ? { kind: "replace", content: [{ type: "text", text }] } : { kind: "omit" });
	}
	return plan;
}

function planToolBatch(
	entries: readonly SessionEntry[],
	record: FoldRecord,
	text: string,
	brandNoun: string,
): Map<string, DesiredContent> | undefined {
	const results = entries.filter(isToolResult);
	if (results.length === 0) return planChapter(entries, text);
	const plan = new Map<string, DesiredContent>();
	results.forEach((entry, index) => {
		const shown = index === 0 ? text : batchPointerText(record, brandNoun);
		plan.set(entry.id, { kind: "replace", content: [{ type: "text", text: shown }] });
	});
	return plan;
}

/** Original content of a context entry, as a replacement that restores it exactly. */
export function originalContent(entry: SessionEntry): ContextEditableContent | undefined {
	if (entry.type === "custom_message") return entry.content;
	if (entry.type === "message" && isEditableEntry(entry)) {
		return (entry.message as { content: ContextEditableContent }).content;
	}
	return undefined;
}

/** Which entries a draft may touch. */
export interface DraftScope {
	/** Entries Pi still projects (after compaction); others need no edit. Default: all. */
	inWindow?: (entryId: string) => boolean;
	/**
	 * Entries some fold has ever covered. Only these are restored to raw: an
	 * edit on any other entry belongs to Pi or another extension (Pi omits a
	 * failed reply before overflow recovery, for one) and is left alone.
	 */
	managed?: (entryId: string) => boolean;
	/** What a managed entry showed before it was first folded, when that was another extension's edit. */
	baseline?: (entryId: string) => ContextEditEntry["replacement"] | undefined;
	/** The latest edit per target on the whole branch, when `branch` is only the entries to check. Default: from `branch`. */
	edits?: ReadonlyMap<string, ContextEditEntry>;
}

/**
 * Drafts that move the persisted window to the plan: one per entry whose
 * current edit disagrees with what it should show, in branch order.
 */
export function editDrafts(
	branch: readonly SessionEntry[],
	plan: WindowPlan,
	scope: DraftScope = {},
): ContextEditEntryDraft[] {
	const inWindow = scope.inWindow ?? (() => true);
	const managed = scope.managed ?? (() => true);
	const edits = scope.edits ?? latestEdits(branch);
	const drafts: ContextEditEntryDraft[] = [];
	for (const entry of branch) {
		if (!isEditableEntry(entry) || !inWindow(entry.id)) continue;
		const want = plan.desired.get(entry.id);
		const have = edits.get(entry.id);
		if (!want) {
			if (!have || !managed(entry.id)) continue;
			const before = scope.baseline?.(entry.id);
			if (before === null) {
				if (have.replacement !== null) drafts.push({ type: "context_edit", targetId: entry.id, replacement: null });
				continue;
			}
			const original = before?.content ?? originalContent(entry);
			if (original === undefined) continue;
			if (have.replacement && canonicalJson(have.replacement.content) === canonicalJson(original)) continue;
			drafts.push({ type: "context_edit", targetId: entry.id, replacement: { content: original } });
		} else if (want.kind === "omit") {
			if (have && have.replacement === null) continue;
			drafts.push({ type: "context_edit", targetId: entry.id, replacement: null });
		} else {
			if (have?.replacement && canonicalJson(have.replacement.content) === canonicalJson(want.content)) continue;
			drafts.push({ type: "context_edit", targetId: entry.id, replacement: { content: want.content } });
		}
	}
	return drafts;
}

/** Id prefix of the stand-in entries used to preview drafts that are not persisted yet. */
export const PREVIEW_ID_PREFIX = "pi-fold-preview-";

/**
 * Model messages Pi will project once `drafts` are persisted: the branch plus
 * the drafts as edits, through Pi's own `buildSessionProjection`.
 */
export function projectWithDrafts(
	branch: readonly SessionEntry[],
	drafts: readonly ContextEditEntryDraft[],
): AgentMessage[] {
	return projectionWithDrafts(branch, drafts).messages;
}

/** Pi's own projection of the branch as it will be once `drafts` are persisted, entries included. */
export function projectionWithDrafts(
	branch: readonly SessionEntry[],
	drafts: readonly ContextEditEntryDraft[],
): SessionProjection {
	const entries: SessionEntry[] = [...branch];
	let parentId = branch.at(-1)?.id ?? null;
	const timestamp = branch.at(-1)?.timestamp ?? "1970-01-01T00:00:00.000Z";
	drafts.forEach((draft, index) => {
		const id = `${PREVIEW_ID_PREFIX}${index}`;
		entries.push({ ...draft, id, parentId, timestamp });
		parentId = id;
	});
	return buildSessionProjection(entries, parentId);
}

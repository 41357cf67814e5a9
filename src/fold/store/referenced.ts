/**
 * What a session's fold state references in its store: the one definition
 * `pi-fold verify` checks and `pi-fold gc` keeps, so what gc keeps is
 * exactly what verify reads.
 *
 * - Committed folds: every record on any branch that the branch has not
 *   dissolved. A fold live on an abandoned branch stays referenced (`/tree`
 *   can go back to it); one dissolved on every branch that holds it folds
 *   nothing, and folding its span again writes its source again.
 * - Pending marks: every mark still pending at the end of a branch (an
 *   epoch-scheduled agent fold whose source is stored before it commits).
 * - Named: every `sourceHash` inside a fold state entry that does not
 *   decode, so a damaged line never costs the blob it still names.
 * - Parts: everything the part lists of the above name, transitively (a
 *   consolidation's children and runs); this needs the store.
 *
 * Evidence artifacts live in their own directory, outside the fold store:
 * verify reads every one the transcript names, and gc never removes one.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { isSha256Hex } from "../../session/canonical.ts";
import type { FoldRecord } from "../lattice/records.ts";
import { rebuildState, stateEntryTypes } from "../state/state.ts";
import { FoldIntegrityError, type FoldStore } from "./store.ts";

/** A pending mark as referenced: the record it would commit and the entry that recorded it. */
export interface MarkReference {
	record: FoldRecord;
	/** The first fold state entry naming the mark's source. */
	entryId: string;
}

export interface StateReferences {
	/** Source hash → id of a committed, undissolved fold naming it. */
	folds: Map<string, string>;
	/** Source hash → a pending mark naming it (not also a committed fold's). */
	marks: Map<string, MarkReference>;
	/** Source hash → id of a fold state entry that does not decode but names it. */
	named: Map<string, string>;
}

/** Leaf entries of a session tree: each ends one branch. */
export function leafIds(entries: readonly SessionEntry[]): string[] {
	const parents = new Set(entries.map((entry) => entry.parentId).filter((id): id is string => typeof id === "string"));
	return entries.filter((entry) => !parents.has(entry.id)).map((entry) => entry.id);
}

export function indexById(entries: readonly SessionEntry[]): Map<string, SessionEntry> {
	return new Map(entries.map((entry) => [entry.id, entry]));
}

/** Path from the root to `leaf` (a parent cycle, which the loader cuts, ends the path instead of looping). */
export function branchTo(entries: readonly SessionEntry[], leaf: string, byId = indexById(entries)): SessionEntry[] {
	const path: SessionEntry[] = [];
	const seen = new Set<string>();
	let current = byId.get(leaf);
	while (current && !seen.has(current.id)) {
		seen.add(current.id);
		path.push(current);
		current = current.parentId ? byId.get(current.parentId) : undefined;
	}
	return path.reverse();
}

/** Most nodes `hashesIn` visits per entry: a hostile entry cannot make the scan walk forever. */
const HASH_SCAN_MAX_NODES = 100_000;

/** Every `sourceHash` string anywhere in a value, walked without recursion. */
function hashesIn(value: unknown, into: (hash: string) => void): void {
	const stack: unknown[] = [value];
	for (let visited = 0; stack.length > 0 && visited < HASH_SCAN_MAX_NODES; visited++) {
		const node = stack.pop();
		if (typeof node !== "object" || node === null) continue;
		for (const [key, child] of Object.entries(node)) {
			if (key === "sourceHash" && typeof child === "string" && isSha256Hex(child)) into(child);
			else if (typeof child === "object" && child !== null) stack.push(child);
		}
	}
}

/** Every source the fold state of any branch references (the store is not read). */
export function stateReferences(entries: readonly SessionEntry[], prefix: string): StateReferences {
	const references: StateReferences = { folds: new Map(), marks: new Map(), named: new Map() };
	const ownTypes = new Set<string>(Object.values(stateEntryTypes(prefix)));
	const own = entries.filter((entry) => entry.type === "custom" && ownTypes.has(entry.customType));
	// The first entry naming each hash, to say where a mark was recorded.
	const namedBy = new Map<string, string>();
	for (const entry of own) {
		const data = entry.type === "custom" ? entry.data : undefined;
		hashesIn(data, (hash) => {
			if (!namedBy.has(hash)) namedBy.set(hash, entry.id);
		});
		// One entry replayed alone: the state decoder's own verdict on whether it decodes.
		if (rebuildState([entry], prefix).skipped > 0)
			hashesIn(data, (hash) => {
				if (!references.named.has(hash)) references.named.set(hash, entry.id);
			});
	}
	if (own.length === 0) return references;
	const byId = indexById(entries);
	const marks: FoldRecord[] = [];
	for (const leaf of leafIds(entries)) {
		const state = rebuildState(branchTo(entries, leaf, byId), prefix);
		const dissolved = new Set(state.data.dissolved);
		for (const record of state.records) {
			if (!dissolved.has(record.id) && !references.folds.has(record.sourceHash))
				references.folds.set(record.sourceHash, record.id);
		}
		for (const mark of state.data.marks) marks.push(mark.record);
	}
	for (const record of marks) {
		if (references.folds.has(record.sourceHash) || references.marks.has(record.sourceHash)) continue;
		references.marks.set(record.sourceHash, { record, entryId: namedBy.get(record.sourceHash) ?? "" });
	}
	return references;
}

export interface PartReferences {
	/** Part hash → the source whose part list names it (first found); a root may be a part too. */
	parts: Map<string, string>;
	/** Source hash → the hashes its part list names, for every list read. */
	lists: Map<string, string[]>;
	/** Part lists that cannot be read: their parts are unknown. */
	damaged: { hash: string; problem: string }[];
}

/** Everything the part lists of `roots` name, transitively; the parts themselves are not read. */
export async function partReferences(store: FoldStore, roots: Iterable<string>): Promise<PartReferences> {
	const found: PartReferences = { parts: new Map(), lists: new Map(), damaged: [] };
	const seen = new Set<string>(roots);
	const queue = [...seen];
	for (let hash = queue.pop(); hash !== undefined; hash = queue.pop()) {
		let parts: Awaited<ReturnType<FoldStore["partsOf"]>>;
		try {
			parts = await store.partsOf(hash);
		} catch (error) {
			if (!(error instanceof FoldIntegrityError)) throw error;
			found.damaged.push({ hash, problem: error.message });
			continue;
		}
		if (!parts) continue;
		found.lists.set(
			hash,
			parts.map((part) => part.hash),
		);
		for (const part of parts) {
			if (!found.parts.has(part.hash)) found.parts.set(part.hash, hash);
			if (seen.has(part.hash)) continue;
			seen.add(part.hash);
			queue.push(part.hash);
		}
	}
	return found;
}

/** Every part beneath a source, by the lists already read (each once). */
export function partsBeneath(references: PartReferences, hash: string): Set<string> {
	const beneath = new Set<string>();
	const stack = [...(references.lists.get(hash) ?? [])];
	for (let part = stack.pop(); part !== undefined; part = stack.pop()) {
		if (beneath.has(part) || part === hash) continue;
		beneath.add(part);
		stack.push(...(references.lists.get(part) ?? []));
	}
	return beneath;
}

/** Every hash referenced: what gc keeps and verify reads (the state's own, without `parts`). */
export function referencedHashes(state: StateReferences, parts?: PartReferences): Set<string> {
	return new Set([...state.folds.keys(), ...state.marks.keys(), ...state.named.keys(), ...(parts?.parts.keys() ?? [])]);
}

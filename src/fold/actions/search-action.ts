/**
 * The `search` action's shell: gathers the sources from one workspace
 * snapshot (every fold placed on the branch, at any depth, with the lines it
 * owns; the entries compaction summaries cover; the evidence artifacts a
 * tool result on this branch names), hands them to the pure search
 * (`search.ts`) with readers that verify every byte (the fold store's read,
 * recall's hash checks, the evidence store's read), and words the result. Text that only echoes what
 * its original holds (the context tool's own calls and results, pi-fold's
 * records) is read and verified but not matched. Reads only: nothing is
 * persisted and the window does not change.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { compactedEntryIds, recall, recordedHashes } from "../../compaction/records/recall.ts";
import { canonicalJson } from "../../session/canonical.ts";
import { contentText } from "../../text/lines.ts";
import { compileMatcher } from "../../text/matcher.ts";
import { type ActionOutcome, type FoldWorkspace, failed } from "../engine/workspace.ts";
import { indexLattice } from "../lattice/lattice-index.ts";
import type { ResolvedOptions } from "../options.ts";
import { EVIDENCE_ADDRESS_PREFIX } from "../store/evidence.ts";
import { NestedSources } from "./nested-sources.ts";
import {
	type Hidden,
	type LineOwner,
	SEARCH_MAX_HITS,
	SEARCH_PAGE_HITS,
	SEARCH_REGEX_BUDGET_MS,
	type SearchResult,
	type SearchSource,
	type SourceBytes,
	searchSources,
} from "./search.ts";
import { searchResultText, searchTimeoutText } from "./search-report.ts";

export interface SearchParams {
	query: string;
	regex?: boolean;
	/** First hit of the page (0-based). */
	offset?: number;
	/** Hits on the page, at most SEARCH_MAX_HITS. */
	limit?: number;
}

/** The session's evidence artifacts, each with a verified read (the runtime's evidence host). */
export interface EvidenceArtifacts {
	artifacts(): Promise<{ hash: string; read(): Promise<SourceBytes> }[]>;
}

/** What an entry is, in a few words: "repo_stage result", "assistant", "user". */
function entryWhat(entry: SessionEntry | undefined): string {
	if (!entry) return "entry";
	if (entry.type === "custom_message") return `${entry.customType} message`;
	if (entry.type !== "message") return entry.type;
	const message = entry.message;
	if (message.role === "toolResult") return `${message.toolName} ${message.isError ? "error" : "result"}`;
	if (message.role === "bashExecution") return "user shell run";
	return message.role;
}

/**
 * What search leaves out of an entry because it only echoes text found in its original: pi-fold's own records
 * (custom entries under its prefix, and the `context_edit` entries that put briefs in the window), the context
 * tool's results (a peek repeats a source, a search its hits, a status the briefs), and the context tool's calls
 * inside an assistant message (a search call repeats its query). Without this, every search for a fact asked
 * before finds the earlier call, its result and the brief naming it, next to the fact itself.
 */
function echoes(entry: SessionEntry | undefined, options: ResolvedOptions): Hidden | undefined {
	if (!entry) return undefined;
	if (entry.type === "context_edit") return true;
	if (entry.type === "custom") return entry.customType.startsWith(options.entryTypePrefix) ? true : undefined;
	if (entry.type !== "message") return undefined;
	const message = entry.message;
	if (message.role === "toolResult") return message.toolName === options.toolName ? true : undefined;
	if (message.role !== "assistant") return undefined;
	const calls = message.content.filter((part) => part.type === "toolCall" && part.name === options.toolName);
	return calls.length > 0 ? calls.map((part) => canonicalJson(part)) : undefined;
}

function foldSources(ws: FoldWorkspace): { sources: SearchSource[]; leaves: Set<string> } {
	const leaves = new Set<string>();
	const sources: SearchSource[] = [];
	const placements = indexLattice(ws.lattice, ws.view).ordered;
	const nested = new NestedSources(ws, placements);
	for (const placement of placements) {
		const record = placement.record;
		const lines: LineOwner[] = [];
		for (const part of record.parts) {
			if (part.type === "entry") {
				const order = ws.view.indexById.get(part.entryId) ?? placement.start;
				const entry = ws.branch[order];
				const hidden = echoes(entry, ws.options);
				lines.push({ entryId: part.entryId, order, what: entryWhat(entry), ...(hidden ? { hidden } : {}) });
				leaves.add(part.entryId);
				continue;
			}
			for (let i = nested.lines(part.foldId); i > 0; i--) lines.push({ child: part.foldId });
		}
		sources.push({
			kind: "fold",
			id: record.id,
			foldKind: record.kind,
			...(placement.parentId ? { parentId: placement.parentId } : {}),
			lines,
			read: () => nested.read(record),
		});
	}
	return { sources, leaves };
}

function compactedSources(ws: FoldWorkspace, folded: ReadonlySet<string>): SearchSource[] {
	const hashes = recordedHashes(ws.branch);
	const entryById = (id: string) => ws.sessionEntry?.(id);
	return compactedEntryIds(ws.branch, hashes).flatMap((id) => {
		if (folded.has(id)) return [];
		const order = ws.view.indexById.get(id) ?? -1;
		const entry = order >= 0 ? ws.branch[order] : entryById(id);
		const hidden = echoes(entry, ws.options);
		if (hidden === true) return [];
		return [
			{
				kind: "entry" as const,
				id,
				order,
				what: entryWhat(entry),
				...(hidden ? { hidden } : {}),
				read: async (): Promise<SourceBytes> => {
					const onBranch = (entryId: string) => {
						const index = ws.view.indexById.get(entryId);
						return index === undefined ? undefined : ws.branch[index];
					};
					const result = recall({ address: id, branch: ws.branch, entryById, hashes, onBranch });
					return result.ok
						? { ok: true, bytes: result.bytes }
						: { ok: false, code: result.code, message: result.message };
				},
			},
		];
	});
}

/**
 * The artifacts this branch can reach, by hash, with where each one's window
 * text sits: the tool result that names `evidence:<sha256>`. The evidence
 * directory is the session's, shared by every branch of its file; an
 * artifact no result on this branch names belongs to another branch, and
 * neither search nor peek answers for it here.
 */
export function evidenceOnBranch(branch: readonly SessionEntry[]): Map<string, number> {
	const order = new Map<string, number>();
	const address = new RegExp(`${EVIDENCE_ADDRESS_PREFIX}([0-9a-f]{64})`, "g");
	branch.forEach((entry, index) => {
		if (entry.type !== "message" || entry.message.role !== "toolResult") return;
		const text = contentText(entry.message.content);
		if (!text.includes(EVIDENCE_ADDRESS_PREFIX)) return;
		for (const match of text.matchAll(address)) if (match[1] && !order.has(match[1])) order.set(match[1], index);
	});
	return order;
}

async function evidenceSources(ws: FoldWorkspace, evidence: EvidenceArtifacts): Promise<SearchSource[]> {
	const order = evidenceOnBranch(ws.branch);
	return (await evidence.artifacts()).flatMap((artifact) => {
		const at = order.get(artifact.hash);
		if (at === undefined) return [];
		return [
			{ kind: "evidence" as const, id: `${EVIDENCE_ADDRESS_PREFIX}${artifact.hash}`, order: at, read: artifact.read },
		];
	});
}

/** A peek of an evidence address this branch does not name: refused (it is another branch's), else undefined. */
export function evidenceOffBranch(ws: FoldWorkspace, hash: string): ActionOutcome | undefined {
	if (evidenceOnBranch(ws.branch).has(hash)) return undefined;
	return failed(
		"unknown-id",
		`${EVIDENCE_ADDRESS_PREFIX}${hash} is named by no tool result on this branch (it belongs to another branch of the session, or to none); only this branch's artifacts are read here. Search finds those.`,
	);
}

/** Run a search over one snapshot: the result, or a refusal naming what is wrong with the query. */
export async function searchWorkspace(
	ws: FoldWorkspace,
	evidence: EvidenceArtifacts,
	params: SearchParams,
): Promise<{ ok: true; result: SearchResult } | ActionOutcome> {
	const compiled = compileMatcher(params.query, params.regex === true);
	if (!compiled.ok) return { ok: false, code: compiled.code, text: compiled.message };
	const folds = foldSources(ws);
	const sources = [...compactedSources(ws, folds.leaves), ...folds.sources, ...(await evidenceSources(ws, evidence))];
	const result = await searchSources({
		matcher: compiled.matcher,
		sources,
		offset: params.offset ?? 0,
		limit: Math.min(params.limit ?? SEARCH_PAGE_HITS, SEARCH_MAX_HITS),
	});
	return { ok: true, result };
}

/** The `search` action: hits with the exact peek call that reads around each. Changes nothing. */
export async function searchAction(
	ws: FoldWorkspace,
	evidence: EvidenceArtifacts,
	params: SearchParams,
): Promise<ActionOutcome> {
	const searched = await searchWorkspace(ws, evidence, params);
	if (!("result" in searched)) return searched;
	const asked = { query: params.query, regex: params.regex === true, toolName: ws.options.toolName };
	if (searched.result.timedOut)
		return { ok: false, code: "regex-timeout", text: searchTimeoutText(asked, SEARCH_REGEX_BUDGET_MS) };
	return { ok: true, text: searchResultText(searched.result, asked) };
}

/**
 * Search over what the window no longer shows: a fact inside a consolidated
 * fold is found in its innermost fold at the exact byte offset, and the
 * peek the hit spells out reads it; compacted entries and evidence
 * artifacts are searched and read back the same way; a source that fails
 * verification is named in the result; literal queries match JSON-escaped
 * text; regular expressions are bounded (invalid, empty-matching and
 * catastrophic patterns are refused by name); results are paged.
 */

import { describe, expect, it } from "vitest";
import { buildCompactionDetails } from "../../../src/compaction/records/details.ts";
import { foldSpan } from "../../../src/fold/actions/actions.ts";
import { NestedSources } from "../../../src/fold/actions/nested-sources.ts";
import { peekFold } from "../../../src/fold/actions/peek.ts";
import { listChildren } from "../../../src/fold/actions/peek-children.ts";
import { SEARCH_COUNT_MAX, searchSources } from "../../../src/fold/actions/search.ts";
import {
	type EvidenceArtifacts,
	evidenceOffBranch,
	searchAction,
	searchWorkspace,
} from "../../../src/fold/actions/search-action.ts";
import { readSource } from "../../../src/fold/actions/source-read.ts";
import type { ActionOutcome, FoldWorkspace } from "../../../src/fold/engine/workspace.ts";
import { indexLattice } from "../../../src/fold/lattice/lattice-index.ts";
import { leafEntryIds } from "../../../src/fold/lattice/records.ts";
import { DEFAULT_ENTRY_TYPE_PREFIX } from "../../../src/fold/options.ts";
import { createMemoryFoldStore, type FoldStore } from "../../../src/fold/store/store.ts";
import { canonicalBytes, sha256Hex } from "../../../src/session/canonical.ts";
import { sourceHashesOf } from "../../../src/session/records/source-hashes.ts";
import { compileMatcher } from "../../../src/text/matcher.ts";
import { appendLinked } from "../../fixtures/common.ts";
import { detailsInput } from "../../fixtures/compaction-budget.ts";
import { FoldBranch } from "../../fixtures/fold.ts";
import { foldWorkspace } from "../../fixtures/workspace.ts";

const fact = (stage: number) => `FACT S${stage}: ${sha256Hex(new TextEncoder().encode(String(stage))).slice(0, 12)}`;
const stageText = (stage: number) =>
	`stage ${stage} notes\n${"filler line of stage text\n".repeat(40)}${fact(stage)}\n${"more filler\n".repeat(20)}`;

const noEvidence: EvidenceArtifacts = { artifacts: async () => [] };

/** A user turn of `stages` repo_stage batches and a closing reply. */
function stagedBranch(stages: number): FoldBranch {
	const b = new FoldBranch();
	b.user("Run the stages");
	for (let stage = 1; stage <= stages; stage++)
		b.tool({ id: `s${stage}`, name: "repo_stage", args: { stage } }, stageText(stage));
	b.assistant("All stages read.");
	return b;
}

async function fold(ws: ReturnType<typeof foldWorkspace>, ids: string[]): Promise<string> {
	const outcome = await foldSpan({ ...ws.ws(), origin: "command" }, ids);
	expect(outcome.ok, outcome.text).toBe(true);
	ws.apply(outcome);
	return outcome.foldId ?? "";
}

const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** The n-th hit's line of the model's text: what holds it, its byte offset, and the peek call that reads around it. */
function hitLine(
	text: string,
	hit = 1,
): { where: string; offset: number; call: { id: string; offset?: number; bytes?: number } } {
	const match = new RegExp(`^${hit}\\. (.+), byte (\\d+): active_context (\\{.*\\})$`, "m").exec(text);
	if (!match?.[1] || !match[3]) throw new Error(`no line for hit ${hit} in:\n${text}`);
	return { where: match[1], offset: Number(match[2]), call: JSON.parse(match[3]) };
}

describe("search action", () => {
	it("finds a fact inside a consolidation in its innermost fold, at the exact byte offset, and the peek it names reads it", async () => {
		const b = stagedBranch(4);
		const space = foldWorkspace(b.entries, { store: createMemoryFoldStore() });
		const batches = [];
		for (const stage of [1, 2, 3]) batches.push(await fold(space, [`s${stage}`]));
		const consolidation = await fold(space, batches);
		const outcome = await searchAction(space.ws(), noEvidence, { query: "FACT S2:" });
		expect(outcome.ok).toBe(true);
		expect(outcome.change).toBeUndefined();
		expect(outcome.text.split("\n")[0]).toBe('Search "FACT S2:": 1 hit in 4 folds, sha256-verified; window unchanged.');
		expect(outcome.text).toContain(`\n   ${fact(2)}`);
		const { where, offset: at, call } = hitLine(outcome.text);
		// The call reads the innermost fold (the tool batch, not the consolidation holding it)...
		expect(call.id).toBe(batches[1]);
		expect(consolidation).not.toBe(batches[1]);
		// ...and the hit names the entry in it that holds the fact.
		const entryId = /^entry (\S+) \(repo_stage result\)$/.exec(where)?.[1];
		expect(decode(canonicalBytes(b.entries.find((entry) => entry.id === entryId)))).toContain(fact(2));
		// The offset is the match's byte offset in that fold's own verified source, inside the slice the call reads.
		const record = space.ws().lattice.folds.get(batches[1] ?? "");
		const source = decode((await space.store.read(record?.sourceHash ?? "")).bytes);
		expect(decode(new TextEncoder().encode(source).slice(at, at + 8))).toBe("FACT S2:");
		expect(call.offset).toBeLessThan(at);
		expect((call.offset ?? 0) + (call.bytes ?? 0)).toBeGreaterThan(at + 8);
		const peek = await peekFold(space.ws(), call.id, call.offset, call.bytes);
		expect(peek.text).toContain(`source sha256 ${record?.sourceHash} verified`);
		expect(peek.text).toContain(fact(2));
	});

	it("searches entries a compaction covers and reads them back exactly through the entry's peek", async () => {
		const b = stagedBranch(3);
		const kept = b.user("Next task");
		b.compaction(kept);
		b.assistant("ok");
		const space = foldWorkspace(b.entries);
		const outcome = await searchAction(space.ws(), noEvidence, { query: fact(2) });
		expect(outcome.text).toContain("1 hit");
		const { where, offset: at, call } = hitLine(outcome.text);
		expect(where).toBe("compacted repo_stage result");
		const peek = await peekFold(space.ws(), call.id, call.offset, call.bytes);
		expect(peek.ok).toBe(true);
		expect(peek.text).toContain(fact(2));
		const entry = b.entries.find((item) => item.id === call.id);
		expect(entry).toMatchObject({ type: "message", message: { role: "toolResult" } });
		const exact = decode(canonicalBytes(entry));
		expect(decode(canonicalBytes(entry).slice(at, at + fact(2).length))).toBe(fact(2));
		expect(exact).toContain(fact(2));
	});

	it("names a compacted entry whose recorded hash no longer matches, and still reports the other hits", async () => {
		const b = stagedBranch(2);
		const covered = [...b.entries];
		const details = buildCompactionDetails(detailsInput({ sourceHashes: sourceHashesOf(covered) }));
		const kept = b.user("Next");
		appendLinked(b.entries, "cmp", {
			type: "compaction",
			summary: "s",
			firstKeptEntryId: kept,
			tokensBefore: 100,
			details,
		});
		// Edit the log after the compaction recorded it: stage 1's result text changes.
		const edited = b.entries.findIndex((entry) => entry.type === "message" && entry.message.role === "toolResult");
		const entry = b.entries[edited] as { message: { content: { text: string }[] } };
		entry.message.content = [{ text: `${stageText(1)} edited` }];
		const outcome = await searchAction(foldWorkspace(b.entries).ws(), noEvidence, { query: "FACT S" });
		expect(outcome.text).toContain(fact(2));
		expect(outcome.text).not.toContain(fact(1));
		expect(outcome.text).toMatch(/- entry e\d+: tampered: @e\d+ was changed after compaction cmp recorded it/);
	});

	it("names a fold whose stored blob fails its hash instead of skipping it", async () => {
		const blobs = new Map<string, Uint8Array>();
		const b = stagedBranch(2);
		const space = foldWorkspace(b.entries, { store: createMemoryFoldStore({ blobs }) });
		const id = await fold(space, ["s1"]);
		const hash = space.ws().lattice.folds.get(id)?.sourceHash ?? "";
		blobs.set(hash, new TextEncoder().encode("tampered"));
		const outcome = await searchAction(space.ws(), noEvidence, { query: "FACT" });
		expect(outcome.ok).toBe(true);
		expect(outcome.text).toContain("no hits");
		expect(outcome.text).toContain(`- fold ${id}: integrity: `);
	});

	it("names a fold whose log was edited after folding instead of serving the stored bytes", async () => {
		const b = stagedBranch(2);
		const space = foldWorkspace(b.entries);
		const id = await fold(space, ["s1"]);
		// The tool result is edited in the session file after the fold stored its source.
		const at = b.entries.findIndex((entry) => entry.type === "message" && entry.message.role === "toolResult");
		const result = b.entries[at];
		if (result?.type !== "message" || result.message.role !== "toolResult") throw new Error("no tool result");
		b.entries[at] = { ...result, message: { ...result.message, content: [{ type: "text", text: "edited" }] } };
		const outcome = await searchAction(space.ws(), noEvidence, { query: fact(1) });
		expect(outcome.ok).toBe(true);
		expect(outcome.text).toContain("no hits");
		expect(outcome.text).toContain(`- fold ${id}: integrity: `);
		expect(outcome.text.split("\n").slice(1).join("\n")).not.toContain(fact(1));
	});

	it("reports a hit offset on a character boundary: a query holding half a character matches nothing", async () => {
		const b = new FoldBranch();
		b.user("Run it");
		b.tool({ id: "s1", name: "repo_stage", args: {} }, `${"filler line\n".repeat(40)}smile 😀 twice 😀 end`);
		b.assistant("Done.");
		const space = foldWorkspace(b.entries);
		await fold(space, ["s1"]);
		const half = "😀".slice(0, 1);
		const outcome = await searchAction(space.ws(), noEvidence, { query: `smile ${half}` });
		expect(outcome.text).toContain("no hits");
		const regex = await searchWorkspace(space.ws(), noEvidence, { query: "[\\uD800-\\uDBFF]", regex: true });
		expect("result" in regex && regex.result.total).toBe(0);
		// The whole character is found, and its offset starts it.
		const whole = await searchWorkspace(space.ws(), noEvidence, { query: "😀" });
		if (!("result" in whole)) throw new Error(whole.text);
		expect(whole.result.total).toBe(2);
		const read = await peekFold(space.ws(), whole.result.hits[0]?.id ?? "");
		const bytes = new TextEncoder().encode(read.text.slice(read.text.indexOf("\n\n") + 2));
		const offset = whole.result.hits[0]?.offset ?? -1;
		expect(decode(bytes.slice(offset, offset + 4))).toBe("😀");
	});

	it("searches evidence artifacts and places each where its window text sits", async () => {
		const artifact = canonicalBytes({ content: [{ type: "text", text: `rows\n${fact(9)}\nmore` }] });
		const hash = sha256Hex(artifact);
		const b = stagedBranch(1);
		b.tool({ id: "m", name: "mcp__srv__big", args: {} }, `[evidence] … peek evidence:${hash}`);
		const evidence: EvidenceArtifacts = {
			artifacts: async () => [{ hash, read: async () => ({ ok: true, bytes: artifact }) }],
		};
		const space = foldWorkspace(b.entries);
		const outcome = await searchAction(space.ws(), evidence, { query: fact(9) });
		const { where, offset: at, call } = hitLine(outcome.text);
		expect(where).toBe("evidence artifact");
		expect(call.id).toBe(`evidence:${hash}`);
		expect(decode(artifact.slice(at, at + fact(9).length))).toBe(fact(9));
		const searched = await searchWorkspace(space.ws(), evidence, { query: "rows" });
		expect("result" in searched && searched.result.hits[0]?.order).toBe(b.entries.length - 1);
	});

	it("answers only for evidence a result on this branch names: another branch's artifact is not searched or peeked", async () => {
		const artifact = canonicalBytes({ content: [{ type: "text", text: `rows\n${fact(9)}\nmore` }] });
		const hash = sha256Hex(artifact);
		// The session's evidence directory holds the artifact; the tool result naming it is on a sibling branch.
		const evidence: EvidenceArtifacts = {
			artifacts: async () => [{ hash, read: async () => ({ ok: true, bytes: artifact }) }],
		};
		const space = foldWorkspace(stagedBranch(1).entries);
		const outcome = await searchAction(space.ws(), evidence, { query: fact(9) });
		expect(outcome.text).toContain("no hits");
		expect(outcome.text).not.toContain(`evidence:${hash}`);
		const peek = evidenceOffBranch(space.ws(), hash);
		expect(peek).toMatchObject({ ok: false, code: "unknown-id" });
		expect(peek?.text).toContain("named by no tool result on this branch");
		// On the branch that names it, both answer.
		const b = stagedBranch(1);
		b.tool({ id: "m", name: "mcp__srv__big", args: {} }, `[evidence] … peek evidence:${hash}`);
		const named = foldWorkspace(b.entries);
		expect(evidenceOffBranch(named.ws(), hash)).toBeUndefined();
		expect((await searchAction(named.ws(), evidence, { query: fact(9) })).text).toContain(`evidence:${hash}`);
	});

	it("matches a literal with quotes and line breaks in its JSON-escaped form", async () => {
		const b = new FoldBranch();
		b.user("go");
		b.tool({ id: "r", name: "read", args: { path: "a.ts" } }, 'const s = "quoted";\nnext line');
		b.assistant("done");
		const space = foldWorkspace(b.entries);
		await fold(space, ["r"]);
		const outcome = await searchAction(space.ws(), noEvidence, { query: 'const s = "quoted";\nnext' });
		expect(outcome.text).toContain("1 hit");
	});

	it("reads a small source whole with a peek call that names no slice, and shows it less context", async () => {
		const line = `${"a".repeat(100)} MARK ${"b".repeat(100)}`;
		const b = new FoldBranch();
		b.user("go");
		b.tool({ id: "small", name: "read", args: { path: "a.txt" } }, line);
		b.tool({ id: "large", name: "read", args: { path: "b.txt" } }, `${line}\n${"filler line\n".repeat(200)}`);
		b.assistant("done");
		const space = foldWorkspace(b.entries);
		const small = await fold(space, ["small"]);
		const large = await fold(space, ["large"]);
		const outcome = await searchAction(space.ws(), noEvidence, { query: "MARK" });
		const [, first, firstContext, second, secondContext] = outcome.text.split("\n");
		expect(first).toMatch(
			new RegExp(
				`^1\\. entry e\\d+ \\(read result\\), byte \\d+: active_context \\{"action":"peek","id":"${small}"\\}$`,
			),
		);
		expect(second).toMatch(new RegExp(`"id":"${large}","offset":\\d+,"bytes":\\d+\\}$`));
		// The small source's context is bounded by its size (a character per 8 bytes); the large one's by 160 characters.
		const size = space.ws().lattice.folds.get(small)?.sizes.sourceBytes ?? 0;
		expect(size).toBeLessThan(160 * 8);
		expect(firstContext?.trim()).toHaveLength(Math.floor(size / 8) + 2);
		expect(secondContext?.trim()).toHaveLength(160 + 2);
		for (const context of [firstContext, secondContext]) expect(context).toMatch(/^ {3}…a+ MARK b+…$/);
		const whole = await peekFold(space.ws(), small);
		expect(whole.text).toContain(`Bytes 0–${size} of ${size},`);
		expect(whole.text).toContain("This is the end of the source.");
	});

	it("leaves out what only echoes a fact (the context tool's calls and results, pi-fold's records), so a repeated search finds it once", async () => {
		const b = stagedBranch(2);
		// An earlier lookup of the same fact: the model's words and its search call, the result, pi-fold's record of it.
		const first = b.calls([{ id: "q1", name: "active_context", args: { action: "search", query: "FACT S2:" } }], {
			text: "Where was FACT S2: again?",
		});
		b.result(
			"q1",
			"active_context",
			`Search "FACT S2:": 1 hit in 2 folds, sha256-verified; window unchanged.\n   ${fact(2)}`,
		);
		appendLinked(b.entries, "rec", {
			type: "custom",
			customType: `${DEFAULT_ENTRY_TYPE_PREFIX}:fold`,
			data: { brief: "Searches: FACT S2:" },
		});
		// Another tool's call naming the text is searched as usual.
		b.tool({ id: "r", name: "read", args: { path: "FACT S2: notes" } }, "notes");
		const last = b.entries.at(-1)?.id ?? "";
		b.assistant("done");
		const space = foldWorkspace(b.entries);
		await fold(space, ["s2"]);
		const lookup = await fold(space, [first, last]);
		const folded = leafEntryIds(space.ws().lattice, lookup);
		expect(folded).toEqual(expect.arrayContaining(["rec", first, last]));
		const outcome = await searchAction(space.ws(), noEvidence, { query: "FACT S2:" });
		expect(outcome.text.split("\n")[0]).toBe(
			'Search "FACT S2:": 3 hits in 2 folds, sha256-verified; window unchanged.',
		);
		const contexts = outcome.text.split("\n").filter((line) => line.startsWith("   "));
		expect(contexts.map((line) => line.trim())).toEqual([
			fact(2),
			expect.stringContaining('"text":"Where was FACT S2: again?"'),
			expect.stringContaining('"path":"FACT S2: notes"'),
		]);
		// Whatever a regular expression matches, hidden text yields no hit (it is blanked before matching).
		const blanks = await searchAction(space.ws(), noEvidence, { query: "\\x00+", regex: true });
		expect(blanks.text).toContain("(regex): no hits");
		const quoted = await searchAction(space.ws(), noEvidence, { query: '"query":"FACT S\\d:"', regex: true });
		expect(quoted.text).toContain("(regex): no hits");
	});

	it("pages hits in transcript order and spells out the next page", async () => {
		const b = stagedBranch(12);
		const space = foldWorkspace(b.entries);
		for (let stage = 1; stage <= 12; stage++) await fold(space, [`s${stage}`]);
		const page = await searchAction(space.ws(), noEvidence, { query: "FACT S", limit: 5 });
		expect(page.text).toContain("12 hits (1–5 shown)");
		expect(page.text).toContain('More hits: active_context {"action":"search","query":"FACT S","offset":5}');
		const order = [...page.text.matchAll(/FACT S(\d+):/g)].map((match) => Number(match[1]));
		expect(order).toEqual([1, 2, 3, 4, 5]);
		const last = await searchAction(space.ws(), noEvidence, { query: "FACT S", offset: 10, limit: 5 });
		expect(last.text).toContain("12 hits (11–12 shown)");
		expect(last.text).not.toContain("More hits");
	});

	it("finds regular expressions and refuses invalid, empty-matching and over-long queries by name", async () => {
		const b = stagedBranch(3);
		const space = foldWorkspace(b.entries);
		for (let stage = 1; stage <= 3; stage++) await fold(space, [`s${stage}`]);
		const found = await searchAction(space.ws(), noEvidence, { query: "FACT S[23]: [0-9a-f]{12}", regex: true });
		expect(found.text).toContain("(regex): 2 hits");
		const refused = async (query: string): Promise<ActionOutcome> =>
			searchAction(space.ws(), noEvidence, { query, regex: true });
		expect(await refused("(unclosed")).toMatchObject({ ok: false, code: "invalid-query" });
		expect((await refused("x*")).text).toContain("matches the empty string");
		expect((await searchAction(space.ws(), noEvidence, { query: "q".repeat(300) })).text).toContain("at most 256");
	});
});

describe("search bounds", () => {
	it("stops a catastrophic regular expression at its time budget and reports nothing as found", async () => {
		const compiled = compileMatcher("(a+)+$", true);
		if (!compiled.ok) throw new Error(compiled.message);
		const line = `${"a".repeat(40)}b`;
		const started = Date.now();
		const result = await searchSources({
			matcher: compiled.matcher,
			sources: [
				{
					kind: "entry",
					id: "e1",
					order: 0,
					what: "user",
					read: async () => ({ ok: true, bytes: new TextEncoder().encode(line) }),
				},
			],
			offset: 0,
			limit: 10,
			regexBudgetMs: 100,
		});
		expect(Date.now() - started).toBeLessThan(5_000);
		expect(result).toMatchObject({ timedOut: true, total: 0, hits: [] });
	});

	it("counts at most SEARCH_COUNT_MAX hits and stops reading past the scan bound, saying so", async () => {
		const compiled = compileMatcher("x", false);
		if (!compiled.ok) throw new Error(compiled.message);
		const many = new TextEncoder().encode("x".repeat(SEARCH_COUNT_MAX + 50));
		const source = (id: string) => ({
			kind: "entry" as const,
			id,
			order: 0,
			what: "user",
			read: async () => ({ ok: true as const, bytes: many }),
		});
		const capped = await searchSources({ matcher: compiled.matcher, sources: [source("a")], offset: 0, limit: 3 });
		expect(capped).toMatchObject({ total: SEARCH_COUNT_MAX, countCapped: true });
		expect(capped.hits).toHaveLength(3);
		const absent = compileMatcher("y", false);
		if (!absent.ok) throw new Error(absent.message);
		const bounded = await searchSources({
			matcher: absent.matcher,
			sources: [source("a"), source("b"), source("c")],
			offset: 0,
			limit: 3,
			maxScanBytes: 10,
		});
		expect(bounded.notScanned).toBe(2);
		expect(bounded.searched.entry.count).toBe(1);
	});
});

describe("nested folds read through their root", () => {
	/** Six stage batches, three consolidated, then all under one outer consolidation: folds three deep. */
	async function nestedSpace(blobs = new Map<string, Uint8Array>()) {
		const b = stagedBranch(6);
		const space = foldWorkspace(b.entries, { store: createMemoryFoldStore({ blobs }) });
		const batches = [];
		for (let stage = 1; stage <= 6; stage++) batches.push(await fold(space, [`s${stage}`]));
		const inner = await fold(space, batches.slice(0, 3));
		const outer = await fold(space, [inner, ...batches.slice(3)]);
		return { space, batches, inner, outer, blobs };
	}

	/** The workspace with a store that counts its reads. */
	function counted(ws: FoldWorkspace): { ws: FoldWorkspace; reads: () => number } {
		let reads = 0;
		const store: FoldStore = {
			...ws.store,
			read: (hash, options) => {
				reads++;
				return ws.store.read(hash, options);
			},
		};
		return { ws: { ...ws, store }, reads: () => reads };
	}

	it("serves every fold the same verified bytes as its own read, reading the store once per root", async () => {
		const { space } = await nestedSpace();
		const { ws, reads } = counted(space.ws());
		const placements = indexLattice(ws.lattice, ws.view).ordered;
		const nested = new NestedSources(ws, placements);
		expect(placements).toHaveLength(8);
		for (const { record } of placements) {
			const own = await readSource(space.ws(), record);
			if ("ok" in own) throw new Error(own.text);
			const read = await nested.read(record);
			expect(read.ok && decode(read.bytes)).toBe(decode(own.bytes));
			expect(nested.lines(record.id)).toBe(decode(own.bytes).split("\n").length - 1);
		}
		expect(reads()).toBe(1);
	});

	it("a root that fails its hash hides no child: each is read on its own, and the root is named", async () => {
		const { space, outer, batches, blobs } = await nestedSpace();
		const hash = space.ws().lattice.folds.get(outer)?.sourceHash ?? "";
		blobs.set(hash, new TextEncoder().encode("tampered"));
		const outcome = await searchAction(space.ws(), noEvidence, { query: "FACT S" });
		expect(outcome.ok).toBe(true);
		expect(outcome.text.split("\n")[0]).toContain("6 hits");
		expect(outcome.text).toContain(`- fold ${outer}: integrity: `);
		for (const batch of batches) expect(outcome.text).toContain(`"id":"${batch}"`);
	});

	it("never serves a run of the root's lines that does not hash to the fold's own source", async () => {
		const { space, batches } = await nestedSpace();
		const ws = space.ws();
		const record = ws.lattice.folds.get(batches[4] ?? "");
		if (!record) throw new Error("no batch record");
		// The record is re-pointed at another fold's source: its run of the root's lines no longer hashes to it.
		const other = ws.lattice.folds.get(batches[5] ?? "");
		const forged = { ...record, sourceHash: other?.sourceHash ?? "" };
		const nested = new NestedSources(ws, indexLattice(ws.lattice, ws.view).ordered);
		const read = await nested.read(forged);
		expect(read.ok).toBe(false);
		expect(read.ok ? "" : read.code).toBe("integrity");
	});
});

describe("peek children", () => {
	it("lists the folds inside a consolidation with their first lines, nested ones indented, paged", async () => {
		const b = stagedBranch(6);
		const space = foldWorkspace(b.entries);
		const batches = [];
		for (let stage = 1; stage <= 6; stage++) batches.push(await fold(space, [`s${stage}`]));
		const inner = await fold(space, batches.slice(0, 3));
		const outer = await fold(space, [inner, ...batches.slice(3)]);
		const page = listChildren(space.ws(), outer, 0, 3);
		expect(page.ok).toBe(true);
		const lines = page.text.split("\n");
		expect(lines[0]).toBe(
			`Folds inside consolidation ${outer}: 4 directly, 7 in all, in transcript order (nested ones indented); rows 1–3 of 7.`,
		);
		expect(lines[2]).toMatch(
			new RegExp(`^${inner} consolidation, [\\d.]+ KB: 6 entries, 3 folds, 3 assistant, 3 tool calls; stage 1–3\\.$`),
		);
		expect(lines[3]).toMatch(
			new RegExp(`^  ${batches[0]} tool batch, [\\d.]+ KB: repo_stage \\{"stage":1\\} → [\\d.]+ KB: stage 1 notes$`),
		);
		expect(lines.at(-1)).toBe(`More: active_context {"action":"peek","id":"${outer}","children":true,"offset":3}`);
		const rest = listChildren(space.ws(), outer, 3, 10);
		expect(rest.text).toContain(`rows 4–7 of 7.`);
		expect(rest.text).toContain(`\n${batches[5]} tool batch`);
		expect(rest.text.endsWith("This is the last of them.")).toBe(true);
		expect(listChildren(space.ws(), batches[3] ?? "").text).toContain("holds no folds");
	});
});

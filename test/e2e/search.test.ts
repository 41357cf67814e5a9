/**
 * Issue 16 in the real Pi 1.6.0 CLI (RPC mode, loopback provider, scripted
 * agent): a fact from a folded tool batch, one from a batch inside a
 * consolidation, one from an evidence artifact and one from a span a
 * compaction summarized are each found with one `search` call and read with
 * exactly one `peek`, the call the first hit spells out. The peeked bytes are
 * checked against the session file (or the artifact on disk) and their
 * SHA-256 against the hash the peek says it verified.
 */

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { EVIDENCE_DIR_NAME } from "../../src/fold/store/evidence.ts";
import { canonicalBytes, canonicalSpanBytes, sha256Hex } from "../../src/session/canonical.ts";
import { DOCS_FACT, DOCS_TOOL, stageFact } from "../fixtures/search-extension.ts";
import {
	callTools,
	type RecordedRequest,
	type ScriptedReply,
	say,
	startLoopbackProvider,
} from "../harness/loopback-provider.ts";
import { createPiSandbox, onlySessionFile, REPO_ROOT, readSessionFile } from "../harness/pi-cli.ts";
import { startRpc } from "../harness/pi-rpc.ts";
import type { WireMessage } from "../harness/provider-rules.ts";

const EXTENSION = join(REPO_ROOT, "test/fixtures/search-extension.ts");
const STAGES = 5;
const COMPACT_TIMEOUT_MS = 60_000;
const PREFIX = "pi-fold-active-context";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const text = (message: WireMessage | undefined): string =>
	typeof message?.content === "string"
		? message.content
		: ((message?.content as { text?: string }[] | undefined) ?? []).map((part) => part.text ?? "").join("");

/**
 * The lookup agent: "Find <key>" → search for the key; a search result → the
 * peek its first hit spells out, verbatim; a peek result → done. Every call
 * it makes is logged by lookup.
 */
function lookupAgent(log: { key: string; calls: { action: string; args: Record<string, unknown> }[] }[]) {
	let counter = 0;
	return (request: RecordedRequest): ScriptedReply => {
		const messages = request.body.messages;
		const last = messages.at(-1);
		const find = last?.role === "user" ? /^Find (.+)$/.exec(text(last)) : null;
		if (find?.[1]) {
			log.push({ key: find[1], calls: [] });
			const args = { action: "search", query: find[1] };
			log.at(-1)?.calls.push({ action: "search", args });
			return callTools([{ id: `search_${++counter}`, name: "active_context", arguments: args }]);
		}
		if (last?.role === "tool" && String(last.tool_call_id).startsWith("search_")) {
			const call = /^1\. .*?, byte \d+: active_context (\{.*\})$/m.exec(text(last))?.[1];
			if (!call) return say(`No hit to read: ${text(last).slice(0, 300)}`);
			const args = JSON.parse(call) as Record<string, unknown>;
			log.at(-1)?.calls.push({ action: "peek", args });
			return callTools([{ id: `peek_${++counter}`, name: "active_context", arguments: args }]);
		}
		return say("Found it.");
	};
}

interface FoldRecordLike {
	id: string;
	kind: string;
	sourceHash: string;
	parts: ({ type: "entry"; entryId: string } | { type: "fold"; foldId: string })[];
}

/** Every fold record the session file holds, in creation order. */
function foldRecords(entries: readonly Record<string, unknown>[]): FoldRecordLike[] {
	const records: FoldRecordLike[] = [];
	for (const entry of entries) {
		if (entry.type !== "custom") continue;
		const data = entry.data as { record?: FoldRecordLike; records?: FoldRecordLike[] } | undefined;
		if (entry.customType === `${PREFIX}:fold` && data?.record) records.push(data.record);
		if (entry.customType === `${PREFIX}:commit`) records.push(...(data?.records ?? []));
	}
	return records;
}

function leafIds(records: readonly FoldRecordLike[], id: string): string[] {
	const record = records.find((item) => item.id === id);
	return (record?.parts ?? []).flatMap((part) =>
		part.type === "entry" ? [part.entryId] : leafIds(records, part.foldId),
	);
}

/** The peek result's header facts and its slice text. */
function peekParts(result: string): { start: number; end: number; total: number; hash: string; slice: string } {
	const split = result.indexOf("\n\n");
	const header = result.slice(0, split);
	const range = /bytes (\d+)–(\d+) of (\d+)/i.exec(header);
	const hash = /\b([0-9a-f]{64})\b/.exec(header)?.[1] ?? "";
	return {
		start: Number(range?.[1]),
		end: Number(range?.[2]),
		total: Number(range?.[3]),
		hash,
		slice: result.slice(split + 2),
	};
}

describe("search in the real Pi CLI", () => {
	it("finds a folded, a consolidated, an evidence and a compacted fact with one search each and reads each with one peek", async () => {
		const lookups: { key: string; calls: { action: string; args: Record<string, unknown> }[] }[] = [];
		const provider = await startLoopbackProvider({ respond: lookupAgent(lookups), sideReply: () => say("ok") });
		cleanups.push(() => provider.close());
		const sandbox = createPiSandbox({
			baseUrl: provider.baseUrl,
			extensions: [EXTENSION],
			settings: { compaction: { keepRecentTokens: 1_000 } },
		});
		cleanups.push(() => sandbox.dispose());
		const rpc = startRpc(sandbox);
		cleanups.push(async () => {
			await rpc.close();
		});
		const prompt = async (message: string) => {
			const { response } = await rpc.promptAndSettle(message);
			expect(response.success, response.error).toBe(true);
		};

		// Turn 1: five stages and one oversized MCP result; turn 2 closes it, so turn 1 may fold.
		for (let stage = 1; stage <= STAGES; stage++)
			provider.enqueue(callTools([{ id: `call_s${stage}`, name: "repo_stage", arguments: { stage } }]));
		provider.enqueue(callTools([{ id: "call_docs", name: DOCS_TOOL, arguments: {} }]), say("Stages read."));
		await prompt("Run stages 1 to 5, then fetch the docs.");
		provider.enqueue(say("Noted."));
		await prompt("Thanks.");

		// Fold stage 1; fold stages 2 and 3 and consolidate them; compact the rest away.
		for (const call of ["call_s1", "call_s2", "call_s3"]) await prompt(`/fold-context ${call}`);
		let records = foldRecords(readSessionFile(onlySessionFile(sandbox)));
		expect(records.map((record) => record.kind)).toEqual(["tool-batch", "tool-batch", "tool-batch"]);
		const [single, second, third] = records;
		await prompt(`/fold-context ${second?.id} ${third?.id}`);
		records = foldRecords(readSessionFile(onlySessionFile(sandbox)));
		const consolidation = records.find((record) => record.kind === "consolidation");
		expect(consolidation?.parts).toEqual([
			{ type: "fold", foldId: second?.id },
			{ type: "fold", foldId: third?.id },
		]);
		const compacted = await rpc.send({ type: "compact" }, COMPACT_TIMEOUT_MS);
		expect(compacted.success, compacted.error).toBe(true);

		// Four lookups, one per kind of source.
		const keys = [
			`${stageFact(1).slice(0, 13)}`,
			`${stageFact(3).slice(0, 13)}`,
			"FACT-DOCS-",
			`${stageFact(4).slice(0, 13)}`,
		];
		for (const key of keys) await prompt(`Find ${key}`);
		expect(lookups.map((lookup) => lookup.calls.map((call) => call.action))).toEqual(
			keys.map(() => ["search", "peek"]),
		);

		const entries = readSessionFile(onlySessionFile(sandbox)) as unknown as SessionEntry[];
		const byId = new Map(entries.map((entry) => [entry.id, entry]));
		const resultOf = (id: string) => {
			for (const request of provider.requests)
				for (const message of request.body.messages) if (message.tool_call_id === id) return text(message);
			throw new Error(`no result for ${id}`);
		};
		const searchText = (n: number) => resultOf(`search_${2 * n + 1}`);
		const peekText = (n: number) => resultOf(`peek_${2 * n + 2}`);
		const stageResult = (callId: string) =>
			entries.find(
				(entry) =>
					entry.type === "message" && entry.message.role === "toolResult" && entry.message.toolCallId === callId,
			) as SessionEntry;
		// A hit in a folded stage names the result entry holding it; the peek call after it names the fold.
		const foldedHit = (callId: string) =>
			new RegExp(`^1\\. entry ${stageResult(callId).id} \\(repo_stage result\\), byte \\d+: `, "m");

		// 1. A folded tool batch: the hit names it, and the peek reads its exact source.
		const foldSource = (id: string) =>
			canonicalSpanBytes(leafIds(records, id).map((leaf) => byId.get(leaf) as SessionEntry));
		const checks: { n: number; fact: string; where: RegExp; bytes: Uint8Array; id: string }[] = [
			{
				n: 0,
				fact: stageFact(1),
				where: foldedHit("call_s1"),
				bytes: foldSource(single?.id ?? ""),
				id: single?.id ?? "",
			},
			{
				n: 1,
				fact: stageFact(3),
				where: foldedHit("call_s3"),
				bytes: foldSource(third?.id ?? ""),
				id: third?.id ?? "",
			},
		];
		// 2. The evidence artifact, as stored on disk.
		const evidenceRoot = join(sandbox.sessionDir, EVIDENCE_DIR_NAME);
		const artifact = readdirSync(evidenceRoot, { recursive: true, withFileTypes: true }).find((entry) =>
			entry.isFile(),
		);
		if (!artifact) throw new Error("no evidence artifact");
		const artifactBytes = readFileSync(join(artifact.parentPath, artifact.name));
		checks.push({
			n: 2,
			fact: DOCS_FACT,
			where: /^1\. evidence artifact, byte \d+: /m,
			bytes: artifactBytes,
			id: `evidence:${sha256Hex(artifactBytes)}`,
		});
		// 3. A compacted stage result: its canonical entry bytes.
		const stage4 = stageResult("call_s4");
		// Before Pi compacts, the ladder folds what it can (a deep span); a fact inside such a fold is read from the
		// fold, the innermost holder, whether or not the compaction also covered it. Otherwise it is a compacted entry.
		const allRecords = foldRecords(readSessionFile(onlySessionFile(sandbox)));
		const innermost = allRecords
			.filter((record) => leafIds(allRecords, record.id).includes(stage4.id))
			.sort((a, b) => leafIds(allRecords, a.id).length - leafIds(allRecords, b.id).length)[0];
		checks.push(
			innermost
				? {
						n: 3,
						fact: stageFact(4),
						where: foldedHit("call_s4"),
						bytes: canonicalSpanBytes(leafIds(allRecords, innermost.id).map((leaf) => byId.get(leaf) as SessionEntry)),
						id: innermost.id,
					}
				: {
						n: 3,
						fact: stageFact(4),
						where: /^1\. compacted repo_stage result, byte \d+: /m,
						bytes: canonicalBytes(stage4),
						id: stage4.id,
					},
		);

		for (const check of checks) {
			const found = searchText(check.n);
			expect(found, found).toMatch(check.where);
			const peekArgs = lookups[check.n]?.calls[1]?.args;
			expect(peekArgs?.id).toBe(check.id);
			const read = peekParts(peekText(check.n));
			expect(read.hash).toBe(sha256Hex(check.bytes));
			expect(read.total).toBe(check.bytes.length);
			// A hit's peek reads a slice around it, or (no offset) a small source whole.
			expect(read.start).toBe(peekArgs?.offset ?? 0);
			expect(read.slice).toBe(new TextDecoder().decode(check.bytes.slice(read.start, read.end)));
			expect(read.slice).toContain(check.fact);
		}

		// The person gets the same search: /context search, in readable words.
		const { records: shown } = await rpc.promptAndSettle(`/context search ${keys[1]}`);
		const report = shown.flatMap((record) =>
			record.type === "extension_ui_request" && record.method === "notify" ? [String(record.message)] : [],
		);
		expect(report.join("\n")).toContain(
			`1. Fold ${third?.id} (tool batch, inside ${consolidation?.id}), in a repo_stage result, at `,
		);
		// "See it" names the page of the fold's source that shows the fact, and that page does.
		const see = new RegExp(`See it: (/context peek ${third?.id} \\d+)`).exec(report.join("\n"))?.[1];
		expect(see, report.join("\n")).toBeDefined();
		const { records: peeked } = await rpc.promptAndSettle(see ?? "");
		const page = peeked.flatMap((record) =>
			record.type === "extension_ui_request" && record.method === "notify" ? [String(record.message)] : [],
		);
		expect(page.join("\n")).toContain(stageFact(3));
		expect(provider.rejections).toEqual([]);
	}, 120_000);
});

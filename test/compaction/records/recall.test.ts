/**
 * Checked exact recall: an operation address returns that operation's exact
 * canonical bytes, paged; the hash a compaction recorded is checked (a
 * tampered entry is refused by name); an address no compaction on the active
 * branch recorded is refused as foreign; an entry compacted on an earlier
 * branch resolves through the branch summary on the active branch. Also the
 * compactor records the hashes, and details v2 stay readable with them.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { buildDeterministicBranchSummary } from "../../../src/compaction/branch.ts";
import { buildCompactionDetails, parseCompactionDetails } from "../../../src/compaction/records/details.ts";
import { recall } from "../../../src/compaction/records/recall.ts";
import { recallReport } from "../../../src/compaction/records/recall-report.ts";
import { canonicalBytes, sha256Hex } from "../../../src/session/canonical.ts";
import { sourceHashesOf } from "../../../src/session/records/source-hashes.ts";
import { detailsInput } from "../../fixtures/compaction-budget.ts";
import { SessionBuilder, traceV1 } from "../../fixtures/compaction-events.ts";
import { treeEvent } from "../../fixtures/compaction-host.ts";

const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** A branch with one fabric_exec run of three operations, compacted by a record holding its hashes. */
function compactedBranch() {
	const b = new SessionBuilder();
	b.user("run the checks");
	const trace = traceV1(
		[
			{ ref: "pi.read", args: { path: "a.ts" }, sequence: 2 },
			{ ref: "pi.bash", args: { command: "npm test" }, sequence: 0, outcome: "failed", error: "exit 1" },
			{ ref: "pi.edit", args: { path: "b.ts" }, sequence: 1 },
		],
		{ phases: ["plan", "apply"] },
	);
	const [, resultId] = b.fabric("run-1", { details: { trace } });
	b.assistant("done");
	const compacted = [...b.entries];
	const details = buildCompactionDetails(detailsInput({ sourceHashes: sourceHashesOf(compacted) }));
	const markerId = b.compaction("summary", b.lastId, details);
	return { b, resultId, markerId, compacted, trace };
}

describe("recall by operation address", () => {
	it("returns exactly that operation (in sequence order) or phase, verified against the recorded hash", () => {
		const { b, resultId, markerId, trace } = compactedBranch();
		const branch = b.entries;
		const ops = (trace.operations as { sequence: number }[]).slice().sort((x, y) => x.sequence - y.sequence);
		const first = recall({ address: `${resultId}/0`, branch, entryById: () => undefined });
		expect(first.ok && decode(first.bytes)).toBe(decode(canonicalBytes(ops[0])));
		expect(first.ok && first.recorded?.recordedBy).toBe(markerId);
		const phase = recall({ address: `@${resultId}/phase:1`, branch, entryById: () => undefined });
		expect(phase.ok && decode(phase.bytes)).toBe('"apply"');
		expect(recall({ address: `${resultId}/3`, branch, entryById: () => undefined })).toMatchObject({
			ok: false,
			code: "unknown-operation",
		});
	});

	it("pages the exact bytes on character boundaries and names the check in the header", () => {
		const { b, resultId, markerId } = compactedBranch();
		const entry = b.entries.find((e) => e.id === resultId) as SessionEntry;
		const exact = decode(canonicalBytes(entry));
		const input = { address: resultId, branch: b.entries, entryById: () => undefined, toolName: "active_context" };
		const page1 = recallReport({ ...input, offset: 0, bytes: 100 });
		expect(page1.ok).toBe(true);
		expect(page1.text).toContain(
			`sha256 ${sha256Hex(exact)} verified against the hash compaction ${markerId} recorded`,
		);
		expect(page1.text).toContain('More follows: active_context {"action":"peek","id":');
		const body1 = page1.text.slice(page1.text.indexOf("\n\n") + 2);
		const page2 = recallReport({ ...input, offset: 100, bytes: 1_000_000 });
		expect(body1 + page2.text.slice(page2.text.indexOf("\n\n") + 2)).toBe(exact);
		expect(page2.text).toContain("This is the end.");
	});
});

describe("recall checks", () => {
	it("detects a tampered entry and names it", () => {
		const { b, resultId, markerId } = compactedBranch();
		const tampered = b.entries.map((entry) =>
			entry.id === resultId ? ({ ...entry, timestamp: "2030-01-01T00:00:00.000Z" } as SessionEntry) : entry,
		);
		const result = recall({ address: `${resultId}/1`, branch: tampered, entryById: () => undefined });
		expect(result).toMatchObject({ ok: false, code: "tampered" });
		expect(result.ok ? "" : result.message).toContain(`@${resultId} was changed after compaction ${markerId}`);
	});

	it("refuses an address from another branch that no compaction here recorded", () => {
		const { b } = compactedBranch();
		const other = new SessionBuilder("o");
		other.user("sibling work");
		const foreign = other.entries[0] as SessionEntry;
		const lookup = (id: string) => (id === foreign.id ? foreign : undefined);
		expect(recall({ address: foreign.id, branch: b.entries, entryById: lookup })).toMatchObject({
			ok: false,
			code: "foreign-address",
		});
		const report = recallReport({
			address: foreign.id,
			branch: b.entries,
			entryById: lookup,
			toolName: "t",
			offset: 0,
			bytes: 10,
		});
		expect(report).toMatchObject({ ok: false, code: "foreign-address" });
		expect(
			recallReport({
				address: "@nothere",
				branch: b.entries,
				entryById: () => undefined,
				toolName: "t",
				offset: 0,
				bytes: 1,
			}),
		).toMatchObject({ ok: false, code: "unknown-id" });
	});

	it("resolves an entry compacted on an earlier branch through the branch summary on this one", () => {
		const abandoned = new SessionBuilder("x");
		abandoned.user("try the risky refactor");
		abandoned.assistant("refactored module x");
		const outcome = buildDeterministicBranchSummary(treeEvent(abandoned.entries).preparation);
		if (outcome.kind !== "summary") throw new Error(`no summary: ${outcome.kind}`);
		expect(outcome.details.sourceHashes?.entries).toHaveProperty(abandoned.entries[0]?.id ?? "?");
		const active = new SessionBuilder("a");
		active.user("start over");
		active.branchSummary(outcome.summary, active.lastId, outcome.details);
		const target = abandoned.entries[0] as SessionEntry;
		const report = recallReport({
			address: `@${target.id}`,
			branch: active.entries,
			entryById: (id) => abandoned.entries.find((e) => e.id === id),
			toolName: "t",
			offset: 0,
			bytes: 100_000,
		});
		expect(report.ok).toBe(true);
		expect(report.text).toContain("from an earlier branch of this session");
		expect(report.text.endsWith(decode(canonicalBytes(target)))).toBe(true);
	});

	it("keeps details v2 readable with and without recorded hashes", () => {
		const withHashes = buildCompactionDetails(
			detailsInput({ sourceHashes: { algorithm: "sha256-canonical-json", entries: { a: "0".repeat(64) } } }),
		);
		expect(parseCompactionDetails(JSON.parse(JSON.stringify(withHashes)))).toMatchObject({ ok: true, version: 2 });
		expect(parseCompactionDetails(buildCompactionDetails(detailsInput()))).toMatchObject({ ok: true, version: 2 });
		const bad = { ...withHashes, sourceHashes: { algorithm: "sha256-canonical-json", entries: { a: "zz" } } };
		expect(parseCompactionDetails(bad)).toMatchObject({ ok: false });
	});
});

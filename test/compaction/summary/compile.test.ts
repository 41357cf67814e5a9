import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { runQa } from "../../../src/compaction/qa/qa.ts";
import { compileSummary } from "../../../src/compaction/summary/compile.ts";
import { SUMMARY_MAX_BYTES } from "../../../src/compaction/summary/render.ts";
import { closureSafeBoundaries, toolCallSpans } from "../../../src/session/closure.ts";
import {
	activeBranch,
	branchEnvelope,
	fact,
	generateSession,
	loadRealBranch,
	POISON,
	REAL_SESSIONS,
	SessionBuilder,
	traceV1,
} from "../../fixtures/compaction-events.ts";

const clone = (entries: readonly SessionEntry[]): SessionEntry[] => JSON.parse(JSON.stringify(entries));

/** Compile twice from structurally equal copies and check every acceptance property. */
function expectAccepted(entries: readonly SessionEntry[], keptEntries: readonly SessionEntry[] = []) {
	const first = compileSummary({ entries, keptEntries });
	const second = compileSummary({ entries: clone(entries), keptEntries: clone(keptEntries) });
	expect(first.bytes).toBeLessThanOrEqual(SUMMARY_MAX_BYTES);
	expect(new TextEncoder().encode(first.text).length).toBe(first.bytes);
	expect(second.text).toBe(first.text);
	const report = runQa(first.text, first.qa);
	expect(report.probes.filter((probe) => !probe.passed)).toEqual([]);
	expect(report.score).toBe(1);
	return first;
}

/** Lines of compaction summary prose that occur nowhere else in the log. */
function compactionOnlyLines(entries: readonly SessionEntry[]): string[] {
	const others = entries
		.filter((entry) => entry.type !== "compaction")
		.map((entry) => JSON.stringify(entry))
		.join("\n");
	return entries
		.flatMap((entry) => (entry.type === "compaction" ? entry.summary.split("\n") : []))
		.map((line) => line.trim())
		.filter((line) => line.length >= 40 && !others.includes(JSON.stringify(line).slice(1, -1)));
}

const isUser = (entry: SessionEntry | undefined) => entry?.type === "message" && entry.message.role === "user";
const hasAssistantText = (entry: SessionEntry | undefined) =>
	entry?.type === "message" &&
	entry.message.role === "assistant" &&
	entry.message.content.some((part) => part.type === "text" && part.text.trim() !== "");

/** The latest closure-safe cut before a user reply whose preceding assistant text is summarized. */
function crossingCut(entries: readonly SessionEntry[], safe: readonly boolean[]): number {
	for (let cut = entries.length - 10; cut > 0; cut--) {
		if (!safe[cut] || !isUser(entries[cut])) continue;
		for (let back = cut - 1; back >= 0 && !isUser(entries[back]); back--) {
			if (hasAssistantText(entries[back])) return cut;
		}
	}
	throw new Error("no crossing cut in this log");
}

describe("compileSummary on the real session logs", () => {
	for (const [name, path] of Object.entries(REAL_SESSIONS)) {
		it(`${name}: bounded, byte-identical on recompile, QA 1.0, no compaction prose`, () => {
			const entries = loadRealBranch(path);
			const result = expectAccepted(entries);
			expect(result.sourceEntryCount).toBe(entries.length);
			expect(result.sourceRange).toEqual({ firstEntryId: entries[0]?.id, lastEntryId: entries.at(-1)?.id });
			expect(result.sourceTimestamp).toBe(entries.at(-1)?.timestamp);
			const prose = compactionOnlyLines(entries);
			if (name === "beforeCompaction") expect(prose.length).toBeGreaterThan(10);
			for (const line of prose) expect(result.text).not.toContain(line);
		});

		it(`${name}: split at a closure-safe cut, the crossing reply is addressed and QA stays 1.0`, () => {
			const entries = loadRealBranch(path);
			const safe = closureSafeBoundaries(entries.length, toolCallSpans(entries));
			const cut = crossingCut(entries, safe);
			const result = expectAccepted(entries.slice(0, cut), entries.slice(cut));
			expect(result.keptEntryCount).toBe(entries.length - cut);
			expect(result.sourceRange?.lastEntryId).toBe(entries[cut - 1]?.id);
			expect(result.text).toContain(`User @${entries[cut]?.id}: retained raw`);
		});
	}

	it("keeps poison appended as compaction, branch-summary prose and plain custom entries out", () => {
		const entries = loadRealBranch(REAL_SESSIONS.large);
		const b = new SessionBuilder("p");
		b.branchFrom(entries.at(-1)?.id ?? null);
		b.compaction(POISON.compaction, entries.at(-1)?.id ?? "");
		b.branchSummary(POISON.branchSummary, entries[0]?.id ?? "");
		b.custom("state", { note: POISON.custom });
		const result = expectAccepted([...entries, ...b.entries]);
		for (const poison of [POISON.compaction, POISON.branchSummary, POISON.custom])
			expect(result.text).not.toContain(poison);
	});
});

describe("compileSummary on generated sessions", () => {
	for (const [size, seed] of [
		[1, 1],
		[120, 2],
		[2_000, 3],
		[20_000, 4],
	] as const) {
		it(`${size} entries: bounded, deterministic, QA 1.0, poison-free`, () => {
			const builder = generateSession(size, seed);
			const result = expectAccepted(builder.entries);
			expect(result.sourceEntryCount).toBe(builder.entries.length);
			for (const poison of Object.values(POISON)) expect(result.text).not.toContain(poison);
		});
	}
});

describe("compileSummary on a branched session", () => {
	it("summarizes only the active branch; abandoned work survives only as typed branch facts", () => {
		const b = new SessionBuilder();
		const root = b.user("shared beginning");
		b.assistant("shared answer");
		const fork = b.lastId;
		// Abandoned branch: everything here is poison.
		b.user(`${POISON.inactive} user`);
		b.tool("x1", "edit", { path: `/${POISON.inactive}.ts` });
		b.fabric("x2", { display: { name: `${POISON.inactive} run` } });
		b.customMessage("note", `${POISON.inactive} custom`);
		const abandonedLeaf = b.tool("x3", "bash", { command: `echo ${POISON.inactive}` }, { isError: true })[1];
		// Active branch resumes at the fork with a branch summary carrying typed facts.
		b.branchFrom(fork);
		b.branchSummary(
			`${POISON.branchSummary} prose`,
			abandonedLeaf,
			branchEnvelope([
				fact("x9", "0", { kind: "user", text: "abandoned but typed request" }),
				fact("x8", "call:x2", { kind: "fabricRun", name: "Typed abandoned run", outcome: "failed" }),
			]),
		);
		b.user("active request");
		b.tool("a1", "write", { path: "/active.ts" }, { details: { created: true } });
		const [runCall] = b.fabric("a2", {
			display: { name: "Active run", description: "does things" },
			details: { trace: traceV1([{ ref: "pi.bash", args: { command: "make" } }]) },
		});
		const leaf = b.assistant("active answer");
		const branch = activeBranch(b.entries, leaf);
		expect(branch[0]?.id).toBe(root);
		const result = expectAccepted(branch);
		expect(result.text).not.toContain(POISON.inactive);
		expect(result.text).not.toContain(POISON.branchSummary);
		expect(result.text).toContain('@x9/0 "abandoned but typed request"');
		expect(result.text).toContain('@x8/call:x2 run "Typed abandoned run" → failed');
		expect(result.text).toContain(`Latest Fabric run @${runCall} run "Active run" → succeeded`);
		expect(result.text).toContain("active.ts");
	});

	it("reports everything the details record needs", () => {
		const b = new SessionBuilder();
		b.user("a");
		b.assistant({ thinking: ["t1", "t2"], text: "b" });
		const result = compileSummary({ entries: b.entries, requestBlock: "[Compaction Request]\nInstructions: x" });
		expect(result).toMatchObject({
			eventCount: 2,
			keptEventCount: 0,
			sourceEntryCount: 2,
			keptEntryCount: 0,
			erasedThinkingCount: 2,
			requestOmittedBytes: 0,
			carryForwardOmittedBytes: 0,
			sourceRange: { firstEntryId: b.entries[0]?.id, lastEntryId: b.entries[1]?.id },
		});
		expect(Object.keys(result.omittedCounts).sort()).toEqual(
			[
				"activity",
				"annotations",
				"decisions",
				"dialogueBytes",
				"filesCreated",
				"filesModified",
				"filesRead",
				"filesWritten",
				"goal",
				"operations",
				"plan",
				"transcript",
				"turns",
				"work",
			].sort(),
		);
		expect(result.text).toContain("[Compaction Request]\nInstructions: x");
	});

	it("handles an empty prefix without inventing a range or a timestamp", () => {
		const result = compileSummary({ entries: [] });
		expect(result.sourceRange).toBeUndefined();
		expect(result.sourceTimestamp).toBeUndefined();
		expect(result.text).toContain("Source timestamp: unknown");
		expect(runQa(result.text, result.qa).score).toBe(1);
	});
});

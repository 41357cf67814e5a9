import { describe, expect, it } from "vitest";
import { runQa } from "../../src/compaction/qa/qa.ts";
import { compileSummary } from "../../src/compaction/summary/compile.ts";
import type { NormalizedEvent } from "../../src/session/events.ts";
import {
	BASH_OUTPUT_EXCERPT_MAX_BYTES,
	CUSTOM_DETAILS_BOUNDS,
	ERROR_TEXT_MAX_BYTES,
	normalizeBranch,
	TOOL_ARGS_BOUNDS,
} from "../../src/session/normalize.ts";
import { activeBranch, branchEnvelope, fact, SessionBuilder, traceV1 } from "../fixtures/compaction-events.ts";

const kinds = (events: readonly NormalizedEvent[]) => events.map((event) => event.kind);
const allText = (events: readonly NormalizedEvent[]) => JSON.stringify(events);

describe("normalizeBranch: messages", () => {
	it("turns typed messages into events with entry ids, entry indices and dense ordinals", () => {
		const b = new SessionBuilder();
		const user = b.user("hello");
		const call = b.assistant({ text: "reading", calls: [{ id: "t1", name: "read", args: { path: "a.ts" } }] });
		const result = b.result("t1", "read", "body");
		const bash = b.bash("ls", { exitCode: 2, output: "no such file" });
		const { events, cutEventIndex, sourceEntryIds } = normalizeBranch(b.entries);
		expect(kinds(events)).toEqual(["user", "assistant", "toolCall", "toolResult", "bash"]);
		expect(events.map((event) => event.ordinal)).toEqual([0, 1, 2, 3, 4]);
		expect(events.map((event) => event.entryId)).toEqual([user, call, call, result, bash]);
		expect(events.map((event) => event.entryIndex)).toEqual([0, 1, 1, 2, 3]);
		expect(cutEventIndex).toBe(5);
		expect(sourceEntryIds).toEqual([user, call, result, bash]);
		expect(events[4]).toMatchObject({ kind: "bash", command: "ls", exitCode: 2, outputExcerpt: "no such file" });
	});

	it("joins the text parts of one assistant entry and never emits thinking, only counts it", () => {
		const b = new SessionBuilder();
		b.assistant({ thinking: ["SECRET-THOUGHT-1", "SECRET-THOUGHT-2"], text: ["part one", "part two"] });
		b.assistant({ thinking: ["SECRET-THOUGHT-3"], calls: [{ id: "t", name: "bash", args: { command: "x" } }] });
		const { events, counts } = normalizeBranch(b.entries);
		expect(kinds(events)).toEqual(["assistant", "toolCall"]);
		expect(events[0]).toMatchObject({ text: "part one\npart two" });
		expect(allText(events)).not.toContain("SECRET-THOUGHT");
		expect(counts.thinkingErased).toBe(3);
	});

	it("counts thinking only in the summarized prefix", () => {
		const b = new SessionBuilder();
		b.assistant({ thinking: ["a"], text: "x" });
		const kept = new SessionBuilder("k");
		kept.assistant({ thinking: ["b", "c"], text: "y" });
		expect(normalizeBranch(b.entries, kept.entries).counts.thinkingErased).toBe(1);
	});

	it("pairs results with calls only by toolCallId, whatever their order", () => {
		const b = new SessionBuilder();
		const callEntry = b.assistant({
			calls: [
				{ id: "A", name: "read", args: { path: "a.ts" } },
				{ id: "B", name: "read", args: { path: "b.ts" } },
			],
		});
		b.result("B", "read", "b");
		b.result("A", "read", "a");
		b.result("ZZ", "read", "orphan");
		const results = normalizeBranch(b.entries).events.filter((event) => event.kind === "toolResult");
		expect(results.map((event) => [event.toolCallId, event.call?.args?.path])).toEqual([
			["B", "b.ts"],
			["A", "a.ts"],
			["ZZ", undefined],
		]);
		expect(results[0]?.call?.entryId).toBe(callEntry);
	});

	it("keeps bounded error text only for error results and the typed created flag", () => {
		const b = new SessionBuilder();
		b.tool("w", "write", { path: "n.ts", content: "" }, { details: { created: true } });
		b.tool("w2", "write", { path: "m.ts", content: "" }, { details: { created: "yes" } });
		b.tool("e", "edit", { path: "n.ts" }, { isError: true, output: `bad ${"x".repeat(10_000)}` });
		const results = normalizeBranch(b.entries).events.filter((event) => event.kind === "toolResult");
		expect(results.map((event) => event.created)).toEqual([true, false, false]);
		expect(results[0]?.errorText).toBeUndefined();
		expect(Buffer.byteLength(results[2]?.errorText ?? "")).toBeLessThanOrEqual(ERROR_TEXT_MAX_BYTES);
		expect(results[2]?.errorText?.startsWith("bad x")).toBe(true);
	});

	it("bounds failed bash output and skips executions excluded from context", () => {
		const b = new SessionBuilder();
		b.bash("make", { exitCode: 1, output: `${"noise ".repeat(2000)}final error` });
		b.bash("secret", { exclude: true });
		const { events } = normalizeBranch(b.entries);
		expect(events).toHaveLength(1);
		const excerpt = events[0]?.kind === "bash" ? (events[0].outputExcerpt ?? "") : "";
		expect(Buffer.byteLength(excerpt)).toBeLessThanOrEqual(BASH_OUTPUT_EXCERPT_MAX_BYTES);
		expect(excerpt.endsWith("final error")).toBe(true);
	});
});

describe("normalizeBranch: entries that never become events", () => {
	it("ignores compaction prose, branch-summary prose, summary roles, system messages, plain custom entries and unknown roles", () => {
		const b = new SessionBuilder();
		b.compaction("POISON compaction prose", "c00001");
		b.branchSummary("POISON branch prose", "c00001");
		b.branchSummary("POISON branch prose 2", "c00001", { kind: "something-else", summary: "POISON" });
		b.push({
			type: "message",
			message: { role: "compactionSummary", summary: "POISON", tokensBefore: 1, timestamp: 0 },
		});
		b.push({ type: "message", message: { role: "branchSummary", summary: "POISON", fromId: null, timestamp: 0 } });
		b.push({ type: "message", message: { role: "system", content: "POISON system", timestamp: 0 } });
		b.push({ type: "message", message: { role: "mystery", content: "POISON", timestamp: 0 } });
		b.custom("state", { note: "POISON custom state" });
		b.label("c00001", "POISON label");
		b.push({ type: "model_change", provider: "x", modelId: "POISON" });
		const { events, counts } = normalizeBranch(b.entries);
		expect(events).toEqual([]);
		expect(counts.branchEnvelopesIgnored).toBe(2);
	});
});

describe("normalizeBranch: context edits", () => {
	it("omits targets and swaps only content, latest edit per target winning", () => {
		const b = new SessionBuilder();
		const user = b.user("original request");
		const assistant = b.assistant("original answer");
		const call = b.assistant({ calls: [{ id: "t", name: "bash", args: { command: "ls" } }] });
		const result = b.result("t", "bash", "original error", { isError: true });
		b.contextEdit(user, { content: "first replacement" });
		b.contextEdit(user, { content: [{ type: "text", text: "final replacement" }] });
		b.contextEdit(assistant, null);
		b.contextEdit(result, { content: "folded brief" });
		const { events, counts } = normalizeBranch(b.entries);
		expect(kinds(events)).toEqual(["user", "toolCall", "toolResult"]);
		expect(events[0]).toMatchObject({ text: "final replacement", entryId: user });
		expect(events[2]).toMatchObject({ isError: true, toolCallId: "t", errorText: "folded brief" });
		expect(events[2]?.kind === "toolResult" && events[2].call?.entryId).toBe(call);
		expect(allText(events)).not.toContain("original");
		expect(counts).toMatchObject({ editOmissions: 1, editReplacements: 2 });
	});

	it("applies edits found in the kept tail to summarized targets", () => {
		const b = new SessionBuilder();
		const user = b.user("old text");
		const kept = new SessionBuilder("k");
		kept.contextEdit(user, null);
		expect(normalizeBranch(b.entries, kept.entries).events).toEqual([]);
	});

	it("is branch-relative: an edit on an abandoned branch does not apply", () => {
		const b = new SessionBuilder();
		const user = b.user("visible request");
		const fork = b.assistant("answer");
		b.contextEdit(user, null);
		b.branchFrom(fork);
		const leaf = b.user("next");
		const { events } = normalizeBranch(activeBranch(b.entries, leaf));
		expect(events.map((event) => (event.kind === "user" ? event.text : event.kind))).toEqual([
			"visible request",
			"assistant",
			"next",
		]);
	});
});

describe("normalizeBranch: custom messages", () => {
	it("keeps typed customType, text from string or text parts, images, display and bounded details", () => {
		const b = new SessionBuilder();
		b.customMessage("note", "plain string", { display: false });
		b.customMessage(
			"note",
			[
				{ type: "text", text: "a" },
				{ type: "image", data: "AAAA", mimeType: "image/png" },
				{ type: "weird", text: "not a text part" },
				{ type: "text", text: "b" },
			],
			{ details: { ok: [1, 2] } },
		);
		const { events } = normalizeBranch(b.entries);
		expect(events[0]).toMatchObject({
			kind: "custom",
			customType: "note",
			text: "plain string",
			display: false,
			detailsStatus: "absent",
		});
		expect(events[1]).toMatchObject({
			text: "a\nb",
			images: 1,
			display: true,
			details: { ok: [1, 2] },
			detailsStatus: "kept",
		});
	});

	it("omits malformed or over-bound details while the content stays", () => {
		const b = new SessionBuilder();
		let deep: unknown = "leaf";
		for (let depth = 0; depth <= CUSTOM_DETAILS_BOUNDS.maxDepth + 1; depth++) deep = { deep };
		b.customMessage("a", "kept one", { details: { bad: Number.POSITIVE_INFINITY } });
		b.customMessage("b", "kept two", { details: deep });
		b.customMessage("c", "kept three", { details: { big: "x".repeat(CUSTOM_DETAILS_BOUNDS.maxStringBytes + 1) } });
		b.customMessage("d", "kept four", {
			details: Array.from({ length: CUSTOM_DETAILS_BOUNDS.maxCollection + 1 }, () => 0),
		});
		b.push({ type: "custom_message", customType: 7, content: "untyped", display: true });
		const { events, counts } = normalizeBranch(b.entries);
		expect(events.map((event) => (event.kind === "custom" ? [event.text, event.detailsStatus] : []))).toEqual([
			["kept one", "omitted"],
			["kept two", "omitted"],
			["kept three", "omitted"],
			["kept four", "omitted"],
		]);
		expect(counts.customDetailsOmitted).toBe(4);
	});

	it("pins the details bounds", () => {
		expect(CUSTOM_DETAILS_BOUNDS).toEqual({
			maxDepth: 8,
			maxNodes: 512,
			maxCollection: 64,
			maxStringBytes: 2048,
			maxBytes: 8192,
		});
	});
});

describe("normalizeBranch: tool arguments", () => {
	it("bounds tool-call arguments: 20,000-deep nesting is omitted and counted, the call and its pairing stay", () => {
		const b = new SessionBuilder();
		b.user("go");
		let deep: unknown = {};
		for (let depth = 0; depth < 20_000; depth++) deep = { a: deep };
		const [callEntry] = b.tool("t1", "mytool", { x: deep }, { isError: true, output: "bad input" });
		const [readCall] = b.tool("t2", "read", { path: "/repo/a.ts", extra: deep });
		b.user("next");
		const { events, counts } = normalizeBranch(b.entries);
		const calls = events.filter((event) => event.kind === "toolCall");
		expect(calls.map((event) => [event.toolName, event.args])).toEqual([
			["mytool", undefined],
			["read", undefined],
		]);
		const results = events.filter((event) => event.kind === "toolResult");
		expect(results.map((event) => event.call)).toEqual([
			{ entryId: callEntry, args: undefined },
			{ entryId: readCall, args: undefined },
		]);
		expect(counts.toolArgsOmitted).toBe(2);
		const compiled = compileSummary({ entries: b.entries });
		expect(compiled.text).toContain("open mytool");
		expect(runQa(compiled.text, compiled.qa).score).toBe(1);
	});

	it("keeps large but shallow arguments, so a big write keeps its path", () => {
		const b = new SessionBuilder();
		b.user("write it");
		b.tool("w1", "write", { path: "/repo/big.ts", content: "x".repeat(2 * 1024 * 1024) });
		const { events, counts } = normalizeBranch(b.entries);
		expect(counts.toolArgsOmitted).toBe(0);
		expect(events.find((event) => event.kind === "toolCall")).toMatchObject({ args: { path: "/repo/big.ts" } });
		expect(compileSummary({ entries: b.entries }).text).toContain("big.ts");
	});

	it("pins the tool-argument bounds", () => {
		expect(TOOL_ARGS_BOUNDS).toEqual({
			maxDepth: 64,
			maxNodes: 200_000,
			maxCollection: 200_000,
			maxStringBytes: 16 * 1024 * 1024,
		});
	});
});

describe("normalizeBranch: fabric_exec", () => {
	it("emits declared intent at the call address plus phases and operations in sequence order", () => {
		const b = new SessionBuilder();
		const [callEntry, resultEntry] = b.fabric("f1", {
			display: { name: "Index repo", description: "Walk and index" },
			isError: true,
			code: "SOURCE-CODE-POISON",
			output: "RESULT-PROSE-POISON",
			details: {
				trace: traceV1(
					[
						{ ref: "pi.edit", args: { path: "z.ts" }, sequence: 9, result: { created: true } },
						{ ref: "pi.bash", args: { command: "make" }, sequence: 3, outcome: "failed", error: "exit 2" },
					],
					{ phases: ["plan", "apply"], outcome: "succeeded" },
				),
			},
		});
		const { events } = normalizeBranch(b.entries);
		const fabric = events.filter((event) => event.kind.startsWith("fabric"));
		expect(fabric.map((event) => [event.kind, event.address])).toEqual([
			["fabricRun", callEntry],
			["fabricPhase", `${resultEntry}/phase:0`],
			["fabricPhase", `${resultEntry}/phase:1`],
			["fabricOperation", `${resultEntry}/0`],
			["fabricOperation", `${resultEntry}/1`],
		]);
		expect(fabric[0]).toMatchObject({
			name: "Index repo",
			description: "Walk and index",
			outcome: "succeeded",
			factAddress: `${callEntry}/call:f1`,
			entryId: resultEntry,
		});
		expect(fabric[3]).toMatchObject({ ref: "pi.bash", outcome: "failed", error: "exit 2", created: false });
		expect(fabric[4]).toMatchObject({ ref: "pi.edit", created: true });
		const facts = JSON.stringify(fabric);
		expect(facts).not.toContain("SOURCE-CODE-POISON");
		expect(facts).not.toContain("RESULT-PROSE-POISON");
	});

	it("takes the outcome from isError when no valid aggregate exists", () => {
		const b = new SessionBuilder();
		b.fabric("f1", { display: { name: "A" }, isError: true });
		b.fabric("f2", { display: { name: "B" }, isError: false, details: { audits: [] } });
		const runs = normalizeBranch(b.entries).events.filter((event) => event.kind === "fabricRun");
		expect(runs.map((run) => run.kind === "fabricRun" && run.outcome)).toEqual(["failed", "succeeded"]);
	});

	it("never falls back to legacy audits when a trace field is present but invalid", () => {
		const b = new SessionBuilder();
		b.fabric("f1", {
			display: { name: "A" },
			details: {
				trace: { kind: "pi-fabric.execution", version: 9 },
				audits: [{ ref: "pi.bash", args: { command: "x" }, success: true }],
			},
		});
		const { events, counts } = normalizeBranch(b.entries);
		expect(kinds(events)).toEqual(["toolCall", "toolResult", "fabricRun"]);
		expect(counts.fabricTracesRejected).toBe(1);
	});

	it("reads strict legacy audits when no trace field exists, and unnamed runs still contribute operations", () => {
		const b = new SessionBuilder();
		const [, resultEntry] = b.fabric("f1", {
			details: { audits: [{ ref: "pi.write", args: { path: "a.ts" }, success: false, error: "denied" }] },
		});
		const { events } = normalizeBranch(b.entries);
		expect(kinds(events)).toEqual(["toolCall", "toolResult", "fabricOperation"]);
		expect(events[2]).toMatchObject({
			address: `${resultEntry}/0`,
			outcome: "failed",
			error: "denied",
			source: "audit",
		});
	});

	it("needs a completed call: a call without result or a blank name declares nothing", () => {
		const b = new SessionBuilder();
		b.assistant({ calls: [{ id: "f1", name: "fabric_exec", args: { display: { name: "Never finished" } } }] });
		b.fabric("f2", { display: { name: "   " } });
		expect(normalizeBranch(b.entries).events.some((event) => event.kind === "fabricRun")).toBe(false);
	});
});

describe("normalizeBranch: branch-summary facts", () => {
	it("re-emits typed facts at their fact addresses and never reads the summary prose", () => {
		const b = new SessionBuilder();
		const summary = b.branchSummary(
			"BRANCH-PROSE-POISON",
			"x",
			branchEnvelope([
				fact("u9", "0", { kind: "user", text: "abandoned request" }),
				fact("m9", "0", { kind: "customMessage", customType: "note", text: "ctx", display: true }),
				fact("r9", "phase:0", { kind: "phase", phase: "plan" }),
				fact("r9", "0", {
					kind: "operation",
					ref: "pi.edit",
					tool: "fabric_exec",
					args: { path: "q.ts" },
					outcome: "failed",
					error: "no",
				}),
				fact("c9", "call:t9", { kind: "fabricRun", name: "Old run", outcome: "failed" }),
			]),
		);
		const { events, counts } = normalizeBranch(b.entries);
		expect(events.map((event) => [event.kind, event.address, event.entryId, event.origin])).toEqual([
			["user", "u9/0", summary, "branch-fact"],
			["custom", "m9/0", summary, "branch-fact"],
			["fabricPhase", "r9/phase:0", summary, "branch-fact"],
			["fabricOperation", "r9/0", summary, "branch-fact"],
			["fabricRun", "c9/call:t9", summary, "branch-fact"],
		]);
		expect(events[4]).toMatchObject({ callEntryId: "c9", toolCallId: "t9" });
		expect(allText(events)).not.toContain("BRANCH-PROSE-POISON");
		expect(counts.branchEnvelopesRead).toBe(1);
	});

	it("reads strict v1 envelopes but never a v1 envelope holding a v2-only run fact", () => {
		const b = new SessionBuilder();
		b.branchSummary("prose", "x", branchEnvelope([fact("u1", "0", { kind: "user", text: "v1 request" })], 1));
		b.branchSummary(
			"prose",
			"x",
			branchEnvelope([fact("c1", "call:t1", { kind: "fabricRun", name: "Not in v1", outcome: "succeeded" })], 1),
		);
		const { events, counts } = normalizeBranch(b.entries);
		expect(events.map((event) => (event.kind === "user" ? event.text : event.kind))).toEqual(["v1 request"]);
		expect(counts).toMatchObject({ branchEnvelopesRead: 1, branchEnvelopesIgnored: 1 });
	});
});

describe("normalizeBranch: source metadata", () => {
	it("takes the source timestamp from the last summarized entry, never the clock", () => {
		const b = new SessionBuilder();
		b.user("a");
		b.custom("state", {});
		const kept = new SessionBuilder("k");
		kept.user("later");
		const branch = normalizeBranch(b.entries, kept.entries);
		expect(branch.sourceTimestamp).toBe(b.entries[1]?.timestamp);
		expect(branch.cutIndex).toBe(2);
		expect(branch.cutEventIndex).toBe(1);
		expect(branch.events).toHaveLength(2);
		expect(branch.counts).toMatchObject({ sourceEntries: 2, keptEntries: 1, sourceEvents: 1 });
	});
});

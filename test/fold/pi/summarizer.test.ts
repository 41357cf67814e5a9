/**
 * The model summarizer through pi-ai's faux provider: a good brief lands with
 * its attribution, every failure mode falls back to the deterministic brief,
 * the host function path is checked the same way, a configured model that
 * Pi's registry does not know is one notice, and the two options exclude
 * each other.
 */

import {
	type AssistantMessage,
	createFauxCore,
	type FauxResponseStep,
	fauxAssistantMessage,
	fauxText,
	fauxToolCall,
	type Model,
	type TranscriptContext,
} from "@earendil-works/pi-ai";
import { buildSessionProjection, type ExtensionContext, type SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { foldActivity } from "../../../src/cli/activity.ts";
import { BRIEF_MAX_CHARS } from "../../../src/fold/briefs/brief.ts";
import { planCommit } from "../../../src/fold/engine/commit.ts";
import { createFold } from "../../../src/fold/lattice/lattice.ts";
import { emptyLattice, type FoldLattice, isRefusal } from "../../../src/fold/lattice/records.ts";
import { analyzeBranch } from "../../../src/fold/lattice/units.ts";
import { type ContextSpanBrief, type PiFoldOptions, resolveOptions } from "../../../src/fold/options.ts";
import { FoldSummarizer, resolveSummarizerTarget } from "../../../src/fold/pi/summarizer.ts";
import { readWindow } from "../../../src/fold/policy/budget.ts";
import { decideCommit, type LadderInput, MAX_VISIBLE_FOLDS } from "../../../src/fold/policy/ladder.ts";
import {
	hostSpanText,
	MODEL_SUMMARY_MAX_CHARS,
	SUMMARIZER_ENTRY_SUFFIX,
	SUMMARIZER_PROMPT_START,
	SUMMARIZER_SPAN_MAX_BYTES,
	type SummarizerRecord,
	summaryRequestText,
} from "../../../src/fold/summarizer/summarizer-prompt.ts";
import { formatSummarizerStatus, summarySpans } from "../../../src/fold/summarizer/summary-spans.ts";
import { utf8ByteLength } from "../../../src/text/utf8.ts";
import { FoldBranch } from "../../fixtures/fold.ts";

const PROVIDER = "faux";
const MODEL = "faux-1";

/** About `tokens` estimated tokens of text. */
const filler = (tokens: number, tag: string) => `${tag}\n${"x".repeat(tokens * 4)}`;

/** A staged turn with MAX_VISIBLE_FOLDS + 1 stages folded, so the ladder proposes a consolidation. */
function consolidationSetup(): { input: LadderInput; lattice: FoldLattice; entries: SessionEntry[] } {
	const b = new FoldBranch();
	b.user("Run every stage.");
	const sizes = [...new Array(MAX_VISIBLE_FOLDS + 2).fill(2_000), 9_000];
	sizes.forEach((tokens, k) => {
		const id = `s${k + 1}`;
		b.calls([{ id, name: "repo_stage", args: { stage: k + 1 } }]);
		b.result(id, "repo_stage", filler(tokens, `STAGE ${k + 1}`));
	});
	const entries = b.entries;
	const view = analyzeBranch(entries);
	let lattice = emptyLattice();
	for (let k = 1; k <= MAX_VISIBLE_FOLDS + 1; k++) {
		const made = createFold(lattice, view, { kind: "tool-batch", first: `s${k}` }, { origin: "ladder" });
		if (isRefusal(made)) throw new Error(made.message);
		lattice = made.lattice;
	}
	const input: LadderInput = {
		view,
		lattice,
		protectedIds: new Set(),
		reading: readWindow(buildSessionProjection(entries), ""),
		budget: 1_000_000,
		prices: { uncached: 1, cached: 0.1, longContextAbove: null },
		contextToolName: "active_context",
		foldPeekResults: false,
		marks: [],
		expanded: new Set(),
		freeRewrite: true,
	};
	return { input, lattice, entries };
}

interface Rig {
	summarizer: FoldSummarizer;
	records: SummarizerRecord[];
	notices: string[];
	contexts: TranscriptContext[];
	ctx: ExtensionContext;
}

/** A summarizer whose registry streams through a faux core answering with `steps`. */
function rig(options: PiFoldOptions, steps: FauxResponseStep[], timeoutMs = 1_000): Rig {
	const faux = createFauxCore({ provider: PROVIDER, models: [{ id: MODEL }] });
	faux.setResponses(steps);
	const model = faux.getModel() as Model<string>;
	const records: SummarizerRecord[] = [];
	const notices: string[] = [];
	const contexts: TranscriptContext[] = [];
	const registry = {
		find: (provider: string, id: string) => (provider === PROVIDER && id === MODEL ? model : undefined),
		getAll: () => [model],
		streamSimple: (m: Model<string>, context: { systemPrompt?: string; messages: unknown[] }, opts: object) => {
			const transcript = {
				messages: [{ role: "system", content: context.systemPrompt ?? "" }, ...context.messages],
			} as unknown as TranscriptContext;
			contexts.push(transcript);
			return faux.streamSimple(m, transcript, opts);
		},
	};
	const ctx = {
		cwd: "/work",
		model,
		hasUI: true,
		ui: { notify: (text: string) => notices.push(text) },
		modelRegistry: registry,
		sessionManager: { getEntries: () => [] },
	} as unknown as ExtensionContext;
	const summarizer = new FoldSummarizer(
		resolveOptions(options),
		{ record: (type, data) => records.push({ ...data, detail: type }) },
		timeoutMs,
	);
	summarizer.start(ctx);
	return { summarizer, records, notices, contexts, ctx };
}

/** Prepare the consolidation, let the request finish, then commit: the brief and provenance it got. */
async function commitAfterSummary(r: Rig) {
	const { input, entries } = consolidationSetup();
	const decision = decideCommit(input);
	r.summarizer.prepare(r.ctx, input, decision.freshTailStart);
	await r.summarizer.settled();
	const planned = planCommit(decision, {
		view: input.view,
		lattice: input.lattice,
		protectedIds: input.protectedIds,
		freshTailStart: decision.freshTailStart,
		toolName: "active_context",
		cwd: "/work",
		briefSource: r.summarizer.briefSource("/work"),
	});
	const record = planned?.change.records.find((item) => item.kind === "consolidation");
	if (!record) throw new Error("no consolidation committed");
	return { record, entries };
}

const text = (value: string) => fauxAssistantMessage(value);

describe("model summarizer", () => {
	it("lands a good brief with attribution, index lines and recall calls", async () => {
		const r = rig({}, [text("Ran stages 1 to 11; every stage report was read, nothing is open.")]);
		const { record } = await commitAfterSummary(r);
		expect(record.provenance).toEqual({
			origin: "ladder",
			briefGenerator: "model",
			model: { provider: PROVIDER, model: MODEL },
		});
		expect(record.brief).toContain("Ran stages 1 to 11");
		expect(record.brief).toMatch(/^Steps: stage 1–11$/m);
		expect(record.brief).toMatch(/^Inner folds: /m);
		expect(record.brief).toContain(`"action":"expand","id":"${record.id}"`);
		expect(record.brief.length).toBeLessThanOrEqual(BRIEF_MAX_CHARS);
		// One tool-less request, opened by the summarizer's system prompt; its usage recorded.
		expect(r.contexts).toHaveLength(1);
		expect(JSON.stringify(r.contexts[0]?.messages[0])).toContain(SUMMARIZER_PROMPT_START);
		expect(r.records.map((item) => [item.outcome, item.kind, item.provider, item.model])).toEqual([
			["brief", "consolidation", PROVIDER, MODEL],
		]);
		expect(r.records[0]?.detail).toBe(`pi-fold-active-context${SUMMARIZER_ENTRY_SUFFIX}`);
		expect(r.summarizer.status().usage).toMatchObject({ requests: 1, briefs: 1, fallbacks: 0 });
	});

	const slow: FauxResponseStep = () =>
		new Promise<AssistantMessage>((resolve) => setTimeout(() => resolve(text("late")), 200));
	const failures: [string, FauxResponseStep][] = [
		["error", fauxAssistantMessage("", { stopReason: "error", errorMessage: "boom" })],
		["timeout", slow],
		["empty", text("   ")],
		["oversize", text("y".repeat(MODEL_SUMMARY_MAX_CHARS + 1))],
		["tool-calls", fauxAssistantMessage([fauxText("brief"), fauxToolCall("read", { path: "a" })])],
	];
	for (const [reason, step] of failures) {
		it(`falls back to the deterministic brief on ${reason}`, async () => {
			const r = rig({}, [step], 50);
			const { record } = await commitAfterSummary(r);
			expect(record.provenance).toEqual({ origin: "ladder", briefGenerator: "deterministic" });
			expect(record.brief).toMatch(/^Consolidation f-/);
			expect(r.records.map((item) => item.outcome)).toEqual([reason]);
			expect(r.summarizer.status().usage).toMatchObject({ requests: 1, briefs: 0, fallbacks: 1 });
		});
	}

	it("makes no request with summarizer deterministic, and none for tool batches", async () => {
		const r = rig({ summarizer: "deterministic" }, [text("never")]);
		const { record } = await commitAfterSummary(r);
		expect(record.provenance.briefGenerator).toBe("deterministic");
		expect(r.contexts).toHaveLength(0);
		const { input } = consolidationSetup();
		const spans = summarySpans(input, decideCommit(input).freshTailStart);
		expect(spans.map((span) => span.kind)).toEqual(["consolidation"]);
	});

	it("skips spans already asked for", () => {
		const { input } = consolidationSetup();
		const tail = decideCommit(input).freshTailStart;
		const [span] = summarySpans(input, tail);
		expect(span).toBeDefined();
		expect(summarySpans(input, tail, (memo) => memo === span?.memo)).toEqual([]);
	});

	it("bounds the request text by SUMMARIZER_SPAN_MAX_BYTES, head and tail kept", () => {
		const b = new FoldBranch();
		b.user("first ask");
		for (let k = 0; k < 200; k++)
			b.tool({ id: `t${k}`, name: "bash", args: { command: `step ${k}` } }, "z".repeat(2_000));
		b.assistant("Finished the last step.");
		const request = summaryRequestText("chapter", b.entries, "/work");
		expect(utf8ByteLength(request)).toBeLessThanOrEqual(SUMMARIZER_SPAN_MAX_BYTES);
		expect(request).toContain("[user] first ask");
		expect(request).toContain("[assistant] Finished the last step.");
		expect(request).toMatch(/… \d+ entries omitted …/);
		// Every entry is an excerpt shown or one counted as omitted.
		const shown = request.split("Transcript excerpts:\n")[1]?.split("\n") ?? [];
		const omitted = Number(/… (\d+) entries omitted …/.exec(request)?.[1]);
		expect(shown.length - 1 + omitted).toBe(b.entries.length);
	});

	it("bounds the host's span text the same way: whole when it fits, else head and tail with the rest counted", () => {
		const b = new FoldBranch();
		b.user("first ask");
		for (let k = 0; k < 200; k++)
			b.tool({ id: `t${k}`, name: "bash", args: { command: `step ${k}` } }, "z".repeat(2_000));
		b.assistant("Finished the last step.");
		const span = hostSpanText(b.entries);
		const lines = span.split("\n");
		expect(utf8ByteLength(span)).toBeLessThanOrEqual(SUMMARIZER_SPAN_MAX_BYTES);
		expect(JSON.parse(lines[0] ?? "")).toMatchObject({ id: b.entries[0]?.id });
		expect(JSON.parse(lines.at(-1) ?? "")).toMatchObject({ id: b.entries.at(-1)?.id });
		const omitted = Number(/^… (\d+) entries omitted …$/m.exec(span)?.[1]);
		expect(lines.length - 1 + omitted).toBe(b.entries.length);
		const small = b.entries.slice(0, 3);
		expect(hostSpanText(small).split("\n")).toHaveLength(3);
	});
});

describe("summarizeContextSpan", () => {
	const good: ContextSpanBrief = {
		brief: "Host brief.",
		provider: "host-co",
		model: "m-2",
		effort: "low",
		toolCalls: 0,
	};

	it("uses a valid host brief with its attribution", async () => {
		const requests: string[] = [];
		const r = rig(
			{
				summarizeContextSpan: async (request) => {
					requests.push(request.span);
					expect(request.maxBriefChars).toBe(MODEL_SUMMARY_MAX_CHARS);
					return good;
				},
			},
			[],
		);
		const { record } = await commitAfterSummary(r);
		expect(record.provenance.model).toEqual({ provider: "host-co", model: "m-2", effort: "low" });
		expect(record.brief).toContain("Summary by host-co/m-2 (low): ");
		expect(requests).toHaveLength(1);
		expect(utf8ByteLength(requests[0] ?? "")).toBeLessThanOrEqual(SUMMARIZER_SPAN_MAX_BYTES);
	});

	const bad: [string, () => Promise<ContextSpanBrief>][] = [
		["tool calls", async () => ({ ...good, toolCalls: 1 as 0 })],
		["no attribution", async () => ({ ...good, provider: "" })],
		["oversize", async () => ({ ...good, brief: "b".repeat(MODEL_SUMMARY_MAX_CHARS + 1) })],
		["a throw", async () => Promise.reject(new Error("host down"))],
		["timeout", () => new Promise<ContextSpanBrief>(() => {})],
	];
	for (const [what, summarize] of bad) {
		it(`falls back on ${what}`, async () => {
			const r = rig({ summarizeContextSpan: summarize }, [], 50);
			const { record } = await commitAfterSummary(r);
			expect(record.provenance.briefGenerator).toBe("deterministic");
		});
	}

	it("is refused together with summarizer, even the default value", () => {
		const summarize = async () => good;
		for (const summarizer of ["session", "deterministic", { provider: "p", model: "m" }] as const)
			expect(() => resolveOptions({ summarizer, summarizeContextSpan: summarize })).toThrow(
				/summarizeContextSpan cannot be combined with summarizer/,
			);
		expect(() => resolveOptions({ summarizeContextSpan: "x" as unknown as typeof summarize })).toThrow(
			/summarizeContextSpan must be a function/,
		);
	});
});

describe("configured summarizer model", () => {
	it("resolves a registered model with its effort", () => {
		const r = rig({ summarizer: { provider: PROVIDER, model: MODEL, effort: "medium" } }, []);
		expect(r.notices).toEqual([]);
		expect(r.summarizer.status()).toMatchObject({ mode: "model", target: `${PROVIDER}/${MODEL}` });
	});

	it("names the options once and stays deterministic for an unknown provider, model or effort", async () => {
		const cases: [PiFoldOptions["summarizer"], RegExp][] = [
			[{ provider: "nope", model: MODEL }, /provider "nope" is not in Pi's model registry; providers: faux/],
			[{ provider: PROVIDER, model: "nope" }, /model "nope" is not a model of provider "faux"; its models: faux-1/],
			[{ provider: PROVIDER, model: MODEL, effort: "huge" }, /effort "huge" is not one of minimal, low/],
		];
		for (const [summarizer, message] of cases) {
			const r = rig({ summarizer }, [text("never")]);
			expect(r.notices).toHaveLength(1);
			expect(r.notices[0]).toMatch(message);
			expect(r.notices[0]).toContain("deterministic for this session");
			const { record } = await commitAfterSummary(r);
			expect(record.provenance.briefGenerator).toBe("deterministic");
			expect(r.contexts).toHaveLength(0);
		}
		const registry = { find: () => undefined, getAll: () => [] };
		expect(
			resolveSummarizerTarget({ summarizer: "session", summarizeContextSpan: undefined }, registry).target,
		).toEqual({ kind: "session" });
	});
});

describe("summarizer usage in status and reports", () => {
	it("sums the session's records and says so in one line", () => {
		const b = new FoldBranch();
		b.user("hi");
		const record: SummarizerRecord = {
			v: 1,
			kind: "chapter",
			sourceHash: "0".repeat(64),
			outcome: "brief",
			provider: PROVIDER,
			model: MODEL,
			input: 1_200,
			output: 40,
			cacheRead: 0,
			cacheWrite: 0,
			cost: 0.0021,
			durationMs: 5,
		};
		const type = `pi-fold-active-context${SUMMARIZER_ENTRY_SUFFIX}`;
		b.entries.push(
			{ type: "custom", id: "u1", parentId: null, timestamp: "", customType: type, data: record },
			{
				type: "custom",
				id: "u2",
				parentId: "u1",
				timestamp: "",
				customType: type,
				data: { ...record, outcome: "timeout", output: 0, cost: 0.001 },
			},
		);
		const activity = foldActivity(b.entries, b.entries, buildSessionProjection(b.entries));
		expect(activity.present).toBe(true);
		expect(activity.summarizer).toMatchObject({ requests: 2, briefs: 1, fallbacks: 1, inputTokens: 2_400 });
		const line = formatSummarizerStatus({ mode: "session", pending: 0, ready: 1, usage: activity.summarizer });
		expect(line).toBe(
			"Summarizer: session model for chapter and consolidation briefs; 2 requests (1 brief, 1 fallback), 2,400 input / 40 output tokens, $0.0031; 0 pending, 1 ready.",
		);
	});
});

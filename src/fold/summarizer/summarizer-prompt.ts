/**
 * The model summarizer's pure half: the request it sends, the checks a reply
 * must pass, the brief a good reply becomes, and the usage records it leaves
 * in the session.
 *
 * The request is one tool-less user message over a bounded rendering of the
 * span: its typed facts (`src/session/facts.ts`, the extractor deterministic
 * briefs and compaction summaries read) and one bounded excerpt per entry,
 * head and tail kept when the span exceeds `SUMMARIZER_SPAN_MAX_BYTES`. A
 * reply becomes a brief only if it finished normally, holds no tool call and
 * its text is non-empty and at most `MODEL_SUMMARY_MAX_CHARS`; anything else
 * names the reason and the caller falls back to the deterministic brief.
 *
 * A model brief keeps the deterministic index (`briefIndex`: the first
 * line's counts and label ranges, `Steps:`, `Inner folds:` with a few words
 * each, `Calls:` by range) above the model's text, so a reader finds a fold
 * by the same lines whoever wrote its summary; the summary adds to the
 * index, never replaces it. `finishBrief` (src/fold/brief.ts) bounds it
 * (cutting the summary's end first) and appends the recall calls.
 */

import type { AssistantMessage } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { canonicalJson } from "../../session/canonical.ts";
import { type SpanFacts, spanFacts } from "../../session/facts.ts";
import { boundedList, truncateText } from "../../text/bounded.ts";
import { boundedOneLine, contentText } from "../../text/lines.ts";
import { truncateUtf8, utf8ByteLength } from "../../text/utf8.ts";
import { briefIndex, type ChildSpan, KIND_LABELS, labelRanges } from "../briefs/brief.ts";
import type { BriefAttribution, FoldKind } from "../lattice/records.ts";
import type { ContextSpanBrief } from "../options.ts";

/** Start of the summarizer's system prompt: test harnesses and the benchmark recognise a side request by it. */
export const SUMMARIZER_PROMPT_START = "You write fold briefs for pi-fold.";

/** Longest summary text accepted: with the header, index lines and recall calls it still fits a 1,200-character brief. */
export const MODEL_SUMMARY_MAX_CHARS = 700;
/** What the prompt asks for, below the hard limit so a slightly long answer is not wasted. */
export const MODEL_SUMMARY_TARGET_CHARS = 600;
/** UTF-8 bytes of span text one request may carry (facts plus excerpts): about 6,000 tokens, a bounded price per fold. */
export const SUMMARIZER_SPAN_MAX_BYTES = 24_000;
/** UTF-8 bytes of the facts block: the extractor's output leads, excerpts fill the rest. */
export const SUMMARIZER_FACTS_MAX_BYTES = 4_000;
/** UTF-8 bytes of one entry's excerpt: enough for a reply's gist or an error, not a whole file. */
export const SUMMARIZER_EXCERPT_BYTES = 600;
/** Output tokens one request may spend: a 700-character brief is ~200 tokens, the rest is room for reasoning. */
export const SUMMARIZER_MAX_OUTPUT_TOKENS = 2_048;

export const SUMMARIZER_SYSTEM_PROMPT = [
	SUMMARIZER_PROMPT_START,
	"A fold hides a finished span of a coding-agent session behind a short brief; the agent reads the brief later to decide whether to bring the span back.",
	`Write the brief as plain text of at most ${MODEL_SUMMARY_TARGET_CHARS} characters: what was asked, what was done (files changed, commands and how they ended), errors still open, and how the span ended.`,
	"State facts from the span only. No preamble, no headings, no markdown, no tool calls.",
].join("\n");

/** Why a summary was not used; every reason falls back to the deterministic brief. */
export type SummaryFailure = "error" | "timeout" | "empty" | "oversize" | "tool-calls" | "invalid" | "no-model";

export type SummaryVerdict = { ok: true; text: string } | { ok: false; reason: SummaryFailure; detail?: string };

/** One entry's bounded excerpt line, or undefined when it shows nothing the model could use. */
function excerptLine(entry: SessionEntry): string | undefined {
	const line = (label: string, text: string) => {
		const body = boundedOneLine(text, SUMMARIZER_EXCERPT_BYTES);
		return body ? `[${label}] ${body}` : undefined;
	};
	if (entry.type === "custom_message") return line(`note ${entry.customType}`, contentText(entry.content));
	if (entry.type !== "message") return undefined;
	const message = entry.message;
	if (message.role === "user") return line("user", contentText(message.content));
	if (message.role === "assistant") {
		const text = contentText(message.content);
		const calls = message.content.flatMap((part) =>
			part.type === "toolCall" ? [`${part.name} ${JSON.stringify(part.arguments)}`] : [],
		);
		return line("assistant", [text, ...calls.map((call) => `→ ${call}`)].filter(Boolean).join(" "));
	}
	if (message.role === "toolResult")
		return line(`result ${message.toolName}${message.isError ? " error" : ""}`, contentText(message.content));
	if (message.role === "bashExecution")
		return line(`!${message.command}`, `exit ${message.exitCode ?? "?"}: ${message.output}`);
	return undefined;
}

/**
 * Excerpt lines within `maxBytes`, head and tail kept: only the entries that
 * can show are rendered, so the cost of a request over a long span (a
 * consolidation of a whole session) is bounded by what the request carries,
 * not by the span.
 */
function excerptLines(entries: readonly SessionEntry[], maxBytes: number): string[] {
	return keepHeadAndTail(
		entries.length,
		(index) => {
			const entry = entries[index];
			return entry ? excerptLine(entry) : undefined;
		},
		maxBytes,
	);
}

/** The facts block: the extractor's fields, one line each. */
function factLines(facts: SpanFacts): string[] {
	const lines: string[] = [];
	const add = (label: string, value: string | undefined) => {
		if (value) lines.push(`- ${label}: ${value}`);
	};
	add("Ask", facts.ask);
	add("Ended", facts.ended);
	add("Steps", boundedList(labelRanges(facts.labels), ", ", 400));
	const changed = [...new Set([...facts.files.Created, ...facts.files.Written, ...facts.files.Modified])];
	add("Changed", boundedList(changed, ", ", 600));
	add("Edits / writes landed", facts.edits + facts.writes > 0 ? `${facts.edits} / ${facts.writes}` : undefined);
	const commands = facts.commands.map(
		(command) =>
			`${command.user ? "!" : ""}${command.text} → ${command.ok ? "ok" : `exit ${command.exitCode ?? "failed"}`}`,
	);
	add("Commands", boundedList(commands, "; ", 900));
	const errors = facts.errors.map(
		(error) => `${error.what}${error.line ? `: ${error.line}` : ""}${error.resolved ? " (resolved later)" : ""}`,
	);
	add("Errors", boundedList(errors, "; ", 900));
	add("Read", boundedList(facts.files.Read, ", ", 400));
	add("Searches", boundedList(facts.searches, "; ", 300));
	return lines;
}

/** Room kept for the "… N entries omitted …" line a cut leaves. */
const OMISSION_LINE_BYTES = 64;

/**
 * Lines of `count` items within `maxBytes`, read from both ends inward (head
 * and tail alternating), with "… N entries omitted …" between them when not
 * all fit. `lineAt` renders one item, undefined when it shows nothing (it
 * then takes no room): an item past the cut is never rendered.
 */
function keepHeadAndTail(count: number, lineAt: (index: number) => string | undefined, maxBytes: number): string[] {
	const size = (line: string) => utf8ByteLength(line) + 1;
	const head: string[] = [];
	const tail: string[] = [];
	let used = OMISSION_LINE_BYTES;
	let front = 0;
	let back = count - 1;
	let headItems = 0;
	let tailItems = 0;
	while (front <= back) {
		const takeFront = head.length <= tail.length;
		const line = lineAt(takeFront ? front : back);
		if (line !== undefined && used + size(line) > maxBytes) break;
		if (takeFront) front++;
		else back--;
		if (line === undefined) continue;
		used += size(line);
		if (takeFront) {
			head.push(line);
			headItems = front;
		} else {
			tail.unshift(line);
			tailItems = count - 1 - back;
		}
	}
	if (front > back) return [...head, ...tail];
	return [...head, `… ${count - headItems - tailItems} entries omitted …`, ...tail];
}

/** Join lines until `maxBytes`, keeping the head and the tail and saying how many were left out between them. */
export function headAndTail(lines: readonly string[], maxBytes: number): string[] {
	const total = lines.reduce((sum, line) => sum + utf8ByteLength(line) + 1, 0);
	if (total <= maxBytes) return [...lines];
	return keepHeadAndTail(lines.length, (index) => lines[index] ?? "", maxBytes);
}

/** The user message of one summary request: facts, then excerpts, at most `SUMMARIZER_SPAN_MAX_BYTES`. */
export function summaryRequestText(kind: FoldKind, entries: readonly SessionEntry[], cwd?: string): string {
	const facts = headAndTail(factLines(spanFacts(entries, cwd)), SUMMARIZER_FACTS_MAX_BYTES);
	const head = [`Fold: ${KIND_LABELS[kind].toLowerCase()} of ${entries.length} entries.`, "Facts:", ...facts];
	const headText = head.join("\n");
	const room = SUMMARIZER_SPAN_MAX_BYTES - utf8ByteLength(headText) - 64;
	const excerpts = excerptLines(entries, Math.max(0, room));
	return `${headText}\nTranscript excerpts:\n${excerpts.join("\n")}`;
}

/** UTF-8 bytes of one entry's canonical JSON in a host request: one huge tool result must not push out the rest. */
export const HOST_SPAN_LINE_BYTES = 4_000;

/**
 * What `summarizeContextSpan` gets as `span`: the canonical JSON of each leaf
 * entry, one per line, each cut at `HOST_SPAN_LINE_BYTES` (a cut line ends
 * with the truncation mark and is no longer JSON), head and tail kept within
 * `SUMMARIZER_SPAN_MAX_BYTES`.
 */
export function hostSpanText(entries: readonly SessionEntry[]): string {
	const lines = entries.map((entry) => {
		const json = canonicalJson(entry);
		return utf8ByteLength(json) <= HOST_SPAN_LINE_BYTES ? json : `${truncateUtf8(json, HOST_SPAN_LINE_BYTES - 3)}…`;
	});
	return headAndTail(lines, SUMMARIZER_SPAN_MAX_BYTES).join("\n");
}

/** Accept a model reply as summary text, or name why not. */
export function acceptModelReply(message: AssistantMessage): SummaryVerdict {
	if (message.stopReason === "error" || message.stopReason === "aborted")
		return { ok: false, reason: "error", detail: message.errorMessage ?? message.stopReason };
	if (message.content.some((part) => part.type === "toolCall")) return { ok: false, reason: "tool-calls" };
	const text = message.content
		.flatMap((part) => (part.type === "text" ? [part.text] : []))
		.join("\n")
		.trim();
	if (!text) return { ok: false, reason: "empty" };
	// A reply cut at the output limit is unfinished, whatever its length.
	if (message.stopReason === "length" || text.length > MODEL_SUMMARY_MAX_CHARS)
		return { ok: false, reason: "oversize", detail: `${text.length} characters` };
	return { ok: true, text };
}

/** Check a host function's result: a bounded non-empty brief, attribution and `toolCalls: 0`. */
export function acceptHostSummary(value: unknown): SummaryVerdict & { attribution?: BriefAttribution } {
	if (typeof value !== "object" || value === null) return { ok: false, reason: "invalid", detail: "not an object" };
	const result = value as Partial<Record<keyof ContextSpanBrief, unknown>>;
	const text = (item: unknown): item is string => typeof item === "string" && item.trim() !== "";
	if (!text(result.provider) || !text(result.model))
		return { ok: false, reason: "invalid", detail: "provider and model attribution are required" };
	if (result.effort !== undefined && !text(result.effort))
		return { ok: false, reason: "invalid", detail: "effort must be a non-empty string" };
	if (result.toolCalls !== 0) {
		const detail = `toolCalls is ${JSON.stringify(result.toolCalls)}, not 0`;
		return { ok: false, reason: typeof result.toolCalls === "number" ? "tool-calls" : "invalid", detail };
	}
	if (typeof result.brief !== "string") return { ok: false, reason: "invalid", detail: "brief must be a string" };
	const brief = result.brief.trim();
	if (!brief) return { ok: false, reason: "empty" };
	if (brief.length > MODEL_SUMMARY_MAX_CHARS)
		return { ok: false, reason: "oversize", detail: `${brief.length} characters` };
	const attribution: BriefAttribution = { provider: result.provider, model: result.model };
	if (result.effort !== undefined) attribution.effort = result.effort as string;
	return { ok: true, text: brief, attribution };
}

/** The plan fields a model brief is composed from (a FoldPlan has them all). */
export interface BriefPlan {
	id: string;
	kind: FoldKind;
	leafEntries: readonly SessionEntry[];
	children: readonly ChildSpan[];
}

/**
 * A model brief's body: the deterministic index (first line with who wrote
 * the summary appended, then the index lines), then the summary.
 * `finishBrief` bounds it (cutting the summary's end first) and appends the
 * recall calls.
 */
export function modelBriefBody(
	plan: BriefPlan,
	text: string,
	by: BriefAttribution,
	cwd?: string,
	toolName?: string,
): string {
	const who = `${by.provider}/${by.model}${by.effort ? ` (${by.effort})` : ""}`;
	const index = briefIndex({
		id: plan.id,
		kind: plan.kind,
		entries: plan.leafEntries,
		children: plan.children,
		cwd,
		toolName,
	});
	const summary = truncateText(text.replace(/\n{3,}/g, "\n\n"), MODEL_SUMMARY_MAX_CHARS);
	return [index.header, ...index.lines, `Summary by ${who}: ${summary}`].join("\n");
}

// --- Usage records: one `<prefix>:summarizer` custom entry per request made. ---

/** Suffix of the custom entry each summary request leaves in the session. */
export const SUMMARIZER_ENTRY_SUFFIX = ":summarizer";

export interface SummarizerRecord {
	v: 1;
	kind: FoldKind;
	sourceHash: string;
	/** "brief" when the summary was accepted; else why it fell back. */
	outcome: "brief" | SummaryFailure;
	provider: string;
	model: string;
	effort?: string;
	input: number;
	output: number;
	cacheRead: number;
	cacheWrite: number;
	/** Provider cost as pi-ai reports it (0 when unknown). */
	cost: number;
	durationMs: number;
	detail?: string;
}

/** Summarizer requests and what they cost, summed over a session's records. */
export interface SummarizerUsage {
	requests: number;
	briefs: number;
	fallbacks: number;
	inputTokens: number;
	outputTokens: number;
	cacheReadTokens: number;
	cost: number;
}

export function emptyUsage(): SummarizerUsage {
	return { requests: 0, briefs: 0, fallbacks: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cost: 0 };
}

/** Add one record to a usage sum (a new object). */
export function addUsage(usage: SummarizerUsage, record: Partial<SummarizerRecord>): SummarizerUsage {
	const count = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : 0);
	return {
		requests: usage.requests + 1,
		briefs: usage.briefs + (record.outcome === "brief" ? 1 : 0),
		fallbacks: usage.fallbacks + (record.outcome === "brief" ? 0 : 1),
		inputTokens: usage.inputTokens + count(record.input),
		outputTokens: usage.outputTokens + count(record.output),
		cacheReadTokens: usage.cacheReadTokens + count(record.cacheRead),
		cost: usage.cost + count(record.cost),
	};
}

/** Usage summed over every `<prefix>:summarizer` entry in `entries`. */
export function summarizerUsage(entries: readonly SessionEntry[], prefix: string): SummarizerUsage {
	const type = `${prefix}${SUMMARIZER_ENTRY_SUFFIX}`;
	let usage = emptyUsage();
	for (const entry of entries) {
		if (entry.type !== "custom" || entry.customType !== type) continue;
		const data = entry.data as Partial<SummarizerRecord> | undefined;
		if (data?.v === 1) usage = addUsage(usage, data);
	}
	return usage;
}

/** One line for status and reports: "3 requests (2 briefs, 1 fallback), 4,512 input / 310 output tokens, $0.0123". */
export function describeUsage(usage: SummarizerUsage): string {
	const n = (value: number) => value.toLocaleString("en-US");
	const cost = usage.cost > 0 ? `, $${usage.cost.toFixed(4)}` : "";
	const count = (value: number, one: string) => `${n(value)} ${one}${value === 1 ? "" : "s"}`;
	return `${count(usage.requests, "request")} (${count(usage.briefs, "brief")}, ${count(usage.fallbacks, "fallback")}), ${n(usage.inputTokens)} input / ${n(usage.outputTokens)} output tokens${cost}`;
}

/**
 * The model summarizer: briefs written by a model for the folds worth one
 * request each, prepared in the background and used only if ready when the
 * commit that shows them is planned.
 *
 * Modes (option `summarizer`, or `summarizeContextSpan`, which excludes it):
 * - "session" (default): the live session model (`ctx.model`) through
 *   `ctx.modelRegistry`, so extension-registered providers and their auth work;
 * - { provider, model, effort? }: that model, looked up in Pi's model registry
 *   at `session_start`. Pi loads extensions before models resolve and the
 *   registry can change until then, so "registration error" is honoured at
 *   the first moment it can be decided: an unknown provider, model or effort
 *   raises one error notice that names the options, and the session runs
 *   with deterministic briefs (nothing is silently summarized by another model);
 * - summarizeContextSpan: the host's function; its result must carry a
 *   bounded brief, provider/model/effort attribution and `toolCalls: 0`;
 * - "deterministic": no model calls.
 *
 * Which folds get a model brief: chapters and consolidations only, marked by
 * the agent or picked by the ladder. A tool batch's deterministic brief
 * already names the call, its files and its outcome; the ladder folds batches
 * by the dozen, and a request per batch would cost more than the brief saves.
 *
 * When: at every commit decision the engine hands back the ladder's input,
 * and the adapter passes it to `prepare`. The spans worth a summary
 * (src/fold/summarizer/summary-spans.ts) are planned exactly as the commit will
 * plan them, and one request per span starts (at most
 * `SUMMARIZER_MAX_IN_FLIGHT` at a time). Results are cached by fold kind
 * and source hash. At the commit, `briefSource` returns a ready summary
 * synchronously or nothing (deterministic brief): a commit never waits, and
 * since fold records are immutable, a brief once shown is never replaced.
 * Every failure (error, `SUMMARIZER_TIMEOUT_MS`, empty, oversize, tool calls,
 * invalid host result, no model) falls back the same way. Each request leaves
 * a `<prefix>:summarizer` entry with its outcome and usage for status,
 * `pi-fold report` and the benchmark.
 */

import type { Api, Model, ThinkingLevel } from "@earendil-works/pi-ai";
import type { ExtensionContext, ModelRegistry } from "@earendil-works/pi-coding-agent";
import type { FoldPlan, SuppliedBrief } from "../lattice/lattice.ts";
import type { BriefAttribution } from "../lattice/records.ts";
import type { ContextSpanBrief, ContextSpanRequest, ResolvedOptions, SummarizeContextSpan } from "../options.ts";
import type { LadderInput } from "../policy/ladder.ts";
import {
	acceptHostSummary,
	acceptModelReply,
	addUsage,
	emptyUsage,
	hostSpanText,
	MODEL_SUMMARY_MAX_CHARS,
	modelBriefBody,
	SUMMARIZER_ENTRY_SUFFIX,
	SUMMARIZER_MAX_OUTPUT_TOKENS,
	SUMMARIZER_SYSTEM_PROMPT,
	type SummarizerRecord,
	type SummaryFailure,
	type SummaryVerdict,
	summarizerUsage,
	summaryRequestText,
} from "../summarizer/summarizer-prompt.ts";
import { type SummarizerStatus, type SummarySpan, summaryKey, summarySpans } from "../summarizer/summary-spans.ts";

/** A request that has not answered in a minute has missed several boundaries already; aborting frees the connection. */
export const SUMMARIZER_TIMEOUT_MS = 60_000;
/** Concurrent side requests: enough for a mark and a consolidation at once, never a burst against the provider. */
export const SUMMARIZER_MAX_IN_FLIGHT = 2;
/** Summaries kept: far more than one session's pending folds; the oldest go first. */
export const SUMMARY_CACHE_MAX = 256;
/** Reasoning efforts pi-ai accepts (`ThinkingLevel`). */
export const SUMMARIZER_EFFORTS: readonly ThinkingLevel[] = ["minimal", "low", "medium", "high", "xhigh", "max"];
/** Options named in an unknown-model notice before "(+n more)". */
const NOTICE_MAX_OPTIONS = 24;

/** Who writes model briefs this session. */
export type SummarizerTarget =
	| { kind: "off" }
	| { kind: "session" }
	| { kind: "model"; model: Model<Api>; effort?: ThinkingLevel }
	| { kind: "host"; summarize: SummarizeContextSpan };

const listed = (items: readonly string[]) =>
	items.length > NOTICE_MAX_OPTIONS
		? `${items.slice(0, NOTICE_MAX_OPTIONS).join(", ")} (+${items.length - NOTICE_MAX_OPTIONS} more)`
		: items.join(", ") || "none";

/** Resolve the summarizer against Pi's model registry; a problem names the options and turns model briefs off. */
export function resolveSummarizerTarget(
	options: Pick<ResolvedOptions, "summarizer" | "summarizeContextSpan">,
	registry: Pick<ModelRegistry, "find" | "getAll">,
): { target: SummarizerTarget; problem?: string } {
	if (options.summarizeContextSpan) return { target: { kind: "host", summarize: options.summarizeContextSpan } };
	const setting = options.summarizer;
	if (setting === "deterministic") return { target: { kind: "off" } };
	if (setting === "session") return { target: { kind: "session" } };
	const off = (why: string) => ({
		target: { kind: "off" } as const,
		problem: `pi-fold: summarizer ${why}. Fold briefs are deterministic for this session.`,
	});
	const model = registry.find(setting.provider, setting.model);
	if (!model) {
		const all = registry.getAll();
		const providers = [...new Set(all.map((item) => item.provider))].sort();
		if (!providers.includes(setting.provider))
			return off(
				`provider ${JSON.stringify(setting.provider)} is not in Pi's model registry; providers: ${listed(providers)}`,
			);
		const models = all.filter((item) => item.provider === setting.provider).map((item) => item.id);
		return off(
			`model ${JSON.stringify(setting.model)} is not a model of provider ${JSON.stringify(setting.provider)}; its models: ${listed(models)}`,
		);
	}
	if (setting.effort === undefined) return { target: { kind: "model", model } };
	const effort = SUMMARIZER_EFFORTS.find((level) => level === setting.effort);
	if (!effort) return off(`effort ${JSON.stringify(setting.effort)} is not one of ${SUMMARIZER_EFFORTS.join(", ")}`);
	return { target: { kind: "model", model, effort } };
}

/** The runtime's side of the summarizer: where usage records go (its queue of custom entries). */
export interface SummarizerHost {
	record(customType: string, data: SummarizerRecord): void;
}

type CacheEntry = { state: "pending" } | { state: "ready"; text: string; by: BriefAttribution } | { state: "failed" };

/** The host shell: resolves the target, runs requests in the background, serves ready summaries. */
export class FoldSummarizer {
	private target: SummarizerTarget = { kind: "off" };
	private problem: string | undefined;
	private cache = new Map<string, CacheEntry>();
	private memos = new Set<string>();
	private inFlight = new Map<string, Promise<void>>();
	private controllers = new Set<AbortController>();
	private usage = emptyUsage();
	/** Bumped at every session start: an answer for an older session is dropped. */
	private generation = 0;

	private options: ResolvedOptions;
	private readonly host: SummarizerHost;
	private readonly timeoutMs: number;

	constructor(options: ResolvedOptions, host: SummarizerHost, timeoutMs = SUMMARIZER_TIMEOUT_MS) {
		this.options = options;
		this.host = host;
		this.timeoutMs = timeoutMs;
	}

	/** The options in force from now on (a new value; the runtime's `configure`). */
	configure(options: ResolvedOptions): void {
		this.options = options;
	}

	/** At session start: forget the last session's work, resolve the target, say once if it cannot be used. */
	start(ctx: ExtensionContext): void {
		this.generation++;
		for (const controller of this.controllers) controller.abort();
		this.controllers.clear();
		this.cache.clear();
		this.memos.clear();
		this.inFlight.clear();
		this.usage = summarizerUsage(ctx.sessionManager.getEntries(), this.options.entryTypePrefix);
		const resolved = resolveSummarizerTarget(this.options, ctx.modelRegistry);
		this.target = resolved.target;
		this.problem = resolved.problem;
		if (resolved.problem) {
			if (ctx.hasUI) ctx.ui.notify(resolved.problem, "error");
			else process.stderr.write(`${resolved.problem}\n`);
		}
	}

	/**
	 * Start requests for what may fold at a later commit; never waits for
	 * them. The runtime calls it at a boundary that does not commit, and
	 * right after a commit with the lattice that commit left, so a
	 * consolidation the new folds make eligible is asked for before the
	 * next boundary can commit it.
	 */
	prepare(ctx: ExtensionContext, input: LadderInput, tailStart: number): void {
		if (this.target.kind === "off" || this.inFlight.size >= SUMMARIZER_MAX_IN_FLIGHT) return;
		const spans = summarySpans(input, tailStart, (memo) => this.memos.has(memo));
		for (const span of spans) {
			if (this.inFlight.size >= SUMMARIZER_MAX_IN_FLIGHT) break;
			this.memos.add(span.memo);
			const key = summaryKey(span.kind, span.sourceHash);
			if (this.cache.has(key)) continue;
			this.remember(key, { state: "pending" });
			const running = this.request(ctx, span, key).finally(() => this.inFlight.delete(key));
			this.inFlight.set(key, running);
		}
	}

	/** The commit's brief source: a ready summary for this plan, composed into a brief body, or nothing. */
	briefSource(cwd: string): (plan: FoldPlan) => SuppliedBrief | undefined {
		return (plan) => {
			if (plan.kind === "tool-batch") return undefined;
			const entry = this.cache.get(summaryKey(plan.kind, plan.sourceHash));
			if (entry?.state !== "ready") return undefined;
			const body = modelBriefBody(plan, entry.text, entry.by, cwd, this.options.toolName);
			return { text: body, generator: "model", model: entry.by };
		};
	}

	/** Resolves when every request started so far has finished (tests, orderly shutdown). */
	async settled(): Promise<void> {
		while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight.values()]);
	}

	status(): SummarizerStatus {
		let pending = 0;
		let ready = 0;
		for (const entry of this.cache.values()) {
			if (entry.state === "pending") pending++;
			else if (entry.state === "ready") ready++;
		}
		const target = this.target;
		const setting = this.options.summarizer;
		const mode = target.kind === "off" ? "deterministic" : target.kind;
		const status: SummarizerStatus = { mode, pending, ready, usage: this.usage };
		if (target.kind === "model") status.target = `${target.model.provider}/${target.model.id}`;
		else if (target.kind === "off" && typeof setting === "object")
			status.target = `${setting.provider}/${setting.model}`;
		if (this.problem) status.problem = this.problem;
		return status;
	}

	private remember(key: string, entry: CacheEntry): void {
		this.cache.delete(key);
		this.cache.set(key, entry);
		for (const old of this.cache.keys()) {
			if (this.cache.size <= SUMMARY_CACHE_MAX) break;
			if (this.cache.get(old)?.state !== "pending") this.cache.delete(old);
		}
	}

	private async request(ctx: ExtensionContext, span: SummarySpan, key: string): Promise<void> {
		const controller = new AbortController();
		this.controllers.add(controller);
		const generation = this.generation;
		const started = Date.now();
		const text = this.target.kind === "host" ? "" : summaryRequestText(span.kind, span.entries, ctx.cwd);
		let outcome: Awaited<ReturnType<FoldSummarizer["ask"]>>;
		try {
			outcome = await this.ask(ctx, span, text, controller);
		} catch (error) {
			outcome = { verdict: { ok: false, reason: "error", detail: String(error) } };
		} finally {
			this.controllers.delete(controller);
		}
		// A session that started since this request began has its own cache; this answer is not for it.
		if (generation !== this.generation) return;
		const { verdict, by } = outcome;
		if (verdict.ok && by) this.remember(key, { state: "ready", text: verdict.text, by });
		else this.remember(key, { state: "failed" });
		if (!by) return; // no request was made
		const record: SummarizerRecord = {
			v: 1,
			kind: span.kind,
			sourceHash: span.sourceHash,
			outcome: verdict.ok ? "brief" : verdict.reason,
			provider: by.provider,
			model: by.model,
			...(by.effort ? { effort: by.effort } : {}),
			input: outcome.usage?.input ?? 0,
			output: outcome.usage?.output ?? 0,
			cacheRead: outcome.usage?.cacheRead ?? 0,
			cacheWrite: outcome.usage?.cacheWrite ?? 0,
			cost: outcome.usage?.cost ?? 0,
			durationMs: Date.now() - started,
			...(verdict.ok || !verdict.detail ? {} : { detail: verdict.detail.slice(0, 200) }),
		};
		this.usage = addUsage(this.usage, record);
		try {
			this.host.record(`${this.options.entryTypePrefix}${SUMMARIZER_ENTRY_SUFFIX}`, record);
		} catch {
			// The session this request belonged to is gone; its usage went with it.
		}
	}

	/** One request to the target, raced against the timeout. `by` is set once a request was actually made. */
	private async ask(
		ctx: ExtensionContext,
		span: SummarySpan,
		text: string,
		controller: AbortController,
	): Promise<{ verdict: SummaryVerdict; by?: BriefAttribution; usage?: RequestUsage }> {
		const target = this.target;
		const timeout = <T>(promise: Promise<T>) => raceTimeout(promise, this.timeoutMs, controller);
		const timedOut = (by: BriefAttribution) => ({ verdict: failure("timeout", `${this.timeoutMs} ms`), by });
		if (target.kind === "host") {
			const request: ContextSpanRequest = {
				span: hostSpanText(span.entries),
				maxBriefChars: MODEL_SUMMARY_MAX_CHARS,
				signal: controller.signal,
			};
			const answer: ContextSpanBrief | typeof TIMED_OUT = await timeout(target.summarize(request));
			const host = { provider: "summarizeContextSpan", model: "host" };
			if (answer === TIMED_OUT) return timedOut(host);
			const checked = acceptHostSummary(answer);
			return { verdict: checked, by: checked.attribution ?? attributionOf(answer) ?? host };
		}
		if (target.kind === "off") return { verdict: failure("no-model") };
		const model = target.kind === "model" ? target.model : (ctx.model as Model<Api> | undefined);
		if (!model) return { verdict: failure("no-model", "the session has no model") };
		const by: BriefAttribution = { provider: model.provider, model: model.id };
		if (target.kind === "model" && target.effort) by.effort = target.effort;
		const stream = ctx.modelRegistry.streamSimple(
			model,
			{ systemPrompt: SUMMARIZER_SYSTEM_PROMPT, messages: [{ role: "user", content: text, timestamp: Date.now() }] },
			{
				maxTokens: Math.min(SUMMARIZER_MAX_OUTPUT_TOKENS, model.maxTokens || SUMMARIZER_MAX_OUTPUT_TOKENS),
				signal: controller.signal,
				...(by.effort ? { reasoning: by.effort as ThinkingLevel } : {}),
			},
		);
		const message = await timeout(stream.result());
		if (message === TIMED_OUT) return timedOut(by);
		const usage = {
			input: message.usage.input,
			output: message.usage.output,
			cacheRead: message.usage.cacheRead,
			cacheWrite: message.usage.cacheWrite,
			cost: message.usage.cost.total,
		};
		return { verdict: acceptModelReply(message), by, usage };
	}
}

/** Token usage of one request, as its record keeps it. */
interface RequestUsage {
	input: number;
	output: number;
	cacheRead: number;
	cacheWrite: number;
	cost: number;
}

const TIMED_OUT: unique symbol = Symbol("timed out");

/** `promise`, or TIMED_OUT after `ms` (aborting the request's signal); the timer never outlives the race. */
async function raceTimeout<T>(
	promise: Promise<T>,
	ms: number,
	controller: AbortController,
): Promise<T | typeof TIMED_OUT> {
	let timer: ReturnType<typeof setTimeout> | undefined;
	const expiry = new Promise<typeof TIMED_OUT>((resolve) => {
		timer = setTimeout(() => {
			controller.abort();
			resolve(TIMED_OUT);
		}, ms);
	});
	try {
		return await Promise.race([promise, expiry]);
	} finally {
		clearTimeout(timer);
	}
}

function failure(reason: SummaryFailure, detail?: string): SummaryVerdict {
	return detail === undefined ? { ok: false, reason } : { ok: false, reason, detail };
}

/** Whatever attribution a rejected host result still carries, for its usage record. */
function attributionOf(value: unknown): BriefAttribution | undefined {
	if (typeof value !== "object" || value === null) return undefined;
	const { provider, model } = value as { provider?: unknown; model?: unknown };
	return typeof provider === "string" && typeof model === "string" && provider && model
		? { provider, model }
		: undefined;
}

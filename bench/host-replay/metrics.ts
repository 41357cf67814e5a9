/**
 * One run's figures, computed from what it left behind (RawRun) as pure
 * functions: the ledger's totals, the session file's commits and
 * compactions, requests past Pi's compaction line, and the floor's input
 * (the units each request sent first, read off the run's own prompts); and
 * the shape of one session's result, which the suite fills and the report
 * reads.
 */

import type { Calibration } from "../../src/session/tokens.ts";
import { CHARS_PER_TOKEN, type PromptTokenizer } from "../../test/harness/provider-rules.ts";
import { countCommits } from "../agent/metrics.ts";
import type { FloorInput, FloorRequest, FloorResult, FloorUnit } from "./floor.ts";
import { buildLedger, type Ledger, type LedgerRules } from "./ledger.ts";
import type { RawRun } from "./run-arm.ts";
import type { RunScore } from "./score.ts";
import type { ReplaySession } from "./sessions.ts";

/** One session at one window: every arm's figures and the floor. */
export interface SessionResult {
	session: ReplaySession;
	window: number;
	/** `provider/model` whose card priced it. */
	model: string;
	rules: LedgerRules;
	/** Agent requests the plan expects. */
	expectedRequests: number;
	/** Of those, the ones answered with a reply (the rest replay a recorded failure). */
	expectedReplies: number;
	deviations: string[];
	runs: RunMetrics[];
	/** The floor (from the native run's units), undefined when no schedule fits the window. */
	floor?: FloorResult;
	/** The log's calibration (provider tokens per estimated token) the provider, ledger and report count with. */
	calibration: Calibration;
	/** `pi-fold report`'s estimate for the same branch and window: with pi-fold / Pi alone, raw and charged. */
	report: ReportEstimate;
	/** Each run's out-of-view score and charge, by arm name (runs that failed have none). */
	scores: Record<string, RunScore>;
}

/** What `pi-fold report` says pi-fold costs over Pi alone: raw, and with both columns charged for what they hid. */
export interface ReportEstimate {
	raw: number;
	charged: number;
}

export interface RunMetrics {
	arm: string;
	failure?: string;
	ledger: Ledger;
	commits: number;
	compactions: number;
	unattributedRewrites: number;
	/** Requests the provider refused for broken tool pairing. */
	invalidRequests: number;
	/** Billed agent requests whose prompt passed Pi's compaction line (window − reserveTokens). */
	pastLine: number;
	desyncs: string[];
	exitCode: number | null;
	wallMs: number;
}

/** The run's figures under the ledger's rules; `lineTokens` is window − reserveTokens. */
export function runMetrics(raw: RawRun, rules: LedgerRules, lineTokens: number): RunMetrics {
	const ledger = buildLedger(raw.requests, rules);
	return {
		arm: raw.arm,
		...(raw.failure !== undefined ? { failure: raw.failure } : {}),
		ledger,
		commits: countCommits(raw.entryTypes),
		compactions: raw.entryTypes.filter((type) => type === "compaction").length,
		unattributedRewrites: raw.unattributedRewrites,
		invalidRequests: raw.requests.filter(({ request }) => request.defects.length > 0).length,
		pastLine: ledger.rows.filter((row) => row.billed && row.kind === "agent" && row.promptTokens > lineTokens).length,
		desyncs: raw.desyncs,
		exitCode: raw.exitCode,
		wallMs: raw.wallMs,
	};
}

/** One canonical prompt's lines (tool declarations first, then one per message), newline kept. */
function lines(prompt: string): string[] {
	return prompt.split(/(?<=\n)/);
}

/**
 * The floor's input from a run's billed agent requests: the prefix is the first
 * request's tool and system lines; the units of each request are its message
 * lines no earlier request carried (counted with multiplicity, walking back
 * from the end: what a request sends first is always at its end, raw).
 */
export function floorRequests(
	raw: RawRun,
	tokenizer?: PromptTokenizer,
): { prefixChars: number; requests: FloorRequest[] } {
	// The floor sizes units in characters at CHARS_PER_TOKEN a token: a line's tokens under the run's tokenizer.
	const size = (line: string) => (tokenizer ? tokenizer.lineTokens(line) * CHARS_PER_TOKEN : line.length);
	const seen = new Map<string, number>();
	const requests: FloorRequest[] = [];
	let prefixChars: number | undefined;
	for (const { request, kind, at } of raw.requests) {
		if (kind !== "agent" || request.reply === undefined) continue;
		const all = lines(request.prompt);
		const toolLines = request.body.tools?.length ?? 0;
		const messages = request.body.messages;
		const messageLines = all.slice(toolLines);
		const counts = new Map<string, number>();
		for (const line of messageLines) counts.set(line, (counts.get(line) ?? 0) + 1);
		const units: FloorUnit[] = [];
		let index = messageLines.length - 1;
		for (; index >= 0; index--) {
			const role = messages[index]?.role;
			const line = messageLines[index] ?? "";
			if (role === "system" || role === "developer") break;
			const left = counts.get(line) ?? 0;
			if (left <= (seen.get(line) ?? 0)) break;
			counts.set(line, left - 1);
			units.unshift({ chars: size(line), foldable: role !== "user" });
		}
		prefixChars ??= all.slice(0, toolLines + index + 1).reduce((sum, line) => sum + size(line), 0);
		const carried = new Map<string, number>();
		for (const line of messageLines) carried.set(line, (carried.get(line) ?? 0) + 1);
		for (const [line, count] of carried) seen.set(line, Math.max(seen.get(line) ?? 0, count));
		requests.push({ units, output: request.completionTokens ?? 0, at });
	}
	return { prefixChars: prefixChars ?? 0, requests };
}

/** The floor input of a run under the ledger's rules. */
export function floorInput(
	raw: RawRun,
	rules: LedgerRules,
	limitTokens: number,
	shape: { briefChars: number; tailChars: number },
): FloorInput {
	const { prefixChars, requests } = floorRequests(raw, rules.tokenizer);
	return {
		prefixChars,
		requests,
		...shape,
		limitTokens,
		card: rules.card,
		cacheRules: rules.cacheRules,
		ttlSeconds: rules.ttlSeconds,
	};
}

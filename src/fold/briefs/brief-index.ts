/**
 * The index parts of a brief, the lines a reader finds a fold by: each call
 * of a tool batch with its arguments and what came back, the calls of a
 * longer span grouped by label ranges, and the folds a span holds, each with
 * a few words. Pure text over `spanCalls` (src/session/calls.ts) and the
 * label ranges; `brief.ts` composes them into briefs and model briefs keep
 * them above their summary.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { SpanCall } from "../../session/calls.ts";
import { spanCalls } from "../../session/calls.ts";
import { spanFacts } from "../../session/facts.ts";
import { boundedList, truncateText } from "../../text/bounded.ts";
import { readableBytes } from "../../text/bytes.ts";

/** A fold directly inside the span being briefed, with its own leaf entries. */
export interface ChildSpan {
	id: string;
	entries: readonly SessionEntry[];
}

/** Bound on the few words that say what one inner fold holds. */
export const INNER_FOLD_WORDS_CHARS = 44;

/** `→ 41.2 KB: first line`, `→ 2.0 KB, error (exit 1): FAIL …`, `→ no result`. */
function outcomeText(call: SpanCall): string {
	const result = call.result;
	if (!result) return "→ no result";
	const error = result.isError ? `, error${result.exitCode !== undefined ? ` (exit ${result.exitCode})` : ""}` : "";
	return `→ ${readableBytes(result.bytes)}${error}${result.line ? `: ${result.line}` : ""}`;
}

/** One call as a brief leads with it: `repo_stage {"stage":58} → 41.2 KB: repo_stage 58 of 64: notes…`. */
export function callLine(call: SpanCall): string {
	return `${call.tool}${call.args ? ` ${call.args}` : ""} ${outcomeText(call)}`;
}

/**
 * The calls of a span as an index: consecutive numbered labels of one tool
 * joined into ranges (`repo_stage stage 1–12`), repeats counted
 * (`read src/a.ts ×3`), in call order. Calls to the context tool itself are
 * bookkeeping and counted at the end.
 */
export function callsIndex(
	calls: readonly SpanCall[],
	contextTool: string,
	max: number,
	countOwn = true,
): string | undefined {
	const work = calls.filter((call) => call.tool !== contextTool);
	const items: string[] = [];
	for (const label of labelRanges(work.map((call) => call.label))) {
		const last = items.length - 1;
		const repeat = /^(.*) ×(\d+)$/.exec(items[last] ?? "");
		if (repeat && repeat[1] === label) items[last] = `${label} ×${Number(repeat[2]) + 1}`;
		else if (items[last] === label) items[last] = `${label} ×2`;
		else items.push(label);
	}
	const own = calls.length - work.length;
	const ownText = `${own} ${contextTool} call${own === 1 ? "" : "s"}`;
	const tail = own > 0 && countOwn ? `; ${ownText}` : "";
	const list = boundedList(items, ", ", max - tail.length);
	if (!list) return own > 0 ? ownText : undefined;
	return `${list}${tail}`;
}

/**
 * A few words on what a span holds: its calls by label range (the context
 * tool's own calls are left out unless they are all it holds, so they never
 * crowd out a range), else its ask.
 */
export function spanWords(entries: readonly SessionEntry[], contextTool: string, max: number): string {
	const index = callsIndex(spanCalls(entries), contextTool, max, false);
	if (index) return index;
	const ask = spanFacts(entries).ask;
	return ask ? truncateText(`"${ask}"`, max) : `${entries.length} entries`;
}

/**
 * `f-… repo_stage stage 1–12; f-… stage 13; f-… read src/a.ts` for the
 * folds a span holds: a tool name the previous fold's words began with is
 * not repeated, so a run of batches of one tool costs a few characters each.
 */
export function innerFoldsText(children: readonly ChildSpan[], contextTool: string, max: number): string | undefined {
	let previousTool = "";
	const items = children.map((child) => {
		const words = spanWords(child.entries, contextTool, INNER_FOLD_WORDS_CHARS);
		const tool = words.split(" ", 1)[0] ?? "";
		const shown = tool === previousTool && words.length > tool.length ? words.slice(tool.length + 1) : words;
		previousTool = tool;
		return `${child.id} ${shown}`;
	});
	return boundedList(items, "; ", max);
}

/** A label the range compressor can join: a word and a whole number ("stage 12"). */
const NUMBERED_LABEL = /^(.*\S) (\d{1,9})$/;

/**
 * Collapse runs of numbered labels with the same word into ranges, so a fold
 * over sixty stages still names every one of them: "stage 1–60", not
 * "stage 1, stage 2, … (+50 more)". Order of first appearance is kept.
 */
export function labelRanges(labels: readonly string[]): string[] {
	const out: string[] = [];
	let run: { word: string; first: number; last: number } | undefined;
	const flush = () => {
		if (!run) return;
		out.push(run.first === run.last ? `${run.word} ${run.first}` : `${run.word} ${run.first}–${run.last}`);
		run = undefined;
	};
	for (const label of labels) {
		const match = NUMBERED_LABEL.exec(label);
		const word = match?.[1];
		const number = match ? Number(match[2]) : Number.NaN;
		if (word !== undefined && run && run.word === word && number === run.last + 1) {
			run.last = number;
			continue;
		}
		flush();
		if (word !== undefined) run = { word, first: number, last: number };
		else out.push(label);
	}
	flush();
	return out;
}

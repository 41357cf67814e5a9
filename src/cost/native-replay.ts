/**
 * What Pi alone would have sent for a recorded branch: the branch replayed
 * with Pi's own threshold compaction where the log has none, so "what
 * pi-fold would have saved" compares against something a provider serves
 * rather than against a log that grows past the window (pure).
 *
 * Pi 1.6.0's rule, as agent-session.js applies it: when the context passes
 * contextWindow − reserveTokens (checked when a run ends, i.e. before the
 * next user message, and between the requests of a run), Pi summarizes
 * everything before a cut point that keeps at least keepRecentTokens of the
 * newest messages (`findCutPoint`, Pi's own; a cut inside a turn also
 * summarizes that turn's start separately), and the context becomes the
 * summary plus the kept messages. Here the summary is a fixed text of
 * realistic size (`summaryChars`, twice plus a separator for a split turn),
 * since its words do not change what later requests cost, only its size
 * does, followed by the file lists Pi appends to every summary
 * (compaction-file-lists.ts: they are words a later reply can find); each
 * summarization request is billed too: the summarized messages as Pi
 * serializes them for its summarizer (and the previous summary) fresh, the
 * summary as output.
 *
 * Compactions the log already has stay where they are. Sizes are Pi's
 * estimate mapped to provider tokens by the caller's calibration, the same
 * mapping the rest of the report uses.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import {
	buildSessionProjection,
	convertToLlm,
	findCutPoint,
	type SessionEntry,
	serializeConversation,
} from "@earendil-works/pi-coding-agent";
import type { RateCard } from "../pricing/rate-card.ts";
import { type Calibration, calibratedTokens, estimateMessagesTokens, PI_CHARS_PER_TOKEN } from "../session/tokens.ts";
import { compactionFileLists, fileListsText } from "./compaction-file-lists.ts";
import { priceRequest } from "./price.ts";

/** Pi's compaction as a user runs it. */
export interface NativeCompaction {
	contextWindow: number;
	reserveTokens: number;
	keepRecentTokens: number;
	/** Characters of the summary Pi's summarizer writes (one part). */
	summaryChars: number;
}

/** Pi 1.6.0's default (docs/compaction.md); its default reserveTokens lives with the serving budget (fold/policy/budget.ts). */
export const PI_DEFAULT_KEEP_RECENT_TOKENS = 20_000;
/** About what a real summarizer writes for a coding session's history (issue 20 measured ~1.2 KB). */
export const NATIVE_SUMMARY_CHARS = 1_200;

/** Pi's merge of a history summary and a split turn's prefix summary (compaction.js). */
const SPLIT_TURN_SEPARATOR = "\n\n---\n\n**Turn Context (split turn):**\n\n";
/** Id prefix of the compaction entries the replay adds (never a recorded id: those are 8 hex digits). */
const REPLAYED_COMPACTION_ID = "native-compaction-";

/** One summarization request the replay made Pi send. */
export interface SummaryRequest {
	/** Provider tokens of what it summarizes (fresh: a separate conversation, nothing cached). */
	promptTokens: number;
	outputTokens: number;
}

export interface NativeReplay {
	/** The branch with the replayed compactions in place (entries relinked in order). */
	branch: SessionEntry[];
	/** Compactions the replay added. */
	compactions: number;
	summaries: SummaryRequest[];
}

function summaryText(chars: number): string {
	const line = "(earlier work summarized; the kept messages follow)\n";
	return line.repeat(Math.ceil(chars / line.length)).slice(0, chars);
}

function isMessage(entry: SessionEntry | undefined, role: string): boolean {
	return entry?.type === "message" && entry.message.role === role;
}

/** Where the next compaction's range starts: the previous compaction's first kept entry, or the start. */
function rangeStart(entries: readonly SessionEntry[]): number {
	for (let index = entries.length - 1; index >= 0; index--) {
		const entry = entries[index];
		if (entry?.type !== "compaction") continue;
		const kept = entries.findIndex((candidate) => candidate.id === entry.firstKeptEntryId);
		return kept >= 0 ? kept : index + 1;
	}
	return 0;
}

function messagesOf(entries: readonly SessionEntry[]): AgentMessage[] {
	return entries.flatMap((entry) => (entry.type === "message" ? [entry.message] : []));
}

/**
 * Whether Pi checks its threshold before `entry` joins the branch: before a
 * user message (the run before it ended) and before an assistant message
 * that follows tool results (between the requests of a run).
 */
export function piChecksBefore(entry: SessionEntry, branch: readonly SessionEntry[]): boolean {
	if (branch.length === 0) return false;
	if (isMessage(entry, "user")) return true;
	if (!isMessage(entry, "assistant")) return false;
	for (let index = branch.length - 1; index >= 0; index--) {
		const previous = branch[index];
		if (previous?.type === "message") return previous.message.role === "toolResult";
	}
	return false;
}

/**
 * The context size Pi compares with its line at the end of `branch`: the
 * provider's count (the estimate under `calibration`, standing for the last
 * reply's usage plus what followed it), or Pi's bare estimate when a context
 * edit or compaction came after the last reply (Pi does not trust usage
 * from before such an entry; `estimateProjectedContextTokens`).
 */
export function piContextTokens(branch: readonly SessionEntry[], calibration: Calibration): number {
	const leaf = branch.at(-1)?.id;
	if (leaf === undefined) return 0;
	const messages = buildSessionProjection(
		branch as SessionEntry[],
		leaf,
		new Map(branch.map((e) => [e.id, e])),
	).messages;
	const estimate = estimateMessagesTokens(messages);
	for (let index = branch.length - 1; index >= 0; index--) {
		const entry = branch[index];
		if (entry?.type === "context_edit" || entry?.type === "compaction") return estimate;
		if (isMessage(entry, "assistant")) break;
	}
	return calibratedTokens(estimate, calibration);
}

/**
 * Characters of Pi 1.6.0's summarization request around the conversation:
 * its summarization system prompt (310) and summary instructions (879, or
 * 664 for a split turn's prefix) with the tags that wrap the conversation,
 * measured in Pi's compaction.js and utils.js.
 */
export const PI_SUMMARIZATION_FRAME_CHARS = 1_230;

/**
 * Pi's estimate of a summarization request for `messages`: Pi sends them as
 * one text (`serializeConversation`, which drops reasoning and cuts each tool
 * result to 2,000 characters), not as the messages themselves, inside its
 * instructions.
 */
export function summarizationPromptTokens(messages: readonly AgentMessage[]): number {
	const text = serializeConversation(convertToLlm([...messages]));
	return Math.ceil((text.length + PI_SUMMARIZATION_FRAME_CHARS) / PI_CHARS_PER_TOKEN);
}

/** One threshold compaction: the entry Pi appends and the summarization requests it made. */
export interface PiCompaction {
	entry: SessionEntry;
	summaries: SummaryRequest[];
}

/**
 * Pi's threshold compaction of `branch` (cut with Pi's `findCutPoint`, a
 * summary of `settings.summaryChars`), or undefined when nothing can be cut.
 */
export function piCompaction(
	branch: readonly SessionEntry[],
	settings: NativeCompaction,
	calibration: Calibration,
	at: { id: string; timestamp: string },
): PiCompaction | undefined {
	const start = rangeStart(branch);
	const cut = findCutPoint(branch as SessionEntry[], start, branch.length, settings.keepRecentTokens);
	const firstKept = branch[cut.firstKeptEntryIndex];
	if (!firstKept || cut.firstKeptEntryIndex <= start) return undefined;
	const historyEnd = cut.isSplitTurn ? cut.turnStartIndex : cut.firstKeptEntryIndex;
	const previous = [...branch].reverse().find((entry) => entry.type === "compaction");
	const previousSummaryTokens =
		previous?.type === "compaction" ? Math.ceil(previous.summary.length / PI_CHARS_PER_TOKEN) : 0;
	const summaryOutput = Math.ceil(settings.summaryChars / PI_CHARS_PER_TOKEN);
	const summaries: SummaryRequest[] = [];
	const history = messagesOf(branch.slice(start, historyEnd));
	if (history.length > 0)
		summaries.push({
			promptTokens: calibratedTokens(summarizationPromptTokens(history) + previousSummaryTokens, calibration),
			outputTokens: summaryOutput,
		});
	let summary = summaryText(settings.summaryChars);
	const prefix = cut.isSplitTurn ? messagesOf(branch.slice(cut.turnStartIndex, cut.firstKeptEntryIndex)) : [];
	if (cut.isSplitTurn) {
		summaries.push({
			promptTokens: calibratedTokens(summarizationPromptTokens(prefix), calibration),
			outputTokens: summaryOutput,
		});
		summary = `${summary}${SPLIT_TURN_SEPARATOR}${summaryText(settings.summaryChars)}`;
	}
	// Whatever the summarizer wrote, Pi appends the files the summarized messages read and changed.
	const files = compactionFileLists([...history, ...prefix], previous);
	const entry = {
		type: "compaction",
		id: at.id,
		parentId: branch.at(-1)?.id ?? null,
		timestamp: at.timestamp,
		summary: `${summary}${fileListsText(files)}`,
		firstKeptEntryId: firstKept.id,
		tokensBefore: piContextTokens(branch, calibration),
		details: files,
	} as SessionEntry;
	return { entry, summaries };
}

/** The branch replayed with Pi's threshold compaction, under `calibration`'s provider tokens. */
export function replayNativeCompaction(
	branch: readonly SessionEntry[],
	settings: NativeCompaction,
	calibration: Calibration,
): NativeReplay {
	const line = settings.contextWindow - settings.reserveTokens;
	const out: SessionEntry[] = [];
	const summaries: SummaryRequest[] = [];
	let compactions = 0;
	const append = (entry: SessionEntry): void => {
		out.push({ ...entry, parentId: out.at(-1)?.id ?? null } as SessionEntry);
	};
	for (const entry of branch) {
		if (piChecksBefore(entry, out) && piContextTokens(out, calibration) > line) {
			const id = `${REPLAYED_COMPACTION_ID}${compactions + 1}`;
			const compacted = piCompaction(out, settings, calibration, { id, timestamp: entry.timestamp });
			if (compacted) {
				compactions++;
				summaries.push(...compacted.summaries);
				append(compacted.entry);
			}
		}
		append(entry);
	}
	return { branch: out, compactions, summaries };
}

/** What the replay's summarization requests cost under `card` (fresh prompt, the summary as output). */
export function summariesCost(summaries: readonly SummaryRequest[], card: RateCard): number {
	let total = 0;
	for (const { promptTokens, outputTokens } of summaries) {
		const fresh =
			card.freshInputBilling === "cacheWrite"
				? { input: 0, cacheWrite: promptTokens }
				: { input: promptTokens, cacheWrite: 0 };
		total += priceRequest(card, { ...fresh, cacheRead: 0, output: outputTokens }).cost.total;
	}
	return total;
}

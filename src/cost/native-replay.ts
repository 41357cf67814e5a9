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
 * does; each summarization request is billed too: the summarized messages
 * (and the previous summary) fresh, the summary as output.
 *
 * Compactions the log already has stay where they are. Sizes are Pi's
 * estimate mapped to provider tokens by the caller's calibration, the same
 * mapping the rest of the report uses.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { buildSessionProjection, findCutPoint, type SessionEntry } from "@earendil-works/pi-coding-agent";
import { type Calibration, calibratedTokens, estimateMessagesTokens, PI_CHARS_PER_TOKEN } from "../session/tokens.ts";
import { priceRequest } from "./price.ts";
import type { RateCard } from "./rate-card.ts";

/** Pi's compaction as a user runs it. */
export interface NativeCompaction {
	contextWindow: number;
	reserveTokens: number;
	keepRecentTokens: number;
	/** Characters of the summary Pi's summarizer writes (one part). */
	summaryChars: number;
}

/** Pi 1.6.0's defaults (docs/compaction.md). */
export const PI_DEFAULT_RESERVE_TOKENS = 16_384;
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

/** The branch replayed with Pi's threshold compaction, under `calibration`'s provider tokens. */
export function replayNativeCompaction(
	branch: readonly SessionEntry[],
	settings: NativeCompaction,
	calibration: Calibration,
): NativeReplay {
	const line = settings.contextWindow - settings.reserveTokens;
	const out: SessionEntry[] = [];
	const byId = new Map<string, SessionEntry>();
	const summaries: SummaryRequest[] = [];
	let compactions = 0;
	const append = (entry: SessionEntry): void => {
		const linked = { ...entry, parentId: out.at(-1)?.id ?? null } as SessionEntry;
		out.push(linked);
		byId.set(linked.id, linked);
	};
	const contextTokens = (): number => {
		const leaf = out.at(-1)?.id ?? null;
		const messages = leaf === null ? [] : buildSessionProjection(out, leaf, byId).messages;
		return calibratedTokens(estimateMessagesTokens(messages), calibration);
	};
	const compact = (timestamp: string): void => {
		const start = rangeStart(out);
		const cut = findCutPoint(out, start, out.length, settings.keepRecentTokens);
		const firstKept = out[cut.firstKeptEntryIndex];
		if (!firstKept || cut.firstKeptEntryIndex <= start) return;
		const historyEnd = cut.isSplitTurn ? cut.turnStartIndex : cut.firstKeptEntryIndex;
		const previous = [...out].reverse().find((entry) => entry.type === "compaction");
		const previousSummaryTokens =
			previous?.type === "compaction" ? Math.ceil(previous.summary.length / PI_CHARS_PER_TOKEN) : 0;
		const summaryOutput = Math.ceil(settings.summaryChars / PI_CHARS_PER_TOKEN);
		const history = messagesOf(out.slice(start, historyEnd));
		if (history.length > 0)
			summaries.push({
				promptTokens: calibratedTokens(estimateMessagesTokens(history) + previousSummaryTokens, calibration),
				outputTokens: summaryOutput,
			});
		let summary = summaryText(settings.summaryChars);
		if (cut.isSplitTurn) {
			const prefix = messagesOf(out.slice(cut.turnStartIndex, cut.firstKeptEntryIndex));
			summaries.push({
				promptTokens: calibratedTokens(estimateMessagesTokens(prefix), calibration),
				outputTokens: summaryOutput,
			});
			summary = `${summary}${SPLIT_TURN_SEPARATOR}${summaryText(settings.summaryChars)}`;
		}
		compactions++;
		append({
			type: "compaction",
			id: `${REPLAYED_COMPACTION_ID}${compactions}`,
			parentId: null,
			timestamp,
			summary,
			firstKeptEntryId: firstKept.id,
			tokensBefore: contextTokens(),
		});
	};
	for (const entry of branch) {
		// Pi checks when a run ends (before the next user message) and between a run's requests.
		const checks =
			isMessage(entry, "user") ||
			(isMessage(entry, "assistant") &&
				isMessage(
					[...out].reverse().find((e) => e.type === "message"),
					"toolResult",
				));
		if (checks && out.length > 0 && contextTokens() > line) compact(entry.timestamp);
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

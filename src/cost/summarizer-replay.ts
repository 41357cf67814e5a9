/**
 * The model summarizer's requests in a replay (pure): what pi-fold's default
 * summarizer ("session") would have asked the session model while the ladder
 * ran, so `pi-fold report` bills them as the user would have paid them.
 *
 * As src/fold/pi/summarizer.ts prepares: at every automatic commit decision
 * the spans worth a model brief (`summarySpans`: chapters and
 * consolidations, planned as the commit will plan them) each start one
 * request, once per span (memo) and once per kind and source (cache key).
 * A request is a separate conversation, billed fresh: the summarizer's
 * system prompt and the span's request text; its output is a brief of the
 * size the prompt asks for. The replay's briefs stay deterministic (the
 * model's words are unknown; their size is about the same).
 */

import type { PrepareHint } from "../fold/engine/automatic.ts";
import {
	MODEL_SUMMARY_TARGET_CHARS,
	SUMMARIZER_SYSTEM_PROMPT,
	summaryRequestText,
} from "../fold/summarizer/summarizer-prompt.ts";
import { summaryKey, summarySpans } from "../fold/summarizer/summary-spans.ts";
import { type Calibration, calibratedTokens, PI_CHARS_PER_TOKEN } from "../session/tokens.ts";
import type { SummaryRequest } from "./native-replay.ts";

/** A recorder of the summarizer's requests over one replay. */
export interface SummarizerReplay {
	/** An automatic commit decision's hint, as the adapter hands it to the summarizer. */
	prepare(hint: PrepareHint): void;
	readonly requests: readonly SummaryRequest[];
}

export function summarizerReplay(calibration: Calibration, cwd: string): SummarizerReplay {
	const memos = new Set<string>();
	const keys = new Set<string>();
	const requests: SummaryRequest[] = [];
	const tokens = (chars: number) => Math.ceil(chars / PI_CHARS_PER_TOKEN);
	return {
		requests,
		prepare(hint) {
			for (const span of summarySpans(hint.input, hint.tailStart, (memo) => memos.has(memo))) {
				memos.add(span.memo);
				const key = summaryKey(span.kind, span.sourceHash);
				if (keys.has(key)) continue;
				keys.add(key);
				const prompt = SUMMARIZER_SYSTEM_PROMPT.length + summaryRequestText(span.kind, span.entries, cwd).length;
				requests.push({
					promptTokens: calibratedTokens(tokens(prompt), { ...calibration, overhead: 0 }),
					outputTokens: calibratedTokens(tokens(MODEL_SUMMARY_TARGET_CHARS), { ...calibration, overhead: 0 }),
				});
			}
		},
	};
}

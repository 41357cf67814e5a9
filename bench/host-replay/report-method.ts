/**
 * The method section of the host replay's result file (pure): how the runs
 * were made, priced, scored for what each window hid and charged for it.
 */

import {
	CALL_OUTPUT_TOKENS,
	PEEKS_PER_HIDDEN_SOURCE,
	SEARCH_HIT_CHARS,
	SEARCH_HITS,
	SEARCHES_PER_HIDDEN_SOURCE,
} from "../../src/cost/out-of-view/charge.ts";
import { MIN_ANCHOR_CHARS, MIN_IDENTIFIER_CHARS } from "../../src/cost/out-of-view/references.ts";
import { OTHER_HOSTS_DIR_ENV } from "../../test/fixtures/real-sessions.ts";
import { STUB_TEXT } from "./reference.ts";
import { SUMMARY_CHARS } from "./run-arm.ts";
import { CACHE_RULES, FLOOR_BRIEF_CHARS, FLOOR_TAIL_CHARS, type Preset, SANITY_WINDOW } from "./sessions.ts";
import { REPORT_AGREEMENT } from "./targets.ts";

const count = (value: number) => value.toLocaleString("en-US");

/** How references are found and classified, and how their sources are charged. */
export function outOfViewMethod(): string[] {
	return [
		`- Out of view (src/cost/out-of-view/, the same code \`pi-fold report\` runs): for each recorded reply, its references are the paths (and \`path:line\`), code identifiers of ${MIN_IDENTIFIER_CHARS}+ characters (camel case, an underscore, or letters with digits; plain words and names common to unrelated projects left out), ids and hashes, URLs and quoted error fragments in its text and call arguments, and the anchor lines (${MIN_ANCHOR_CHARS}+ characters) an edit or patch must quote (Pi \`edit\`, Claude Code \`Edit\`/\`MultiEdit\`, Codex \`apply_patch\` context and removed lines), that occurred in an earlier message of the recorded transcript, not in the current run's user text, the system prompt or the tool declarations. Against the request the reply answered (as the provider received it): raw (a transcript message holding it was sent unchanged), only in a brief or summary (it was sent, only in other text), absent (nothing sent holds it). The scorer reads only text the model saw: no fold, brief or summary format. Reasoning is neither a source nor searched (providers drop it on the way back). "median age": replies between an absent reference's most recent source and the reply.`,
		`- Charged cost: the raw cost plus, for every reply with absent references, per hidden source (the most recent earlier message an absent reference came from) ${SEARCHES_PER_HIDDEN_SOURCE} search and ${PEEKS_PER_HIDDEN_SOURCE} peek (or re-read: native pays the same), each a further request re-sending the reply's prompt at the cache-read rate, plus the call (${CALL_OUTPUT_TOKENS} output tokens, re-sent fresh) and its result fresh (a search ${SEARCH_HITS} hits of ${SEARCH_HIT_CHARS} characters, a peek the source itself), at the session's token scale. Every arm alike; what the added bytes cost later requests is not charged.`,
		`- Sanity arm: Pi alone on a ${count(SANITY_WINDOW)}-token window, once per session; nothing compacts, so it must score 0 absent and 0 only-in-a-brief references.`,
	];
}

/** The method lines of a run of `preset`. */
export function methodNotes(preset: Preset): string[] {
	return [
		"- Host: real Pi 1.6.0 CLI in RPC mode (`--no-extensions -e bench/host-replay/extension.ts`), isolated agent dir, offline, `PI_FOLD_STRICT_APPEND_ONLY=1`, automatic retry off; one Pi process per session, arm and window, every user turn of the session sent in order as an RPC prompt (steered messages queued by the extension when the call before them runs, `!cmd` runs sent as RPC `bash` and answered from the log through `user_bash`).",
		"- Replies: the loopback OpenAI-compatible provider answers each agent request with the recorded assistant message (reasoning as `reasoning_content`, text, tool calls with their recorded ids, names and arguments; calls the log has no result for are left out). A failed recorded reply, or a turn whose request left none, gets an HTTP 400 Pi does not retry. Each agent request is checked to end with the turn's user message or the previous reply's results (desyncs are listed under run problems).",
		`- Tools: every recorded tool name is registered by the extension, replacing Pi's built-in of that name (description, prompt snippet and guidelines kept; nothing required in the parameters, so older argument shapes validate), and answers each call with its recorded result (content, isError, details). Nothing runs for real.`,
		`- Pi's summarization requests get a fixed ${count(SUMMARY_CHARS)}-character summary (headings, no facts); pi-fold's summarizer side requests a short fixed text.`,
		`- Model: the session's main model from Pi's catalog (context window = the column's window, its maxTokens); the loopback model declares that card's prices, with the input rate set to what an uncached token costs under the card (Anthropic: the cache-write rate). Pi compaction: ${preset.compactionNote}, in every arm; "past line" counts agent requests above window − reserveTokens.`,
		"- Tokens, one estimator for the provider, its ledger and `pi-fold report`: each prompt item (tool declaration or message, one canonical JSON line each) counts as Pi's `estimateTokens` counts it (ceil of its text, reasoning, call names and arguments / 4) times the session's scale, the provider tokens per estimated token that src/cost/session-requests.ts `calibrateRequests` fits on the log's recorded usage (the report's own calibration; 1 for a generated session, which records none); the loopback reports these counts to Pi, so Pi's compaction threshold reads them too. Output is the reply's recorded usage, else its estimate at the same scale.",
		`- Ledger (bench/host-replay/ledger.ts): a request reads from cache the longest prefix it shares with any earlier answered request of the same run that is still alive (a prefix lives for the card's catalog cache lifetime after the last request that used it, on the recorded timestamps: a request more than that after the previous one reads nothing); cached tokens below ${count(CACHE_RULES.minCachedTokens ?? 0)} are not cached. Fresh tokens are billed as the card's provider bills them (Anthropic: cache writes), cached at the cache-read rate, output at the output rate, each request at the tier its prompt selects. Summaries and side requests are billed too; refused or failed requests are not. Summary and side requests are priced at the time of the agent request before them.`,
		"- Commits: runs of consecutive `context_edit` entries in the session file; rewrites: agent requests whose prompt does not extend the previous agent request's; unattributed: pi-fold's strict tripwire lines on Pi's stderr; compactions: `compaction` entries.",
		`- Reference arm (bench/host-replay/reference.ts, independent of pi-fold): at each turn end, once the window's estimate (JSON chars / 4) passes the trigger, every editable entry older than the fresh tail becomes a \`${STUB_TEXT}\` stub through a \`context_edit\` draft (results, call arguments, long texts; ids and names kept, so tool pairing holds). Lossy: no brief, no recall.`,
		`- Floor (bench/host-replay/floor.ts): the cheapest lossless schedule with perfect hindsight of the native run's request sequence (the units each request sent first, read off its prompts), under the same token estimate, cache rules, cache lifetime and card, with every request at or under window − reserveTokens. A commit folds every unit the previous request carried that is older than a fresh tail of ${count(FLOOR_TAIL_CHARS / 4)} tokens (pi-fold's), user messages excepted, into one ${FLOOR_BRIEF_CHARS}-character brief and re-bills from the first unit it folds; no summaries, no peeks. It uses native's fixed prefix: pi-fold's arm declares one more tool, so its cost / floor reads a little high. The reference is lossy and may go under it.`,
		`- Sessions: the split between the tuned and held-out sets is fixed in bench/host-replay/sessions.ts; the ladder may be tuned only on the tuned set. Windows: ${preset.windows.map((window) => count(window)).join(", ")}.`,
		`- Real sessions: the two Pi logs are the repository's own fixtures; three more (a Codex CLI, a GJC and a Claude Code session converted to Pi sessions) are read from the folder \`${OTHER_HOSTS_DIR_ENV}\` names at run time, never copied into the repository, and left out (the run says so) where absent. They record no input usage: priced from Pi's estimate (scale 1), output included. Generated sessions are marked "(generated)" and are not judged.`,
		`- \`pi-fold report\` estimate: what \`pi-fold report\`'s "What pi-fold would have saved" says for the same branch, window and Pi compaction settings, as pi-fold's cost over Pi alone (src/cost/projected-savings.ts: Pi's threshold compaction replayed with 1,200-character summaries in both columns, a ladder commit standing in for it where it gets the window under Pi's line as the runtime does; the summarizer's requests and the context tool's declaration billed; failed replies unbilled; message-granular cache model). "estimate − host" is it less the defaults / native column, raw and charged (the report scores and charges its two columns with the same scorer and rule); issue 20 asks for agreement within ${REPORT_AGREEMENT} (a gap past it is in bold). What the report cannot see: the system prompt of a log that recorded no usage (the host sends Pi's, about 1.3k tokens, in both arms), and the words of model briefs (the report keeps deterministic briefs; the host's summarizer is answered with a short text).`,
		...outOfViewMethod(),
		"- Deterministic: everything but the wall-clock column is a function of the sessions and the code (rerun to compare).",
	];
}

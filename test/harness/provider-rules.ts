/**
 * What a real chat-completions provider does with a request body, as pure functions.
 *
 * Owns two rules the loopback provider applies to every request it receives:
 * the tool-pairing rule that makes a provider answer 400 (every assistant tool
 * call is answered by exactly one tool message right after it, and every tool
 * message answers a call right before it), and the positional prompt-cache
 * simulation (a request reads from cache the longest prefix it shares with any
 * earlier accepted request, measured over a canonical serialization of the
 * prompt). Nothing here touches the network.
 */

import { canonicalJson } from "../../src/session/canonical.ts";

/** Characters per estimated token, the same rough ratio Pi's own estimator uses. */
export const CHARS_PER_TOKEN = 4;

/** One tool call inside an assistant message, as the OpenAI chat-completions wire carries it. */
export interface WireToolCall {
	id: string;
	type?: string;
	function?: { name: string; arguments: string };
}

/** One message of a chat-completions request. Only the fields the rules read are typed. */
export interface WireMessage {
	role: string;
	content?: unknown;
	tool_calls?: WireToolCall[];
	tool_call_id?: string;
	[field: string]: unknown;
}

/** The parts of a chat-completions request body the loopback provider reads. */
export interface WireRequestBody {
	model?: string;
	messages: WireMessage[];
	tools?: unknown[];
	stream?: boolean;
	[field: string]: unknown;
}

/**
 * Why a provider would refuse the request.
 * - missing-result: an assistant tool call has no tool message answering it right after the assistant message.
 * - orphan-result: a tool message answers no call of the assistant message right before it.
 * - duplicate-result: a second tool message answers the same call.
 * - duplicate-call: a tool call id that an earlier tool call in the request already used.
 */
export type RejectionKind = "missing-result" | "orphan-result" | "duplicate-result" | "duplicate-call";

/** One reason a request would be refused, located in the request's messages. */
export interface PairingDefect {
	kind: RejectionKind;
	toolCallId: string;
	/** Index into the request's `messages` of the offending assistant or tool message. */
	messageIndex: number;
}

/**
 * Every tool-pairing defect of a message list, in message order.
 * Results pair with calls only inside the block of tool messages that directly follows the assistant message.
 */
export function pairingDefects(messages: readonly WireMessage[]): PairingDefect[] {
	const defects: PairingDefect[] = [];
	const seenCallIds = new Set<string>();
	let index = 0;
	while (index < messages.length) {
		const message = messages[index];
		if (message === undefined) break;
		if (message.role === "tool") {
			// A tool message that does not directly follow an assistant tool-call block answers nothing.
			defects.push({ kind: "orphan-result", toolCallId: message.tool_call_id ?? "", messageIndex: index });
			index++;
			continue;
		}
		const calls = message.role === "assistant" ? (message.tool_calls ?? []) : [];
		index++;
		if (calls.length === 0) continue;
		const callIndex = index - 1;
		const pending = new Set<string>();
		for (const call of calls) {
			if (seenCallIds.has(call.id)) {
				defects.push({ kind: "duplicate-call", toolCallId: call.id, messageIndex: callIndex });
				continue;
			}
			seenCallIds.add(call.id);
			pending.add(call.id);
		}
		const answered = new Set<string>();
		for (let next = messages[index]; next?.role === "tool"; next = messages[index]) {
			const id = next.tool_call_id ?? "";
			if (pending.has(id)) {
				pending.delete(id);
				answered.add(id);
			} else {
				defects.push({
					kind: answered.has(id) ? "duplicate-result" : "orphan-result",
					toolCallId: id,
					messageIndex: index,
				});
			}
			index++;
		}
		for (const id of pending) defects.push({ kind: "missing-result", toolCallId: id, messageIndex: callIndex });
	}
	return defects;
}

/**
 * The prompt as a provider's prefix cache sees it: each tool declaration, then each message, in order,
 * one canonical JSON line apiece (`{"tool":…}` / `{"message":…}`). Sampling and transport fields (model,
 * stream, max tokens) are left out: they do not occupy the prompt. One line per item keeps a request
 * without tools from sharing a spurious prefix with one that has them.
 */
export function canonicalPromptText(body: WireRequestBody): string {
	const lines: string[] = [];
	for (const tool of body.tools ?? []) lines.push(`${canonicalJson({ tool })}\n`);
	for (const message of body.messages) lines.push(`${canonicalJson({ message })}\n`);
	return lines.join("");
}

/** Characters compared at once before falling back to one code unit at a time (long prompts are mostly equal). */
const PREFIX_CHUNK_CHARS = 4096;

/** Length of the longest common prefix of two strings, in UTF-16 code units. */
export function commonPrefixLength(a: string, b: string): number {
	const limit = Math.min(a.length, b.length);
	let index = 0;
	// Whole equal chunks first: one native comparison each instead of thousands of charCodeAt calls.
	while (
		index + PREFIX_CHUNK_CHARS <= limit &&
		a.slice(index, index + PREFIX_CHUNK_CHARS) === b.slice(index, index + PREFIX_CHUNK_CHARS)
	)
		index += PREFIX_CHUNK_CHARS;
	while (index < limit && a.charCodeAt(index) === b.charCodeAt(index)) index++;
	return index;
}

/** Simulated usage of one request's prompt. */
export interface PromptCacheUsage {
	/** Estimated prompt tokens: ceil(prompt chars / CHARS_PER_TOKEN). */
	promptTokens: number;
	/** Estimated tokens read from cache: floor(longest shared prefix chars / CHARS_PER_TOKEN), rounded by the cache rules. */
	cachedTokens: number;
	/** Longest prefix, in characters, shared with any earlier prompt. */
	cachedChars: number;
}

/**
 * How a real provider's prefix cache rounds what it serves. Both default off (0), which keeps the
 * ideal cache: every shared token counts.
 */
export interface PromptCacheRules {
	/** A shared prefix shorter than this many tokens is served fresh (OpenAI documents 1,024). */
	minCachedTokens?: number;
	/** Cached tokens are whole blocks of this many tokens (OpenAI documents 128-token increments). */
	granularityTokens?: number;
}

/** Cached tokens a provider with `rules` serves for a shared prefix of `sharedTokens` tokens. */
export function roundCachedTokens(sharedTokens: number, rules: PromptCacheRules = {}): number {
	const granularity = rules.granularityTokens ?? 0;
	const rounded = granularity > 0 ? Math.floor(sharedTokens / granularity) * granularity : sharedTokens;
	return rounded < (rules.minCachedTokens ?? 0) ? 0 : rounded;
}

/** Cache usage of `prompt` against every earlier accepted prompt (the best prefix wins, as with a real cache). */
export function simulatePromptCache(
	prompt: string,
	earlierPrompts: readonly string[],
	rules: PromptCacheRules = {},
): PromptCacheUsage {
	let cachedChars = 0;
	for (const earlier of earlierPrompts) cachedChars = Math.max(cachedChars, commonPrefixLength(prompt, earlier));
	return promptCacheUsage(prompt, cachedChars, rules);
}

/** One distinct prompt line in the cache index; children are the lines that followed it in some prompt. */
interface LineNode {
	children: Map<string, LineNode>;
	/** When a remembered prompt last passed through this prefix (ms; only read with a time-to-live). */
	lastUsedAt: number;
}

/**
 * The same longest-common-prefix cache as `simulatePromptCache`, indexed so a
 * long session does not compare every prompt with every earlier one: the
 * remembered prompts form a trie of their lines (a canonical prompt is one
 * line per tool and message), a request walks it line by line, and only its
 * first unmatched line is compared character by character with the lines
 * that followed there. Lines hold no raw newline (canonical JSON escapes
 * it), so that comparison can never run past the line, and the match equals
 * the brute-force one exactly.
 *
 * With `ttlMs`, a prefix nothing has used for longer than that is gone (each
 * remembered prompt refreshes its whole path), as a provider's cache expires;
 * times are whatever clock the caller passes, e.g. recorded timestamps.
 */
export class PromptPrefixIndex {
	private readonly root: LineNode = { children: new Map(), lastUsedAt: 0 };
	private readonly ttlMs: number | undefined;

	constructor(ttlMs?: number) {
		this.ttlMs = ttlMs;
	}

	/** Characters of `prompt`'s longest prefix shared with any remembered prompt still alive at `at`. */
	sharedChars(prompt: string, at = 0): number {
		let node = this.root;
		let matched = 0;
		for (const line of promptLines(prompt)) {
			const child = node.children.get(line);
			if (child && this.alive(child, at)) {
				matched += line.length;
				node = child;
				continue;
			}
			let partial = 0;
			for (const [other, sibling] of node.children)
				if (this.alive(sibling, at)) partial = Math.max(partial, commonPrefixLength(line, other));
			return matched + partial;
		}
		return matched;
	}

	/** Remember an answered prompt at time `at`. */
	remember(prompt: string, at = 0): void {
		let node = this.root;
		for (const line of promptLines(prompt)) {
			let child = node.children.get(line);
			if (!child) {
				child = { children: new Map(), lastUsedAt: at };
				node.children.set(line, child);
			}
			child.lastUsedAt = Math.max(child.lastUsedAt, at);
			node = child;
		}
	}

	private alive(node: LineNode, at: number): boolean {
		return this.ttlMs === undefined || at - node.lastUsedAt <= this.ttlMs;
	}
}

/** A canonical prompt's lines, each with its newline (the last one may lack it). */
function promptLines(prompt: string): string[] {
	const lines: string[] = [];
	let start = 0;
	while (start < prompt.length) {
		const end = prompt.indexOf("\n", start);
		const stop = end === -1 ? prompt.length : end + 1;
		lines.push(prompt.slice(start, stop));
		start = stop;
	}
	return lines;
}

/**
 * How a provider counts the tokens of a canonical prompt and of a reply. The
 * default (no tokenizer) is characters / CHARS_PER_TOKEN of the canonical
 * prompt; a replay calibrated to a recorded log uses `calibratedTokenizer`.
 */
export interface PromptTokenizer {
	/** Tokens of one canonical prompt line (`{"tool":…}` or `{"message":…}`, newline included). */
	lineTokens(line: string): number;
	/** Tokens of `chars` characters of generated output (reasoning, text, call names and arguments). */
	outputTokens(chars: number): number;
}

/** Characters of text a wire message's content carries: a string, or the text of its parts. */
function contentChars(content: unknown): number {
	if (typeof content === "string") return content.length;
	if (!Array.isArray(content)) return 0;
	let chars = 0;
	for (const part of content) {
		const text = (part as { text?: unknown } | null)?.text;
		if (typeof text === "string") chars += text.length;
	}
	return chars;
}

/**
 * Pi's estimate of one canonical prompt line, counted as Pi's `estimateTokens`
 * counts a message (ceil of characters / 4): a message's text content, plus an
 * assistant's reasoning and each call's name and arguments; a tool declaration
 * is its JSON. Memoized by line: prompts repeat their prefix.
 */
function piEstimateOfLine(line: string): number {
	const item = JSON.parse(line) as { tool?: unknown; message?: WireMessage };
	if (item.tool !== undefined) return Math.ceil(JSON.stringify(item.tool).length / CHARS_PER_TOKEN);
	const message = item.message;
	if (!message) return 0;
	let chars = contentChars(message.content);
	if (typeof message.reasoning_content === "string") chars += message.reasoning_content.length;
	for (const call of message.tool_calls ?? [])
		chars += (call.function?.name ?? "").length + (call.function?.arguments ?? "").length;
	return Math.ceil(chars / CHARS_PER_TOKEN);
}

/**
 * The tokenizer of a replay calibrated to a recorded log: Pi's estimate of
 * each prompt item (what `pi-fold report` reads a logged message as) times
 * `scale`, the log's provider tokens per estimated token (its recorded usage
 * fitted by src/cost/session-requests.ts `calibrateRequests`); output at the
 * same scale. So the provider, its ledger and the report count one prompt alike.
 */
export function calibratedTokenizer(scale: number): PromptTokenizer {
	const memo = new Map<string, number>();
	return {
		lineTokens(line) {
			let tokens = memo.get(line);
			if (tokens === undefined) {
				tokens = Math.round(scale * piEstimateOfLine(line.trimEnd()));
				memo.set(line, tokens);
			}
			return tokens;
		},
		outputTokens: (chars) => Math.round(scale * Math.ceil(chars / CHARS_PER_TOKEN)),
	};
}

/** Cache usage of `prompt` from a shared-prefix length, rounded by the provider's rules. */
export function promptCacheUsage(
	prompt: string,
	cachedChars: number,
	rules: PromptCacheRules = {},
	tokenizer?: PromptTokenizer,
): PromptCacheUsage {
	if (!tokenizer)
		return {
			promptTokens: Math.ceil(prompt.length / CHARS_PER_TOKEN),
			cachedTokens: roundCachedTokens(Math.floor(cachedChars / CHARS_PER_TOKEN), rules),
			cachedChars,
		};
	// Whole lines inside the shared prefix count whole; the line it ends in counts pro rata.
	let promptTokens = 0;
	let sharedTokens = 0;
	let offset = 0;
	for (const line of promptLines(prompt)) {
		const tokens = tokenizer.lineTokens(line);
		promptTokens += tokens;
		const shared = Math.min(line.length, Math.max(0, cachedChars - offset));
		sharedTokens += shared === line.length ? tokens : Math.floor((tokens * shared) / line.length);
		offset += line.length;
	}
	return {
		promptTokens,
		cachedTokens: Math.min(promptTokens, roundCachedTokens(sharedTokens, rules)),
		cachedChars,
	};
}

/** Estimated tokens of generated output, at the same ratio (or the tokenizer's). */
export function estimateOutputTokens(text: string, tokenizer?: PromptTokenizer): number {
	return tokenizer ? tokenizer.outputTokens(text.length) : Math.ceil(text.length / CHARS_PER_TOKEN);
}

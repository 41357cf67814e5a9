/**
 * A scripted OpenAI-compatible chat-completions server on 127.0.0.1 for out-of-process Pi tests.
 *
 * Owns the HTTP side of the loopback provider: it accepts `POST …/chat/completions`
 * (the only request Pi's `openai-completions` api sends), records every request
 * body, refuses (HTTP 400) any request a real provider would refuse for broken
 * tool pairing, reports simulated prompt-cache reads in the streamed usage, and
 * plays scripted replies (text, tool calls) as server-sent events, or scripted
 * provider errors (an HTTP status with an error body, e.g. a context overflow).
 * When the script runs out it answers with a short fixed text, or asks the
 * `respond` function (a scripted agent) when one is given. Side requests of
 * pi-fold's summarizer (its system prompt) never consume the script: `sideReply`
 * answers them (default: a short fixed text; with `respond` and no
 * `sideReply`, `respond` sees them like any request). The rules
 * themselves live in provider-rules.ts; this file is the thin adapter around them.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { SUMMARIZER_PROMPT_START } from "../../src/fold/summarizer/summarizer-prompt.ts";
import { contentText } from "../../src/text/lines.ts";
import {
	canonicalPromptText,
	estimateOutputTokens,
	type PairingDefect,
	type PromptCacheRules,
	type PromptCacheUsage,
	PromptPrefixIndex,
	type PromptTokenizer,
	pairingDefects,
	promptCacheUsage,
	type WireRequestBody,
} from "./provider-rules.ts";
import { reportProblem } from "./tripwire.ts";

/** Reply text when no script step is left. */
export const LOOPBACK_FALLBACK_TEXT = "ok";
/** Default answer to a summarizer side request: short, fact-free, accepted as a brief. */
export const LOOPBACK_SIDE_TEXT = "The span's work was done; nothing is left open.";

/** True for a request of pi-fold's summarizer: a system (or developer) message opening with its prompt. */
export function isSummarizerRequest(body: WireRequestBody): boolean {
	return body.messages.some(
		(message) =>
			(message.role === "system" || message.role === "developer") &&
			contentText(message.content).startsWith(SUMMARIZER_PROMPT_START),
	);
}

/** Characters per streamed content delta: small enough that Pi sees several deltas, fixed so runs repeat. */
export const STREAM_DELTA_CHARS = 16;

/** `created` stamp on every chunk: a constant, so nothing depends on the wall clock. */
const CHUNK_CREATED = 1_700_000_000;

/** One tool call the scripted model makes. */
export interface ScriptedToolCall {
	id: string;
	name: string;
	arguments: Record<string, unknown>;
}

/** One scripted assistant reply: optional reasoning, optional text, then optional tool calls (finish_reason "tool_calls" if any). */
export interface ScriptedReply {
	/** Streamed as `reasoning_content` deltas before the text; pi-ai makes it a thinking block. */
	thinking?: string;
	text?: string;
	toolCalls?: ScriptedToolCall[];
	/** Completion tokens to report (a recorded reply's usage); default: the reply's estimate. */
	completionTokens?: number;
}

/** A scripted provider error: the request is answered with `status` and an OpenAI-style error body. */
export interface ScriptedFailure {
	fail: { status: number; message: string };
}

/** A script step: a fixed reply or error, or one computed from the request it answers. */
export type ScriptStep =
	| ScriptedReply
	| ScriptedFailure
	| ((request: RecordedRequest) => ScriptedReply | ScriptedFailure);

/**
 * Error text of a context-window overflow, in the wording OpenRouter-style
 * OpenAI-compatible providers use; pi-ai's `isContextOverflow` recognizes it.
 */
export const OVERFLOW_ERROR_MESSAGE =
	"This endpoint's maximum context length is 128000 tokens. However, you requested about 250000 tokens.";

/** A request the loopback provider received, with what it made of it. */
export interface RecordedRequest {
	/** 0-based order of arrival among chat-completions requests. */
	index: number;
	path: string;
	headers: Record<string, string>;
	body: WireRequestBody;
	/** The canonical prompt text the cache simulation compared. */
	prompt: string;
	cache: PromptCacheUsage;
	/** Pairing defects; non-empty means the request was refused with HTTP 400. */
	defects: PairingDefect[];
	/** What was streamed back; undefined for a refused or failed request. */
	reply?: ScriptedReply;
	/** Completion tokens reported for the reply (same chars/4 estimate); undefined when nothing was streamed. */
	completionTokens?: number;
	/** The scripted error this request was answered with, if any. */
	failure?: ScriptedFailure["fail"];
}

/** A refused request's defect, tagged with the request it came from. */
export interface Rejection extends PairingDefect {
	requestIndex: number;
}

export interface LoopbackProviderOptions {
	script?: ScriptStep[];
	/** Refuse requests with pairing defects with HTTP 400, as a real provider does. Default true. */
	refuseInvalid?: boolean;
	/** Answers every request once the script is empty (instead of the fixed fallback text). */
	respond?: (request: RecordedRequest) => ScriptedReply | ScriptedFailure;
	/** Provider cache rounding (minimum prefix, block size); default: the ideal cache. */
	cacheRules?: PromptCacheRules;
	/** Answers summarizer side requests without touching the script. */
	sideReply?: (request: RecordedRequest) => ScriptedReply | ScriptedFailure;
	/** How prompt and completion tokens are counted; default characters / CHARS_PER_TOKEN. */
	tokenizer?: PromptTokenizer;
}

export interface LoopbackProvider {
	/** Base URL for models.json / the openai client, ending in `/v1`. */
	baseUrl: string;
	port: number;
	/** Every chat-completions request, in arrival order. */
	readonly requests: readonly RecordedRequest[];
	/** Every pairing defect of every request, in arrival order. */
	readonly rejections: readonly Rejection[];
	/** Requests to any other path (Pi should send none; kept to make surprises visible). */
	readonly strayRequests: readonly { method: string; path: string }[];
	/** Append steps to the script. */
	enqueue(...steps: ScriptStep[]): void;
	/** Number of script steps not yet played. */
	pendingSteps(): number;
	close(): Promise<void>;
}

/** A reply that is only text. */
export function say(text: string): ScriptedReply {
	return { text };
}

/** A reply that calls tools, optionally after some text. */
export function callTools(calls: ScriptedToolCall[], text?: string): ScriptedReply {
	return text === undefined ? { toolCalls: calls } : { text, toolCalls: calls };
}

/** A provider error reply with an HTTP status and message. */
export function failWith(status: number, message: string): ScriptedFailure {
	return { fail: { status, message } };
}

/** A context-overflow error (HTTP 400), as a provider sends when the prompt exceeds the window. */
export function overflowError(): ScriptedFailure {
	return failWith(400, OVERFLOW_ERROR_MESSAGE);
}

function isFailure(step: ScriptedReply | ScriptedFailure): step is ScriptedFailure {
	return "fail" in step;
}

/** Start a loopback provider on 127.0.0.1 at a free port. */
export async function startLoopbackProvider(options: LoopbackProviderOptions = {}): Promise<LoopbackProvider> {
	const script: ScriptStep[] = [...(options.script ?? [])];
	const refuseInvalid = options.refuseInvalid ?? true;
	const requests: RecordedRequest[] = [];
	const rejections: Rejection[] = [];
	const strayRequests: { method: string; path: string }[] = [];
	// Every answered prompt, indexed: a long replay would otherwise compare each request with all before it.
	const acceptedPrompts = new PromptPrefixIndex();

	const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
		const path = req.url ?? "/";
		if (req.method !== "POST" || !path.endsWith("/chat/completions")) {
			strayRequests.push({ method: req.method ?? "", path });
			sendJson(res, 404, { error: { message: `loopback: no route for ${req.method} ${path}` } });
			return;
		}
		const body = parseBody(await readBody(req));
		if (body === undefined) {
			sendJson(res, 400, { error: { message: "loopback: body is not a chat-completions request" } });
			return;
		}
		const prompt = canonicalPromptText(body);
		const defects = pairingDefects(body.messages);
		const recorded: RecordedRequest = {
			index: requests.length,
			path,
			headers: headerRecord(req),
			body,
			prompt,
			cache: promptCacheUsage(prompt, acceptedPrompts.sharedChars(prompt), options.cacheRules, options.tokenizer),
			defects,
		};
		requests.push(recorded);
		for (const defect of defects) {
			rejections.push({ ...defect, requestIndex: recorded.index });
			reportProblem(
				`loopback request ${recorded.index}: ${defect.kind} ${defect.toolCallId} at messages[${defect.messageIndex}]`,
			);
		}
		if (defects.length > 0 && refuseInvalid) {
			const detail = defects.map((d) => `${d.kind} ${d.toolCallId} at messages[${d.messageIndex}]`).join("; ");
			sendJson(res, 400, {
				error: { message: `loopback: invalid tool pairing: ${detail}`, type: "invalid_request_error" },
			});
			return;
		}
		const sideReply = options.sideReply ?? (options.respond ? undefined : () => say(LOOPBACK_SIDE_TEXT));
		const step = sideReply && isSummarizerRequest(body) ? sideReply : script.shift();
		const fallback = options.respond ?? (() => say(LOOPBACK_FALLBACK_TEXT));
		const played = step === undefined ? fallback(recorded) : typeof step === "function" ? step(recorded) : step;
		if (isFailure(played)) {
			recorded.failure = played.fail;
			sendJson(res, played.fail.status, { error: { message: played.fail.message, type: "invalid_request_error" } });
			return;
		}
		// Only answered prompts can be cached.
		acceptedPrompts.remember(prompt);
		const reply = played;
		recorded.reply = reply;
		recorded.completionTokens = replyCompletionTokens(reply, options.tokenizer);
		res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
		for (const chunk of replyChunks(reply, body.model ?? "loopback", recorded))
			res.write(`data: ${JSON.stringify(chunk)}\n\n`);
		res.end("data: [DONE]\n\n");
	};

	const server = createServer((req, res) => {
		handle(req, res).catch((error: unknown) => {
			if (!res.headersSent) sendJson(res, 500, { error: { message: `loopback: ${String(error)}` } });
			else res.end();
		});
	});
	const port = await listen(server);
	return {
		baseUrl: `http://127.0.0.1:${port}/v1`,
		port,
		requests,
		rejections,
		strayRequests,
		enqueue: (...steps) => {
			script.push(...steps);
		},
		pendingSteps: () => script.length,
		close: () => closeServer(server),
	};
}

/** The streamed chunks of one reply: role, text deltas, tool call deltas, finish, then usage. */
export function replyChunks(
	reply: ScriptedReply,
	model: string,
	request: Pick<RecordedRequest, "index" | "cache" | "completionTokens">,
): object[] {
	const id = `chatcmpl-loopback-${request.index}`;
	const chunk = (choice: object | undefined, extra: object = {}): object => ({
		id,
		object: "chat.completion.chunk",
		created: CHUNK_CREATED,
		model,
		choices: choice === undefined ? [] : [{ index: 0, ...choice }],
		...extra,
	});
	const chunks: object[] = [chunk({ delta: { role: "assistant", content: "" }, finish_reason: null })];
	for (const piece of slices(reply.thinking ?? ""))
		chunks.push(chunk({ delta: { reasoning_content: piece }, finish_reason: null }));
	const text = reply.text ?? "";
	for (const piece of slices(text)) chunks.push(chunk({ delta: { content: piece }, finish_reason: null }));
	for (const [position, call] of (reply.toolCalls ?? []).entries()) {
		const args = JSON.stringify(call.arguments);
		chunks.push(
			chunk({
				delta: {
					tool_calls: [
						{ index: position, id: call.id, type: "function", function: { name: call.name, arguments: "" } },
					],
				},
				finish_reason: null,
			}),
		);
		for (const piece of slices(args)) {
			chunks.push(
				chunk({ delta: { tool_calls: [{ index: position, function: { arguments: piece } }] }, finish_reason: null }),
			);
		}
	}
	const finish = (reply.toolCalls ?? []).length > 0 ? "tool_calls" : "stop";
	chunks.push(chunk({ delta: {}, finish_reason: finish }));
	const completionTokens = request.completionTokens ?? replyCompletionTokens(reply);
	chunks.push(
		chunk(undefined, {
			usage: {
				prompt_tokens: request.cache.promptTokens,
				completion_tokens: completionTokens,
				total_tokens: request.cache.promptTokens + completionTokens,
				// pi-ai reads cache hits from prompt_tokens_details.cached_tokens (OpenAI's field).
				prompt_tokens_details: { cached_tokens: request.cache.cachedTokens },
			},
		}),
	);
	return chunks;
}

/** Completion tokens the loopback reports for a reply: reasoning, text, each call's name and JSON arguments, at chars/4. */
export function replyCompletionTokens(reply: ScriptedReply, tokenizer?: PromptTokenizer): number {
	if (reply.completionTokens !== undefined) return reply.completionTokens;
	let outputChars = (reply.thinking ?? "") + (reply.text ?? "");
	for (const call of reply.toolCalls ?? []) outputChars += call.name + JSON.stringify(call.arguments);
	return estimateOutputTokens(outputChars, tokenizer);
}

function slices(text: string): string[] {
	const pieces: string[] = [];
	for (let start = 0; start < text.length; start += STREAM_DELTA_CHARS)
		pieces.push(text.slice(start, start + STREAM_DELTA_CHARS));
	return pieces;
}

function parseBody(raw: string): WireRequestBody | undefined {
	let parsed: unknown;
	try {
		parsed = JSON.parse(raw);
	} catch {
		return undefined;
	}
	if (typeof parsed !== "object" || parsed === null) return undefined;
	const messages = (parsed as { messages?: unknown }).messages;
	return Array.isArray(messages) ? (parsed as WireRequestBody) : undefined;
}

function headerRecord(req: IncomingMessage): Record<string, string> {
	const headers: Record<string, string> = {};
	for (const [name, value] of Object.entries(req.headers)) {
		if (typeof value === "string") headers[name] = value;
		else if (Array.isArray(value)) headers[name] = value.join(", ");
	}
	return headers;
}

function readBody(req: IncomingMessage): Promise<string> {
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		req.on("data", (chunk: Buffer) => chunks.push(chunk));
		req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
		req.on("error", reject);
	});
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
	res.writeHead(status, { "content-type": "application/json" });
	res.end(JSON.stringify(value));
}

function listen(server: Server): Promise<number> {
	return new Promise((resolve, reject) => {
		server.once("error", reject);
		// Port 0: the OS picks a free port, so parallel test files never collide.
		server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
	});
}

function closeServer(server: Server): Promise<void> {
	return new Promise((resolve, reject) => {
		server.close((error) => (error ? reject(error) : resolve()));
		// Keep-alive sockets from the client would otherwise hold close() open.
		server.closeAllConnections();
	});
}

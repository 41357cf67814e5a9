/**
 * The real fold runtime (src/fold/runtime.ts) on a fixed branch, driven
 * through its own Pi event handlers with an in-memory Pi session manager:
 * what one turn boundary and one `context` hook cost, as Pi would call
 * them. Nothing here re-implements the runtime, so an optimization of the
 * runtime shows up here and a regression cannot hide.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { ExtensionAPI, ExtensionContext, SessionEntry } from "@earendil-works/pi-coding-agent";
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { resolveOptions } from "../../src/fold/options.ts";
import { FoldRuntime } from "../../src/fold/pi/runtime.ts";

/** A system prompt of about 5,000 tokens, as a coding agent's is. */
const SYSTEM_PROMPT = "s".repeat(20_000);

type Handler = (event: unknown, ctx: ExtensionContext) => unknown;

/** A runtime registered on a stand-in for Pi's extension API, over an in-memory session of `branch`. */
export async function realRuntime(branch: readonly SessionEntry[]) {
	const handlers = new Map<string, Handler>();
	const pi = {
		on: (name: string, handler: Handler) => handlers.set(name, handler),
		appendEntry: () => undefined,
		sendMessage: () => undefined,
	} as unknown as ExtensionAPI;
	const header = { type: "session" as const, version: 3, id: "bench", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/" };
	const manager = SessionManager.inMemory("/", undefined, [header, ...branch]);
	const ctx = {
		sessionManager: manager,
		model: {
			id: "bench",
			provider: "bench",
			api: "openai-completions",
			contextWindow: 272_000,
			maxTokens: 32_000,
			cost: { input: 5, output: 30, cacheRead: 0.5, cacheWrite: 0 },
		},
		getSystemPrompt: () => SYSTEM_PROMPT,
		ui: { notify: () => undefined, setStatus: () => undefined },
		hasUI: false,
		mode: "print",
		cwd: "/",
		isIdle: () => false,
		abort: () => undefined,
		getContextUsage: () => undefined,
	} as unknown as ExtensionContext;
	const runtime = new FoldRuntime(pi, resolveOptions({}));
	runtime.register();
	const call = async (name: string, event: unknown) => handlers.get(name)?.(event, ctx);
	await call("session_start", { type: "session_start" });
	// Pi builds the boundary's preview projection itself; the runtime only reads it.
	const preview = manager.buildSessionProjection().entries;
	const messages = (): AgentMessage[] =>
		manager.buildSessionProjection().messages.filter((message) => message.role !== "system");
	return {
		/** One turn boundary: the ladder's decision, a commit when it decides one, the drafts returned. */
		boundary: () => call("turn_end", { type: "turn_end", entries: [], context: { contextEntries: preview } }),
		/** One `context` hook: drafts preview, fence, instrument. */
		context: () => call("context", { type: "context", messages: messages() }),
	};
}

/** Median milliseconds of `runs` awaited calls of each step, interleaved. */
export async function timeRealRuntime(
	branch: readonly SessionEntry[],
	runs: number,
): Promise<{ boundaryMs: number; contextMs: number }> {
	const runtime = await realRuntime(branch);
	await runtime.boundary();
	await runtime.context();
	const boundary: number[] = [];
	const context: number[] = [];
	for (let i = 0; i < runs; i++) {
		let start = performance.now();
		await runtime.boundary();
		boundary.push(performance.now() - start);
		start = performance.now();
		await runtime.context();
		context.push(performance.now() - start);
	}
	return { boundaryMs: median(boundary), contextMs: median(context) };
}

function median(values: number[]): number {
	const sorted = [...values].sort((a, b) => a - b);
	const mid = sorted.length >> 1;
	return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

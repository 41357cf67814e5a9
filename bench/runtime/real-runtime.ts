/**
 * The real Pi adapter (src/fold/pi/runtime.ts, over the fold engine) on a
 * growing branch, driven through its own Pi event handlers with an in-memory
 * Pi session manager: before each request one more turn (an assistant's read
 * and its result, turns.ts) is appended to the session, as Pi appends them;
 * the `turn_end` boundary runs, what it returns is persisted as Pi persists
 * it, and the `context` hook runs with the request's messages as Pi hands
 * them over (its projection, structured-cloned outside the timing). Pi's own
 * projection of the same branch is timed in the same loop, for scale.
 * Nothing here re-implements the runtime.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type {
	ExtensionAPI,
	ExtensionContext,
	SessionBoundaryDraft,
	SessionEntry,
} from "@earendil-works/pi-coding-agent";
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { resolveOptions } from "../../src/fold/options.ts";
import { FoldRuntime } from "../../src/fold/pi/runtime.ts";
import { median } from "../harness.ts";
import { type TurnSize, turnMessages } from "./turns.ts";

/** Requests made before timing: the first after a session start builds the indexes a resume leaves to it. */
const WARM_UP_REQUESTS = 3;
/** A system prompt of about 5,000 tokens, as a coding agent's is. */
const SYSTEM_PROMPT = "s".repeat(20_000);

type Handler = (event: unknown, ctx: ExtensionContext) => unknown;

/** A runtime registered on a stand-in for Pi's extension API, over an in-memory session of `branch`. */
export async function realRuntime(branch: readonly SessionEntry[], size: TurnSize = "small") {
	const handlers = new Map<string, Handler>();
	const pi = {
		// Like Pi's: returns the function that unsubscribes the handler.
		on: (name: string, handler: Handler) => {
			handlers.set(name, handler);
			return () => {
				if (handlers.get(name) === handler) handlers.delete(name);
			};
		},
		appendEntry: () => undefined,
		sendMessage: () => undefined,
		getActiveTools: () => [],
		getAllTools: () => [],
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
		modelRegistry: { find: () => undefined, getAll: () => [] },
	} as unknown as ExtensionContext;
	const runtime = new FoldRuntime(pi, resolveOptions({}));
	runtime.register();
	const call = async (name: string, event: unknown) => handlers.get(name)?.(event, ctx);
	await call("session_start", { type: "session_start" });
	let turn = 0;
	return {
		/** One more turn: an assistant's read and its result, appended as Pi appends them. */
		grow: () => {
			const { assistant, result } = turnMessages(turn++, size);
			manager.appendMessage(assistant);
			manager.appendMessage(result);
		},
		/** The request's messages as Pi hands them to the `context` hook. */
		messages: (): AgentMessage[] =>
			structuredClone(manager.buildSessionProjection().messages.filter((message) => message.role !== "system")),
		/** One turn boundary: the ladder's decision, a commit when it decides one, the drafts returned. */
		boundary: () => call("turn_end", { type: "turn_end", entries: [] }),
		/** Persist what a boundary returned, as Pi does before the next request. */
		persist: (returned: unknown) => {
			const entries = (returned as { entries?: SessionBoundaryDraft[] } | undefined)?.entries ?? [];
			for (const entry of entries) {
				if (entry.type === "custom") manager.appendCustomEntry(entry.customType, entry.data);
				else if (entry.type === "context_edit") manager.appendContextEdit(entry.targetId, entry.replacement);
			}
		},
		/** One `context` hook: fence, drafts preview, instrument. */
		context: (messages: AgentMessage[]) => call("context", { type: "context", messages }),
		/** Pi's own projection of the branch, what it spends per request at least once. */
		project: () => manager.buildSessionProjection(),
		entries: () => manager.getBranch().length,
	};
}

export interface RealRuntimeTiming {
	boundaryMs: number;
	contextMs: number;
	/** boundary + context, per run, then the median. */
	requestMs: number;
	/** The slowest request (a consolidation that re-reads the folded history, when one happens). */
	maxRequestMs: number;
	piProjectionMs: number;
}

/** Medians of `runs` requests on a branch that grows by one turn of `size` before each. */
export async function timeRealRuntime(
	branch: readonly SessionEntry[],
	runs: number,
	size: TurnSize = "small",
): Promise<RealRuntimeTiming> {
	const runtime = await realRuntime(branch, size);
	for (let i = 0; i < WARM_UP_REQUESTS; i++) {
		runtime.grow();
		runtime.persist(await runtime.boundary());
		await runtime.context(runtime.messages());
	}
	const boundary: number[] = [];
	const context: number[] = [];
	const request: number[] = [];
	const projection: number[] = [];
	for (let i = 0; i < runs; i++) {
		runtime.grow();
		let start = performance.now();
		const returned = await runtime.boundary();
		const boundaryMs = performance.now() - start;
		runtime.persist(returned);
		const messages = runtime.messages();
		start = performance.now();
		await runtime.context(messages);
		const contextMs = performance.now() - start;
		start = performance.now();
		runtime.project();
		projection.push(performance.now() - start);
		boundary.push(boundaryMs);
		context.push(contextMs);
		request.push(boundaryMs + contextMs);
	}
	return {
		boundaryMs: median(boundary),
		contextMs: median(context),
		requestMs: median(request),
		maxRequestMs: Math.max(...request),
		piProjectionMs: median(projection),
	};
}

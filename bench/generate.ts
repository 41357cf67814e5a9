/**
 * Synthetic Pi sessions for benchmarks: a linear branch of coding-agent turns
 * (user asks; assistant calls read / grep / bash / edit / write, sometimes
 * thinking first; results of varied size, some errors; a closing reply), with
 * provider usage on every assistant message. A seeded generator makes the same
 * entry count produce the same session every time.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";

/** Deterministic PRNG (mulberry32). */
export function prng(seed: number): () => number {
	let state = seed >>> 0;
	return () => {
		state = (state + 0x6d2b79f5) >>> 0;
		let t = state;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

const TOOLS = ["read", "grep", "bash", "edit", "write"] as const;
const WORDS = ["config", "loader", "session", "parser", "cache", "index", "render", "budget", "store", "branch"];
const BASE_TIME = Date.UTC(2026, 0, 1);

/** A session of exactly `entryCount` entries (header not included). */
export function generateSession(entryCount: number, seed = 1): SessionEntry[] {
	const random = prng(seed);
	const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
	const file = () => `src/${pick(WORDS)}/${pick(WORDS)}.ts`;
	const code = (chars: number) => {
		let text = "";
		while (text.length < chars)
			text += `export function ${pick(WORDS)}${text.length}(input: string) { return input.trim(); }\n`;
		return text.slice(0, chars);
	};
	const entries: SessionEntry[] = [];
	let time = BASE_TIME;
	let prompt = 2_000;
	const push = (body: Record<string, unknown>) => {
		time += 1_000 + Math.floor(random() * 20_000);
		const id = (entries.length + 1).toString(16).padStart(8, "0");
		const parentId = entries.at(-1)?.id ?? null;
		entries.push({ ...body, id, parentId, timestamp: new Date(time).toISOString() } as SessionEntry);
	};
	const assistant = (content: unknown[], stopReason: string, output: number) => {
		const cacheRead = Math.floor(prompt * 0.9);
		push({
			type: "message",
			message: {
				role: "assistant",
				content,
				api: "anthropic-messages",
				provider: "anthropic",
				model: "claude-sonnet-4-5",
				usage: {
					input: 3,
					output,
					cacheRead,
					cacheWrite: prompt - cacheRead,
					totalTokens: prompt + output,
					cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
				},
				stopReason,
				timestamp: time,
			},
		});
		prompt += output;
	};
	let call = 0;
	while (entries.length < entryCount) {
		push({
			type: "message",
			message: {
				role: "user",
				content: [{ type: "text", text: `Please fix the ${pick(WORDS)} in ${file()}.` }],
				timestamp: time,
			},
		});
		const steps = 1 + Math.floor(random() * 4);
		for (let step = 0; step < steps && entries.length < entryCount; step++) {
			const tool = pick(TOOLS);
			const id = `call_${++call}`;
			const path = file();
			const args =
				tool === "bash"
					? { command: `npm test -- ${path}` }
					: tool === "grep"
						? { pattern: pick(WORDS), path: "src" }
						: tool === "edit"
							? { path, oldText: "return input;", newText: "return input.trim();" }
							: tool === "write"
								? { path, content: code(300) }
								: { path };
			const thinking = random() < 0.3 ? [{ type: "thinking", thinking: `Checking ${path} first.` }] : [];
			assistant(
				[...thinking, { type: "toolCall", id, name: tool, arguments: args }],
				"toolUse",
				40 + Math.floor(random() * 200),
			);
			if (entries.length >= entryCount) break;
			const isError = random() < 0.08;
			const size = tool === "read" ? 500 + Math.floor(random() * 6_000) : 50 + Math.floor(random() * 1_500);
			const text = isError ? `Error: ${path} not found (exit code 1)` : code(size);
			push({
				type: "message",
				message: {
					role: "toolResult",
					toolCallId: id,
					toolName: tool,
					content: [{ type: "text", text }],
					isError,
					timestamp: time,
				},
			});
			prompt += Math.ceil(text.length / 4);
		}
		if (entries.length < entryCount) {
			assistant([{ type: "text", text: `Done: updated ${file()} and the tests pass.` }], "stop", 80);
		}
	}
	return entries;
}

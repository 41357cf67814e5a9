/**
 * Generated coding sessions with the shapes issue 20 measured in real ones,
 * as recorded Pi branches (pure, seeded: the same seed makes the same bytes).
 *
 * Two shapes:
 * - "multi-turn": many user turns minutes apart (some gaps past a five-minute
 *   cache lifetime), each a few tool rounds; small results (0.1–4 KB, median
 *   near 600 bytes), `edit` and `write` calls whose arguments (diffs, whole
 *   files) carry a fifth to a third of the bytes, and a few huge results
 *   (40–130 KB: a long test log, a big file read).
 * - "small-results": one user turn whose agent reads 400 small results
 *   (0.3–4 KB) in batches of one to four calls, seconds apart.
 * Sessions are priced as `anthropic/claude-sonnet-4-5`, the model of the
 * larger real log.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { prng } from "../generate.ts";

export type GeneratedShape = "multi-turn" | "small-results";

/** Provider and model every generated reply names. */
export const GENERATED_MODEL = { provider: "anthropic", id: "claude-sonnet-4-5" } as const;
const BASE_TIME = Date.UTC(2026, 2, 2, 9);
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const WORDS = [
	"config",
	"loader",
	"session",
	"parser",
	"cache",
	"index",
	"render",
	"budget",
	"store",
	"branch",
	"queue",
];

/** Results the small-results shape reads in its one turn. */
export const SMALL_RESULTS = 400;

interface Builder {
	entries: SessionEntry[];
	time: number;
	calls: number;
}

function push(builder: Builder, message: Record<string, unknown>): void {
	const id = `g${String(builder.entries.length + 1).padStart(7, "0")}`;
	builder.entries.push({
		type: "message",
		id,
		parentId: builder.entries.at(-1)?.id ?? null,
		timestamp: new Date(builder.time).toISOString(),
		message: { ...message, timestamp: builder.time },
	} as SessionEntry);
}

function assistant(builder: Builder, content: unknown[], stopReason: "toolUse" | "stop"): void {
	push(builder, {
		role: "assistant",
		content,
		api: "anthropic-messages",
		provider: GENERATED_MODEL.provider,
		model: GENERATED_MODEL.id,
		usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: zeroCost() },
		stopReason,
	});
}

function zeroCost() {
	return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
}

/** Text helpers over one seeded stream. */
function texts(random: () => number) {
	const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
	const between = (low: number, high: number) => Math.round(low + random() * (high - low));
	/** Log-normal-ish size: `median` × e^(spread·N(0,1)), clipped to [low, high]. */
	const sized = (median: number, spread: number, low: number, high: number) => {
		const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
		return Math.max(low, Math.min(high, Math.round(median * Math.exp(spread * normal))));
	};
	const file = () => `src/${pick(WORDS)}/${pick(WORDS)}-${between(1, 40)}.ts`;
	const code = (chars: number) => {
		let text = "";
		while (text.length < chars) {
			const name = `${pick(WORDS)}${pick(WORDS).replace(/^./, (c) => c.toUpperCase())}${text.length}`;
			text += `export function ${name}(input: string, limit = ${between(1, 999)}): string {\n\treturn input.slice(0, limit).trim();\n}\n`;
		}
		return text.slice(0, chars);
	};
	const prose = (chars: number) => {
		let text = "";
		while (text.length < chars)
			text += `The ${pick(WORDS)} ${pick(["now", "still", "no longer"])} ${pick(["reads", "writes", "checks", "skips"])} the ${pick(WORDS)}. `;
		return text.slice(0, chars).trim();
	};
	const log = (chars: number) => {
		let text = "";
		while (text.length < chars)
			text += `${pick(["PASS", "PASS", "PASS", "FAIL"])} test/${pick(WORDS)}.test.ts > ${pick(WORDS)} ${pick(WORDS)} (${between(1, 900)} ms)\n`;
		return text.slice(0, chars);
	};
	return { pick, between, sized, file, code, prose, log };
}

/** One tool call and its result, by tool. */
function toolCall(
	t: ReturnType<typeof texts>,
	random: () => number,
	kind: "huge" | "small" | "any",
): { name: string; args: Record<string, unknown>; result: string; isError: boolean } {
	const path = t.file();
	const roll = random();
	if (kind === "small") {
		return random() < 0.6
			? { name: "read", args: { path }, result: t.code(t.sized(1_100, 0.7, 300, 4_000)), isError: false }
			: {
					name: "bash",
					args: { command: `rg -n ${t.pick(WORDS)} src` },
					result: t.log(t.sized(1_100, 0.7, 300, 4_000)),
					isError: false,
				};
	}
	const huge = kind === "huge";
	if (huge) {
		return random() < 0.5
			? { name: "bash", args: { command: "npm test 2>&1" }, result: t.log(t.between(40_000, 130_000)), isError: false }
			: { name: "read", args: { path }, result: t.code(t.between(40_000, 130_000)), isError: false };
	}
	if (roll < 0.32)
		return { name: "read", args: { path }, result: t.code(t.sized(1_200, 0.9, 100, 4_000)), isError: false };
	if (roll < 0.66) {
		const failed = random() < 0.15;
		return {
			name: "bash",
			args: { command: `${t.pick(["npm run check", "git diff --stat", "rg -n", "ls"])} ${t.pick(["", path])}`.trim() },
			result: t.log(t.sized(600, 1, 100, 4_000)),
			isError: failed,
		};
	}
	if (roll < 0.94) {
		return {
			name: "edit",
			args: { path, oldText: t.code(t.sized(350, 0.8, 60, 3_000)), newText: t.code(t.sized(450, 0.8, 60, 4_000)) },
			result: `Successfully replaced text in ${path}.`,
			isError: false,
		};
	}
	const content = t.code(t.sized(3_000, 0.7, 600, 12_000));
	return {
		name: "write",
		args: { path, content },
		result: `Successfully wrote ${content.length} bytes to ${path}`,
		isError: false,
	};
}

/** One round: optional text, one to `maxCalls` calls, their results. */
function round(
	builder: Builder,
	t: ReturnType<typeof texts>,
	random: () => number,
	maxCalls: number,
	first: "huge" | "small" | "any",
): void {
	const calls = Array.from({ length: t.between(1, maxCalls) }, (_, index) =>
		toolCall(t, random, index === 0 ? first : first === "small" ? "small" : "any"),
	);
	const ids = calls.map(() => `toolu_gen${String(++builder.calls).padStart(6, "0")}`);
	const content = [
		...(random() < 0.4 ? [{ type: "text", text: t.prose(t.between(40, 300)) }] : []),
		...calls.map((call, index) => ({ type: "toolCall", id: ids[index], name: call.name, arguments: call.args })),
	];
	assistant(builder, content, "toolUse");
	calls.forEach((call, index) => {
		builder.time += t.between(1, 4) * SECOND;
		push(builder, {
			role: "toolResult",
			toolCallId: ids[index],
			toolName: call.name,
			content: [{ type: "text", text: call.result }],
			isError: call.isError,
		});
	});
	builder.time += t.between(2, 8) * SECOND;
}

/** A generated session's branch. */
export function generateReplaySession(shape: GeneratedShape, seed: number): SessionEntry[] {
	const random = prng(seed * 7_919 + (shape === "multi-turn" ? 1 : 2));
	const t = texts(random);
	const builder: Builder = { entries: [], time: BASE_TIME, calls: 0 };
	const user = (chars: number) => push(builder, { role: "user", content: [{ type: "text", text: t.prose(chars) }] });
	if (shape === "small-results") {
		user(t.between(120, 400));
		builder.time += 3 * SECOND;
		while (builder.calls < SMALL_RESULTS) {
			const before = builder.calls;
			round(builder, t, random, Math.min(4, SMALL_RESULTS - before), "small");
		}
		assistant(builder, [{ type: "text", text: t.prose(800) }], "stop");
		return builder.entries;
	}
	const turns = t.between(32, 44);
	// Three huge results, at turns chosen by the seed.
	const hugeTurns = new Set(Array.from({ length: 3 }, () => t.between(2, turns - 1)));
	for (let turn = 0; turn < turns; turn++) {
		user(t.sized(160, 0.8, 30, 1_200));
		builder.time += t.between(2, 6) * SECOND;
		const rounds = t.between(2, 12);
		for (let index = 0; index < rounds; index++)
			round(builder, t, random, 3, hugeTurns.has(turn) && index === 0 ? "huge" : "any");
		assistant(builder, [{ type: "text", text: t.prose(t.between(150, 1_200)) }], "stop");
		// Minutes between turns; about one gap in five is past a five-minute cache lifetime.
		builder.time += (random() < 0.2 ? t.between(6, 25) : t.between(1, 4)) * MINUTE;
	}
	return builder.entries;
}

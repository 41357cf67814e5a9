/**
 * What the scripted agent can read in a request, and nothing else: the
 * messages (a tool result next to the call that asked for it), the tool
 * declarations (names, parameters, descriptions), and calls other text spells
 * out (`<tool> {json}`). Pure functions over the wire body.
 *
 * The agent knows its task (the user message and the probe say which stage
 * and what a fact line looks like) but nothing of pi-fold's brief formats:
 * it learns what a fold id looks like from the peek calls briefs spell out,
 * finds a stage number in any text near such an id, learns which actions and
 * arguments the context tool takes from its declared schema, and follows
 * only calls a result spells out (a hit's peek, a "More" page).
 */

import type { WireMessage, WireRequestBody } from "../../test/harness/provider-rules.ts";
import { factPattern } from "./workload.ts";

/** Characters after an id read as being about it (or up to the next id or the line's end, whichever is nearer). */
export const NEAR_ID_CHARS = 240;

/** Text of a wire message's content (a string or text parts). */
export function messageText(message: WireMessage): string {
	const content = message.content;
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.map((part: unknown) =>
			typeof part === "object" && part !== null && typeof (part as { text?: unknown }).text === "string"
				? (part as { text: string }).text
				: "",
		)
		.join("\n");
}

/** The text of a call: its name and arguments as the wire carries them. */
function callText(name: string, args: string): string {
	return `${name} ${args}`;
}

/**
 * Each message as a reader takes it in: a tool result is read together with
 * the call shell that asked for it (name and arguments), an assistant
 * message with its calls, anything else as its text.
 */
export function readingTexts(messages: readonly WireMessage[]): string[] {
	const calls = new Map<string, string>();
	const texts: string[] = [];
	for (const message of messages) {
		const own = messageText(message);
		const issued = (message.tool_calls ?? []).map((call) => {
			const text = callText(call.function?.name ?? "", call.function?.arguments ?? "");
			calls.set(call.id, text);
			return text;
		});
		if (message.role === "tool") {
			const call = calls.get(String(message.tool_call_id ?? ""));
			texts.push(call ? `${call}\n${own}` : own);
		} else texts.push([own, ...issued].filter(Boolean).join("\n"));
	}
	return texts;
}

/** The fact value for `target` anywhere in the request, if its line is there. */
export function visibleFact(messages: readonly WireMessage[], target: number): string | undefined {
	return factIn(messages.map(messageText).join("\n"), target);
}

/** The fact value for `target` in a text. */
export function factIn(text: string, target: number): string | undefined {
	return factPattern(target).exec(text)?.[1];
}

/** What the declared context tool offers, read from its schema. */
export interface ContextTool {
	name: string;
	/** `search` is an allowed action and `query` a parameter. */
	search: boolean;
	/** `children` is a parameter (a peek that lists the folds inside one). */
	children: boolean;
}

interface DeclaredTool {
	name?: string;
	parameters?: { properties?: Record<string, { enum?: unknown[]; anyOf?: { const?: unknown }[] }> };
}

function actionValues(property: { enum?: unknown[]; anyOf?: { const?: unknown }[] } | undefined): unknown[] {
	return property?.enum ?? (property?.anyOf ?? []).map((item) => item.const);
}

/** The tool whose `action` parameter allows `peek`: the context tool, with what else it allows. */
export function contextTool(body: WireRequestBody): ContextTool | undefined {
	for (const raw of body.tools ?? []) {
		const tool = ((raw as { function?: DeclaredTool }).function ?? raw) as DeclaredTool;
		const properties = tool.parameters?.properties ?? {};
		const actions = actionValues(properties.action);
		if (!tool.name || !actions.includes("peek")) continue;
		return {
			name: tool.name,
			search: actions.includes("search") && properties.query !== undefined,
			children: properties.children !== undefined,
		};
	}
	return undefined;
}

/** The JSON object that starts at `text[start]` ("{"), or undefined when it does not parse. */
function jsonAt(text: string, start: number): Record<string, unknown> | undefined {
	let depth = 0;
	let inString = false;
	for (let i = start; i < text.length; i++) {
		const char = text[i];
		if (inString) {
			if (char === "\\") i++;
			else if (char === '"') inString = false;
			continue;
		}
		if (char === '"') inString = true;
		else if (char === "{") depth++;
		else if (char === "}" && --depth === 0) {
			try {
				const value = JSON.parse(text.slice(start, i + 1)) as unknown;
				return typeof value === "object" && value !== null && !Array.isArray(value)
					? (value as Record<string, unknown>)
					: undefined;
			} catch {
				return undefined;
			}
		}
	}
	return undefined;
}

/** Calls a text spells out as `<tool> {json}`, in order, each with the text before it on its line. */
export function spelledCalls(text: string, tool: string): { args: Record<string, unknown>; lead: string }[] {
	const calls: { args: Record<string, unknown>; lead: string }[] = [];
	const marker = `${tool} {`;
	for (let at = text.indexOf(marker); at !== -1; at = text.indexOf(marker, at + marker.length)) {
		const args = jsonAt(text, at + tool.length + 1);
		if (!args) continue;
		const lineStart = text.lastIndexOf("\n", at) + 1;
		calls.push({ args, lead: text.slice(lineStart, at) });
	}
	return calls;
}

/** The shape of the ids spelled-out peek calls name (prefix, then hex digits), learned from what is seen. */
export function foldIdShape(texts: readonly string[], tool: string): RegExp | undefined {
	for (const text of texts) {
		for (const { args } of spelledCalls(text, tool)) {
			const id = args.action === "peek" && typeof args.id === "string" ? args.id : "";
			const match = /^([a-z]+-)([0-9a-f]+)$/.exec(id);
			if (match?.[1] && match[2]) return new RegExp(`\\b${match[1]}[0-9a-f]{${match[2].length}}\\b`, "g");
		}
	}
	return undefined;
}

/** A fold the text near its id says holds the stage: exactly that stage, or a range around it. */
export interface Lead {
	id: string;
	exact: boolean;
}

/** "stage 12", `"stage":12`, "stage 1–48": a stage number or range. */
const STAGE_MENTION = /stage"?\s*:?\s*(\d+)(?:\s*[–-]\s*(\d+))?/gi;

/**
 * The fold to read for `target`: an id whose nearby text (after it, on its
 * line, up to the next id) names exactly that stage, else one naming a range
 * that holds it. Ids in `skip` (already read) are passed over.
 */
export function findLead(
	texts: readonly string[],
	target: number,
	shape: RegExp,
	skip: ReadonlySet<string> = new Set(),
): Lead | undefined {
	let range: Lead | undefined;
	for (const text of texts) {
		const ids = [...text.matchAll(shape)];
		for (let i = 0; i < ids.length; i++) {
			const match = ids[i];
			if (!match || skip.has(match[0])) continue;
			const from = (match.index ?? 0) + match[0].length;
			const next = ids[i + 1]?.index ?? text.length;
			const lineEnd = text.indexOf("\n", from);
			const near = text.slice(from, Math.min(next, from + NEAR_ID_CHARS, lineEnd === -1 ? text.length : lineEnd));
			for (const mention of near.matchAll(STAGE_MENTION)) {
				const first = Number(mention[1]);
				const last = mention[2] === undefined ? first : Number(mention[2]);
				if (first === target && last === target) return { id: match[0], exact: true };
				if (first <= target && target <= last) range ??= { id: match[0], exact: false };
			}
		}
	}
	return range;
}

/** The first call a result spells out whose line says more follows (a next page), if any. */
export function moreCall(text: string, tool: string): Record<string, unknown> | undefined {
	return spelledCalls(text, tool).find((call) => /\bmore\b/i.test(call.lead))?.args;
}

/**
 * The first peek call a result spells out: in the result of a search the agent asked for, any (a hit's call,
 * which may read a small source whole); elsewhere one that reads a slice (the next page of a peek or listing).
 */
export function spelledPeekCall(text: string, tool: string, fromSearch: boolean): Record<string, unknown> | undefined {
	return spelledCalls(text, tool).find(
		(call) => call.args.action === "peek" && (fromSearch || typeof call.args.offset === "number"),
	)?.args;
}

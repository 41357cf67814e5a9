/**
 * The `active_context` tool's argument schema and its semantic validation.
 *
 * Pi validates arguments against the schema before `execute` runs; the
 * checks here run again inside the tool (and for `/fold-context`) so every
 * refusal names the field, the problem and the next action, and nothing
 * changes when arguments are wrong.
 */

import { StringEnum } from "@earendil-works/pi-ai";
import { type Static, Type } from "typebox";
import { QUERY_MAX_CHARS } from "../../text/matcher.ts";
import { BRIEF_MAX_CHARS } from "../briefs/brief.ts";
import type { ToolAction } from "../options.ts";
import { PEEK_MAX_BYTES } from "./peek.ts";
import { SEARCH_MAX_HITS } from "./search.ts";
import { STATUS_TREE_MAX_LIMIT } from "./status.ts";

/** Longest id accepted (tool call ids from some providers are long). */
export const MAX_ID_LENGTH = 256;
/** Most ids one call may name. */
export const MAX_IDS = 64;
/**
 * Ids are opaque tokens: letters, digits and `_ - . : |`, never whitespace.
 * A summary's entry address may add a leading `@` and one `/<n>`,
 * `/phase:<n>` or `/call:<tool call id>` suffix; no other slash is accepted.
 */
const ID_PATTERN = /^@?[A-Za-z0-9_.:|-]+(?:\/(?:\d+|phase:\d+|call:[A-Za-z0-9_.:|-]+))?$/;

export function toolParameters(actions: readonly ToolAction[]) {
	return Type.Object(
		{
			action: StringEnum(actions, { description: "What to do" }),
			id: Type.Optional(
				Type.String({ description: "Fold id (f-…) for peek, expand, refold, rebrief, reboundary, unmark" }),
			),
			ids: Type.Optional(
				Type.Array(Type.String(), {
					description:
						"fold/protect/unprotect/reboundary: entry ids (as status lists them), tool call ids or fold ids; a fold covers first to last inclusive",
				}),
			),
			brief: Type.Optional(Type.String({ description: "fold/rebrief: your own brief for the span" })),
			offset: Type.Optional(
				Type.Integer({
					minimum: 0,
					description:
						'peek: first byte of the slice (with children: first row); search: first hit of the page; status "tree": first row of the page',
				}),
			),
			limit: Type.Optional(
				Type.Integer({
					minimum: 1,
					maximum: STATUS_TREE_MAX_LIMIT,
					description: `status "tree" and peek children: rows per page (at most ${STATUS_TREE_MAX_LIMIT}); search: hits per page (at most ${SEARCH_MAX_HITS})`,
				}),
			),
			bytes: Type.Optional(Type.Integer({ minimum: 1, description: `peek: slice length (at most ${PEEK_MAX_BYTES})` })),
			children: Type.Optional(
				Type.Boolean({
					description: "peek: list the folds inside this fold with their first lines, paged by offset/limit",
				}),
			),
			query: Type.Optional(
				Type.String({
					description: `search: text to find in folded, compacted and evidence sources (at most ${QUERY_MAX_CHARS} characters)`,
				}),
			),
			regex: Type.Optional(
				Type.Boolean({
					description: "search: the query is a JavaScript regular expression (case-sensitive); default literal",
				}),
			),
			detail: Type.Optional(
				StringEnum(["tree", "window"] as const, {
					description:
						'status: "tree" lists every fold; "window" lists the entries and folds in the window with their ids',
				}),
			),
		},
		{ additionalProperties: false },
	);
}

export type ToolParams = Static<ReturnType<typeof toolParameters>>;

export interface ArgumentError {
	ok: false;
	code: "invalid-arguments";
	message: string;
}

const ACTIONS_WITH_ID: ReadonlySet<string> = new Set(["peek", "expand", "refold", "rebrief", "reboundary", "unmark"]);
const ACTIONS_WITH_IDS: ReadonlySet<string> = new Set(["fold", "protect", "unprotect"]);

function invalid(message: string): ArgumentError {
	return { ok: false, code: "invalid-arguments", message };
}

function checkId(field: string, value: unknown): string | undefined {
	if (typeof value !== "string" || value.length === 0) return `${field} must be a non-empty string`;
	if (value.length > MAX_ID_LENGTH) return `${field} is longer than ${MAX_ID_LENGTH} characters`;
	if (!ID_PATTERN.test(value))
		return `${field} ${JSON.stringify(value.slice(0, 40))} has characters ids never contain (ids have no slashes, dots-only paths or spaces)`;
	if (value === "." || value === ".." || value.includes(".."))
		return `${field} ${JSON.stringify(value)} looks like a path`;
	return undefined;
}

/** Validate raw arguments for an allowed action list. Returns the typed params or an error naming the fix. */
export function validateToolArgs(raw: unknown, actions: readonly ToolAction[]): ToolParams | ArgumentError {
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
		return invalid('Arguments must be a JSON object such as {"action":"status"}.');
	}
	const args = raw as Record<string, unknown>;
	const known = new Set([
		"action",
		"id",
		"ids",
		"brief",
		"offset",
		"bytes",
		"limit",
		"detail",
		"children",
		"query",
		"regex",
	]);
	const unknown = Object.keys(args).filter((key) => !known.has(key));
	if (unknown.length > 0)
		return invalid(
			`Unknown field ${unknown.map((key) => JSON.stringify(key)).join(", ")}. Allowed: ${[...known].join(", ")}.`,
		);
	const action = args.action;
	if (typeof action !== "string" || !(actions as readonly string[]).includes(action)) {
		return invalid(`action must be one of ${actions.join(", ")}; got ${JSON.stringify(action)}.`);
	}
	if (args.id !== undefined || ACTIONS_WITH_ID.has(action)) {
		if (args.id === undefined)
			return invalid(
				`${action} needs "id": the fold id (f-…)${action === "peek" ? " or an evidence address (evidence:<sha256>)" : ""}. Call {"action":"status","detail":"tree"} to list fold ids.`,
			);
		const problem = checkId("id", args.id);
		if (problem) return invalid(`${problem}. Use a fold id exactly as status lists it.`);
	}
	if (args.ids !== undefined || ACTIONS_WITH_IDS.has(action)) {
		if (!Array.isArray(args.ids) || args.ids.length === 0) {
			return invalid(`${action} needs "ids": a non-empty array of entry ids, tool call ids or fold ids.`);
		}
		if (args.ids.length > MAX_IDS)
			return invalid(`ids names ${args.ids.length} items; at most ${MAX_IDS}. Name the first and last of the span.`);
		for (const [index, value] of args.ids.entries()) {
			const problem = checkId(`ids[${index}]`, value);
			if (problem) return invalid(`${problem}. Use ids exactly as status or your transcript shows them.`);
		}
	}
	if (args.brief !== undefined) {
		if (typeof args.brief !== "string" || args.brief.trim().length === 0)
			return invalid("brief must be a non-empty string; omit it for a deterministic brief.");
		if (args.brief.length > BRIEF_MAX_CHARS) {
			return invalid(`brief is ${args.brief.length} characters; at most ${BRIEF_MAX_CHARS}. Shorten it.`);
		}
	}
	for (const field of ["offset", "bytes", "limit"] as const) {
		const value = args[field];
		if (value === undefined) continue;
		if (typeof value !== "number" || !Number.isInteger(value) || value < (field === "offset" ? 0 : 1)) {
			return invalid(`${field} must be a ${field === "offset" ? "non-negative" : "positive"} integer.`);
		}
	}
	if (typeof args.limit === "number" && args.limit > STATUS_TREE_MAX_LIMIT)
		return invalid(`limit is at most ${STATUS_TREE_MAX_LIMIT}; page with offset.`);
	if (typeof args.bytes === "number" && args.bytes > PEEK_MAX_BYTES)
		return invalid(`bytes is at most ${PEEK_MAX_BYTES}; peek in slices with offset.`);
	if (args.detail !== undefined && args.detail !== "tree" && args.detail !== "window") {
		return invalid('detail must be "tree" or "window" when given.');
	}
	return checkSearchAndChildren(action, args) ?? (args as ToolParams);
}

/** `search` needs a query; `regex` belongs to search and `children` to peek; a search page holds at most SEARCH_MAX_HITS. */
function checkSearchAndChildren(action: string, args: Record<string, unknown>): ArgumentError | undefined {
	for (const field of ["children", "regex"] as const) {
		if (args[field] !== undefined && typeof args[field] !== "boolean")
			return invalid(`${field} must be true or false.`);
	}
	if (args.children !== undefined && action !== "peek")
		return invalid('children belongs to peek: {"action":"peek","id":"f-…","children":true}.');
	if ((args.regex !== undefined || args.query !== undefined) && action !== "search")
		return invalid('query and regex belong to search: {"action":"search","query":"text"}.');
	if (action !== "search") return undefined;
	if (typeof args.query !== "string" || args.query.length === 0)
		return invalid('search needs "query": the text to find, e.g. {"action":"search","query":"FACT S12"}.');
	if (args.query.length > QUERY_MAX_CHARS)
		return invalid(
			`query is ${args.query.length} characters; at most ${QUERY_MAX_CHARS}. Search a shorter, distinctive part.`,
		);
	if (typeof args.limit === "number" && args.limit > SEARCH_MAX_HITS)
		return invalid(`a search page shows at most ${SEARCH_MAX_HITS} hits; page with offset.`);
	return undefined;
}

export function isArgumentError(value: unknown): value is ArgumentError {
	return typeof value === "object" && value !== null && (value as ArgumentError).code === "invalid-arguments";
}

/** The tool's description as the model reads it (also what `pi-fold report` counts it as). */
export function toolDescription(toolName: string, actions: readonly ToolAction[]): string {
	return [
		"Manage your own context window losslessly. Stale spans fold into short briefs; the exact originals stay stored and SHA-256 verified, one call away.",
		`Actions: ${actions.join(", ")}.`,
		'status: window occupancy, folds, and whether requests only appended (detail "tree" lists every fold; detail "window" lists entry ids to fold by).',
		'fold {"ids":[first,last]}: fold a finished span (entry ids, tool call ids or fold ids, inclusive; snapped outward to whole turns and tool batches). Optional "brief". Two or more adjacent fold ids consolidate them.',
		'peek {"id"}: read a fold\'s exact source without changing the window ("offset"/"bytes" for a slice; "children":true lists the folds inside it with their first lines); an entry id (@<entry-id> in a compaction summary) reads that one entry. expand {"id"}: restore a fold in place (outside-in). refold {"id"}: collapse it again.',
		...(actions.includes("search")
			? [
					'search {"query"}: find text in everything the window no longer shows (every fold\'s exact source at any depth, compacted entries, evidence); each hit names its fold or entry, the byte offset and the peek call that reads it. "regex":true for a regular expression; "offset" pages.',
				]
			: []),
		'protect/unprotect {"ids"}: keep entries raw. rebrief {"id","brief"?}: replace a brief. reboundary {"id","ids"?}: dissolve a mis-cut fold and fold the span you meant.',
		actions.includes("unmark")
			? 'Folds are pending marks that cost nothing: the runtime commits every mark in one rewrite when that pays. unmark {"id"}: withdraw a pending mark.'
			: "Folds land at the end of the current turn, in one rewrite.",
		`Example: ${toolName} {"action":"fold","ids":["<first id>","<last id>"]}`,
	].join("\n");
}

/** The line Pi's system prompt lists the tool with. */
export function toolPromptSnippet(toolName: string): string {
	return `${toolName}: fold stale spans of your own transcript into briefs; search, peek or expand them back exactly`;
}

/** Characters the tool adds to every request: its declaration (name, description, parameters) and prompt line. */
export function toolDeclarationChars(toolName: string, actions: readonly ToolAction[]): number {
	const declaration = {
		type: "function",
		function: { name: toolName, description: toolDescription(toolName, actions), parameters: toolParameters(actions) },
	};
	return JSON.stringify(declaration).length + toolPromptSnippet(toolName).length;
}

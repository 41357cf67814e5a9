/**
 * The human's commands: `/context` (the report, `tree`, `window`,
 * `peek <id>`, `search <text>`, `settings`) and `/fold-context` (fold a named span, or the oldest
 * eligible closed chapter), with argument completions. Output speaks to the
 * person: in the TUI a themed view that pages (`showReport`), in every
 * other mode the same text through `showOutput`; wording lives in
 * `context-report.ts` and `peek-report.ts`.
 */

import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { AutocompleteItem } from "@earendil-works/pi-tui";
import { showOutput } from "../../host/output.ts";
import { compileMatcher } from "../../text/matcher.ts";
import { foldSpan } from "../actions/actions.ts";
import { peekFold } from "../actions/peek.ts";
import { SEARCH_MAX_HITS, SEARCH_REGEX_BUDGET_MS, type SearchHit } from "../actions/search.ts";
import { searchWorkspace } from "../actions/search-action.ts";
import { searchReport, searchTimeoutText } from "../actions/search-report.ts";
import type { ActionOutcome } from "../engine/workspace.ts";
import { unfoldedChapters } from "../policy/ladder.ts";
import { contextHints, contextReportLines, formatAfterFold, readableBytes } from "./context-report.ts";
import { humanView, lastView, updateFooter } from "./footer.ts";
import {
	formatPeekReport,
	PEEK_PAGE_CHARS,
	type PeekPages,
	pageShowing,
	peekSourcePages,
	unknownPeekId,
} from "./peek-report.ts";
import { personText } from "./person-text.ts";
import { heading, line, type ReportLine, title } from "./report-doc.ts";
import { showReport } from "./report-view.ts";
import type { FoldRuntime } from "./runtime.ts";

/** `/context` subcommands with what each shows (also the completion descriptions). */
export const CONTEXT_SUBCOMMANDS = {
	tree: "every fold, nested folds included",
	window: "the window's entries and folds, with the ids the fold command takes",
	peek: "a fold's brief and its exact source, a page at a time: peek <fold id> [page]",
	search: "find text in folded, compacted and evidence sources: search <text> (or /regex/)",
	settings: "see and change pi-fold's settings, and where each value comes from",
	help: "what each subcommand does",
} as const;
type Subcommand = keyof typeof CONTEXT_SUBCOMMANDS;

/**
 * Source bytes `/context peek` reads: the whole source (the verified read
 * reads the whole blob anyway), paged for the person; the model reads
 * slices of PEEK_MAX_BYTES.
 */
const PERSON_PEEK_BYTES = Number.MAX_SAFE_INTEGER;
/** Fold ids offered after `peek `; the newest first, bounded so the menu stays usable. */
const COMPLETION_FOLDS = 50;

export function parseContextArgs(args: string): { sub: Subcommand | "" | { unknown: string }; rest: string } {
	const [head = "", ...rest] = args.trim().split(/\s+/).filter(Boolean);
	if (head === "") return { sub: "", rest: "" };
	if (Object.hasOwn(CONTEXT_SUBCOMMANDS, head)) return { sub: head as Subcommand, rest: rest.join(" ") };
	return { sub: { unknown: head }, rest: rest.join(" ") };
}

export function contextHelp(command: string): string {
	return [
		`/${command}: the model's window, folds and what pi-fold did.`,
		...Object.entries(CONTEXT_SUBCOMMANDS).map(([name, text]) => `  /${command} ${name.padEnd(6)} ${text}`),
	].join("\n");
}

/** Completions for `/context <prefix>`: subcommands, then fold ids after `peek `. */
export function contextCompletions(
	prefix: string,
	folds: readonly { id: string; brief: string }[],
): AutocompleteItem[] | null {
	const peek = /^peek\s+(\S*)$/.exec(prefix);
	if (peek) {
		const typed = peek[1] ?? "";
		const items = folds
			.filter((fold) => fold.id.startsWith(typed))
			.slice(-COMPLETION_FOLDS)
			.reverse()
			.map((fold) => ({ value: `peek ${fold.id}`, label: fold.id, description: fold.brief.split("\n", 1)[0] }));
		return items.length > 0 ? items : null;
	}
	if (/\s/.test(prefix)) return null;
	const items = Object.entries(CONTEXT_SUBCOMMANDS)
		.filter(([name]) => name.startsWith(prefix))
		.map(([name, description]) => ({
			value: name === "peek" || name === "search" ? `${name} ` : name,
			label: name,
			description,
		}));
	return items.length > 0 ? items : null;
}

/** Subcommands another module serves (the settings dialog lives in src/settings/). */
export interface CommandExtras {
	settings(ctx: ExtensionCommandContext): Promise<void>;
}

export function registerCommands(pi: ExtensionAPI, runtime: FoldRuntime, extras: CommandExtras): void {
	const { commandNames } = runtime.options;
	pi.registerCommand(commandNames.status, {
		description: `Show the model's window and folds (/${commandNames.status} tree | window | peek <fold id> | search <text> | settings | help)`,
		getArgumentCompletions: (prefix) => contextCompletions(prefix, lastView(runtime)?.folds ?? []),
		handler: async (args, ctx) => {
			const { sub, rest } = parseContextArgs(args);
			if (typeof sub === "object") {
				const names = Object.keys(CONTEXT_SUBCOMMANDS).join(", ");
				showOutput(
					ctx,
					`Unknown /${commandNames.status} subcommand "${sub.unknown}"; try ${names}.\n${contextHints(commandNames)}`,
					"warning",
				);
				return;
			}
			if (sub === "help") return showOutput(ctx, contextHelp(commandNames.status));
			if (sub === "settings") return extras.settings(ctx);
			if (sub === "peek") return showPlain(ctx, ...(await peekReport(runtime, ctx, rest)));
			if (sub === "search") return showPlain(ctx, ...(await searchCommand(runtime, ctx, args)));
			return showReport(ctx, report(runtime, ctx, sub === "tree", sub === "window"));
		},
	});
	pi.registerCommand(commandNames.fold, {
		description: `Fold a span (/${commandNames.fold} <first id> [last id]) or the oldest eligible closed chapter`,
		handler: async (args, ctx) => {
			const ids = args.split(/\s+/).filter(Boolean);
			const outcome =
				ids.length > 0 ? await foldSpan(runtime.workspace(ctx, "command"), ids) : await foldOldest(runtime, ctx);
			runtime.apply(outcome, ctx);
			const view = humanView(runtime, ctx);
			updateFooter(runtime, ctx, view);
			showOutput(
				ctx,
				outcome.ok
					? `${personText(outcome.text)}\n${formatAfterFold(view.next, view.held)}`
					: `Nothing folded (${outcome.code}): ${personText(outcome.text)}`,
				outcome.ok ? "info" : "warning",
			);
		},
	});
}

/** A report written as text, drawn as one in the TUI: the first line its title, unindented lines ending in ":" its headings. */
function showPlain(ctx: ExtensionCommandContext, text: string, level: "info" | "warning"): Promise<void> {
	if (level === "warning") return showReport(ctx, [line(text)], level);
	return showReport(
		ctx,
		text.split("\n").map((row, index) => (index === 0 ? title(row) : /^\S.*:$/.test(row) ? heading(row) : line(row))),
		level,
	);
}

function report(runtime: FoldRuntime, ctx: ExtensionContext, tree: boolean, window: boolean): ReportLine[] {
	const view = humanView(runtime, ctx);
	updateFooter(runtime, ctx, view);
	const manager = ctx.sessionManager;
	const lines = contextReportLines({
		sessionId: manager.getSessionId(),
		branchEntries: runtime.engine.entries.length,
		status: view.status,
		next: view.next,
		hostTokens: ctx.getContextUsage()?.tokens ?? null,
		briefs: new Map(view.folds.map((fold) => [fold.id, fold.brief])),
		compacted: view.compacted,
		commands: runtime.options.commandNames,
		tree,
	});
	if (!window) return lines;
	const [head = "", ...rows] = runtime.windowListing(ctx).split("\n");
	return [...lines, heading(head), ...rows.map((row) => line(row))];
}

/** `/context peek <id> [page]`: a page of the source, every entry whole; its last line names the next page's command. */
async function peekReport(
	runtime: FoldRuntime,
	ctx: ExtensionContext,
	rest: string,
): Promise<[string, "info" | "warning"]> {
	const view = humanView(runtime, ctx);
	const command = runtime.options.commandNames.status;
	const [id = "", pageText, ...extra] = rest.split(/\s+/).filter(Boolean);
	const fold = view.folds.find((item) => item.id === id);
	const ws = runtime.workspace(ctx, "command");
	const mark = fold ? undefined : ws.state.data.marks.find((item) => item.record.id === id)?.record;
	const entryId = /^@?([^/@]+)/.exec(id)?.[1] ?? "";
	if (!fold && !mark && !ws.view.indexById.has(entryId)) return [unknownPeekId(id, view.folds, command), "warning"];
	const outcome = await peekFold(ws, id, 0, PERSON_PEEK_BYTES);
	if (!outcome.ok) return [`Could not read ${id} (${outcome.code}): ${outcome.text}`, "warning"];
	const pages = peekSourcePages(outcome.text).pages.length;
	const page = pageText === undefined ? 1 : Number(pageText);
	if (extra.length > 0 || !Number.isInteger(page) || page < 1 || page > pages)
		return [
			`"${rest.slice(id.length).trim()}" is not a page of ${id}: its source has ${pages} page${pages === 1 ? "" : "s"} of up to ${readableBytes(PEEK_PAGE_CHARS)} of text. /${command} peek ${id} ${Math.min(pages, 2)} shows page ${Math.min(pages, 2)}.`,
			"warning",
		];
	const detail = view.status.folds.find((item) => item.id === id);
	return [
		formatPeekReport({
			id,
			outcomeText: outcome.text,
			fold: detail,
			...(mark
				? {
						mark: { kind: mark.kind, entryCount: mark.sizes.entryCount, sourceBytes: mark.sizes.sourceBytes },
					}
				: {}),
			brief: fold?.brief ?? mark?.brief,
			compacted: view.compacted.has(id),
			command,
			page,
		}),
		"info",
	];
}

/**
 * The peek page each hit shows on, for "See it": the hit's source read whole
 * (verified, as `/context peek` reads it) and paged the same way, the page
 * where the hit's entry shows the text searched for.
 */
async function hitPages(
	ws: ReturnType<FoldRuntime["workspace"]>,
	hits: readonly SearchHit[],
	matches: (text: string) => boolean,
): Promise<Map<SearchHit, number>> {
	const paged = new Map<string, PeekPages | undefined>();
	const found = new Map<SearchHit, number>();
	for (const hit of hits) {
		if (hit.source === "evidence" || hit.entryId === undefined) continue;
		if (!paged.has(hit.id)) {
			const outcome = await peekFold(ws, hit.id, 0, PERSON_PEEK_BYTES);
			paged.set(hit.id, outcome.ok ? peekSourcePages(outcome.text) : undefined);
		}
		const pages = paged.get(hit.id);
		const page = pages ? pageShowing(pages, hit.entryId, matches) : undefined;
		if (page !== undefined) found.set(hit, page);
	}
	return found;
}

/** `/context search <text>`: the text as typed after the subcommand; `/…/` searches a regular expression. */
async function searchCommand(
	runtime: FoldRuntime,
	ctx: ExtensionContext,
	args: string,
): Promise<[string, "info" | "warning"]> {
	const command = runtime.options.commandNames.status;
	const typed = args.trim().replace(/^search\s*/, "");
	if (typed === "")
		return [`Name the text to find: /${command} search <text>, or /${command} search /regex/.`, "warning"];
	const regex = typed.length > 2 && typed.startsWith("/") && typed.endsWith("/");
	const query = regex ? typed.slice(1, -1) : typed;
	const ws = runtime.workspace(ctx, "command");
	const searched = await searchWorkspace(ws, runtime.evidence, { query, regex, limit: SEARCH_MAX_HITS });
	if (!("result" in searched)) return [`Nothing searched: ${searched.text}`, "warning"];
	const asked = { query, regex, toolName: runtime.options.toolName, command };
	if (searched.result.timedOut) return [searchTimeoutText(asked, SEARCH_REGEX_BUDGET_MS), "warning"];
	// The search's own matcher (it compiled, since the search ran), bounded in time as the search was.
	const compiled = compileMatcher(query, regex);
	const matches = (text: string) =>
		compiled.ok && compiled.matcher.scan(text.split("\n"), 1, 1, SEARCH_REGEX_BUDGET_MS).total > 0;
	const pages = await hitPages(ws, searched.result.hits, matches);
	return [searchReport(searched.result, { ...asked, pageOf: (hit) => pages.get(hit) }), "info"];
}

/** Fold the oldest closed chapter that is not already folded and ends before the fresh tail. */
async function foldOldest(runtime: FoldRuntime, ctx: ExtensionContext): Promise<ActionOutcome> {
	const ws = runtime.workspace(ctx, "command");
	let last: ActionOutcome | undefined;
	for (const chapter of unfoldedChapters(ws.view, ws.lattice, ws.freshTailStart)) {
		last = await foldSpan(ws, [chapter.first, chapter.last]);
		if (last.ok) return last;
	}
	return (
		last ?? {
			ok: false,
			code: "nothing-eligible",
			text: `No closed chapter before the current exchange is left unfolded. Name a span: /${runtime.options.commandNames.fold} <first id> <last id>.`,
		}
	);
}

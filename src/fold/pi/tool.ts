/**
 * Registration of the `active_context` tool: argument checks, dispatch to
 * the actions, and the result the model sees (text plus structured details).
 * How the row looks in the TUI is `render-tool.ts`; after an action that can
 * change the window, the footer status is refreshed (UI only).
 */

import type { AgentToolResult } from "@earendil-works/pi-agent-core";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { truncateText } from "../../text/bounded.ts";
import {
	expandFold,
	foldSpan,
	protectEntries,
	reboundary,
	rebrief,
	refoldFold,
	unmarkFold,
} from "../actions/actions.ts";
import { peekFold } from "../actions/peek.ts";
import { listChildren } from "../actions/peek-children.ts";
import { evidenceOffBranch, searchAction } from "../actions/search-action.ts";
import { boundedDetails, statusText as boundedStatusText, STATUS_MAX_CHARS } from "../actions/status.ts";
import {
	isArgumentError,
	type ToolParams,
	toolDescription,
	toolParameters,
	toolPromptSnippet,
	validateToolArgs,
} from "../actions/tool-schema.ts";
import type { StatusDetails } from "../engine/status-facts.ts";
import type { ActionOutcome } from "../engine/workspace.ts";
import { parseEvidenceAddress } from "../store/evidence.ts";
import { updateFooter } from "./footer.ts";
import { renderContextCall, renderContextResult, type ToolDetails } from "./render-tool.ts";
import type { FoldRuntime } from "./runtime.ts";

export function registerContextTool(pi: ExtensionAPI, runtime: FoldRuntime): void {
	const { toolName, toolLabel, toolActions } = runtime.options;
	pi.registerTool({
		name: toolName,
		label: toolLabel,
		description: toolDescription(toolName, toolActions),
		promptSnippet: toolPromptSnippet(toolName),
		parameters: toolParameters(toolActions),
		// Each call plans against the state the previous one left; parallel calls would plan on stale snapshots.
		executionMode: "sequential",
		// The TUI row: one line per call and result; the peek source stays collapsed until expanded.
		renderCall: renderContextCall(toolLabel),
		renderResult: renderContextResult,
		async execute(_toolCallId, params, _signal, _onUpdate, ctx): Promise<AgentToolResult<ToolDetails>> {
			const checked = validateToolArgs(params, toolActions);
			const action =
				typeof (params as { action?: unknown }).action === "string"
					? String((params as { action: string }).action)
					: "unknown";
			const outcome = isArgumentError(checked)
				? { ok: false, code: checked.code, text: checked.message }
				: await runAction(runtime, checked, ctx);
			runtime.apply(outcome, ctx);
			const full = runtime.status(ctx);
			if (!statusOnly(checked)) updateFooter(runtime, ctx);
			const statusCall = !isArgumentError(checked) && checked.action === "status" ? checked : undefined;
			// Per-message digests only for status: every result is persisted in the session file.
			// The fold list is cut to the rows the (bounded) status text shows.
			const shown = statusCall ? statusText(runtime, ctx, full, statusCall) : undefined;
			const status = shown
				? boundedDetails(full, shown.folds, shown.offset)
				: boundedDetails({ ...full, digests: [] }, [], 0);
			const text = shown
				? shown.text
				: outcome.ok
					? outcome.text
					: `Error (${outcome.code ?? "refused"}): ${outcome.text} Nothing changed.`;
			return {
				content: [{ type: "text", text }],
				details: { action, ok: outcome.ok, code: outcome.code, foldId: outcome.foldId, status },
				isError: !outcome.ok,
			};
		},
	});
}

function statusOnly(checked: ReturnType<typeof validateToolArgs>): boolean {
	return !isArgumentError(checked) && checked.action === "status";
}

function statusText(
	runtime: FoldRuntime,
	ctx: ExtensionContext,
	status: StatusDetails,
	params: ToolParams,
): { text: string; folds: StatusDetails["folds"]; offset: number } {
	const { detail, offset, limit } = params;
	const shown = boundedStatusText(status, {
		tree: detail === "tree",
		toolName: runtime.options.toolName,
		offset,
		limit,
	});
	// The listing shares the status bound: it gets what the status text leaves.
	const text =
		detail === "window"
			? truncateText(
					`${shown.text}\n${runtime.windowListing(ctx, STATUS_MAX_CHARS - shown.text.length - 1)}`,
					STATUS_MAX_CHARS,
				)
			: shown.text;
	return { text, folds: shown.shown, offset: shown.offset };
}

async function runAction(runtime: FoldRuntime, params: ToolParams, ctx: ExtensionContext): Promise<ActionOutcome> {
	const ws = runtime.workspace(ctx, "agent");
	const id = params.id ?? "";
	const ids = params.ids ?? [];
	const evidence = parseEvidenceAddress(id);
	switch (params.action) {
		case "status":
			return { ok: true, text: "" };
		case "fold":
			return foldSpan(ws, ids, params.brief);
		case "peek":
			// Evidence artifacts are not folds: they live in the session's evidence directory.
			if (evidence) return evidenceOffBranch(ws, evidence) ?? runtime.evidence.peek(id, params.offset, params.bytes);
			if (params.children) return listChildren(ws, id, params.offset, params.limit);
			return peekFold(ws, id, params.offset, params.bytes);
		case "search":
			return searchAction(ws, runtime.evidence, { ...params, query: params.query ?? "" });
		case "expand":
			return expandFold(ws, id);
		case "refold":
			return refoldFold(ws, id);
		case "protect":
			return protectEntries(ws, ids, true);
		case "unprotect":
			return protectEntries(ws, ids, false);
		case "rebrief":
			return rebrief(ws, id, params.brief);
		case "reboundary":
			return reboundary(ws, id, params.ids, params.brief);
		case "unmark":
			return unmarkFold(ws, id);
		default:
			return { ok: false, code: "invalid-arguments", text: `Unknown action ${JSON.stringify(params.action)}.` };
	}
}

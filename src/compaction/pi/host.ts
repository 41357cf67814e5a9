/**
 * The compactor's small host helpers: notices (a UI notification, or one log
 * line without a UI) and the structural estimates of fixed context (system
 * prompt, declared tools) the calibration needs. Only these and hook.ts touch
 * `ctx` and `pi`.
 */

import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";

/** Pi's structural heuristic for context outside the entries (system prompt, tool declarations). */
const CHARS_PER_TOKEN = 4;
/** Prefix of log lines written when no UI is available. */
export const LOG_PREFIX = "[pi-fold]";

export type NoticeLevel = "warning" | "error";

/** Show a bounded notice: the UI when there is one, otherwise a log line. */
export function notify(
	ctx: Pick<ExtensionContext, "hasUI" | "ui">,
	text: string,
	level: NoticeLevel,
	log: (line: string) => void,
): void {
	if (ctx.hasUI) ctx.ui.notify(text, level);
	else log(`${LOG_PREFIX} ${level}: ${text}`);
}

export function defaultLog(line: string): void {
	process.stderr.write(`${line}\n`);
}

export function systemPromptEstimate(ctx: ExtensionContext): number | undefined {
	try {
		return Math.ceil(ctx.getSystemPrompt().length / CHARS_PER_TOKEN);
	} catch {
		return undefined;
	}
}

/**
 * Structural estimate of the tools declared to the model (the active set):
 * name, description and parameter schema as JSON, at Pi's heuristic. It is
 * fixed context a compaction cannot shrink, so the calibration must not read
 * it as tokenizer density. Undefined when the host cannot list tools.
 */
export function declaredToolsEstimate(pi: Pick<ExtensionAPI, "getActiveTools" | "getAllTools">): number | undefined {
	try {
		const active = new Set(pi.getActiveTools());
		let characters = 0;
		for (const tool of pi.getAllTools()) {
			if (!active.has(tool.name)) continue;
			characters += JSON.stringify({
				name: tool.name,
				description: tool.description,
				parameters: tool.parameters,
			}).length;
		}
		return Math.ceil(characters / CHARS_PER_TOKEN);
	} catch {
		return undefined;
	}
}

/** System prompt plus declared tools; undefined only when neither is known. */
export function fixedContextEstimateOf(
	promptTokens: number | undefined,
	toolTokens: number | undefined,
): number | undefined {
	return promptTokens === undefined && toolTokens === undefined ? undefined : (promptTokens ?? 0) + (toolTokens ?? 0);
}

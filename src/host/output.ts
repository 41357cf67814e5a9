/**
 * Showing command output to the human in every Pi mode.
 *
 * `ctx.ui.notify` is a no-op when Pi has no UI (print and json modes), so a
 * command that only notified would print nothing for `pi -p "/context"`.
 * Without a UI, print mode gets plain text on stdout and json mode gets one
 * JSON line on stdout, so the event stream stays parseable. Pi redirects
 * `process.stdout.write` (and so `console.log`) to stderr in those modes to
 * keep its own output clean, so we write to file descriptor 1 directly.
 * Every text is sanitized first (`sanitizeText`): it quotes session data, and
 * no terminal escape in it may reach the person's terminal.
 */

import { writeSync } from "node:fs";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { sanitizeText } from "../text/lines.ts";
import { showNotice } from "./notice.ts";

const STDOUT_FD = 1;

export type OutputLevel = "info" | "warning" | "error";

/** JSON-mode line type for command output written outside the UI. */
export const JSON_OUTPUT_TYPE = "pi-fold.output";

export function showOutput(
	ctx: Pick<ExtensionContext, "hasUI" | "mode" | "ui">,
	raw: string,
	level: OutputLevel = "info",
) {
	// Briefs, peeked source, tool names and typed arguments are session data: no terminal escape passes.
	const text = sanitizeText(raw);
	if (ctx.hasUI) {
		ctx.ui.notify(text, level);
		return;
	}
	if (ctx.mode === "json") {
		writeSync(STDOUT_FD, `${JSON.stringify({ type: JSON_OUTPUT_TYPE, level, text })}\n`);
		return;
	}
	writeSync(STDOUT_FD, text.endsWith("\n") ? text : `${text}\n`);
}

/**
 * A problem the human should see once, outside the command flow (e.g. a bad
 * settings value), sanitized: it quotes settings values and file names.
 */
export function showProblem(ctx: Pick<ExtensionContext, "hasUI" | "ui">, text: string, oneLine: string): void {
	showNotice(ctx, sanitizeText(text), sanitizeText(oneLine));
}

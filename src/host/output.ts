/**
 * Showing command output to the human in every Pi mode.
 *
 * `ctx.ui.notify` is a no-op when Pi has no UI (print and json modes), so a
 * command that only notified would print nothing for `pi -p "/context"`.
 * Without a UI, print mode gets plain text on stdout and json mode gets one
 * JSON line on stdout, so the event stream stays parseable.
 */

import type { ExtensionContext } from "@earendil-works/pi-coding-agent";

export type OutputLevel = "info" | "warning" | "error";

/** JSON-mode line type for command output written outside the UI. */
export const JSON_OUTPUT_TYPE = "pi-fold.output";

export function showOutput(
	ctx: Pick<ExtensionContext, "hasUI" | "mode" | "ui">,
	text: string,
	level: OutputLevel = "info",
) {
	if (ctx.hasUI) {
		ctx.ui.notify(text, level);
		return;
	}
	if (ctx.mode === "json") {
		process.stdout.write(`${JSON.stringify({ type: JSON_OUTPUT_TYPE, level, text })}\n`);
		return;
	}
	process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
}

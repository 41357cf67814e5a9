/**
 * A notice the person should see once, outside any command: a warning
 * notification when Pi has a UI (TUI, RPC), else one stderr line, so print
 * and json mode keep stdout for their own output. It imports nothing of
 * pi-fold's, so the package entry can tell why pi-fold did not load even
 * when the rest of src/ does not (src/package/load.ts). Callers pass text
 * that is already safe for a terminal (`showProblem` sanitizes).
 */

import type { ExtensionContext } from "@earendil-works/pi-coding-agent";

export function showNotice(ctx: Pick<ExtensionContext, "hasUI" | "ui">, text: string, oneLine: string): void {
	if (ctx.hasUI) {
		ctx.ui.notify(text, "warning");
		return;
	}
	process.stderr.write(`${oneLine.replace(/\s*\n\s*/g, " ")}\n`);
}

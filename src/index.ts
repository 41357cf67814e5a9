/**
 * Package entry: Pi loads the default export; hosts that want options call
 * `registerPiFold(pi, options)` themselves. Registers both engines: the
 * deterministic compactor first (its `context` repair runs before the fold
 * runtime's projection), then the fold runtime, its tool and its commands.
 */

import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { registerCompaction } from "./compaction/hook.ts";
import { registerCommands } from "./fold/commands.ts";
import { type PiFoldOptions, resolveOptions } from "./fold/options.ts";
import { FoldRuntime } from "./fold/runtime.ts";
import { registerContextTool } from "./fold/tool.ts";

export type { PiFoldOptions } from "./fold/options.ts";
export type { FoldRuntime } from "./fold/runtime.ts";

/** Register both engines; returns the fold runtime so a host can read its status. */
export function registerPiFold(pi: ExtensionAPI, options: PiFoldOptions = {}): FoldRuntime {
	const resolved = resolveOptions(options);
	registerCompaction(pi, options.compaction, { recallTool: resolved.toolName });
	const runtime = new FoldRuntime(pi, resolved);
	runtime.register();
	registerContextTool(pi, runtime);
	registerCommands(pi, runtime);
	return runtime;
}

export default function piFold(pi: ExtensionAPI): void {
	registerPiFold(pi);
}

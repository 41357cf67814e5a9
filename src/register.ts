/**
 * Wiring both engines into Pi. `registerPiFold` (src/index.ts) is the public
 * entry; `registerRuntime` also hands back the fold runtime, for this
 * package's own tests and benchmarks (the runtime class is not public API).
 * Order: the fold runtime's overflow attempt first (a lossless fold before
 * any summary), the deterministic compactor next (its `context` repair runs
 * before the fold runtime's projection), then the fold runtime, its tool,
 * its commands and its footer status. Options also come from the `piFold`
 * key of Pi's settings files (src/fold/pi/settings-file.ts); code wins.
 *
 * A bad option passed in code fails the whole load with one message naming
 * the option and its allowed values, thrown before anything is registered:
 * Pi reports the extension as failed and never sees half a package (no
 * compactor without the fold runtime, nor the reverse). A bad value in a
 * settings file never throws: it is reported (once per session, in one
 * notice with every other settings problem: src/settings/) and the value
 * below it is used.
 */

import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { registerCompaction } from "./compaction/pi/hook.ts";
import type { PiFoldOptions } from "./fold/options.ts";
import { registerCommands } from "./fold/pi/commands.ts";
import { registerFooter } from "./fold/pi/footer.ts";
import { FoldRuntime } from "./fold/pi/runtime.ts";
import { readLayers, resolveWithSettings } from "./fold/pi/settings-file.ts";
import { registerContextTool } from "./fold/pi/tool.ts";
import { foldsNote } from "./fold/state/fold-handles.ts";
import { runSettingsCommand } from "./settings/command.ts";
import { registerSessionSettings } from "./settings/session.ts";

/** Register both engines; returns the fold runtime (internal: tests and benchmarks). */
export function registerRuntime(pi: ExtensionAPI, options: PiFoldOptions = {}): FoldRuntime {
	// A factory has no context: registration options come from the global file (see settings-file.ts).
	const registered = resolveWithSettings(options, readLayers(undefined), "registration").resolved;
	const runtime = new FoldRuntime(pi, registered);
	// A provider's overflow refusal is met with a lossless fold before the compactor summarizes anything.
	runtime.registerOverflow();
	const compaction = registerCompaction(pi, options.compaction, {
		recallTool: registered.toolName,
		foldsNote: (summarized) => foldsNote(summarized, registered.entryTypePrefix, registered.toolName),
	});
	// Before the runtime's own session_start handler, so the state it rebuilds uses the session's options.
	registerSessionSettings(pi, {
		code: options,
		live: () => runtime.options,
		configure: (next) => runtime.configure(next),
		compaction,
	});
	runtime.register();
	registerContextTool(pi, runtime);
	registerCommands(pi, runtime, {
		settings: (ctx) =>
			runSettingsCommand(ctx, {
				io: compaction.io,
				code: options,
				live: () => runtime.options,
				configure: (next) => runtime.configure(next),
				compaction,
				command: () => runtime.options.commandNames.status,
			}),
	});
	registerFooter(pi, runtime);
	return runtime;
}

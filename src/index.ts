/**
 * Package entry: Pi loads the default export; hosts that want options call
 * `registerPiFold(pi, options)` themselves (also exported by `pi-fold/api`).
 * Both register both engines (src/register.ts); neither hands out the
 * runtime: the public surface is src/api.ts.
 */

import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import type { PiFoldOptions } from "./fold/options.ts";
import { registerRuntime } from "./register.ts";

export type { PiFoldOptions } from "./fold/options.ts";

/** Register both engines. Status is read through the context tool and `/context`. */
export function registerPiFold(pi: ExtensionAPI, options: PiFoldOptions = {}): void {
	registerRuntime(pi, options);
}

export default function piFold(pi: ExtensionAPI): void {
	registerPiFold(pi);
}

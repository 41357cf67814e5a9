/**
 * Package root entry for Pi (`pi.extensions` in package.json). It exists
 * because Pi labels a package's extension by its path, and an `index.ts` at
 * the package root is labelled with the package's own name (`pi-fold`, or
 * the checkout directory's name for a local path) where src/index.ts was
 * labelled `src`.
 *
 * It hands Pi the bundle of src/ (`npm run bundle`, scripts/bundle.ts) when
 * the bundle was built from the sources the package holds, else the sources
 * themselves, and never fails Pi's start (src/package/load.ts). Pi's loader
 * pays per module on every start: one module instead of ~150 saves ~0.2 s.
 * Only the choice is imported up front; each form is imported when chosen,
 * so a missing or broken form costs nothing. A host that registers pi-fold
 * in code with options imports `registerPiFold` from `pi-fold/api`.
 */

import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { loadPackage, type PackageModule } from "./src/package/load.ts";

export type { PiFoldOptions } from "./src/index.ts";

export default async function piFold(pi: ExtensionAPI): Promise<void> {
	await loadPackage(pi, {
		root: dirname(fileURLToPath(import.meta.url)),
		// The bundle is src/index.ts compiled into one module: the same exports.
		bundle: () => import("./bundle/pi-fold.ts") as Promise<PackageModule>,
		sources: () => import("./src/index.ts"),
	});
}

/**
 * Package root entry for Pi (`pi.extensions` in package.json). It exists
 * because Pi labels a package's extension by its path, and an `index.ts` at
 * the package root is labelled with the package's own name (`pi-fold`, or
 * the checkout directory's name for a local path) where src/index.ts was
 * labelled `src`.
 *
 * It hands Pi the bundle of src/ (`npm run bundle`, scripts/bundle.ts): Pi's
 * loader pays per module on every start, and one module instead of ~145
 * saves ~0.2 s. The types are the sources'; the bundle refuses to load when
 * older than any source, naming the command that rebuilds it
 * (src/package/bundle-entry.ts).
 */

import * as bundled from "./bundle/pi-fold.ts";
import type sourceEntry from "./src/index.ts";
import type { registerPiFold as sourceRegister } from "./src/index.ts";

export type { PiFoldOptions } from "./src/index.ts";

// The bundle is src/ compiled into one module: the same functions, typed by their sources.
const piFold = bundled.default as unknown as typeof sourceEntry;
export default piFold;
export const registerPiFold = bundled.registerPiFold as unknown as typeof sourceRegister;

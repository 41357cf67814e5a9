/**
 * Package root entry for Pi (`pi.extensions` in package.json). It only
 * re-exports src/index.ts; it exists because Pi labels a package's extension
 * by its path, and an `index.ts` at the package root is labelled with the
 * package's own name (`pi-fold`, or the checkout directory's name for a local
 * path) where src/index.ts was labelled `src`.
 */

export type { FoldRuntime, PiFoldOptions } from "./src/index.ts";
export { default, registerPiFold } from "./src/index.ts";

/**
 * Compatibility path: the UTF-8 helpers moved to `src/text/utf8.ts`. Kept
 * only for modules outside the text toolkit's owners that still import it
 * here (src/fold/state.ts); new code imports `../text/utf8.ts`.
 */

export * from "../text/utf8.ts";

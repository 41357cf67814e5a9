/**
 * The bundle's entry (scripts/bundle.ts builds bundle/pi-fold.ts from it):
 * the freshness check, then the package's exports. Inside the bundle this
 * module's URL is the bundle's, so the package root is the folder above.
 */

import { fileURLToPath } from "node:url";
import { assertBundleFresh } from "./bundle-freshness.ts";

assertBundleFresh(fileURLToPath(new URL("..", import.meta.url)));

export { default, registerPiFold } from "../index.ts";

/**
 * The bundle Pi loads (`bundle/pi-fold.ts`, written by scripts/bundle.ts
 * from src/) against the sources it was built from. Pi loads a package
 * through jiti, module by module: one prebuilt module instead of ~145 saves
 * a fixed ~0.2 s on every start (docs/benchmarks.md). A bundle older than
 * any source would run code that is no longer there, so the package entry
 * refuses to start on one and names the command that rebuilds it. Only a
 * checkout is checked: an installed package (under `node_modules`) was
 * packed with a bundle written from its sources (prepare), and the
 * installer stamps its files in whatever order it writes them.
 */

import { readdirSync, statSync } from "node:fs";
import { join, sep } from "node:path";

/** The bundle's path under the package root. */
export const BUNDLE_PATH = "bundle/pi-fold.ts";

/** The source file last changed after the bundle was written (newest first), or undefined when the bundle is current. */
export function staleSource(
	bundleMtimeMs: number,
	sources: readonly { path: string; mtimeMs: number }[],
): string | undefined {
	let newest: { path: string; mtimeMs: number } | undefined;
	for (const source of sources)
		if (source.mtimeMs > bundleMtimeMs && (!newest || source.mtimeMs > newest.mtimeMs)) newest = source;
	return newest?.path;
}

/** Thrown by the package entry when the bundle is older than a source: it would run code that is no longer there. */
export class StaleBundleError extends Error {
	constructor(source: string) {
		super(
			`pi-fold: ${BUNDLE_PATH} is older than src/${source}, so it would run code that is no longer there. Rebuild it with \`npm run bundle\` in the pi-fold checkout, then start Pi again.`,
		);
		this.name = "StaleBundleError";
	}
}

/** Refuse a bundle older than any file under `root`/src (a checkout edited since `npm run bundle`). */
export function assertBundleFresh(root: string): void {
	if (root.split(sep).includes("node_modules")) return;
	const bundle = statSync(join(root, BUNDLE_PATH)).mtimeMs;
	const sourceDir = join(root, "src");
	const sources = readdirSync(sourceDir, { recursive: true, withFileTypes: true })
		.filter((item) => item.isFile())
		.map((item) => {
			const path = join(item.parentPath, item.name);
			return { path: path.slice(sourceDir.length + 1), mtimeMs: statSync(path).mtimeMs };
		});
	const stale = staleSource(bundle, sources);
	if (stale !== undefined) throw new StaleBundleError(stale);
}

/**
 * The package entry refuses a bundle older than any source (it would run
 * code that is no longer there) and names the command that rebuilds it; a
 * bundle as new as its sources, as an installed package carries it, loads.
 */

import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { assertBundleFresh, BUNDLE_PATH, StaleBundleError, staleSource } from "../../src/package/bundle-freshness.ts";

const roots: string[] = [];
afterEach(() => {
	for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A package root with two sources and a bundle, every file stamped `at` (seconds). */
function packageRoot(at: number, under = ""): string {
	const parent = mkdtempSync(join(tmpdir(), "pi-fold-bundle-"));
	roots.push(parent);
	const root = join(parent, under);
	mkdirSync(join(root, "src/fold"), { recursive: true });
	mkdirSync(join(root, "bundle"), { recursive: true });
	for (const file of ["src/index.ts", "src/fold/engine.ts", BUNDLE_PATH]) {
		writeFileSync(join(root, file), "export {};\n");
		utimesSync(join(root, file), at, at);
	}
	return root;
}

describe("staleSource", () => {
	it("names the newest source changed after the bundle, and nothing when none was", () => {
		const sources = [
			{ path: "a.ts", mtimeMs: 100 },
			{ path: "b.ts", mtimeMs: 300 },
			{ path: "c.ts", mtimeMs: 200 },
		];
		expect(staleSource(150, sources)).toBe("b.ts");
		expect(staleSource(300, sources)).toBeUndefined();
		expect(staleSource(0, [])).toBeUndefined();
	});
});

describe("assertBundleFresh", () => {
	it("accepts a bundle as new as its sources", () => {
		expect(() => assertBundleFresh(packageRoot(499_162_500))).not.toThrow();
	});

	it("does not look inside an installed package, whose files the installer stamped in its own order", () => {
		const root = packageRoot(1_000_000, "node_modules/pi-fold");
		utimesSync(join(root, "src/fold/engine.ts"), 2_000_000, 2_000_000);
		expect(() => assertBundleFresh(root)).not.toThrow();
	});

	it("refuses a bundle older than a nested source, naming it and `npm run bundle`", () => {
		const root = packageRoot(1_000_000);
		utimesSync(join(root, "src/fold/engine.ts"), 2_000_000, 2_000_000);
		expect(() => assertBundleFresh(root)).toThrow(StaleBundleError);
		expect(() => assertBundleFresh(root)).toThrow(/older than src\/fold\/engine\.ts.*npm run bundle/);
	});
});

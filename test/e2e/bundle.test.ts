/**
 * Pi loads this checkout through its bundle (index.ts, scripts/bundle.ts):
 * one module for jiti to resolve, transform and compile instead of every
 * source file, which is a fixed part of every start (docs/benchmarks.md).
 * A bundle older than the sources is refused at load, naming the command
 * that rebuilds it, so an edited checkout never runs code that is gone.
 */

import { cpSync, mkdtempSync, rmSync, symlinkSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BUNDLE_PATH } from "../../src/package/bundle-freshness.ts";
import { startLoopbackProvider } from "../harness/loopback-provider.ts";
import { createPiSandbox, REPO_ROOT, runPi, runPrint } from "../harness/pi-cli.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function sandboxLoading(extension: string, env: Record<string, string> = {}) {
	const provider = await startLoopbackProvider();
	cleanups.push(() => provider.close());
	const sandbox = createPiSandbox({ baseUrl: provider.baseUrl, extensions: [extension], env });
	cleanups.push(() => sandbox.dispose());
	return { provider, sandbox };
}

describe("the bundle Pi loads", () => {
	it("is the one module of pi-fold's that jiti compiles besides the package entry", async () => {
		// jiti names each module it compiles.
		const { sandbox } = await sandboxLoading(REPO_ROOT, { JITI_DEBUG: "1" });
		const result = await runPi(sandbox, ["-p", "/context"]);
		expect(result.code, result.stderr).toBe(0);
		expect(result.stdout).toMatch(/tokens/);
		const loaded = [...`${result.stdout}\n${result.stderr}`.matchAll(/\[jiti\] \[transpile\] \[\w+\] (\S+)/g)]
			.map((match) => match[1] ?? "")
			.filter((path) => path.startsWith(REPO_ROOT))
			.map((path) => path.slice(REPO_ROOT.length + 1))
			.sort();
		expect(loaded).toEqual([BUNDLE_PATH, "index.ts"]);
	});

	it("is refused when older than a source, naming the source and `npm run bundle`", async () => {
		const copy = mkdtempSync(join(tmpdir(), "pi-fold-stale-"));
		cleanups.push(() => rmSync(copy, { recursive: true, force: true }));
		for (const entry of ["index.ts", "package.json", "src", "bundle"])
			cpSync(join(REPO_ROOT, entry), join(copy, entry), { recursive: true });
		symlinkSync(join(REPO_ROOT, "node_modules"), join(copy, "node_modules"), "dir");
		utimesSync(join(copy, BUNDLE_PATH), 1_000_000, 1_000_000);
		const { provider, sandbox } = await sandboxLoading(copy);
		const result = await runPrint(sandbox, "/context");
		expect(`${result.stdout}${result.stderr}`).toMatch(/bundle\/pi-fold\.ts is older than src\/\S+.*npm run bundle/);
		expect(provider.requests).toHaveLength(0);
	});
});

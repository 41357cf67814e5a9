/**
 * The package as npm ships it: `npm pack` makes the tarball, it is unpacked
 * where a person would put it, `pi install` adds that directory to Pi's
 * settings (offline: Pi loads a local package in place), and in a Pi that
 * loads nothing else `/context` and `/context help` answer. Proves
 * `files` in package.json carries everything the extension loads.
 */

import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startLoopbackProvider } from "../harness/loopback-provider.ts";
import { createPiSandbox, node22Path, piCliPath, piEnv, REPO_ROOT, runPrint } from "../harness/pi-cli.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("the npm package in Pi", () => {
	it("installs from the packed tarball with pi install, and /context works", async () => {
		const provider = await startLoopbackProvider();
		cleanups.push(() => provider.close());
		const sandbox = createPiSandbox({ baseUrl: provider.baseUrl, extensions: [] });
		cleanups.push(() => sandbox.dispose());
		const packs = join(sandbox.root, "packs");
		mkdirSync(packs, { recursive: true });
		// --ignore-scripts: the extension loads from TypeScript source; the prepack build only serves the CLI's dist.
		const packed = JSON.parse(
			execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", packs], {
				cwd: REPO_ROOT,
				encoding: "utf8",
			}),
		) as { filename: string }[];
		const tarball = join(packs, packed[0]?.filename ?? "");
		execFileSync("tar", ["xzf", tarball, "-C", packs]);
		const installed = join(packs, "package");

		const install = spawnSync(node22Path(), [piCliPath(), "install", installed], {
			cwd: sandbox.cwd,
			env: piEnv(sandbox),
			encoding: "utf8",
			timeout: 60_000,
		});
		expect(install.status, `${install.stdout}\n${install.stderr}`).toBe(0);
		const settings = JSON.parse(readFileSync(join(sandbox.agentDir, "settings.json"), "utf8"));
		// Pi writes a local source relative to the settings file that holds it.
		expect(settings.packages).toEqual([relative(sandbox.agentDir, installed)]);

		const result = await runPrint(sandbox, "/context");
		expect(result.code, result.stderr).toBe(0);
		expect(result.stdout).toMatch(/^pi-fold context · session [0-9a-f-]{8}/m);
		expect(result.stdout).toContain("Window for the next request: ~");
		const help = await runPrint(sandbox, "/context help");
		expect(help.code, help.stderr).toBe(0);
		expect(help.stdout).toContain("/context settings");
	});
});

/**
 * The package as npm ships it: `npm pack` makes the tarball with the
 * package's own `prepack` build (dist/, which the `pi-fold` command runs
 * once installed), `pi install npm:pi-fold@file:<tarball>` installs that
 * tarball the way Pi installs any npm package (npm into Pi's package
 * directory, offline: the tarball has no dependencies to fetch), and in a
 * Pi that loads nothing else `/context` and `/context help` answer; the
 * installed `pi-fold` command runs its compiled dist/. Proves `files` in
 * package.json carries everything the extension and the command load.
 *
 * The pack runs in a copy of the package's files, so the build's dist/ never
 * lands in the checkout (bin/pi-fold.js prefers dist/ when it exists, and a
 * stale one would shadow the source for every other test).
 */

import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BUNDLE_PATH } from "../../src/package/bundle-freshness.ts";
import { startLoopbackProvider } from "../harness/loopback-provider.ts";
import { createPiSandbox, node22Path, piCliPath, piEnv, REPO_ROOT, runPi, runPrint } from "../harness/pi-cli.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Pi's first start with the installed package: ~13 s of CPU compiling its TypeScript. */
const FIRST_RUN_TIMEOUT_MS = 150_000;

/** npm kept offline and quiet: nothing here needs the registry. */
const NPM_OFFLINE = { npm_config_offline: "true", npm_config_update_notifier: "false", npm_config_fund: "false" };

/**
 * What `npm pack` reads: package.json, its `files`, and what builds dist/ and
 * the bundle (prepack, prepare); node_modules linked for the builds.
 */
function packageCopy(into: string): string {
	const manifest = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { files: string[] };
	const builds = ["tsconfig.json", "tsconfig.build.json", "scripts/prepare.js", "scripts/bundle.ts"];
	for (const entry of [...manifest.files, "package.json", ...builds]) {
		if (existsSync(join(REPO_ROOT, entry))) cpSync(join(REPO_ROOT, entry), join(into, entry), { recursive: true });
	}
	symlinkSync(join(REPO_ROOT, "node_modules"), join(into, "node_modules"), "dir");
	return into;
}

describe("the npm package in Pi", () => {
	it("packs with its build, installs from the tarball with pi install, /context works and the command runs dist", async () => {
		const provider = await startLoopbackProvider();
		cleanups.push(() => provider.close());
		const sandbox = createPiSandbox({ baseUrl: provider.baseUrl, extensions: [] });
		cleanups.push(() => sandbox.dispose());
		const source = join(sandbox.root, "source");
		const packs = join(sandbox.root, "packs");
		mkdirSync(source, { recursive: true });
		mkdirSync(packs, { recursive: true });
		const env = { ...process.env, ...NPM_OFFLINE, PATH: `${join(REPO_ROOT, "node_modules/.bin")}:${process.env.PATH}` };
		const packed = JSON.parse(
			execFileSync("npm", ["pack", "--json", "--pack-destination", packs], {
				cwd: packageCopy(source),
				env,
				encoding: "utf8",
			}),
		) as { filename: string; files: { path: string }[] }[];
		const paths = packed[0]?.files.map((file) => file.path) ?? [];
		expect(paths).toEqual(
			expect.arrayContaining(["index.ts", BUNDLE_PATH, "dist/cli/process.js", "dist/index.js", "bin/pi-fold.js"]),
		);
		const spec = `npm:pi-fold@file:${join(packs, packed[0]?.filename ?? "")}`;

		const install = spawnSync(node22Path(), [piCliPath(), "install", spec], {
			cwd: sandbox.cwd,
			env: { ...piEnv(sandbox), ...NPM_OFFLINE },
			encoding: "utf8",
			timeout: 90_000,
		});
		expect(install.status, `${install.stdout}\n${install.stderr}`).toBe(0);
		const settings = JSON.parse(readFileSync(join(sandbox.agentDir, "settings.json"), "utf8"));
		expect(settings.packages).toEqual([spec]);
		const installed = join(sandbox.agentDir, "npm", "node_modules", "pi-fold");
		expect(existsSync(join(installed, "dist", "cli", "process.js"))).toBe(true);

		// The first run compiles the installed TypeScript (Pi's loader caches it for the next).
		const result = await runPi(sandbox, ["-p", "--", "/context"], FIRST_RUN_TIMEOUT_MS);
		expect(result.code, result.stderr).toBe(0);
		expect(result.stdout).toMatch(/^pi-fold context · session [0-9a-f-]{8}/m);
		expect(result.stdout).toContain("Window for the next request: ~");
		// The packed bundle was built from the packed sources: Pi loads it, with nothing to tell.
		expect(result.stderr).not.toMatch(/pi-fold[: ]/);
		const help = await runPrint(sandbox, "/context help");
		expect(help.code, help.stderr).toBe(0);
		expect(help.stdout).toContain("/context settings");

		// The command needs the host packages it declares as peers: npm installs them for a user who
		// installs the command with npm; Pi does not (it provides them to the extension). Linked in
		// after Pi's checks, where npm would put them.
		for (const peer of ["@earendil-works", "typebox"])
			symlinkSync(join(REPO_ROOT, "node_modules", peer), join(sandbox.agentDir, "npm", "node_modules", peer), "dir");
		const command = (...args: string[]) =>
			spawnSync(node22Path(), [join(installed, "bin", "pi-fold.js"), ...args], { encoding: "utf8", timeout: 60_000 });
		const version = command("--version");
		expect(version.status, version.stderr).toBe(0);
		expect(version.stdout.trim()).toBe("pi-fold 0.1.0");
		const report = command("report", join(installed, "samples", "sample-session.jsonl"), "--no-replay");
		expect(report.status, report.stderr).toBe(0);
		expect(report.stdout).toMatch(/^Session sample-0001/);
	}, 300_000); // the build, npm and Pi's first compile: ~40 s of CPU, ~100 s wall at load 9
});

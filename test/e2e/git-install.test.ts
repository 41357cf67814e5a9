/**
 * `pi install git:…` the way Pi does it, offline: Pi clones the repository
 * and runs `npm install --omit=dev --legacy-peer-deps --no-audit --no-fund`
 * in the clone (Pi 1.6.0, core/package-manager.js `installGit`), then loads
 * the clone on every start. No development dependency is installed there,
 * so no bundler and no bundle: `prepare` must still succeed, and pi-fold
 * loads its sources without a notice (src/package/load.ts).
 *
 * The repository is this checkout's files as they are now (tracked and
 * untracked-but-not-ignored), committed into a temporary repository. Pi is
 * given an https URL; the sandbox's git configuration rewrites it to that
 * repository (`url.<base>.insteadOf`), so Pi's own clone runs offline.
 */

import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BUNDLE_PATH } from "../../src/package/bundle-freshness.ts";
import { startLoopbackProvider } from "../harness/loopback-provider.ts";
import { createPiSandbox, node22Path, piCliPath, piEnv, REPO_ROOT, runPi } from "../harness/pi-cli.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The URL Pi is given; never resolved (the rewrite below sends git to the local repository). */
const HOST = "git.example.invalid";
const SOURCE = `git:${HOST}/owner/pi-fold`;
/** npm kept offline and quiet: a production install of pi-fold fetches nothing. */
const NPM_OFFLINE = { npm_config_offline: "true", npm_config_update_notifier: "false" };
/** Clone, npm and Pi's first compile of the clone's sources. */
const INSTALL_TIMEOUT_MS = 120_000;

/** A git repository at `<base>/owner/pi-fold` holding the checkout's files as they are now. */
function repositoryOfCheckout(base: string, env: NodeJS.ProcessEnv): string {
	const repo = join(base, "owner", "pi-fold");
	const listed = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
		cwd: REPO_ROOT,
		encoding: "utf8",
	});
	for (const path of listed.split("\0").filter((path) => path !== "" && existsSync(join(REPO_ROOT, path)))) {
		mkdirSync(dirname(join(repo, path)), { recursive: true });
		copyFileSync(join(REPO_ROOT, path), join(repo, path));
	}
	const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, env, stdio: "pipe" });
	git("init", "-q", "-b", "main");
	git("add", "-A");
	git("-c", "user.name=pi-fold test", "-c", "user.email=test@pi-fold.invalid", "commit", "-q", "-m", "checkout");
	return repo;
}

describe("pi install git:", () => {
	it("clones, installs without development dependencies, and Pi runs pi-fold from the clone", async () => {
		const provider = await startLoopbackProvider();
		cleanups.push(() => provider.close());
		const sandbox = createPiSandbox({ baseUrl: provider.baseUrl, extensions: [] });
		cleanups.push(() => sandbox.dispose());
		const base = join(sandbox.root, "remote");
		writeFileSync(
			join(sandbox.home, ".gitconfig"),
			`[url "file://${base}/"]\n\tinsteadOf = https://${HOST}/\n[init]\n\tdefaultBranch = main\n`,
		);
		const env = { ...piEnv(sandbox), ...NPM_OFFLINE };
		repositoryOfCheckout(base, env);

		const install = spawnSync(node22Path(), [piCliPath(), "install", SOURCE], {
			cwd: sandbox.cwd,
			env,
			encoding: "utf8",
			timeout: INSTALL_TIMEOUT_MS,
		});
		expect(install.status, `${install.stdout}\n${install.stderr}`).toBe(0);
		expect(JSON.parse(readFileSync(join(sandbox.agentDir, "settings.json"), "utf8")).packages).toEqual([SOURCE]);
		const clone = join(sandbox.agentDir, "git", HOST, "owner", "pi-fold");
		expect(existsSync(join(clone, "package.json"))).toBe(true);
		// `prepare` ran without the bundler and said why there is no bundle.
		expect(existsSync(join(clone, BUNDLE_PATH))).toBe(false);
		expect(install.stderr).toContain("pi-fold: no bundler in this install");

		// The package is in Pi's settings now: no -e.
		const result = await runPi(sandbox, ["-p", "--", "/context"], INSTALL_TIMEOUT_MS);
		expect(result.code, result.stderr).toBe(0);
		expect(result.stdout).toMatch(/^pi-fold context · session [0-9a-f-]{8}/m);
		// The sources are this install's form: nothing to tell.
		expect(result.stderr).not.toMatch(/pi-fold[: ]/);
		expect(provider.requests).toHaveLength(0);
	}, 300_000);
});

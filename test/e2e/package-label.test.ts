/**
 * Pi labels the package's extension `pi-fold` in its startup listing. Pi
 * derives the label from the extension's path: for a local package, the
 * directory above an `index.ts` (so the root entry, not src/index.ts, which
 * showed as `src`). Real interactive Pi 1.6.0 runs in a tmux pane, loading
 * the checkout through a directory named `pi-fold` as a clone would be; the
 * rendered pane is read back. Skipped where tmux is not installed.
 */

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import * as bundled from "../../bundle/pi-fold.ts";
import * as sources from "../../src/index.ts";
import { createPiSandbox, node22Path, piBaseArgs, piCliPath, piEnv, REPO_ROOT } from "../harness/pi-cli.ts";

const TMUX = ["/usr/bin/tmux", "/usr/local/bin/tmux"].find((path) => existsSync(path));
/** Pi's startup listing appears within seconds; a loaded machine gets this long. */
const STARTUP_TIMEOUT_MS = 60_000;
const POLL_MS = 250;
/** Pane size: wide enough that no listing line wraps. */
const PANE = { columns: 140, rows: 45 };

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const alive = (pid: number): boolean => {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
};

/** Close the pane and wait for Pi to exit, so the sandbox is not removed under a running process. */
async function closePane(session: string): Promise<void> {
	const pid = Number(tmux("display-message", "-p", "-t", session, "#{pane_pid}").stdout.trim());
	tmux("kill-session", "-t", session);
	const deadline = Date.now() + STARTUP_TIMEOUT_MS;
	while (Number.isInteger(pid) && pid > 0 && alive(pid) && Date.now() < deadline) {
		await new Promise((resolve) => setTimeout(resolve, POLL_MS));
	}
}

const shellQuote = (value: string): string => `'${value.replaceAll("'", "'\\''")}'`;

function tmux(...args: string[]) {
	return spawnSync(TMUX ?? "tmux", args, { encoding: "utf8" });
}

describe("the root entry", () => {
	it("hands Pi a bundle with the exports of src/index.ts, and is the only extension package.json names", async () => {
		expect(Object.keys(bundled).sort()).toEqual(Object.keys(sources).sort());
		const manifest = (await import("../../package.json", { with: { type: "json" } })).default as {
			pi: { extensions: string[] };
		};
		expect(manifest.pi.extensions).toEqual(["./index.ts"]);
	});
});

describe.skipIf(!TMUX)("Pi's extension listing", () => {
	it(
		"names the package pi-fold",
		async () => {
			const parent = mkdtempSync(join(tmpdir(), "pi-fold-label-"));
			cleanups.push(() => rmSync(parent, { recursive: true, force: true }));
			const checkout = join(parent, "pi-fold");
			symlinkSync(REPO_ROOT, checkout, "dir");
			// No request is sent: the provider only has to be named.
			const sandbox = createPiSandbox({
				baseUrl: "http://127.0.0.1:9/v1",
				extensions: [checkout],
				settings: { quietStartup: false },
			});
			cleanups.push(() => sandbox.dispose());
			const env = { ...piEnv(sandbox), TERM: "xterm-256color" };
			delete (env as Record<string, string | undefined>).NO_COLOR;
			const command = [
				"cd",
				shellQuote(sandbox.cwd),
				"&&",
				"exec",
				"env",
				"-i",
				...Object.entries(env).map(([key, value]) => shellQuote(`${key}=${value}`)),
				shellQuote(node22Path()),
				shellQuote(piCliPath()),
				...piBaseArgs(sandbox).map(shellQuote),
			].join(" ");
			const session = `pi-fold-label-${process.pid}`;
			const started = tmux("new-session", "-d", "-s", session, "-x", `${PANE.columns}`, "-y", `${PANE.rows}`, command);
			expect(started.status, started.stderr).toBe(0);
			cleanups.push(() => closePane(session));

			let pane = "";
			const deadline = Date.now() + STARTUP_TIMEOUT_MS;
			while (Date.now() < deadline) {
				pane = tmux("capture-pane", "-p", "-t", session).stdout;
				if (/\[Extensions\]\n\s+\S/.test(pane)) break;
				await new Promise((resolve) => setTimeout(resolve, POLL_MS));
			}
			const listing = /\[Extensions\]\n((?:\s+\S.*\n?)+?)(?:\s*\n|\s*Warning|$)/.exec(pane);
			expect(listing, `no [Extensions] listing in the pane:\n${pane}`).not.toBeNull();
			const labels = (listing?.[1] ?? "").split(/[\n,]/).map((label) => label.trim());
			expect(labels).toContain("pi-fold");
			expect(labels).not.toContain("src");
		},
		STARTUP_TIMEOUT_MS * 2,
	);
});

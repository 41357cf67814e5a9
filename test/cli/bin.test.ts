/** The installed `pi-fold` command end to end: a real process, its exit code and its output streams. */

import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { BranchBuilder, sessionHeader, toJsonl } from "../fixtures/session.ts";

const BIN = fileURLToPath(new URL("../../bin/pi-fold.js", import.meta.url));
const MANIFEST = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
	version: string;
	engines: { node: string };
};
/** The machine's own Node; on the development and CI machines it is Node 20, older than pi-fold needs. */
const SYSTEM_NODE = "/usr/bin/node";
/** Each process loads Pi's modules (a second or more on a loaded 2-core machine); a test runs up to four. */
const PROCESS_TEST_TIMEOUT_MS = 60_000;
/** When the signal is sent: past loading Pi's modules (about 4 s on a loaded 2-core machine), so the replay is running. */
const BUSY_AFTER_MS = 6_000;
/** The exit must follow the signal within this (a generous bound for a loaded machine; it takes milliseconds). */
const PROMPT_EXIT_MS = 5_000;

function run(...args: string[]) {
	return spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8" });
}

function nodeMajor(binary: string): number {
	const version = spawnSync(binary, ["--version"], { encoding: "utf8" }).stdout.trim();
	return Number(/^v(\d+)\./.exec(version)?.[1] ?? Number.NaN);
}

const oldNode = existsSync(SYSTEM_NODE) && nodeMajor(SYSTEM_NODE) < 22 ? SYSTEM_NODE : undefined;

describe("bin/pi-fold.js", { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
	it("prints the report of the bundled sample and exits 0", () => {
		const result = run("report", "--no-replay");
		expect(result.status).toBe(0);
		expect(result.stdout).toContain("Session sample-0001");
		expect(result.stderr).toBe("");
	});

	it("answers bad input with one line and a non-zero exit, never a stack trace", () => {
		const missing = run("report", "/no/such/file.jsonl");
		expect(missing.status).toBe(1);
		expect(missing.stderr.trim().split("\n")).toHaveLength(1);
		expect(missing.stderr).not.toMatch(/\n\s+at /);
		expect(run("nonsense").status).toBe(2);
		const flag = run("report", "--verbose");
		expect(flag.status).toBe(2);
		expect(flag.stderr).toBe(
			'pi-fold: unknown option "--verbose" for report. Run "pi-fold report --help" for usage.\n',
		);
	});

	it("prints --help and --version on stdout and exits 0", () => {
		const help = run("report", "--help");
		expect(help.status).toBe(0);
		expect(help.stdout).toMatch(/^Usage: pi-fold report /);
		const version = run("--version");
		expect(version).toMatchObject({ status: 0, stdout: `pi-fold ${MANIFEST.version}\n`, stderr: "" });
	});

	it.skipIf(!oldNode)("on Node 20 prints one line naming the Node it needs instead of a loader error", () => {
		const result = spawnSync(oldNode ?? SYSTEM_NODE, [BIN, "report"], { encoding: "utf8" });
		expect(result.status).toBe(1);
		expect(result.stdout).toBe("");
		expect(result.stderr).toMatch(
			/^pi-fold needs Node ≥ 22\.19 \(found v20\.\d+\.\d+\); run it through npm \(npm start\) or install Node 22\n$/,
		);
		expect(result.stderr).not.toContain("ERR_UNKNOWN_FILE_EXTENSION");
		// The check names the same floor as package.json.
		expect(MANIFEST.engines.node).toBe(">=22.19");
	});
});

describe("bin/pi-fold.js under Ctrl-C and SIGTERM", { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
	/** A session whose report replay takes tens of seconds: 2,500 requests on a growing branch. */
	function slowSession(): string {
		const b = new BranchBuilder();
		for (let turn = 0; turn < 2_500; turn++) {
			b.user(`Question ${turn}: ${"context ".repeat(40)}`);
			b.assistant(`Answer ${turn}: ${"detail ".repeat(40)}`, [], 1_000 + turn * 200);
		}
		const path = join(mkdtempSync(join(tmpdir(), "pi-fold-bin-")), "slow.jsonl");
		writeFileSync(path, toJsonl(b.entries, sessionHeader({ cwd: tmpdir() })));
		return path;
	}

	/** Start `report` on the slow session, send `signal` once it is busy, and time the exit. */
	async function interrupt(signal: "SIGINT" | "SIGTERM") {
		const session = slowSession();
		const child = spawn(process.execPath, [BIN, "report", session], { stdio: ["ignore", "pipe", "pipe"] });
		let stdout = "";
		let stderr = "";
		child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
			stdout += chunk;
		});
		child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
			stderr += chunk;
		});
		const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
		await new Promise((resolve) => setTimeout(resolve, BUSY_AFTER_MS));
		// A replay that ended first would leave nothing to interrupt (it takes ~20 s on an idle 2-core machine).
		const finishedFirst = child.exitCode !== null;
		const sent = Date.now();
		child.kill(signal);
		// A child that ignores the signal is killed once the bound has passed, so no run outlives the test.
		const guard = setTimeout(() => child.kill("SIGKILL"), PROMPT_EXIT_MS);
		const code = await exited;
		clearTimeout(guard);
		rmSync(dirname(session), { recursive: true, force: true });
		return { code, stdout, stderr, afterSignalMs: Date.now() - sent, finishedFirst };
	}

	it.each([
		["SIGINT", 130],
		["SIGTERM", 143],
	] as const)("stops a busy report on %s at once, with one line and exit %i", async (signal, status) => {
		const result = await interrupt(signal);
		expect(result.finishedFirst, "the report finished before the signal: make slowSession() slower").toBe(false);
		// Before: the signal waited until the replay had finished (tens of seconds), then exited 0 with the report.
		expect(result.afterSignalMs).toBeLessThan(PROMPT_EXIT_MS);
		expect(result.code).toBe(status);
		expect(result.stdout).toBe("");
		expect(result.stderr).toBe(
			`pi-fold: report stopped by ${signal} before it finished; nothing was changed or printed.\n`,
		);
	});
});

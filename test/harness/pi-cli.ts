/**
 * Runs the real Pi 1.6.0 CLI headless against a loopback provider, fully isolated.
 *
 * Owns the sandbox a CLI run lives in (temp HOME, agent dir with a models.json
 * that registers the loopback provider, cwd, session dir), the command line and
 * environment Pi is started with, and the three ways of driving it: print mode
 * (`-p`), json mode (`--mode json`) and rpc mode (see pi-rpc.ts). Host quirks
 * that shaped the harness are noted where they bite.
 */

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { STRICT_APPEND_ONLY_ENV } from "../../src/fold/pi/runtime.ts";
import { reportProblem } from "./tripwire.ts";

/** Repository root: the package Pi loads with `-e` (package.json `pi.extensions`). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * A directory that is the package under another path (a link to REPO_ROOT),
 * loaded in its place when set. Pi labels a local package by its directory's
 * name, so `npm run screenshots` points this at a link named `pi-fold` and the
 * images never show the checkout's folder name.
 */
export const PACKAGE_DIR_ENV = "PI_FOLD_E2E_PACKAGE_DIR";

/** Provider id and model id the sandbox's models.json registers for the loopback server. */
export const LOOPBACK_PROVIDER_ID = "loopback";
export const LOOPBACK_MODEL_ID = "loopback-1";
/** Model window the loopback model declares (Pi's default for custom models). */
export const LOOPBACK_CONTEXT_WINDOW = 128_000;
export const LOOPBACK_MAX_TOKENS = 4_096;

/** Pi refuses to start on Node older than this. */
const MIN_NODE_MAJOR = 22;

/** Upper bound for one CLI run; a hung Pi fails the test instead of the suite timeout. */
export const DEFAULT_RUN_TIMEOUT_MS = 30_000;

const PI_PACKAGE_DIR = join(REPO_ROOT, "node_modules/@earendil-works/pi-coding-agent");

/** The script the `pi` bin points to (read from Pi's package.json, so a relayout is noticed). */
export function piCliPath(): string {
	const manifest = JSON.parse(readFileSync(join(PI_PACKAGE_DIR, "package.json"), "utf8")) as { bin?: { pi?: string } };
	const bin = manifest.bin?.pi;
	if (!bin) throw new Error("pi-coding-agent package.json has no bin.pi");
	return join(PI_PACKAGE_DIR, bin);
}

/** A Node 22+ binary: this process's when it is new enough (npm scripts), else the one the `node` package ships. */
export function node22Path(): string {
	const major = Number(process.versions.node.split(".")[0]);
	return major >= MIN_NODE_MAJOR ? process.execPath : join(REPO_ROOT, "node_modules/.bin/node");
}

/** Everything one isolated Pi run needs on disk. */
export interface PiSandbox {
	root: string;
	home: string;
	agentDir: string;
	/**
	 * Working directory of the run. Quirk: non-interactive Pi refuses to reopen a session whose
	 * recorded cwd no longer exists, so the cwd must outlive every run that touches its sessions;
	 * the sandbox keeps it until dispose().
	 */
	cwd: string;
	sessionDir: string;
	baseUrl: string;
	/** Extension paths passed with `-e` on every run. */
	extensions: readonly string[];
	/** Extra environment variables for every Pi child (set by the caller, e.g. a bench extension's configuration). */
	env: Readonly<Record<string, string>>;
	dispose(): void;
}

export interface PiSandboxOptions {
	/** Loopback provider base URL (ends in /v1). */
	baseUrl: string;
	/** Paths for `-e`. Default: the repository root, i.e. this package. Pass [] to load none. */
	extensions?: readonly string[];
	/** Extra settings.json content for the agent dir. */
	settings?: Record<string, unknown>;
	contextWindow?: number;
	/** Output limit the loopback model declares; default LOOPBACK_MAX_TOKENS. */
	maxTokens?: number;
	/** Prices (USD per million tokens, pi-ai `ModelCost` shape) the loopback model declares; default all zero. */
	cost?: LoopbackModelCost;
	/** Extra environment variables for every Pi child. */
	env?: Record<string, string>;
}

/** A models.json `cost` block: base rates plus optional request-wide tiers, as pi-ai reads it. */
export interface LoopbackModelCost {
	input: number;
	output: number;
	cacheRead: number;
	cacheWrite: number;
	tiers?: { inputTokensAbove: number; input: number; output: number; cacheRead: number; cacheWrite: number }[];
}

/** Create the temp tree and write models.json (and settings.json) into the agent dir. */
export function createPiSandbox(options: PiSandboxOptions): PiSandbox {
	const root = mkdtempSync(join(tmpdir(), "pi-fold-e2e-"));
	const home = join(root, "home");
	const agentDir = join(root, "agent");
	const cwd = join(root, "work");
	const sessionDir = join(root, "sessions");
	for (const dir of [home, agentDir, cwd, sessionDir]) mkdirSync(dir, { recursive: true });
	writeFileSync(join(agentDir, "models.json"), `${JSON.stringify(loopbackModelsJson(options), null, 2)}\n`);
	writeFileSync(join(agentDir, "settings.json"), `${JSON.stringify(options.settings ?? {}, null, 2)}\n`);
	return {
		root,
		home,
		agentDir,
		cwd,
		sessionDir,
		baseUrl: options.baseUrl,
		extensions: options.extensions ?? [process.env[PACKAGE_DIR_ENV] ?? REPO_ROOT],
		env: { ...(options.env ?? {}) },
		// Retries: a Pi child killed a moment ago (tmux) may still be writing its compile cache.
		dispose: () => rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }),
	};
}

/** models.json registering the loopback server as a custom openai-completions provider. */
export function loopbackModelsJson(
	options: Pick<PiSandboxOptions, "baseUrl" | "contextWindow" | "maxTokens" | "cost">,
): object {
	return {
		providers: {
			[LOOPBACK_PROVIDER_ID]: {
				name: "Loopback",
				baseUrl: options.baseUrl,
				api: "openai-completions",
				// Any non-empty key makes the model available; the loopback server ignores it.
				apiKey: "loopback-key",
				models: [
					{
						id: LOOPBACK_MODEL_ID,
						name: "Loopback 1",
						contextWindow: options.contextWindow ?? LOOPBACK_CONTEXT_WINDOW,
						maxTokens: options.maxTokens ?? LOOPBACK_MAX_TOKENS,
						cost: options.cost ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
					},
				],
			},
		},
	};
}

/**
 * Environment of a Pi child: built from scratch, not inherited, so no provider key, HOME
 * or Pi setting of the developer's machine leaks into the run.
 */
export function piEnv(sandbox: PiSandbox): Record<string, string> {
	return {
		...sandbox.env,
		PATH: `${dirname(node22Path())}:${process.env.PATH ?? "/usr/bin:/bin"}`,
		HOME: sandbox.home,
		PI_CODING_AGENT_DIR: sandbox.agentDir,
		PI_OFFLINE: "1",
		PI_SKIP_VERSION_CHECK: "1",
		PI_TELEMETRY: "0",
		TMPDIR: join(sandbox.root, "tmp"),
		LANG: "C.UTF-8",
		TERM: "dumb",
		NO_COLOR: "1",
		// The append-only tripwire (see src/fold/runtime.ts) follows the test run into the child.
		...(process.env[STRICT_APPEND_ONLY_ENV] ? { [STRICT_APPEND_ONLY_ENV]: process.env[STRICT_APPEND_ONLY_ENV] } : {}),
	};
}

/** Marks in Pi's stderr that must never appear: the append-only tripwire firing. */
const HOST_PROBLEM_MARKS = ["pi-fold: unattributed rewrite", "pi-fold: rewrite by another extension"] as const;

/** Report tripwire marks found in a Pi process's stderr (see test/harness/tripwire.ts). */
export function reportHostProblems(stderr: string): void {
	for (const line of stderr.split("\n")) {
		if (HOST_PROBLEM_MARKS.some((mark) => line.includes(mark))) reportProblem(`pi stderr: ${line}`);
	}
}

/** Common arguments: model, session dir, extensions. Callers add the mode and the prompt. */
export function piBaseArgs(sandbox: PiSandbox): string[] {
	const args = ["--model", `${LOOPBACK_PROVIDER_ID}/${LOOPBACK_MODEL_ID}`, "--session-dir", sandbox.sessionDir];
	for (const extension of sandbox.extensions) args.push("-e", extension);
	return args;
}

/** Spawn Pi in the sandbox with the given arguments (after the base arguments). */
export function spawnPi(sandbox: PiSandbox, args: readonly string[]): ChildProcess {
	mkdirSync(join(sandbox.root, "tmp"), { recursive: true });
	return spawn(node22Path(), [piCliPath(), ...piBaseArgs(sandbox), ...args], {
		cwd: sandbox.cwd,
		env: piEnv(sandbox),
		stdio: ["pipe", "pipe", "pipe"],
	});
}

export interface PiRunResult {
	stdout: string;
	stderr: string;
	/** Exit code; null when Pi was killed by the timeout (see `timedOut`). */
	code: number | null;
	timedOut: boolean;
}

/** Run Pi to completion with stdin closed. */
export function runPi(
	sandbox: PiSandbox,
	args: readonly string[],
	timeoutMs = DEFAULT_RUN_TIMEOUT_MS,
): Promise<PiRunResult> {
	return new Promise((resolvePromise, reject) => {
		const child = spawnPi(sandbox, args);
		let stdout = "";
		let stderr = "";
		let timedOut = false;
		child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
			stdout += chunk;
		});
		child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
			stderr += chunk;
		});
		const timer = setTimeout(() => {
			timedOut = true;
			child.kill("SIGKILL");
		}, timeoutMs);
		child.on("error", (error) => {
			clearTimeout(timer);
			reject(error);
		});
		child.on("close", (code) => {
			clearTimeout(timer);
			reportHostProblems(stderr);
			resolvePromise({ stdout, stderr, code, timedOut });
		});
		child.stdin?.end();
	});
}

/**
 * Print mode: `pi -p <prompt>`, or `pi -p <args…>` when given an array.
 * Quirk: `/compact` is not a print-mode command (it reaches the model as a plain user message);
 * drive compaction through RPC `{"type":"compact"}` or the SDK harness instead.
 */
export function runPrint(sandbox: PiSandbox, promptOrArgs: string | readonly string[]): Promise<PiRunResult> {
	const rest = typeof promptOrArgs === "string" ? ["--", promptOrArgs] : promptOrArgs;
	return runPi(sandbox, ["-p", ...rest]);
}

export interface PiJsonRunResult extends PiRunResult {
	/** Every stdout line that parses as JSON (the session header first, then events). */
	records: unknown[];
	/** Stdout lines that are not JSON; json mode promises none, so tests can assert this is empty. */
	strayLines: string[];
}

/** JSON mode: `pi --mode json <prompt>`; stdout is one JSON record per line. */
export async function runJson(sandbox: PiSandbox, promptOrArgs: string | readonly string[]): Promise<PiJsonRunResult> {
	const rest = typeof promptOrArgs === "string" ? ["--", promptOrArgs] : promptOrArgs;
	const result = await runPi(sandbox, ["--mode", "json", ...rest]);
	const records: unknown[] = [];
	const strayLines: string[] = [];
	for (const line of result.stdout.split("\n")) {
		if (line.trim().length === 0) continue;
		try {
			records.push(JSON.parse(line));
		} catch {
			strayLines.push(line);
		}
	}
	return { ...result, records, strayLines };
}

/** Session files under the sandbox's session dir, oldest first by modification time. */
export function findSessionFiles(sandbox: Pick<PiSandbox, "sessionDir">): string[] {
	const files: string[] = [];
	const walk = (dir: string): void => {
		for (const name of readdirSync(dir)) {
			const path = join(dir, name);
			if (statSync(path).isDirectory()) walk(path);
			else if (name.endsWith(".jsonl")) files.push(path);
		}
	};
	walk(sandbox.sessionDir);
	return files.sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs || a.localeCompare(b));
}

/** The single session file of the sandbox; throws when there is not exactly one. */
export function onlySessionFile(sandbox: Pick<PiSandbox, "sessionDir">): string {
	const files = findSessionFiles(sandbox);
	if (files.length !== 1 || files[0] === undefined) throw new Error(`expected one session file, found ${files.length}`);
	return files[0];
}

/**
 * Copy a session log (e.g. one of the real v1 logs, `REAL_SESSIONS` in test/fixtures/session.ts) into the sandbox's session dir
 * (as `fileName`, default `imported-<name>`), keeping its first `maxEntries` entries, with the header's cwd pointed at the sandbox cwd (Pi refuses a
 * session whose recorded cwd does not exist). Returns the copy's path; open it with `--session <path>`.
 * Quirk: Pi upgrades an old-format (v1) log on first open by assigning random 8-hex entry ids and rewriting
 * the file in place as v3, so two upgrades of the same log disagree on ids; read ids back from the file
 * after Pi opened it, never predict them.
 */
export function importSessionLog(
	sandbox: PiSandbox,
	sourcePath: string,
	options: { maxEntries?: number; fileName?: string } = {},
): string {
	const [headerLine, ...entryLines] = readFileSync(sourcePath, "utf8")
		.split("\n")
		.filter((line) => line.trim().length > 0);
	if (headerLine === undefined) throw new Error(`empty session log: ${sourcePath}`);
	const header = { ...(JSON.parse(headerLine) as Record<string, unknown>), cwd: sandbox.cwd };
	const kept = entryLines.slice(0, options.maxEntries ?? entryLines.length);
	const target = join(sandbox.sessionDir, options.fileName ?? `imported-${basename(sourcePath)}`);
	writeFileSync(target, `${[JSON.stringify(header), ...kept].join("\n")}\n`);
	return target;
}

/** Parse a session JSONL file: the header line first, then entries. */
export function readSessionFile(path: string): Record<string, unknown>[] {
	return readFileSync(path, "utf8")
		.split("\n")
		.filter((line) => line.trim().length > 0)
		.map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Longest wait for a tmux-run Pi to exit after its server is killed. */
const TMUX_EXIT_WAIT_MS = 10_000;

/**
 * Kill a test's tmux server and wait until no process under the sandbox
 * root is left, so removing the sandbox cannot race a Pi still writing into
 * it (its compile cache, its session file).
 */
export function stopTmux(socket: string, sandboxRoot: string): void {
	spawnSync("tmux", ["-L", socket, "kill-server"]);
	const deadline = Date.now() + TMUX_EXIT_WAIT_MS;
	while (Date.now() < deadline) {
		if (spawnSync("pgrep", ["-f", sandboxRoot]).status !== 0) return;
		spawnSync("sleep", ["0.1"]);
	}
	spawnSync("pkill", ["-9", "-f", sandboxRoot]);
}

/**
 * Real interactive Pi in a tmux pane, for TUI tests: start it in a sandbox,
 * type into it, read the screen, stop it. pi-tui ships no virtual terminal,
 * so tmux is the terminal.
 */

import { execFileSync, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { node22Path, type PiSandbox, piBaseArgs, piCliPath, piEnv, stopTmux } from "./pi-cli.ts";

/** True when tmux is installed (the TUI tests skip without it). */
export const HAS_TMUX = spawnSync("tmux", ["-V"]).status === 0;
/** How long a screen text may take to appear, and how often the pane is read meanwhile. */
const WAIT_MS = 30_000;
const POLL_MS = 200;
/** Pause between named keys, so a menu redraws between them. */
const KEY_PAUSE_MS = 150;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const quote = (text: string) => `'${text.replace(/'/g, "'\\''")}'`;

export interface TmuxPi {
	/** The pane's text now. */
	capture(): string;
	/** The pane now with its colours (SGR escapes), for screenshots (scripts/screenshots.ts). */
	captureAnsi(): string;
	/** The screen once it shows `text`; throws with the screen after the wait. */
	waitFor(text: string): Promise<string>;
	/** Named keys (Enter, Down, Escape…), one at a time. */
	keys(...names: string[]): Promise<void>;
	/** Type a line and press Enter, with the gap Pi's editor needs to tell typing from a paste. */
	line(text: string): Promise<void>;
	/** Kill the server and wait until its Pi has exited. */
	stop(): void;
}

export interface TmuxPiOptions {
	/** Distinguishes the tmux server of one test from another's. */
	name: string;
	columns: number;
	rows: number;
	/** Pi's editor treats keys that arrive with the text as one paste; Enter must come on its own. */
	keyGapMs: number;
}

/** Start Pi interactively in a detached tmux pane over `sandbox`. */
export function startTmuxPi(sandbox: PiSandbox, options: TmuxPiOptions): TmuxPi {
	const socket = `${options.name}-${process.pid}`;
	const tmux = (...args: string[]) => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8" });
	// No compile cache: nothing keeps writing into the sandbox after the server is killed.
	const env = { ...piEnv(sandbox), TERM: "xterm-256color", NODE_DISABLE_COMPILE_CACHE: "1" };
	const assignments = Object.entries(env).map(([key, value]) => `${key}=${quote(value)}`);
	const command = [node22Path(), piCliPath(), ...piBaseArgs(sandbox)].map(quote).join(" ");
	tmux(
		"new-session",
		"-d",
		"-s",
		"pi",
		"-x",
		String(options.columns),
		"-y",
		String(options.rows),
		"-c",
		sandbox.cwd,
		`env -i ${assignments.join(" ")} ${command}`,
	);
	const capture = () => tmux("capture-pane", "-p", "-J", "-t", "pi");
	return {
		capture,
		captureAnsi: () => tmux("capture-pane", "-p", "-e", "-t", "pi"),
		async waitFor(text) {
			for (let waited = 0; waited < WAIT_MS; waited += POLL_MS) {
				const screen = capture();
				if (screen.includes(text)) return screen;
				await sleep(POLL_MS);
			}
			throw new Error(`"${text}" never appeared; the screen was:\n${capture()}`);
		},
		async keys(...names) {
			for (const name of names) {
				tmux("send-keys", "-t", "pi", name);
				await sleep(KEY_PAUSE_MS);
			}
		},
		async line(text) {
			tmux("send-keys", "-t", "pi", "-l", text);
			await sleep(options.keyGapMs);
			tmux("send-keys", "-t", "pi", "Enter");
		},
		stop: () => stopTmux(socket, sandbox.root),
	};
}

/** Directory `npm run screenshots` points the TUI tests at; each saved screen lands there with its colours. */
export const CAPTURE_DIR_ENV = "PI_FOLD_TUI_CAPTURE_DIR";

/** Keep a screen a test read: its text in the sandbox, and with `CAPTURE_DIR_ENV` set, its colours for a screenshot. */
export function saveScreen(pi: TmuxPi, sandbox: Pick<PiSandbox, "root">, name: string, screen: string): void {
	writeFileSync(join(sandbox.root, `${name}.txt`), screen);
	const dir = process.env[CAPTURE_DIR_ENV];
	if (dir) writeFileSync(join(dir, `${name}.ans`), pi.captureAnsi());
}

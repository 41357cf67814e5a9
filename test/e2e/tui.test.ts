/**
 * Pi's interactive TUI in tmux (pi-tui ships no virtual terminal): the real
 * Pi 1.6.0 CLI against the loopback provider, driven by keystrokes and read
 * back with `capture-pane`. Shows the footer status, `/context` right after
 * `/fold-context` reporting the folded window, and the context tool's peek
 * as one collapsed line.
 */

import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { callTools, type LoopbackProvider, say, startLoopbackProvider } from "../harness/loopback-provider.ts";
import { createPiSandbox, node22Path, piBaseArgs, piCliPath, piEnv, stopTmux } from "../harness/pi-cli.ts";

const HAS_TMUX = spawnSync("tmux", ["-V"]).status === 0;
/** Terminal size of the pane; wide enough that report lines do not wrap. */
const COLUMNS = 160;
const ROWS = 60;
/** Pi's editor treats keys that arrive with the text as one paste; Enter must come on its own. */
const KEY_GAP_MS = 800;
const WAIT_MS = 30_000;
const POLL_MS = 200;
const SECRET = "TUI-SECRET-91c2";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const quote = (text: string) => `'${text.replace(/'/g, "'\\''")}'`;

/** A peek of whatever fold id the window shows (ids are content hashes the test cannot predict). */
function peekTheFold(provider: LoopbackProvider): void {
	provider.enqueue((request) => {
		const id = /f-[0-9a-f]{12}/.exec(JSON.stringify(request.body.messages))?.[0] ?? "f-missing";
		return callTools([{ id: "call_peek", name: "active_context", arguments: { action: "peek", id } }]);
	}, say("Peeked."));
}

describe.skipIf(!HAS_TMUX)("pi-fold in Pi's TUI (tmux)", () => {
	it("shows the footer status, the folded window after /fold-context, and a collapsed peek", async () => {
		const provider = await startLoopbackProvider();
		cleanups.push(() => provider.close());
		const sandbox = createPiSandbox({ baseUrl: provider.baseUrl });
		cleanups.push(() => sandbox.dispose());
		mkdirSync(join(sandbox.root, "tmp"), { recursive: true });
		writeFileSync(join(sandbox.cwd, "c.txt"), `${SECRET}\n`.repeat(50));
		provider.enqueue(
			callTools([{ id: "call_read", name: "read", arguments: { path: "c.txt" } }]),
			say("Read it."),
			say("You are welcome."),
		);
		peekTheFold(provider);

		const socket = `pi-fold-tui-${process.pid}`;
		const tmux = (...args: string[]) => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8" });
		// No compile cache: nothing keeps writing into the sandbox after the server is killed.
		const tuiEnv = { ...piEnv(sandbox), TERM: "xterm-256color", NODE_DISABLE_COMPILE_CACHE: "1" };
		const env = Object.entries(tuiEnv).map(([k, v]) => `${k}=${quote(v)}`);
		const command = [node22Path(), piCliPath(), ...piBaseArgs(sandbox)].map(quote).join(" ");
		tmux(
			"new-session",
			"-d",
			"-s",
			"pi",
			"-x",
			String(COLUMNS),
			"-y",
			String(ROWS),
			"-c",
			sandbox.cwd,
			`env -i ${env.join(" ")} ${command}`,
		);
		cleanups.push(() => {
			stopTmux(socket, sandbox.root);
		});
		const capture = () => tmux("capture-pane", "-p", "-J", "-t", "pi");
		const waitFor = async (text: string): Promise<string> => {
			for (let waited = 0; waited < WAIT_MS; waited += POLL_MS) {
				const screen = capture();
				if (screen.includes(text)) return screen;
				await sleep(POLL_MS);
			}
			throw new Error(`"${text}" never appeared; the screen was:\n${capture()}`);
		};
		const type = async (input: string, expected: string): Promise<string> => {
			tmux("send-keys", "-t", "pi", "-l", input);
			await sleep(KEY_GAP_MS);
			tmux("send-keys", "-t", "pi", "Enter");
			return waitFor(expected);
		};

		await waitFor("fold 0% of 128k");
		await type("Read c.txt", "Read it.");
		await type("Thanks", "You are welcome.");
		await type("/fold-context", "Folded chapter");
		const report = await type("/context", "More: /context peek");
		expect(report).toMatch(/Folds: 1 \(1 collapsed, holding [\d.]+ KB out of the window/);
		expect(report).toMatch(/f-[0-9a-f]{12} {2}chapter, collapsed/);
		const screen = await type("Peek it", "Peeked.");
		writeFileSync(join(sandbox.root, "tui-capture.txt"), screen);
		if (process.env.PI_FOLD_TUI_CAPTURE) writeFileSync(process.env.PI_FOLD_TUI_CAPTURE, screen);

		// The footer: occupancy of the serving budget, folds and bytes held out.
		expect(screen).toMatch(/^fold \d+% of 128k · 1 fold \([\d.]+ KB out\)\s*$/m);
		// The peek is one call line and one collapsed result line; its source is not printed.
		expect(screen).toMatch(/Active Context peek f-[0-9a-f]{12}/);
		expect(screen).toMatch(/read fold f-[0-9a-f]{12}: [\d.]+ KB of [\d.]+ KB, sha256 verified \(.+ to expand\)/);
		const afterPeek = screen.slice(screen.indexOf("Active Context peek"));
		expect(afterPeek).not.toContain(SECRET);
		expect(provider.rejections).toEqual([]);
	});
});

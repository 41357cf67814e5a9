/**
 * Pi's interactive TUI in tmux (pi-tui ships no virtual terminal): the real
 * Pi 1.6.0 CLI against the loopback provider, driven by keystrokes and read
 * back with `capture-pane`. Shows the footer status, `/context` right after
 * `/fold-context` as a themed view of the folded window, `/context peek` with
 * the fold's verified source, and the context tool's peek as one collapsed
 * line.
 */

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { shortTokens } from "../../src/fold/pi/context-report.ts";
import { PI_DEFAULT_RESERVE_TOKENS } from "../../src/fold/policy/budget.ts";
import { callTools, type LoopbackProvider, say, startLoopbackProvider } from "../harness/loopback-provider.ts";
import { createPiSandbox, LOOPBACK_CONTEXT_WINDOW } from "../harness/pi-cli.ts";
import { HAS_TMUX, saveScreen, startTmuxPi } from "../harness/pi-tmux.ts";

/** The footer's budget: Pi's compaction line, the window less Pi's default reserve. */
const BUDGET = shortTokens(LOOPBACK_CONTEXT_WINDOW - PI_DEFAULT_RESERVE_TOKENS);

/** Terminal size of the pane; wide enough that report lines do not wrap. */
const COLUMNS = 160;
const ROWS = 60;
/** Pi's editor treats keys that arrive with the text as one paste; Enter must come on its own. */
const KEY_GAP_MS = 800;
const SECRET = "TUI-SECRET-91c2";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

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

		const pi = startTmuxPi(sandbox, { name: "pi-fold-tui", columns: COLUMNS, rows: ROWS, keyGapMs: KEY_GAP_MS });
		cleanups.push(() => pi.stop());
		const save = (name: string, screen: string) => saveScreen(pi, sandbox, name, screen);
		const type = async (input: string, expected: string): Promise<string> => {
			await pi.line(input);
			return pi.waitFor(expected);
		};

		await pi.waitFor(`% of ${BUDGET}`);
		await type("Read c.txt", "Read it.");
		await type("Thanks", "You are welcome.");
		await type("/fold-context", "Folded chapter");
		// /context: Pi's own kind of view, headings and values in the theme, closed with Esc.
		const report = await type("/context", "More: /context peek");
		save("context", report);
		expect(report).toMatch(/^ pi-fold context · session [0-9a-f-]{8} \(\d+ entries on this branch\)/m);
		expect(report).toMatch(/^ Window\s*$/m);
		expect(report).toMatch(/Folds: 1 \(1 collapsed, holding [\d.]+ KB out of the window/);
		expect(report).toMatch(/f-[0-9a-f]{12} {2}chapter, collapsed/);
		expect(report).toContain("Esc close");
		const id = /f-[0-9a-f]{12}/.exec(report)?.[0] ?? "";
		await pi.keys("Escape");
		// A trailing space closes the completion menu, so Enter submits.
		const peek = await type(`/context peek ${id} `, "Source (sha256");
		save("context-peek", peek);
		expect(peek).toMatch(/Source \(sha256 [0-9a-f]{12}… verified\):/);
		expect(peek).toContain("read result:");
		// The read's text whole, every line (it was once one line cut at 400 characters).
		expect(peek.split("\n").filter((row) => row.trim() === SECRET).length).toBeGreaterThan(30);
		// Taller than the pane: the view pages, and PgDn pages it in Pi's full-screen mode (not the transcript).
		const before = /lines (\d+)–(\d+) of (\d+)/.exec(peek);
		expect(before?.[1], peek).toBe("1");
		await pi.keys("PageDown");
		let paged = pi.capture();
		for (let waited = 0; /lines 1–/.test(paged) && waited < 5_000; waited += 200) {
			await new Promise((resolve) => setTimeout(resolve, 200));
			paged = pi.capture();
		}
		expect(Number(/lines (\d+)–\d+ of \d+/.exec(paged)?.[1]), paged).toBeGreaterThan(1);
		await pi.keys("Escape");
		const screen = await type("Peek it", "Peeked.");
		save("tool-rows", screen);

		// The footer: occupancy of the serving budget, folds and bytes held out.
		expect(screen).toMatch(new RegExp(`^pi-fold \\d+% of ${BUDGET} · 1 fold \\([\\d.]+ KB out\\)\\s*$`, "m"));
		// The peek is one call line and one collapsed result line; its source is not printed.
		expect(screen).toMatch(/pi-fold peek f-[0-9a-f]{12}/);
		expect(screen).toMatch(/read fold f-[0-9a-f]{12}: [\d.]+ KB of [\d.]+ KB, sha256 verified \(.+ to expand\)/);
		const afterPeek = screen.slice(screen.indexOf("pi-fold peek"));
		expect(afterPeek).not.toContain(SECRET);
		expect(provider.rejections).toEqual([]);
	});
});

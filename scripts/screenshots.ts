/**
 * `npm run screenshots`: the README's images from real Pi 1.6.0 in tmux.
 * Runs the TUI tests (test/e2e/tui.test.ts and the settings dialog in
 * test/e2e/compaction-settings.test.ts) with `PI_FOLD_TUI_CAPTURE_DIR`
 * set, so each screen they check is also kept with its colours; each is
 * rendered to HTML (scripts/ansi-html.ts) and screenshotted by headless
 * Chromium into docs/images/<screen>.png. Needs tmux and Chromium (Debian's
 * `chromium` package).
 *
 * Pi names a local package by its directory, so the tests load the checkout
 * through a link named `pi-fold` (PACKAGE_DIR_ENV): the images read "pi-fold"
 * whatever the checkout's folder is called.
 */

import { spawnSync } from "node:child_process";
import {
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { PACKAGE_DIR_ENV } from "../test/harness/pi-cli.ts";
import { CAPTURE_DIR_ENV } from "../test/harness/pi-tmux.ts";
import { ansiToHtml } from "./ansi-html.ts";

const ROOT = join(import.meta.dirname, "..");
const IMAGES = join(ROOT, "docs", "images");
/** The tests' pane: 160 columns by 50–60 rows; the page is as wide, and tall enough for the taller. */
const COLUMNS = 160;
const VIEWPORT = { width: 1390, height: 1180 };
const BROWSERS = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];
const TESTS = ["test/e2e/tui.test.ts", "test/e2e/compaction-settings.test.ts"];

const browser = BROWSERS.find((path) => existsSync(path));
if (!browser) {
	process.stderr.write(`screenshots need Chromium: none of ${BROWSERS.join(", ")} exists.\n`);
	process.exit(1);
}
const dir = mkdtempSync(join(tmpdir(), "pi-fold-screens-"));
mkdirSync(IMAGES, { recursive: true });
const named = join(dir, "pi-fold");
symlinkSync(ROOT, named, "dir");
try {
	const run = spawnSync("npx", ["vitest", "run", "--project", "e2e", ...TESTS, "-t", "TUI"], {
		cwd: ROOT,
		stdio: "inherit",
		env: { ...process.env, [CAPTURE_DIR_ENV]: dir, [PACKAGE_DIR_ENV]: named },
	});
	if (run.status !== 0) throw new Error("the TUI tests failed; no screenshots were taken");
	for (const file of readdirSync(dir).filter((name) => name.endsWith(".ans"))) {
		const name = file.replace(/\.ans$/, "");
		// Trailing blank rows of the pane are not part of what the person looks at.
		const screen = readFileSync(join(dir, file), "utf8").replace(/(\n\s*)+$/, "\n");
		const page = join(dir, `${name}.html`);
		writeFileSync(page, ansiToHtml(screen, COLUMNS));
		const png = join(IMAGES, `${name}.png`);
		const shot = spawnSync(
			browser,
			[
				"--headless",
				"--no-sandbox",
				"--disable-gpu",
				"--hide-scrollbars",
				`--user-data-dir=${join(dir, "profile")}`,
				`--window-size=${VIEWPORT.width},${VIEWPORT.height}`,
				`--screenshot=${png}`,
				pathToFileURL(page).href,
			],
			{ encoding: "utf8", timeout: 60_000 },
		);
		if (!existsSync(png)) throw new Error(`chromium wrote no ${png}: ${shot.stderr}`);
		process.stdout.write(`${png}\n`);
	}
} finally {
	rmSync(dir, { recursive: true, force: true });
}

/**
 * `pi-fold report --html`: the file is self-contained, and headless Chromium
 * draws a non-empty chart from it (screenshot decoded, chart pixels counted).
 * Chromium is the Debian package `chromium`; `.ci/run` installs it and sets
 * PI_FOLD_REQUIRE_CHROMIUM=1, elsewhere the screenshot test is skipped when
 * no browser is installed.
 */

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { COLORS } from "../../src/cli/html.ts";
import { runCli } from "../../src/cli/main.ts";
import { countColor, decodePng } from "./png.ts";

/** Where Debian's chromium package puts its launcher, then other common names. */
const BROWSERS = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];
const BROWSER = BROWSERS.find((path) => existsSync(path));
const REQUIRED = process.env.PI_FOLD_REQUIRE_CHROMIUM === "1";
/** Screenshot size: the chart's 960-unit width plus the page margins. */
const VIEWPORT = { width: 1000, height: 700 };
/** Chromium's cold start on a loaded 2-core machine. */
const SCREENSHOT_TIMEOUT_MS = 60_000;

function hex(color: string): [number, number, number] {
	const n = Number.parseInt(color.slice(1), 16);
	return [(n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
}

async function writeChart(): Promise<string> {
	const dir = mkdtempSync(join(tmpdir(), "pi-fold-html-"));
	const out = join(dir, "chart.html");
	const result = await runCli(["report", "--html", out]);
	expect(result.code, result.stderr).toBe(0);
	expect(result.stdout).toContain(`Chart written to ${out}`);
	return out;
}

describe("pi-fold report --html", () => {
	it("writes one self-contained file: inline SVG and CSS, no script, no external asset", async () => {
		const html = readFileSync(await writeChart(), "utf8");
		expect(html).toMatch(/^<!doctype html>/);
		expect(html).toContain("<svg");
		expect(html).not.toMatch(/<script|<link|<img|@import|url\(/i);
		// The only URL is the SVG namespace, which is an identifier, not a fetch.
		expect(html.match(/https?:\/\/[^"]+/g) ?? []).toEqual(["http://www.w3.org/2000/svg"]);
		expect(html).toContain('class="recorded"');
		expect(html).toContain('class="projected"');
	});

	it("answers an unwritable path with one line and exit 1", async () => {
		const result = await runCli(["report", "--no-replay", "--html", "/no/such/dir/chart.html"]);
		expect(result).toMatchObject({ code: 1, stdout: "" });
		expect(result.stderr).toMatch(
			/^pi-fold: cannot write \/no\/such\/dir\/chart\.html \(ENOENT\); pass a writable path/,
		);
	});

	it.skipIf(!BROWSER && !REQUIRED)(
		"renders in headless Chromium: the screenshot shows the chart's lines and bars",
		async () => {
			if (!BROWSER) throw new Error(`PI_FOLD_REQUIRE_CHROMIUM=1 but none of ${BROWSERS.join(", ")} exists`);
			const page = await writeChart();
			const png = page.replace(/\.html$/, ".png");
			const shot = spawnSync(
				BROWSER,
				[
					"--headless",
					"--no-sandbox",
					"--disable-gpu",
					"--hide-scrollbars",
					`--user-data-dir=${join(page, "..", "profile")}`,
					`--window-size=${VIEWPORT.width},${VIEWPORT.height}`,
					`--screenshot=${png}`,
					pathToFileURL(page).href,
				],
				{ encoding: "utf8", timeout: SCREENSHOT_TIMEOUT_MS },
			);
			expect(existsSync(png), `chromium wrote no screenshot: ${shot.stderr}`).toBe(true);
			const pixels = decodePng(readFileSync(png));
			expect(pixels.width).toBe(VIEWPORT.width);
			const white = countColor(pixels, [255, 255, 255], 4);
			const total = pixels.width * pixels.height;
			// A blank page is all background; the chart covers a good part of it with ink.
			expect(total - white).toBeGreaterThan(total * 0.05);
			for (const color of [COLORS.recorded, COLORS.projected, COLORS.cacheRead]) {
				expect(countColor(pixels, hex(color), 24), color).toBeGreaterThan(200);
			}
		},
		SCREENSHOT_TIMEOUT_MS * 2,
	);
});

/**
 * Pi starts in every state of a checkout, and pi-fold runs the code the
 * checkout holds (index.ts, src/package/load.ts):
 *
 * - a bundle built from the sources: Pi's loader compiles the bundle and the
 *   few modules that choose it, no other source (one module instead of
 *   ~150 is the point of the bundle);
 * - a source edited after the bundle, even with the bundle stamped newer:
 *   the sources run, and a notice names `npm run bundle` (the check reads
 *   content, not file times);
 * - a source that does not parse: Pi starts without pi-fold, and a notice
 *   says so and names the command that shows the error; in print mode and in
 *   the TUI.
 *
 * Each state is a copy of the package's files (node_modules linked, so the
 * bundler counts as installed, as after `npm ci`). A touched source and a
 * missing bundle take the same paths in Pi and are told apart in
 * test/package/load.test.ts; the install from git is test/e2e/git-install.test.ts.
 */

import {
	appendFileSync,
	cpSync,
	mkdtempSync,
	readFileSync,
	rmSync,
	symlinkSync,
	utimesSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BUNDLE_PATH } from "../../src/package/bundle-freshness.ts";
import { startLoopbackProvider } from "../harness/loopback-provider.ts";
import { createPiSandbox, REPO_ROOT, runPi } from "../harness/pi-cli.ts";
import { HAS_TMUX, startTmuxPi } from "../harness/pi-tmux.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The modules the package entry imports to choose a form (index.ts and what it reaches before the choice). */
const ENTRY_MODULES = [
	"index.ts",
	"src/host/notice.ts",
	"src/package/bundle-freshness.ts",
	"src/package/load.ts",
	"src/package/staged-registration.ts",
];
/** A source the bundle holds, edited in the tests below. */
const EDITED_SOURCE = "src/fold/pi/footer.ts";
/** Pi compiles a copy's sources on its first start: slower than a warm start. */
const SOURCES_RUN_TIMEOUT_MS = 90_000;

/** A copy of the checkout's package files, with node_modules linked in. */
function checkoutCopy(): string {
	const copy = mkdtempSync(join(tmpdir(), "pi-fold-checkout-"));
	cleanups.push(() => rmSync(copy, { recursive: true, force: true }));
	for (const entry of ["index.ts", "package.json", "src", "bundle"])
		cpSync(join(REPO_ROOT, entry), join(copy, entry), { recursive: true, preserveTimestamps: true });
	symlinkSync(join(REPO_ROOT, "node_modules"), join(copy, "node_modules"), "dir");
	return copy;
}

async function printContext(extension: string) {
	const provider = await startLoopbackProvider();
	cleanups.push(() => provider.close());
	const sandbox = createPiSandbox({ baseUrl: provider.baseUrl, extensions: [extension], env: { JITI_DEBUG: "1" } });
	cleanups.push(() => sandbox.dispose());
	const result = await runPi(sandbox, ["-p", "--", "/context"], SOURCES_RUN_TIMEOUT_MS);
	// jiti names each module it compiles (a cached transform too).
	const compiled = [...`${result.stdout}\n${result.stderr}`.matchAll(/\[jiti\] \[transpile\] \[\w+\] (\S+)/g)]
		.map((match) => match[1] ?? "")
		.filter((path) => path.startsWith(extension))
		.map((path) => path.slice(extension.length + 1));
	return { ...result, provider, compiled: [...new Set(compiled)].sort() };
}

/** The text of /context, the package's own command: proof pi-fold loaded. */
const CONTEXT_REPORT = /^pi-fold context · session /m;

describe("Pi loading pi-fold from a checkout", () => {
	it("loads the bundle built from the sources, and nothing else of src/ but the entry's choice", async () => {
		const result = await printContext(REPO_ROOT);
		expect(result.code, result.stderr).toBe(0);
		expect(result.stdout).toMatch(CONTEXT_REPORT);
		expect(result.compiled).toEqual([BUNDLE_PATH, ...ENTRY_MODULES].sort());
		expect(result.stderr).not.toMatch(/pi-fold: .*bundle/);
	});

	it("runs the edited sources, not an older bundle stamped newer, and names `npm run bundle`", async () => {
		const copy = checkoutCopy();
		appendFileSync(join(copy, EDITED_SOURCE), "\n// edited after the bundle was written\n");
		const past = Date.now() / 1000 - 3600;
		utimesSync(join(copy, EDITED_SOURCE), past, past);
		const result = await printContext(copy);
		expect(result.code, result.stderr).toBe(0);
		expect(result.stdout).toMatch(CONTEXT_REPORT);
		expect(result.compiled).toContain(EDITED_SOURCE);
		expect(result.compiled).not.toContain(BUNDLE_PATH);
		expect(result.stderr).toContain(
			`pi-fold: ${BUNDLE_PATH} was built from other sources than src/ holds now, so Pi loaded src/ instead`,
		);
		expect(result.stderr).toContain(`Rebuild it with \`npm run bundle\` in ${copy}.`);
	});

	it("starts without pi-fold when a source does not parse, and says so in print mode", async () => {
		const copy = checkoutCopy();
		appendFileSync(join(copy, EDITED_SOURCE), "\nexport const = ;\n");
		const result = await printContext(copy);
		expect(result.code, result.stderr).toBe(0);
		// Without pi-fold `/context` is no command: it reaches the model as a prompt, and the model answers.
		expect(result.stdout).not.toMatch(CONTEXT_REPORT);
		expect(result.provider.requests).toHaveLength(1);
		expect(result.stderr).toMatch(/pi-fold is off for this session \(Pi runs without it\): it did not load: .+\./);
		expect(result.stderr).toContain(`\`npm run typecheck\` in ${copy} shows what is wrong`);
		expect(result.stderr).not.toContain("Failed to load extension");
	});
});

describe.skipIf(!HAS_TMUX)("Pi's TUI with a source that does not parse", () => {
	it("starts, says pi-fold is off, and takes a prompt", async () => {
		const copy = checkoutCopy();
		writeFileSync(join(copy, EDITED_SOURCE), `${readFileSync(join(copy, EDITED_SOURCE), "utf8")}\nexport const = ;\n`);
		const provider = await startLoopbackProvider();
		cleanups.push(() => provider.close());
		const sandbox = createPiSandbox({ baseUrl: provider.baseUrl, extensions: [copy] });
		cleanups.push(() => sandbox.dispose());
		const pi = startTmuxPi(sandbox, { name: "pi-fold-bundle", columns: 160, rows: 40, keyGapMs: 300 });
		cleanups.push(() => pi.stop());
		const screen = await pi.waitFor("pi-fold is off for this session");
		expect(screen).not.toContain("Failed to load extension");
		// The prompt reaches the model: Pi is up and working without pi-fold.
		await pi.line("hello");
		for (let waited = 0; provider.requests.length === 0 && waited < 30_000; waited += 200)
			await new Promise((resolve) => setTimeout(resolve, 200));
		expect(provider.requests).toHaveLength(1);
	});
});

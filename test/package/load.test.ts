/**
 * The package entry's choice (src/package/load.ts) and its staged
 * registration: the bundle when it is current, else the sources with a
 * notice naming the command that fixes it (none for an install without a
 * bundler, where the sources are the expected form), else nothing, with a
 * notice; a registration that fails leaves nothing registered. Pi itself
 * is test/e2e/bundle.test.ts.
 */

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { BUNDLE_PATH, fingerprintLine, readSources, sourceFingerprint } from "../../src/package/bundle-freshness.ts";
import { loadPackage, type PackageModule } from "../../src/package/load.ts";
import { stageRegistration } from "../../src/package/staged-registration.ts";

const roots: string[] = [];
afterEach(() => {
	for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

type Bundle = "current" | "stale" | "missing";

/** A package root holding one source, a bundle in the given state, and optionally the bundler. */
function packageRoot(bundle: Bundle, bundler: boolean): string {
	const root = mkdtempSync(join(tmpdir(), "pi-fold-load-"));
	roots.push(root);
	mkdirSync(join(root, "src"));
	mkdirSync(join(root, "bundle"));
	writeFileSync(join(root, "src/index.ts"), "export {};\n");
	const fingerprint = sourceFingerprint(readSources(root));
	if (bundle !== "missing")
		writeFileSync(join(root, BUNDLE_PATH), `${fingerprintLine(bundle === "current" ? fingerprint : "0".repeat(64))}\n`);
	if (bundler) {
		mkdirSync(join(root, "node_modules/rolldown"), { recursive: true });
		writeFileSync(join(root, "node_modules/rolldown/package.json"), "{}");
	}
	return root;
}

interface FakePi {
	api: ExtensionAPI;
	/** What reached Pi, in order: `on:<event>`, `tool:<name>`, `bus:<channel>`. */
	registered: string[];
	handlers: Map<string, ((event: unknown, ctx: unknown) => void)[]>;
}

function fakePi(): FakePi {
	const registered: string[] = [];
	const handlers = new Map<string, ((event: unknown, ctx: unknown) => void)[]>();
	const api = {
		on(event: string, handler: (event: unknown, ctx: unknown) => void) {
			registered.push(`on:${event}`);
			handlers.set(event, [...(handlers.get(event) ?? []), handler]);
			return () => registered.push(`off:${event}`);
		},
		registerTool(tool: { name: string }) {
			registered.push(`tool:${tool.name}`);
		},
		getActiveTools: () => ["read"],
		events: {
			on(channel: string) {
				registered.push(`bus:${channel}`);
				return () => registered.push(`unbus:${channel}`);
			},
			emit() {},
		},
	};
	return { api: api as unknown as ExtensionAPI, registered, handlers };
}

/** A form whose registration adds a handler and a tool, then fails when `fails`. */
const form =
	(name: string, fails = false) =>
	async (): Promise<PackageModule> => ({
		default(pi: ExtensionAPI) {
			pi.on("turn_end", () => {});
			pi.events.on("channel", () => {});
			pi.registerTool({ name } as never);
			if (fails) throw new Error(`${name} failed\u001b[31m halfway`);
		},
	});

const broken = async (): Promise<PackageModule> => {
	throw new SyntaxError("Unexpected token (3:13)");
};

/** What the session_start notice says without a UI: one stderr line. */
function noticeOf(pi: FakePi): string | undefined {
	const starts = pi.handlers.get("session_start") ?? [];
	if (starts.length === 0) return undefined;
	const written: string[] = [];
	const write = process.stderr.write;
	process.stderr.write = ((text: string) => written.push(text) > 0) as typeof process.stderr.write;
	try {
		for (const handler of starts) handler({}, { hasUI: false });
	} finally {
		process.stderr.write = write;
	}
	return written.join("");
}

describe("loadPackage", () => {
	it("runs the bundle when it was built from the sources, without a notice", async () => {
		const pi = fakePi();
		const root = packageRoot("current", true);
		const outcome = await loadPackage(pi.api, { root, bundle: form("bundle"), sources: form("sources") });
		expect(outcome).toEqual({ loaded: "bundle" });
		expect(pi.registered).toEqual(["on:turn_end", "bus:channel", "tool:bundle"]);
		expect(noticeOf(pi)).toBeUndefined();
	});

	it("runs the sources over a stale bundle, and names `npm run bundle`", async () => {
		const pi = fakePi();
		const root = packageRoot("stale", true);
		const outcome = await loadPackage(pi.api, { root, bundle: form("bundle"), sources: form("sources") });
		expect(outcome.loaded).toBe("sources");
		expect(pi.registered).toContain("tool:sources");
		expect(noticeOf(pi)).toBe(
			`pi-fold: ${BUNDLE_PATH} was built from other sources than src/ holds now, so Pi loaded src/ instead (the same code; each start takes ~0.2 s longer). Rebuild it with \`npm run bundle\` in ${root}.\n`,
		);
	});

	it("runs the sources without a bundle, naming `npm run bundle` only where a bundler is installed", async () => {
		const checkout = fakePi();
		const root = packageRoot("missing", true);
		expect((await loadPackage(checkout.api, { root, bundle: broken, sources: form("sources") })).loaded).toBe(
			"sources",
		);
		expect(noticeOf(checkout)).toContain(`there is no ${BUNDLE_PATH}, so Pi loaded src/ instead`);
		expect(noticeOf(checkout)).toContain(`Write it with \`npm run bundle\` in ${root}.`);

		// `pi install git:…` installs without development dependencies: the sources are the expected form.
		const gitInstall = fakePi();
		const outcome = await loadPackage(gitInstall.api, {
			root: packageRoot("missing", false),
			bundle: broken,
			sources: form("sources"),
		});
		expect(outcome).toEqual({ loaded: "sources" });
		expect(gitInstall.registered).toContain("tool:sources");
		expect(noticeOf(gitInstall)).toBeUndefined();
	});

	it("falls back to the sources when a current bundle does not load, and says so", async () => {
		const pi = fakePi();
		const root = packageRoot("current", true);
		const outcome = await loadPackage(pi.api, { root, bundle: broken, sources: form("sources") });
		expect(outcome.loaded).toBe("sources");
		expect(noticeOf(pi)).toContain(`${BUNDLE_PATH} did not load (Unexpected token (3:13)), so Pi loaded src/ instead`);
	});

	it("registers nothing but its notice when the sources do not load", async () => {
		const pi = fakePi();
		const root = packageRoot("missing", true);
		const outcome = await loadPackage(pi.api, { root, bundle: broken, sources: broken });
		expect(outcome.loaded).toBe("nothing");
		expect(pi.registered).toEqual(["on:session_start"]);
		expect(noticeOf(pi)).toBe(
			`pi-fold is off for this session (Pi runs without it): it did not load: Unexpected token (3:13). \`npm run typecheck\` in ${root} shows what is wrong; fix it, then start Pi again.\n`,
		);
	});

	it("leaves nothing half registered when a registration fails midway, and names the reinstall without a bundler", async () => {
		const pi = fakePi();
		const root = packageRoot("current", false);
		const outcome = await loadPackage(pi.api, { root, bundle: form("bundle", true), sources: form("sources", true) });
		expect(outcome.loaded).toBe("nothing");
		// The handler, bus listener and tool each form registered before failing never reached Pi.
		expect(pi.registered).toEqual(["on:session_start"]);
		const notice = noticeOf(pi) ?? "";
		// No terminal escape from the error reaches the person.
		expect(notice).toContain("it did not load: sources failed [31m halfway. Reinstall it (`pi update`");
		expect(notice).not.toContain("\u001b");
	});
});

describe("stageRegistration", () => {
	it("holds registrations until the commit, then hands them over in order and passes later calls straight on", () => {
		const pi = fakePi();
		const staged = stageRegistration(pi.api);
		const offA = staged.api.on("turn_end", () => {});
		staged.api.on("agent_end", () => {});
		const offB = staged.api.on("agent_start", () => {});
		offB(); // unsubscribed before the commit: never reaches Pi
		expect(staged.api.getActiveTools()).toEqual(["read"]);
		expect(pi.registered).toEqual([]);
		staged.commit();
		expect(pi.registered).toEqual(["on:turn_end", "on:agent_end"]);
		offA();
		staged.api.on("turn_start", () => {});
		expect(pi.registered).toEqual(["on:turn_end", "on:agent_end", "off:turn_end", "on:turn_start"]);
	});
});

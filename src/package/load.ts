/**
 * What the package entry (index.ts at the package root) does when Pi loads
 * pi-fold: pick the code to run, run its registration, and never take Pi
 * down.
 *
 * - The bundle (`bundle/pi-fold.ts`) when it was built from the sources the
 *   package holds (src/package/bundle-freshness.ts): one module for Pi's
 *   loader instead of ~150, a fixed ~0.2 s off every start.
 * - The sources (src/index.ts) otherwise, the same code module by module.
 *   A stale bundle, a bundle that records no sources, a bundle that failed to
 *   load, or a missing one where a bundler is installed (a checkout after
 *   `npm ci`) is told in a notice naming `npm run bundle`. A missing bundle
 *   where no bundler is installed is the expected state of an install that
 *   leaves out development tools (Pi's `pi install git:…` runs
 *   `npm install --omit=dev`), and loads the sources without a notice.
 * - Nothing, when the code does not load or its registration fails: a notice
 *   says pi-fold is off for the session, why, and what to run. Pi counts an
 *   extension whose factory throws as a start-up error and exits, so no
 *   failure here is thrown; the registration is staged
 *   (src/package/staged-registration.ts), so a failed one leaves nothing
 *   half registered.
 *
 * Notices reach the person once, at session start: a warning in the TUI and
 * RPC mode, one stderr line in print and json mode (src/host/notice.ts).
 * This module and what it imports stay clear of the rest of src/, so an
 * edit that breaks any other source still gets its notice.
 */

import { existsSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { showNotice } from "../host/notice.ts";
import { BUNDLE_PATH, type BundleState, bundleState, SOURCE_DIR } from "./bundle-freshness.ts";
import { stageRegistration } from "./staged-registration.ts";

/** The package's registration, as the bundle and src/index.ts both export it. */
export interface PackageModule {
	default: (pi: ExtensionAPI) => void;
}

/** Where the package is and how to import each form of it (the root entry's own `import()`s, so Pi's loader resolves them). */
export interface PackageForms {
	root: string;
	bundle: () => Promise<PackageModule>;
	sources: () => Promise<PackageModule>;
}

/** What a person is told at session start, or nothing. */
export interface LoadOutcome {
	loaded: "bundle" | "sources" | "nothing";
	notice?: string;
}

/** The bundler `npm run bundle` needs: a development install has it, `npm install --omit=dev` does not. */
const BUNDLER_PACKAGE = "node_modules/rolldown/package.json";
/** What rebuilds the bundle. */
export const BUNDLE_COMMAND = "npm run bundle";
/** The first line of an error, enough to recognise it in a one-line notice. */
const ERROR_CHARS = 300;

/** C0 and C1 controls (ESC among them): an error may quote a broken source, and no escape may reach the terminal. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL_CHARS = /[\x00-\x1f\x7f-\x9f]/g;

/** An error's first line, bounded, without control characters (src/text/lines.ts is not imported here: see above). */
function errorLine(error: unknown): string {
	const text = (error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "";
	const line = text.replace(CONTROL_CHARS, " ").trim();
	return line.length > ERROR_CHARS ? `${line.slice(0, ERROR_CHARS - 1)}…` : line;
}

/** Why the sources are loaded instead of the bundle, or undefined when that needs no word. */
export function sourcesNotice(state: BundleState, root: string, hasBundler: boolean): string | undefined {
	const instead = `so Pi loaded ${SOURCE_DIR}/ instead (the same code; each start takes ~0.2 s longer)`;
	const rebuild = `Rebuild it with \`${BUNDLE_COMMAND}\` in ${root}.`;
	switch (state.kind) {
		case "current":
			return undefined;
		case "stale":
			return `pi-fold: ${BUNDLE_PATH} was built from other sources than ${SOURCE_DIR}/ holds now, ${instead}. ${rebuild}`;
		case "unrecorded":
			return `pi-fold: ${BUNDLE_PATH} does not record the sources it was built from, ${instead}. ${rebuild}`;
		case "missing":
			return hasBundler
				? `pi-fold: there is no ${BUNDLE_PATH}, ${instead}. Write it with \`${BUNDLE_COMMAND}\` in ${root}.`
				: undefined;
	}
}

/** pi-fold is off for the session: why, and what to run. */
export function offNotice(root: string, hasBundler: boolean, error: unknown): string {
	const next = hasBundler
		? `\`npm run typecheck\` in ${root} shows what is wrong; fix it, then start Pi again`
		: `reinstall it (\`pi update\`, or \`pi install\` with the source you installed it from), then start Pi again`;
	return `pi-fold is off for this session (Pi runs without it): it did not load: ${errorLine(error)}. ${next[0]?.toUpperCase()}${next.slice(1)}.`;
}

/** Import one form and run its registration; nothing reaches Pi unless the whole registration succeeds. */
async function register(pi: ExtensionAPI, form: () => Promise<PackageModule>): Promise<void> {
	const module = await form();
	const staged = stageRegistration(pi);
	module.default(staged.api);
	staged.commit();
}

/** Load pi-fold into `pi` from the bundle or the sources, or not at all; never throws. */
export async function loadPackage(pi: ExtensionAPI, forms: PackageForms): Promise<LoadOutcome> {
	const outcome = await chooseAndRegister(pi, forms);
	if (outcome.notice !== undefined) {
		const notice = outcome.notice.replace(CONTROL_CHARS, " ");
		pi.on("session_start", (_event, ctx) => showNotice(ctx, notice, notice));
	}
	return outcome;
}

async function chooseAndRegister(pi: ExtensionAPI, forms: PackageForms): Promise<LoadOutcome> {
	const hasBundler = () => existsSync(join(forms.root, BUNDLER_PACKAGE));
	let notice: string | undefined;
	try {
		const state = bundleState(forms.root);
		if (state.kind === "current") {
			try {
				await register(pi, forms.bundle);
				return { loaded: "bundle" };
			} catch (error) {
				notice = `pi-fold: ${BUNDLE_PATH} did not load (${errorLine(error)}), so Pi loaded ${SOURCE_DIR}/ instead. Rebuild it with \`${BUNDLE_COMMAND}\` in ${forms.root}.`;
			}
		} else {
			notice = sourcesNotice(state, forms.root, hasBundler());
		}
	} catch (error) {
		notice = `pi-fold: could not compare ${BUNDLE_PATH} with ${SOURCE_DIR}/ (${errorLine(error)}), so Pi loaded ${SOURCE_DIR}/.`;
	}
	try {
		await register(pi, forms.sources);
		return notice === undefined ? { loaded: "sources" } : { loaded: "sources", notice };
	} catch (error) {
		return { loaded: "nothing", notice: offNotice(forms.root, hasBundler(), error) };
	}
}

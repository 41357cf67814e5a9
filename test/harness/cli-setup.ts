/**
 * The setup most real-Pi CLI tests share: a loopback provider and a Pi
 * sandbox pointed at it, with files written into the sandbox's working
 * directory, both torn down after each test (newest first).
 */

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach } from "vitest";
import { type LoopbackProvider, startLoopbackProvider } from "./loopback-provider.ts";
import { createPiSandbox, type PiSandbox } from "./pi-cli.ts";

export type Cleanup = () => Promise<void> | void;

/** A list whose cleanups run after each test of the calling file, newest first. */
export function cleanupsAfterEach(): Cleanup[] {
	const cleanups: Cleanup[] = [];
	afterEach(async () => {
		for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
	});
	return cleanups;
}

/** Start a loopback provider and a sandbox using it; `files` (name to text) go into the sandbox's cwd. */
export async function loopbackSandbox(
	cleanups: Cleanup[],
	files: Readonly<Record<string, string>> = {},
): Promise<{ provider: LoopbackProvider; sandbox: PiSandbox }> {
	const provider = await startLoopbackProvider();
	cleanups.push(() => provider.close());
	const sandbox = createPiSandbox({ baseUrl: provider.baseUrl });
	cleanups.push(() => sandbox.dispose());
	for (const [name, text] of Object.entries(files)) writeFileSync(join(sandbox.cwd, name), text);
	return { provider, sandbox };
}

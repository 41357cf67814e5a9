#!/usr/bin/env node
// Entry for the `pi-fold` command. Checks the Node version first, in plain
// JavaScript any Node can parse, so an old Node gets one clear line instead of
// ERR_UNKNOWN_FILE_EXTENSION. A published package runs the compiled dist/
// (Node does not strip types under node_modules); a checkout runs the
// TypeScript source directly.
import { existsSync } from "node:fs";

/** Oldest Node pi-fold runs on: package.json `engines.node`, and what Pi 1.6.0 itself requires. */
const MIN_NODE = [22, 19];

const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
if (major < MIN_NODE[0] || (major === MIN_NODE[0] && minor < MIN_NODE[1])) {
	process.stderr.write(
		`pi-fold needs Node ≥ ${MIN_NODE.join(".")} (found v${process.versions.node}); run it through npm (npm start) or install Node 22\n`,
	);
	process.exit(1);
}

// The command runs in a worker, so Ctrl-C and SIGTERM stop it even while it is busy (src/cli/process.ts).
const compiled = new URL("../dist/cli/process.js", import.meta.url);
const { runCliProcess } = await import(
	existsSync(compiled) ? compiled.href : new URL("../src/cli/process.ts", import.meta.url).href
);
await runCliProcess(process.argv.slice(2));

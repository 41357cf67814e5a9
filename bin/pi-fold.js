#!/usr/bin/env node
// Entry for the `pi-fold` command. A published package runs the compiled
// dist/ (Node does not strip types under node_modules); a checkout runs the
// TypeScript source directly on Node >= 22.18.
import { existsSync } from "node:fs";

const compiled = new URL("../dist/cli/main.js", import.meta.url);
const { runCli } = await import(
	existsSync(compiled) ? compiled.href : new URL("../src/cli/main.ts", import.meta.url).href
);
const result = runCli(process.argv.slice(2));
process.stdout.write(result.stdout);
process.stderr.write(result.stderr);
process.exitCode = result.code;

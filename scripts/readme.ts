/**
 * `npm run readme`: rewrite the generated sections of README.md and
 * docs/benchmarks.md (scripts/readme-sections.ts). `--check` writes nothing
 * and exits 1 when a file differs, naming the command that fixes it.
 */

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { benchmarkDocSections, readmeSections, withSections } from "./readme-sections.ts";

const ROOT = join(import.meta.dirname, "..");
const files: [string, Record<string, string>][] = [
	["README.md", readmeSections(ROOT)],
	["docs/benchmarks.md", benchmarkDocSections(ROOT)],
];
let stale = false;
for (const [file, sections] of files) {
	const path = join(ROOT, file);
	const current = readFileSync(path, "utf8");
	const next = withSections(current, sections, file);
	if (next === current) continue;
	if (process.argv.includes("--check")) {
		process.stderr.write(`${file}'s generated sections are stale; run npm run readme.\n`);
		stale = true;
	} else {
		writeFileSync(path, next);
		process.stdout.write(`${file}: generated sections rewritten.\n`);
	}
}
if (stale) process.exit(1);

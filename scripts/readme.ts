/**
 * `npm run readme`: rewrite README.md's generated sections
 * (scripts/readme-sections.ts). `--check` writes nothing and exits 1 when
 * the README differs, naming the command that fixes it.
 */

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readmeSections, withSections } from "./readme-sections.ts";

const ROOT = join(import.meta.dirname, "..");
const path = join(ROOT, "README.md");
const current = readFileSync(path, "utf8");
const next = withSections(current, readmeSections(ROOT));
if (process.argv.includes("--check")) {
	if (next !== current) {
		process.stderr.write("README.md's generated sections are stale; run npm run readme.\n");
		process.exit(1);
	}
} else if (next !== current) {
	writeFileSync(path, next);
	process.stdout.write("README.md: generated sections rewritten.\n");
}

/**
 * The session model stands below its readers: nothing under src/session/ (the
 * normalizer, its events, the fact extractor, the typed records) imports the
 * compactor, the fold runtime or the cost model, so the compactor and fold
 * briefs can both read facts without an import cycle (issue 17, item 3).
 */

import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SESSION = join(ROOT, "src", "session");
/** The only package folders the session model may import. */
const ALLOWED = ["src/session/", "src/text/"];
const RELATIVE_IMPORT = /(?:import|export)[^;]*?from\s+"(\.[^"]+)"/gs;

function sourceFiles(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((item) => {
		const path = join(dir, item.name);
		if (item.isDirectory()) return sourceFiles(path);
		return path.endsWith(".ts") ? [path] : [];
	});
}

describe("src/session imports", () => {
	it("reach only src/session and src/text", () => {
		const outside: string[] = [];
		const files = sourceFiles(SESSION);
		expect(files.length).toBeGreaterThan(10);
		for (const file of files) {
			for (const match of readFileSync(file, "utf8").matchAll(RELATIVE_IMPORT)) {
				const target = relative(ROOT, resolve(dirname(file), match[1] ?? ""));
				if (!ALLOWED.some((prefix) => target.startsWith(prefix))) outside.push(`${relative(ROOT, file)} -> ${target}`);
			}
		}
		expect(outside).toEqual([]);
	});
});

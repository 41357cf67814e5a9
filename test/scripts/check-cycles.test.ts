/**
 * The layer check `npm run lint` runs (scripts/check-cycles.ts): it names the
 * modules of a cycle (type-only imports count), an import from a lower layer
 * to a higher one, a module no layer places, and Pi's runtime reaching the
 * engine, and fails; it passes a layered acyclic tree, and this checkout.
 */

import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const SCRIPT = join(import.meta.dirname, "../../scripts/check-cycles.ts");
const roots: string[] = [];

afterEach(() => {
	for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** Layers for the trees below, bottom first, as NOTES.md writes them. */
const LAYERS = ["src/a src/b src/c src/self.ts", "src/low.ts", "src/mid.ts", "src/top.ts", "src/fold/engine", "bench"];

function tree(files: Record<string, string>, layers: readonly string[] = LAYERS): string {
	const root = mkdtempSync(join(tmpdir(), "pi-fold-cycles-"));
	roots.push(root);
	const notes = `# Notes\n\n\`\`\`layers\n${layers.join("\n")}\n\`\`\`\n`;
	for (const [path, text] of Object.entries({ "NOTES.md": notes, ...files })) {
		mkdirSync(dirname(join(root, path)), { recursive: true });
		writeFileSync(join(root, path), text);
	}
	return root;
}

function check(root?: string) {
	const args = root === undefined ? [SCRIPT] : [SCRIPT, "--root", root];
	const run = spawnSync(process.execPath, args, { encoding: "utf8" });
	return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe("check-cycles", () => {
	// One tree holding every kind of violation, checked in one run: each is named, none hides another.
	it("fails on each violation and names it: upward import, unplaced module, cycle, self import, Pi runtime in the engine", () => {
		const result = check(
			tree({
				"src/low.ts": 'import { top } from "./top.ts";\nexport const low = top;\n',
				"src/top.ts": 'import { x } from "./stray/x.ts";\nexport const top = x;\n',
				"src/stray/x.ts": "export const x = 1;\n",
				"src/a/one.ts": 'import type { B } from "../b/two.ts";\nexport type A = B;\n',
				"src/b/two.ts": 'import type {\n\tC,\n} from "./three.ts";\nexport type B = C;\n',
				"src/b/three.ts": 'export type { A as C } from "../a/one.ts";\n',
				"src/c/free.ts": 'import type { A } from "../a/one.ts";\nexport type D = A;\n',
				"src/self.ts": 'export { x } from "./self.ts";\nexport const y = 1;\n',
				"bench/one.ts": 'import { two } from "./two.ts";\nexport const one = two;\n',
				"bench/two.ts": 'import { one } from "./one.ts";\nexport const two = one;\n',
				"src/fold/engine/window.ts":
					'import { type ExtensionContext, estimateTokens } from "@earendil-works/pi-coding-agent";\nexport const f = (c: ExtensionContext) => estimateTokens;\n',
			}),
		);
		expect(result.status).toBe(1);
		expect(result.output).toContain("upward import: src/low.ts (layer 2) imports src/top.ts (layer 4)");
		expect(result.output).toContain("no layer: src/stray/x.ts");
		expect(result.output).toContain("no layer: src/top.ts imports src/stray/x.ts");
		expect(result.output).toContain("import cycle: src/a/one.ts <-> src/b/three.ts <-> src/b/two.ts");
		expect(result.output).not.toContain("src/c/free.ts");
		expect(result.output).toContain("import cycle: src/self.ts");
		expect(result.output).toContain("import cycle: bench/one.ts <-> bench/two.ts");
		expect(result.output).toContain("Pi runtime in the engine: src/fold/engine/window.ts imports ExtensionContext");
		expect(result.output).toContain("imports estimateTokens (a value)");
	});

	it("passes a layered acyclic tree, and the engine taking Pi's types and its projection", () => {
		const root = tree({
			"src/low.ts": "export const low = 1;\n",
			"src/mid.ts": 'import { low } from "./low.ts";\nexport const mid = low;\n',
			"src/top.ts": 'import { low } from "./low.ts";\nimport { mid } from "./mid.ts";\nexport const top = low + mid;\n',
			"src/fold/engine/window.ts":
				'import type { SessionEntry } from "@earendil-works/pi-coding-agent";\nimport { buildSessionProjection } from "@earendil-works/pi-coding-agent";\nimport { top } from "../../top.ts";\nexport const f = (b: SessionEntry[]) => buildSessionProjection(b, null) && top;\n',
		});
		expect(check(root)).toMatchObject({ status: 0 });
	});

	it("fails without a layers block, saying where to write it", () => {
		const result = check(tree({ "NOTES.md": "# Notes\n", "src/low.ts": "export const low = 1;\n" }));
		expect(result.status).toBe(1);
		expect(result.output).toContain("NOTES.md has no ```layers block");
	});

	it("passes this checkout", () => {
		expect(check()).toMatchObject({ status: 0 });
	});
});

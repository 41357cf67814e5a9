/**
 * The import-cycle check `npm run lint` runs (scripts/check-cycles.ts): it
 * names the modules of a cycle (type-only imports count) and fails, passes an
 * acyclic tree, and passes this checkout.
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

function tree(files: Record<string, string>): string {
	const root = mkdtempSync(join(tmpdir(), "pi-fold-cycles-"));
	roots.push(root);
	for (const [path, text] of Object.entries(files)) {
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
	it("fails on a cycle of type-only imports across directories and names its modules", () => {
		const root = tree({
			"src/a/one.ts": 'import type { B } from "../b/two.ts";\nexport type A = B;\n',
			"src/b/two.ts": 'import type {\n\tC,\n} from "./three.ts";\nexport type B = C;\n',
			"src/b/three.ts": 'export type { A as C } from "../a/one.ts";\n',
			"src/c/free.ts": 'import type { A } from "../a/one.ts";\nexport type D = A;\n',
		});
		const result = check(root);
		expect(result.status).toBe(1);
		expect(result.output).toContain("import cycle: src/a/one.ts <-> src/b/three.ts <-> src/b/two.ts");
		expect(result.output).not.toContain("src/c/free.ts");
	});

	it("fails on a module that imports itself", () => {
		const result = check(tree({ "src/self.ts": 'export { x } from "./self.ts";\nexport const y = 1;\n' }));
		expect(result.status).toBe(1);
		expect(result.output).toContain("import cycle: src/self.ts");
	});

	it("passes an acyclic tree", () => {
		const root = tree({
			"src/low.ts": "export const low = 1;\n",
			"src/mid.ts": 'import { low } from "./low.ts";\nexport const mid = low;\n',
			"src/top.ts": 'import { low } from "./low.ts";\nimport { mid } from "./mid.ts";\nexport const top = low + mid;\n',
		});
		expect(check(root)).toMatchObject({ status: 0 });
	});

	it("passes this checkout", () => {
		expect(check()).toMatchObject({ status: 0 });
	});
});

/**
 * Import cycles in `src`: every relative `import` / `export … from` (type-only
 * ones included: a cycle of types is still two modules that cannot be read
 * apart) forms the module graph; each strongly connected component with more
 * than one module, or a module importing itself, is a cycle. Prints each
 * cycle and exits 1 when one is not allowed. Run by `npm run lint`;
 * `--root <dir>` checks `<dir>/src` instead of this checkout's.
 */

import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const rootFlag = process.argv.indexOf("--root");
const ROOT = resolve(rootFlag === -1 ? join(import.meta.dirname, "..") : (process.argv[rootFlag + 1] ?? "."));
const SOURCE_DIR = join(ROOT, "src");

/**
 * Cycles tolerated for now, each as its modules sorted, joined by " ".
 * Empty. (src/session/facts.ts and src/compaction/ import each other's
 * directories, but no chain of modules leads back to where it started, so
 * that is not a module cycle; the compactor work moves the normalizer into
 * src/session/ anyway.)
 */
const ALLOWED_CYCLES: ReadonlySet<string> = new Set<string>([]);

const SPECIFIER =
	/(?:^|[\s;])(?:import|export)\s[^;]*?from\s*["'](\.{1,2}\/[^"']+)["']|import\s*\(\s*["'](\.{1,2}\/[^"']+)["']/gs;

function sourceFiles(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((item) => {
		const path = join(dir, item.name);
		if (item.isDirectory()) return sourceFiles(path);
		return item.name.endsWith(".ts") ? [path] : [];
	});
}

/** Relative imports of one module, as repository paths. */
function importsOf(file: string): string[] {
	const text = readFileSync(file, "utf8");
	const out: string[] = [];
	for (const match of text.matchAll(SPECIFIER)) {
		const specifier = match[1] ?? match[2];
		if (specifier) out.push(relative(ROOT, resolve(dirname(file), specifier)));
	}
	return out;
}

/** Strongly connected components (Tarjan), iteratively so deep chains cannot overflow the stack. */
function components(graph: ReadonlyMap<string, readonly string[]>): string[][] {
	const index = new Map<string, number>();
	const low = new Map<string, number>();
	const onStack = new Set<string>();
	const stack: string[] = [];
	const found: string[][] = [];
	let counter = 0;
	for (const start of graph.keys()) {
		if (index.has(start)) continue;
		const work: { node: string; next: number }[] = [{ node: start, next: 0 }];
		index.set(start, counter);
		low.set(start, counter++);
		stack.push(start);
		onStack.add(start);
		while (work.length > 0) {
			const frame = work[work.length - 1] as { node: string; next: number };
			const edges = graph.get(frame.node) ?? [];
			if (frame.next < edges.length) {
				const to = edges[frame.next++] as string;
				if (!graph.has(to)) continue;
				if (!index.has(to)) {
					index.set(to, counter);
					low.set(to, counter++);
					stack.push(to);
					onStack.add(to);
					work.push({ node: to, next: 0 });
				} else if (onStack.has(to)) {
					low.set(frame.node, Math.min(low.get(frame.node) ?? 0, index.get(to) ?? 0));
				}
				continue;
			}
			work.pop();
			const parent = work[work.length - 1];
			if (parent) low.set(parent.node, Math.min(low.get(parent.node) ?? 0, low.get(frame.node) ?? 0));
			if (low.get(frame.node) !== index.get(frame.node)) continue;
			const component: string[] = [];
			for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
				onStack.delete(node);
				component.push(node);
				if (node === frame.node) break;
			}
			const selfImport = graph.get(frame.node)?.includes(frame.node) ?? false;
			if (component.length > 1 || selfImport) found.push(component.sort());
		}
	}
	return found;
}

const graph = new Map(sourceFiles(SOURCE_DIR).map((file) => [relative(ROOT, file), importsOf(file)]));
const cycles = components(graph);
const refused = cycles.filter((cycle) => !ALLOWED_CYCLES.has(cycle.join(" ")));
for (const cycle of cycles) {
	const allowed = !refused.includes(cycle);
	console.log(`${allowed ? "allowed (temporary)" : "import cycle"}: ${cycle.join(" <-> ")}`);
}
if (refused.length > 0) {
	console.error(`${refused.length} import cycle(s) in src; break each by moving the shared piece below both modules.`);
	process.exit(1);
}
console.log(`No import cycles in src (${graph.size} modules).`);

/**
 * The layer check `npm run lint` runs over `src/`, `bench/`, `scripts/` and
 * the root `index.ts`. Every relative `import` / `export … from` (type-only
 * ones included: a cycle of types is still two modules that cannot be read
 * apart) forms the module graph, and three rules hold:
 *
 * - **Layers.** NOTES.md ("Layers") lists the layers, bottom first, in a
 *   fenced `layers` block: one layer a line, each a list of folders or files.
 *   A module belongs to the layer of the longest entry that is its path or a
 *   folder above it, and imports only from its own layer or lower ones. A
 *   checked module, or a module one imports, that no layer names is refused:
 *   a new folder gets its place in the order first.
 * - **No cycles.** Each strongly connected component with more than one
 *   module, or a module importing itself, is a cycle, wherever it sits.
 * - **The engine knows Pi's data, not Pi's runtime.** The modules listed in
 *   `PI_RUNTIME_FREE` (the fold engine and every fold layer below it) import
 *   from Pi's packages only types, and of values only Pi's pure projection
 *   functions in `PI_VALUES_ALLOWED` (the window must be Pi's own, byte for
 *   byte); never a type of Pi's extension runtime (`PI_RUNTIME_TYPE`).
 *
 * Prints each violation and exits 1 when there is one. `--root <dir>` checks
 * `<dir>` (its NOTES.md and trees) instead of this checkout.
 */

import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

const rootFlag = process.argv.indexOf("--root");
const ROOT = resolve(rootFlag === -1 ? join(import.meta.dirname, "..") : (process.argv[rootFlag + 1] ?? "."));
/** The trees whose modules are checked (importers); what they import is placed by the layers too. */
const CHECKED = ["src", "bench", "scripts", "index.ts"];
/** Generated or recorded files inside the checked trees: never modules of the graph. */
const SKIPPED_DIRS = new Set(["results", "node_modules"]);
const LAYERS_FILE = "NOTES.md";
const LAYERS_BLOCK = /^```layers\n([\s\S]*?)^```/m;

/** Where Pi's runtime must not reach (see the module doc); the engine's header states the same rule. */
const PI_RUNTIME_FREE = [
	"src/fold/briefs",
	"src/fold/lattice",
	"src/fold/state",
	"src/fold/policy",
	"src/fold/store",
	"src/fold/options.ts",
	"src/fold/projection-candidates.ts",
	"src/fold/suggestions.ts",
	"src/fold/summarizer",
	"src/fold/engine",
];
/** Pi's own pure projection of a branch: what the next request holds is exactly what Pi will build. */
const PI_VALUES_ALLOWED = new Set(["buildSessionProjection", "buildContextEntries", "sessionEntryToContextMessages"]);
/** Pi's extension runtime (API, contexts, session manager, registries): the adapter's business, never the engine's. */
const PI_RUNTIME_TYPE = /^(Extension[A-Z]\w*|AgentSession\w*|SessionManager|ModelRegistry|SettingsManager)$/;

const SPECIFIER =
	/(?:^|[\s;])(?:import|export)\s[^;]*?from\s*["'](\.{1,2}\/[^"']+)["']|import\s*\(\s*["'](\.{1,2}\/[^"']+)["']/gs;
const PI_IMPORT = /(?:^|[\s;])import\s+(type\s+)?\{([^}]*)\}\s*from\s*["'](@earendil-works\/[^"']+)["']/gs;
const PI_DEFAULT_IMPORT =
	/(?:^|[\s;])import\s+(type\s+)?(\*\s+as\s+\w+|\w+)\s*(?:,\s*\{[^}]*\})?\s*from\s*["'](@earendil-works\/[^"']+)["']/gs;

const toPosix = (path: string): string => path.split(sep).join("/");

function sourceFiles(path: string): string[] {
	if (!existsSync(path)) return [];
	if (!statSync(path).isDirectory()) return path.endsWith(".ts") ? [path] : [];
	return readdirSync(path, { withFileTypes: true }).flatMap((item) =>
		SKIPPED_DIRS.has(item.name) ? [] : sourceFiles(join(path, item.name)),
	);
}

/** The layers, bottom first, as read from NOTES.md. */
function readLayers(): string[][] {
	const notes = join(ROOT, LAYERS_FILE);
	const block = existsSync(notes) ? LAYERS_BLOCK.exec(readFileSync(notes, "utf8")) : null;
	if (!block?.[1]) {
		console.error(`${LAYERS_FILE} has no \`\`\`layers block; write the layer order there (bottom first).`);
		process.exit(1);
	}
	return block[1]
		.split("\n")
		.map((line) => line.replace(/#.*/, "").trim())
		.filter((line) => line.length > 0)
		.map((line) => line.split(/\s+/).map((entry) => entry.replace(/\/$/, "")));
}

/** The layer index of a repository path: its longest matching entry's; undefined when no layer names it. */
function layerOf(path: string, layers: readonly string[][]): number | undefined {
	let best: { layer: number; length: number } | undefined;
	layers.forEach((entries, layer) => {
		for (const entry of entries) {
			const matches = path === entry || path.startsWith(`${entry}/`);
			if (matches && (!best || entry.length > best.length)) best = { layer, length: entry.length };
		}
	});
	return best?.layer;
}

/** Relative imports of one module, as repository paths. */
function importsOf(text: string, file: string): string[] {
	const out: string[] = [];
	for (const match of text.matchAll(SPECIFIER)) {
		const specifier = match[1] ?? match[2];
		if (specifier) out.push(toPosix(relative(ROOT, resolve(dirname(file), specifier))));
	}
	return out;
}

/** What a module takes from Pi's packages that the engine's rule refuses. */
function piRuntimeImports(text: string): string[] {
	const refused: string[] = [];
	for (const match of text.matchAll(PI_IMPORT)) {
		const typeOnly = match[1] !== undefined;
		for (const raw of (match[2] ?? "").split(",")) {
			const item = raw.trim();
			if (item === "") continue;
			const itemType = typeOnly || item.startsWith("type ");
			const name =
				item
					.replace(/^type\s+/, "")
					.split(/\s+as\s+/)[0]
					?.trim() ?? "";
			if (PI_RUNTIME_TYPE.test(name)) refused.push(`${name} (Pi's runtime) from ${match[3]}`);
			else if (!itemType && !PI_VALUES_ALLOWED.has(name)) refused.push(`${name} (a value) from ${match[3]}`);
		}
	}
	for (const match of text.matchAll(PI_DEFAULT_IMPORT)) {
		if (match[1] === undefined) refused.push(`${match[2]} (a whole module) from ${match[3]}`);
	}
	return refused;
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

const layers = readLayers();
const files = CHECKED.flatMap((path) => sourceFiles(join(ROOT, path)));
const texts = new Map(files.map((file) => [toPosix(relative(ROOT, file)), readFileSync(file, "utf8")]));
const graph = new Map([...texts].map(([path, text]) => [path, importsOf(text, join(ROOT, path))]));
const problems: string[] = [];

for (const [module, imports] of graph) {
	const from = layerOf(module, layers);
	if (from === undefined) {
		problems.push(`no layer: ${module} is in no line of the layers in ${LAYERS_FILE}; give its folder a place`);
		continue;
	}
	for (const target of imports) {
		const to = layerOf(target, layers);
		if (to === undefined) problems.push(`no layer: ${module} imports ${target}, which no layer names`);
		else if (to > from)
			problems.push(
				`upward import: ${module} (layer ${from + 1}) imports ${target} (layer ${to + 1}); move what it needs down`,
			);
	}
	const freeOfPi = PI_RUNTIME_FREE.some((entry) => module === entry || module.startsWith(`${entry}/`));
	if (freeOfPi)
		for (const refused of piRuntimeImports(texts.get(module) ?? ""))
			problems.push(`Pi runtime in the engine: ${module} imports ${refused}`);
}
for (const cycle of components(graph)) problems.push(`import cycle: ${cycle.join(" <-> ")}`);

for (const problem of problems) console.log(problem);
if (problems.length > 0) {
	console.error(
		`${problems.length} layer problem(s); break a cycle or an upward import by moving the shared piece below both modules.`,
	);
	process.exit(1);
}
console.log(`Layers hold: ${graph.size} modules in ${layers.length} layers, no upward import, no cycle.`);

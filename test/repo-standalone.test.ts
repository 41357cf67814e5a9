/**
 * Guards that the checkout stands alone: no source under src/, test/, bench/,
 * bin/ (nor the root config and CI script) names a path outside the repo —
 * the sibling `shared/sessions` folder, an absolute `/work/` path, or a
 * `../` chain that climbs above the repo root from the file's own folder.
 * Every fixture a test or benchmark needs lives in the repo (see
 * test/fixtures/real-sessions.ts), so a clone with nothing beside it passes.
 */

import { readdirSync, readFileSync } from "node:fs";
import { dirname, extname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SCANNED_DIRS = ["src", "test", "bench", "bin"] as const;
const SCANNED_ROOT_FILES = [
	"package.json",
	"vitest.config.ts",
	"tsconfig.json",
	"tsconfig.build.json",
	"biome.json",
	".ci/run",
] as const;
const SOURCE_EXTENSIONS: ReadonlySet<string> = new Set([".ts", ".js", ".mjs", ".cjs", ".json", ".sh"]);
const SKIPPED_DIRS: ReadonlySet<string> = new Set(["node_modules", "dist", "coverage"]);
/** This file spells out the patterns it hunts for, so it is not scanned itself. */
const SELF = relative(ROOT, fileURLToPath(import.meta.url));

const SHARED_SESSIONS = "shared/sessions";
const WORK_ABSOLUTE = "/work/";
/** A run of `../` segments not glued to a longer name (so `foo../` does not count). */
const PARENT_CHAIN = /(?<![\w.])(?:\.\.\/)+/g;

/** References that look like escapes but are data the code never reads as a path. */
const ALLOWED: readonly { file: string; text: string; why: string }[] = [
	{
		file: "test/compaction/summary/render.test.ts",
		text: "`/work/project/${",
		why: "synthetic tool-call arguments in generated entries",
	},
];

interface Finding {
	file: string;
	line: number;
	rule: string;
	text: string;
}

/** Every reference in `text` (the source of repo-relative `file`) that leaves the repo. */
function findEscapes(file: string, text: string): Finding[] {
	const findings: Finding[] = [];
	const rootDir = resolve(ROOT);
	const fileDir = dirname(resolve(rootDir, file));
	text.split("\n").forEach((lineText, index) => {
		const add = (rule: string): void => {
			findings.push({ file, line: index + 1, rule, text: lineText.trim() });
		};
		if (lineText.includes(SHARED_SESSIONS)) add(`names ${SHARED_SESSIONS} outside the repo`);
		if (lineText.includes(WORK_ABSOLUTE)) add(`absolute ${WORK_ABSOLUTE} path`);
		for (const match of lineText.matchAll(PARENT_CHAIN)) {
			const target = resolve(fileDir, match[0]);
			if (target !== rootDir && !target.startsWith(`${rootDir}${sep}`)) {
				add(`"${match[0]}" climbs above the repo root`);
				break;
			}
		}
	});
	return findings;
}

function sourceFiles(): string[] {
	const files: string[] = [...SCANNED_ROOT_FILES];
	const walk = (dir: string): void => {
		for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
			const path = join(dir, entry.name);
			if (entry.isDirectory()) {
				if (!SKIPPED_DIRS.has(entry.name)) walk(path);
			} else if (SOURCE_EXTENSIONS.has(extname(entry.name))) {
				files.push(path);
			}
		}
	};
	for (const dir of SCANNED_DIRS) walk(dir);
	return files.filter((file) => file !== SELF).sort();
}

const isAllowed = (finding: Finding): boolean =>
	ALLOWED.some((allowed) => allowed.file === finding.file && finding.text.includes(allowed.text));

describe("the repo stands alone", () => {
	const findings = sourceFiles().flatMap((file) => findEscapes(file, readFileSync(join(ROOT, file), "utf8")));

	it("no source references a path outside the checkout", () => {
		const escapes = findings.filter((finding) => !isAllowed(finding));
		expect(escapes.map((finding) => `${finding.file}:${finding.line}: ${finding.rule}: ${finding.text}`)).toEqual([]);
	});

	it("every allowlisted reference still exists (the list cannot rot)", () => {
		const stale = ALLOWED.filter(
			(allowed) => !findings.some((finding) => finding.file === allowed.file && finding.text.includes(allowed.text)),
		);
		expect(stale.map((allowed) => `${allowed.file}: ${allowed.text} (${allowed.why})`)).toEqual([]);
	});

	it("the scanner names file and line for each kind of escape", () => {
		const source = [
			'import { x } from "../src/ok.ts";',
			'const log = new URL("../../../shared/sessions/a.jsonl", import.meta.url);',
			'const abs = "/work/shared/x.jsonl";',
			'const up = join(here, "../../sibling/");',
		].join("\n");
		const found = findEscapes("test/fake.ts", source).map((finding) => `${finding.line}: ${finding.rule}`);
		expect(found).toEqual([
			"2: names shared/sessions outside the repo",
			'2: "../../../" climbs above the repo root',
			"3: absolute /work/ path",
			'4: "../../" climbs above the repo root',
		]);
	});
});

import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig } from "vitest/config";

/** No test reads the developer's own Pi settings: the agent dir points at a path that never exists. */
const ISOLATED_AGENT_DIR = join(tmpdir(), "pi-fold-tests-no-agent-dir");

/** Unit files that replace modules (`vi.mock`, `vi.spyOn`): each needs its own module graph. */
const MOCKING_FILES = [
	"test/compaction/qa/branch-qa.test.ts",
	"test/compaction/qa/qa-independence.test.ts",
	"test/fold/store/store-file.test.ts",
];

export default defineConfig({
	test: {
		reporters: ["default", "./test/summary-reporter.ts"],
		// Pi loads this checkout through its bundle: written from the sources before any test runs.
		globalSetup: ["test/global-setup.ts"],
		projects: [
			{
				test: {
					name: "unit",
					include: ["test/**/*.test.ts"],
					exclude: ["test/e2e/**", ...MOCKING_FILES],
					env: { PI_CODING_AGENT_DIR: ISOLATED_AGENT_DIR },
					// Files share one module cache per worker: importing Pi's package afresh for every file cost
					// more than half of the unit run. Unit tests keep no module state between files.
					isolate: false,
					// The real-log tests take a few seconds on a loaded 2-core machine.
					testTimeout: 30_000,
				},
			},
			{
				test: {
					name: "unit-mocked",
					include: [...MOCKING_FILES],
					env: { PI_CODING_AGENT_DIR: ISOLATED_AGENT_DIR },
					testTimeout: 30_000,
				},
			},
			{
				test: {
					name: "e2e",
					include: ["test/e2e/**/*.test.ts"],
					// Any unattributed rewrite of the model window fails the run (src/fold/runtime.ts).
					env: { PI_FOLD_STRICT_APPEND_ONLY: "1", PI_CODING_AGENT_DIR: ISOLATED_AGENT_DIR },
					setupFiles: ["test/e2e/setup.ts"],
					testTimeout: 120_000,
					hookTimeout: 120_000,
					fileParallelism: false,
				},
			},
		],
	},
});

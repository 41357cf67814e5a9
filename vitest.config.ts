import { defineConfig } from "vitest/config";

export default defineConfig({
	test: {
		reporters: ["default", "./test/summary-reporter.ts"],
		projects: [
			{
				test: {
					name: "unit",
					include: ["test/**/*.test.ts"],
					exclude: ["test/e2e/**"],
				},
			},
			{
				test: {
					name: "e2e",
					include: ["test/e2e/**/*.test.ts"],
					// Any unattributed rewrite of the model window fails the run (src/fold/runtime.ts).
					env: { PI_FOLD_STRICT_APPEND_ONLY: "1" },
					setupFiles: ["test/e2e/setup.ts"],
					testTimeout: 120_000,
					hookTimeout: 120_000,
					fileParallelism: false,
				},
			},
		],
	},
});

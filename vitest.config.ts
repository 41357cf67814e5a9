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
					testTimeout: 120_000,
					hookTimeout: 120_000,
					fileParallelism: false,
				},
			},
		],
	},
});

/**
 * A closing line any CI can read: `vitest: N passed, N failed, N skipped`,
 * printed after vitest's own summary. Test files that failed to load count
 * as failed, so a broken import never looks like a green run.
 */

import type { Reporter, TestModule } from "vitest/node";

export default class PlainSummaryReporter implements Reporter {
	onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
		let passed = 0;
		let failed = 0;
		let skipped = 0;
		for (const module of testModules) {
			if (module.state() === "failed" && [...module.children.allTests()].length === 0) failed++;
			for (const test of module.children.allTests()) {
				const state = test.result().state;
				if (state === "passed") passed++;
				else if (state === "failed") failed++;
				else skipped++;
			}
		}
		process.stdout.write(`\nvitest: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
	}
}

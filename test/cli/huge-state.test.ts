/**
 * `pi-fold verify` and `pi-fold report` on a session whose fold state holds
 * one schema-valid delta of 200,000 ops: both finish and say what they found
 * (a quadratic op replay made each run for minutes).
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.ts";
import { DEFAULT_ENTRY_TYPE_PREFIX } from "../../src/fold/options.ts";
import { BranchBuilder, toJsonl } from "../fixtures/session.ts";

const OPS = 200_000;
const dir = mkdtempSync(join(tmpdir(), "pi-fold-huge-state-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function hugeSession(): string {
	const branch = new BranchBuilder();
	branch.user("Protect everything.");
	branch.assistant("Done.", [], 1_200);
	const ops = Array.from({ length: OPS }, (_, i) => ({ op: "protect", ids: [`e${i}`] }));
	branch.custom(`${DEFAULT_ENTRY_TYPE_PREFIX}:delta`, { v: 1, ops });
	branch.user("Thanks.");
	const file = join(dir, "huge.jsonl");
	writeFileSync(file, toJsonl(branch.entries));
	return file;
}

describe("a 200,000-op fold state", () => {
	const file = hugeSession();

	it("verify finishes and finds nothing wrong", async () => {
		const result = await runCli(["verify", file]);
		expect(result.stderr).toBe("");
		expect(result.code).toBe(0);
		expect(result.stdout).toMatch(/fold state entries 1\n/);
		expect(result.stdout).toContain("Result: clean, no defects.");
	});

	it("report finishes", async () => {
		const result = await runCli(["report", "--no-replay", file]);
		expect(result.code).toBe(0);
		expect(result.stdout).toContain("huge.jsonl");
	});
});

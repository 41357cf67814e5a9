/** The installed `pi-fold` command end to end: a real process, its exit code and its output streams. */

import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../../bin/pi-fold.js", import.meta.url));

function run(...args: string[]) {
	return spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8" });
}

describe("bin/pi-fold.js", () => {
	it("prints the report of the bundled sample and exits 0", () => {
		const result = run("report");
		expect(result.status).toBe(0);
		expect(result.stdout).toContain("Session sample-0001");
		expect(result.stderr).toBe("");
	});

	it("answers bad input with one line and a non-zero exit, never a stack trace", () => {
		const missing = run("report", "/no/such/file.jsonl");
		expect(missing.status).toBe(1);
		expect(missing.stderr.trim().split("\n")).toHaveLength(1);
		expect(missing.stderr).not.toMatch(/\n\s+at /);
		expect(run("nonsense").status).toBe(2);
	});
});

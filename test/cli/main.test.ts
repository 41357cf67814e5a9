import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.ts";
import { REAL_SESSIONS, sessionHeader } from "../fixtures/session.ts";

describe("pi-fold report", () => {
	it("summarizes the bundled sample when no path is given", () => {
		const result = runCli(["report"]);
		expect(result.code).toBe(0);
		expect(result.stdout).toContain("Session sample-0001");
		expect(result.stdout).toMatch(/Tool calls by tool:\n(?:.*\n)*\s+read\s+1\n/);
		expect(result.stdout).toMatch(/requests\s+6\n/);
		expect(result.stdout).toMatch(/cost\s+\$0\.0089/);
	});

	it("reports a real log's entries, roles, tools and usage", () => {
		const result = runCli(["report", REAL_SESSIONS.beforeCompaction]);
		expect(result.code).toBe(0);
		expect(result.stdout).toMatch(/entries\s+1,002/);
		expect(result.stdout).toMatch(/assistant\s+484/);
		expect(result.stdout).toMatch(/bash\s+206/);
		expect(result.stdout).toMatch(/format\s+v1 \(migrated as Pi migrates it\)/);
		expect(result.stdout).toMatch(/cache read\s+54,693,675/);
		expect(result.stdout).toBe(runCli(["report", REAL_SESSIONS.beforeCompaction]).stdout);
	});

	it("turns bad input into one clear line and a non-zero exit", () => {
		const missing = runCli(["report", "/no/such/session.jsonl"]);
		expect(missing).toMatchObject({ code: 1, stdout: "" });
		expect(missing.stderr).toMatch(/^pi-fold: .*no such file.*\n$/);
		const dir = mkdtempSync(join(tmpdir(), "pi-fold-cli-"));
		const notSession = join(dir, "notes.jsonl");
		writeFileSync(notSession, "hello\n");
		expect(runCli(["report", notSession]).stderr).toMatch(/not a Pi session file/);
		const damaged = join(dir, "damaged.jsonl");
		writeFileSync(damaged, `${JSON.stringify(sessionHeader())}\n{"type":"message"`);
		const partial = runCli(["report", damaged]);
		expect(partial.code).toBe(0);
		expect(partial.stdout).toMatch(/Skipped lines \(1\):\n\s+line 2: last line is incomplete JSON/);
		expect(runCli(["frobnicate"])).toMatchObject({ code: 2 });
		expect(runCli(["report", "a", "b"]).stderr).toMatch(/one session path/);
	});
});

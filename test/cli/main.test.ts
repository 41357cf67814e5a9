import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseReportArgs, runCli } from "../../src/cli/main.ts";
import { terminalControls } from "../fixtures/common.ts";
import { UsageLogBuilder, usage } from "../fixtures/cost.ts";
import { BranchBuilder, REAL_SESSIONS, sessionHeader, toJsonl } from "../fixtures/session.ts";

describe("pi-fold report", () => {
	it("summarizes the bundled sample when no path is given", async () => {
		const result = await runCli(["report"]);
		expect(result.code).toBe(0);
		expect(result.stdout).toContain("Session sample-0001");
		expect(result.stdout).toMatch(/Tool calls by tool:\n(?:.*\n)*\s+read\s+1\n/);
		expect(result.stdout).toMatch(/requests\s+6\n/);
		expect(result.stdout).toMatch(/cost\s+\$0\.0089/);
	});

	it("reports a real log's entries, roles, tools and usage", async () => {
		const result = await runCli(["report", "--no-replay", REAL_SESSIONS.beforeCompaction]);
		expect(result.code).toBe(0);
		expect(result.stdout).toMatch(/entries\s+1,002/);
		expect(result.stdout).toMatch(/assistant\s+484/);
		expect(result.stdout).toMatch(/bash\s+206/);
		expect(result.stdout).toMatch(/format\s+v1 \(migrated as Pi migrates it\)/);
		expect(result.stdout).toMatch(/cache read\s+54,693,675/);
		expect(result.stdout).toBe((await runCli(["report", "--no-replay", REAL_SESSIONS.beforeCompaction])).stdout);
	});

	it("turns bad input into one clear line and a non-zero exit", async () => {
		const missing = await runCli(["report", "/no/such/session.jsonl"]);
		expect(missing).toMatchObject({ code: 1, stdout: "" });
		expect(missing.stderr).toMatch(/^pi-fold: .*no such file.*\n$/);
		const dir = mkdtempSync(join(tmpdir(), "pi-fold-cli-"));
		const notSession = join(dir, "notes.jsonl");
		writeFileSync(notSession, "hello\n");
		expect((await runCli(["report", notSession])).stderr).toMatch(/not a Pi session file/);
		const damaged = join(dir, "damaged.jsonl");
		writeFileSync(damaged, `${JSON.stringify(sessionHeader())}\n{"type":"message"`);
		const partial = await runCli(["report", damaged]);
		expect(partial.code).toBe(0);
		// Problems come first, before the session header, so they cannot be missed.
		expect(partial.stdout).toMatch(/^Problems: 1 line skipped\n\s+line 2: last line is incomplete JSON.*\n\nSession /);
		expect(await runCli(["frobnicate"])).toMatchObject({ code: 2 });
		expect((await runCli(["report", "a", "b"])).stderr).toMatch(/one session path/);
	});
});

describe("terminal escapes", () => {
	const ESC = "\u001b";
	const hostile = `${ESC}]0;pwned\u0007${ESC}[2J\u009b31m`;

	it("never reach the terminal from a session's tool names, tool output, ids or cwd", async () => {
		const dir = mkdtempSync(join(tmpdir(), "pi-fold-cli-"));
		const path = join(dir, "hostile.jsonl");
		const builder = new BranchBuilder();
		builder.user(`run it ${hostile}`);
		builder.assistant(hostile, [{ id: `call${hostile}`, name: `read${hostile}`, args: { path: hostile } }]);
		builder.result(`call${hostile}`, `output ${hostile}`, `read${hostile}`, true);
		writeFileSync(path, toJsonl(builder.entries, sessionHeader({ id: `s${hostile}`, cwd: `/tmp/${hostile}` })));
		const report = await runCli(["report", "--no-replay", path]);
		expect(report.code, report.stderr).toBe(0);
		expect(report.stdout).toContain("read ]0;pwned");
		expect(terminalControls(report.stdout)).toEqual([]);
		const verify = await runCli(["verify", path]);
		expect(terminalControls(`${verify.stdout}${verify.stderr}`)).toEqual([]);
	});

	it("never reach the terminal from a mistyped command, option or path", async () => {
		for (const argv of [
			[`rep${hostile}ort`],
			[`--x${hostile}`],
			["help", hostile],
			["report", `--y${hostile}`],
			["report", `/no/${hostile}`],
		]) {
			const result = await runCli(argv);
			expect(result.code, argv.join(" ")).not.toBe(0);
			expect(result.stderr).toMatch(/^pi-fold: /);
			expect(terminalControls(`${result.stdout}${result.stderr}`)).toEqual([]);
		}
	});
});

describe("pi-fold report: cost", () => {
	it("shows the sample's ledger, cache share and peak context, and says when no card is known", async () => {
		const { stdout } = await runCli(["report"]);
		expect(stdout).toMatch(/Cost:\n\s+Pi's ledger\s+\$0\.0089/);
		expect(stdout).toMatch(/none known for sample\/sample-model \(6 requests left unpriced\)/);
		expect(stdout).toMatch(/cache share\s+0\.821 /);
		expect(stdout).toMatch(/peak request context\s+1,790 tokens \(entry s0000014\)/);
		expect(stdout).toMatch(/above long context\s+no long-context tier/);
	});

	it("re-prices a real log with its catalog card and with a named card", async () => {
		const { code, stdout } = await runCli([
			"report",
			"--no-replay",
			"--rate-card",
			"gpt-5.6",
			REAL_SESSIONS.beforeCompaction,
		]);
		expect(code).toBe(0);
		expect(stdout).toMatch(/Pi's ledger\s+\$42\.5959/);
		expect(stdout).toMatch(
			/catalog card\s+\$42\.59\d\d tiered, \$42\.59\d\d flat: anthropic\/claude-opus-4-5, 484 requests/,
		);
		expect(stdout).toMatch(/card gpt-5\.6\s+\$\d+\.\d{4} tiered/);
		expect(stdout).toMatch(/cache share\s+0\.970 /);
		expect(stdout).toMatch(/peak request context\s+184,915 tokens/);
		expect(stdout).toMatch(/above long context\s+0 of 484 requests over 272,000 tokens/);
		expect(
			(await runCli(["report", "--no-replay", `--rate-card=gpt-5.6`, REAL_SESSIONS.beforeCompaction])).stdout,
		).toBe(stdout);
	});

	it("reports the long-context surcharge and the requests that crossed the threshold", async () => {
		const log = new UsageLogBuilder();
		log.user("go");
		log.assistant("small", usage({ input: 1_000, output: 10 }));
		log.user("more");
		log.assistant("big", usage({ input: 2_001, cacheRead: 270_000, output: 1_000 }));
		const dir = mkdtempSync(join(tmpdir(), "pi-fold-cost-"));
		const path = join(dir, "long.jsonl");
		writeFileSync(path, toJsonl(log.entries));
		const { stdout } = await runCli(["report", path, "--rate-card", "gpt-5.6"]);
		// small: 1,000 × $5/M + 10 × $30/M = $0.0053 either way. big at the long tier:
		// 2,001 × $10/M + 270,000 × $1/M + 1,000 × $45/M = $0.33501; flat: $0.175005.
		expect(stdout).toMatch(/card gpt-5\.6\s+\$0\.3403 tiered, \$0\.1803 flat/);
		expect(stdout).toMatch(/long-context surcharge \$0\.1600 on 1 request\n/);
		expect(stdout).toMatch(/above long context\s+1 of 2 requests over 272,000 tokens/);
		expect(stdout).toMatch(/peak request context\s+272,001 tokens/);
	});

	it("rejects bad flags with one line and exit 2", async () => {
		for (const args of [
			["report", "--rate-card"],
			["report", "--rate-card="],
			["report", "--rate-card", "no-such-card"],
			["report", "--rate-card", "gpt-5.6", "--rate-card", "gpt-5.6"],
			["report", "--verbose"],
			["report", "--html"],
			["report", "--html", "a.html", "--html", "b.html"],
		]) {
			const result = await runCli(args);
			expect(result).toMatchObject({ code: 2, stdout: "" });
			expect(result.stderr.split("\n")).toHaveLength(2);
		}
		expect((await runCli(["report", "--rate-card", "nope"])).stderr).toMatch(
			/unknown rate card "nope" \(known: .*gpt-5\.6/,
		);
		expect(parseReportArgs(["--rate-card", "anthropic/claude-sonnet-4-5"])).toMatchObject({
			rateCard: { name: "anthropic/claude-sonnet-4-5" },
		});
	});
});

describe("pi-fold help, --help and --version", () => {
	it("prints the usage for help, --help and -h, and a command's own help", async () => {
		for (const argv of [[], ["help"], ["--help"], ["-h"]]) {
			const result = await runCli(argv);
			expect(result).toMatchObject({ code: 0, stderr: "" });
			expect(result.stdout).toMatch(/^Usage: pi-fold <command>/);
			expect(result.stdout).toMatch(/report \[options\] \[session\.jsonl\]/);
		}
		for (const argv of [
			["report", "--help"],
			["report", "-h"],
			["help", "report"],
			["report", "x.jsonl", "--help"],
		]) {
			const result = await runCli(argv);
			expect(result).toMatchObject({ code: 0, stderr: "" });
			expect(result.stdout).toMatch(/^Usage: pi-fold report \[options\] \[session\.jsonl\]/);
			expect(result.stdout).toMatch(/--rate-card <card>[\s\S]*--html <out\.html>[\s\S]*--no-replay/);
		}
		expect(await runCli(["help", "nope"])).toMatchObject({ code: 2, stdout: "" });
	});

	it("prints the package version for --version, -v, version and report --version", async () => {
		const version = (
			JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
		).version;
		for (const argv of [["--version"], ["-v"], ["version"], ["report", "--version"]]) {
			expect(await runCli(argv)).toEqual({ code: 0, stdout: `pi-fold ${version}\n`, stderr: "" });
		}
	});

	it("names an unknown flag and points at the command's help", async () => {
		expect((await runCli(["report", "--verbose"])).stderr).toBe(
			'pi-fold: unknown option "--verbose" for report. Run "pi-fold report --help" for usage.\n',
		);
		expect((await runCli(["report", "-q"])).stderr).toMatch(/^pi-fold: unknown option "-q" for report\./);
		expect((await runCli(["--frobnicate"])).stderr).toMatch(
			/^pi-fold: unknown option "--frobnicate"\. Run "pi-fold help"/,
		);
		expect((await runCli(["frobnicate"])).stderr).toMatch(/^pi-fold: unknown command "frobnicate"\./);
	});
});

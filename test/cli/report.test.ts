/**
 * The report's pi-fold sections on real logs: what pi-fold would have saved on
 * a session recorded without it (the ladder replay), and what it did in a
 * session recorded with it (the replay's own branch, written back as a log:
 * fold records, deltas, commit summaries and context edits as the runtime
 * persists them). One replay of the real log serves both (it takes seconds).
 */

import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { REPORT_RESULTS, reportFigures } from "../../scripts/report-figures.ts";
import { runCli } from "../../src/cli/main.ts";
import { readableBytes } from "../../src/cli/report.ts";
import { cardForModelKey, hostFacts, replayBranch } from "../../src/cost/fold-replay.ts";
import { resolveOptions } from "../../src/fold/options.ts";
import { COMMIT_REASON_TEXT } from "../../src/fold/pi/commit-reasons.ts";
import { loadSessionFile } from "../../src/session/load.ts";
import { REAL_SESSIONS, toJsonl } from "../fixtures/session.ts";

const ROOT = join(import.meta.dirname, "../..");

/** A replay of the real log takes several seconds; two on a loaded machine is still well inside this. */
const REPLAY_TIMEOUT_MS = 120_000;

let withoutPiFold: string;
let withPiFold: string;
let sessionDir: string;

beforeAll(async () => {
	withoutPiFold = (await runCli(["report", REAL_SESSIONS.beforeCompaction])).stdout;
	const session = loadSessionFile(REAL_SESSIONS.beforeCompaction);
	const branch = session.manager.getBranch();
	const host = hostFacts("anthropic/claude-opus-4-5", 0, session.header.cwd);
	const replay = await replayBranch(branch, "ladder", resolveOptions(), () => host);
	sessionDir = mkdtempSync(join(tmpdir(), "pi-fold-report-"));
	const path = join(sessionDir, "folded.jsonl");
	writeFileSync(path, toJsonl(replay.branch, { ...session.header, version: 3 }));
	// A store with two blobs next to the log, as the runtime lays it out.
	const blobs = join(sessionDir, `${session.header.id}.pi-fold`, "sha256", "ab");
	mkdirSync(blobs, { recursive: true });
	writeFileSync(join(blobs, "ab01"), "x".repeat(3000));
	writeFileSync(join(blobs, "ab02"), "y".repeat(2000));
	withPiFold = (await runCli(["report", "--no-replay", path])).stdout;
}, REPLAY_TIMEOUT_MS);

describe("pi-fold report on a session recorded without pi-fold", () => {
	it("says pi-fold was not used and how the compactions were made", async () => {
		expect(withoutPiFold).toMatch(/pi-fold in this session: not used \(no pi-fold entries\)\n/);
		expect(withoutPiFold).toMatch(/compactions\s+0 by pi-fold's deterministic compactor, 2 by Pi's summarizer/);
	});

	it("prices Pi alone and the replayed requests under one cache model and names the saving and the card", async () => {
		const section = withoutPiFold.slice(withoutPiFold.indexOf("What pi-fold would have saved"));
		expect(section).toMatch(/Pi alone\s+with pi-fold\n/);
		const cost = /cost\s+\$(\d+\.\d{4})\s+\$(\d+\.\d{4})/.exec(section);
		expect(Number(cost?.[2])).toBeLessThan(Number(cost?.[1]));
		expect(section).toMatch(/saving\s+\$\d+\.\d{4} \(\d+\.\d%\), \d+ commits folding \d+ spans\n/);
		// Charged: each column's cost plus what getting back what it hid would cost, never less than the cost.
		const charged = /charged cost\s+\$(\d+\.\d{4})\s+\$(\d+\.\d{4})/.exec(section);
		const [nativeCharged, foldCharged] = [Number(charged?.[1]), Number(charged?.[2])];
		expect(nativeCharged).toBeGreaterThanOrEqual(Number(cost?.[1]));
		expect(foldCharged).toBeGreaterThanOrEqual(Number(cost?.[2]));
		// The charged saving is the difference of the charged row, said as a loss when it is one.
		const savedCharged = nativeCharged - foldCharged;
		const chargedLine = /saving, charged\s+(.*)\n/.exec(section)?.[1];
		expect(chargedLine).toBe(
			savedCharged >= 0
				? `$${savedCharged.toFixed(4)} (${((savedCharged / nativeCharged) * 100).toFixed(1)}%)`
				: `none: pi-fold would have cost $${(-savedCharged).toFixed(4)} (${((-savedCharged / nativeCharged) * 100).toFixed(1)}%) more, counting the searches and peeks its hidden references need`,
		);
		expect(section).toMatch(/hidden from\s+\d+ of \d+\s+\d+ of \d+\n/);
		expect(section).toMatch(
			/model\s+anthropic\/claude-opus-4-5, priced with the anthropic\/claude-opus-4-5 card, prefix cache expiring after 300 s idle/,
		);
		// The log compacted twice where Pi did; at the catalog's 200k window Pi needs no more.
		expect(section).toMatch(
			/Pi alone\s+no compaction needed; Pi's threshold at 200,000-token window − 16,384 reserve, 20,000 tokens kept, 1,200-character summaries\n/,
		);
		// The pi-fold column says how it met Pi's threshold and what else it billed.
		expect(section).toMatch(
			/with pi-fold\s+(never reached Pi's threshold|Pi's threshold reached \d+×: \d+ ladder commits? instead, \d+ compactions?); \d+ summarizer requests? and the context tool's declaration \(~[\d,]+ tokens a request\) billed\n/,
		);
		expect(section).not.toMatch(/could not attribute/);
		// Without the log's own compactions the pi-fold column runs up to Pi's line, never past the window.
		const peaks = /peak request\s+([\d,]+)\s+([\d,]+)/.exec(section);
		expect(Number(peaks?.[2]?.replaceAll(",", ""))).toBeLessThanOrEqual(200_000);
		expect(Number(peaks?.[2]?.replaceAll(",", ""))).toBeGreaterThan(0);
	});

	it("prints the figures bench/results/report.md records for this log, which the README quotes", async () => {
		const recorded = reportFigures(readFileSync(join(ROOT, REPORT_RESULTS), "utf8")).find(
			(item) => item.log === "pi-mono-before-compaction",
		);
		const section = withoutPiFold.slice(withoutPiFold.indexOf("What pi-fold would have saved"));
		// On failure the code's figures moved: rerun `npm run bench -- report`, then `npm run readme`.
		expect(/cost\s+(\$\d+\.\d{4})\s+(\$\d+\.\d{4})/.exec(section)?.slice(1)).toEqual([
			recorded?.aloneCost,
			recorded?.foldCost,
		]);
		expect(/peak request\s+([\d,]+)\s+([\d,]+)/.exec(section)?.slice(1)).toEqual([
			recorded?.alonePeak,
			recorded?.foldPeak,
		]);
	});

	it("ends with the sparkline: recorded and pi-fold rows, compactions and commits marked", async () => {
		const chart = withoutPiFold.slice(withoutPiFold.indexOf("Context per request"));
		expect(chart).toMatch(
			/^Context per request \(471 requests, 13 with no usage left out; 8 requests per column, tallest shown; full block = the 200,000-token window\):/,
		);
		const rows = chart.split("\n");
		const recorded = rows.find((row) => row.startsWith("  recorded  "));
		const folded = rows.find((row) => row.startsWith("  pi-fold   "));
		expect(recorded?.length).toBe(12 + 59);
		expect(folded?.length).toBe(12 + 59);
		// Two compactions under the recorded row; commits (F) under the pi-fold row.
		expect(rows[rows.indexOf(recorded ?? "") + 1]?.match(/C/g)).toHaveLength(2);
		expect(rows[rows.indexOf(folded ?? "") + 1]).toMatch(/F/);
		expect(rows.at(-2)).toBe("            C compaction, F pi-fold commit, * both");
	});
});

describe("pi-fold report on a session recorded with pi-fold", () => {
	it("counts folds, bytes held out, commits by reason, context edits and the store on disk", async () => {
		expect(withPiFold).toMatch(/pi-fold in this session \(active branch\):\n/);
		expect(withPiFold).toMatch(/folds\s+\d+, \d+ shown as briefs now\n/);
		expect(withPiFold).toMatch(/held out\s+\d+(\.\d)? (KB|MB) of source kept out of the window/);
		// Commit reasons and freed tokens as the runtime writes them (one `:commit` line with its summary), in words.
		const commits =
			/commits\s+(\d+) \(each one rewrite of the window\), ~([\d,]+) tokens freed:\n((?: {16}\d+ because .*\n)+)/.exec(
				withPiFold,
			);
		expect(commits, withPiFold).not.toBeNull();
		const reasonLines = (commits?.[3] ?? "").trimEnd().split("\n");
		const phrases = new Set(Object.values(COMMIT_REASON_TEXT));
		for (const line of reasonLines) expect(phrases).toContain(line.replace(/^ +\d+ because /, ""));
		const counted = reasonLines.reduce((total, line) => total + Number(/\d+/.exec(line)?.[0]), 0);
		expect(counted).toBe(Number(commits?.[1]));
		expect(Number(commits?.[2]?.replaceAll(",", ""))).toBeGreaterThan(0);
		expect(withPiFold).toMatch(/context edits\s+[1-9]/);
		expect(withPiFold).toMatch(/store\s+4\.9 KB in 2 files at .*\.pi-fold\n/);
		expect(withPiFold).not.toContain("What pi-fold would have saved");
		expect(withPiFold).toMatch(/\n {12}[ F]*F/);
	});

	it("writes readable sizes", async () => {
		expect([0, 1023, 1024, 5000, 10_240, 1_500_000, 3 * 1024 ** 3].map(readableBytes)).toEqual([
			"0 B",
			"1023 B",
			"1.0 KB",
			"4.9 KB",
			"10 KB",
			"1.4 MB",
			"3.0 GB",
		]);
		expect(cardForModelKey("nobody/nothing").fallback).toBe(true);
	});
});

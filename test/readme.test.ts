/**
 * The README stays true to the code: its generated sections (the real-host
 * and report figures from bench/results, the settings reference from the option table,
 * the command list) equal what `npm run readme` writes now, and every
 * command the package registers and every tool action is documented.
 */

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { HOST_REPLAY_RESULTS, hostReplayFigures } from "../scripts/host-replay-figures.ts";
import { benchmarkDocSections, readmeSections, withSections } from "../scripts/readme-sections.ts";
import { REPORT_RESULTS, reportFigures } from "../scripts/report-figures.ts";
import { STARTUP_RESULTS, startupFigures } from "../scripts/startup-figures.ts";
import { TOOL_ACTIONS } from "../src/fold/options.ts";
import { CONTEXT_SUBCOMMANDS } from "../src/fold/pi/commands.ts";
import { registerPiFold } from "../src/index.ts";

const ROOT = join(import.meta.dirname, "..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");

/** What registerPiFold registers with Pi, recorded by a stand-in that accepts every other call. */
function registered(): { commands: string[]; tools: string[] } {
	const commands: string[] = [];
	const tools: string[] = [];
	const ignore = () => undefined;
	const pi = new Proxy(
		{},
		{
			get: (_target, name) => {
				if (name === "registerCommand") return (command: string) => commands.push(command);
				if (name === "registerTool") return (tool: { name: string }) => tools.push(tool.name);
				if (name === "events") return { on: () => ignore, emit: ignore };
				return ignore;
			},
		},
	) as ExtensionAPI;
	registerPiFold(pi);
	return { commands, tools };
}

describe("README", () => {
	it("has every generated section as npm run readme writes it (figures, settings reference, commands)", () => {
		const fresh = withSections(README, readmeSections(ROOT));
		// On failure: run `npm run readme` (after `npm run bench -- report` when the figures moved) and commit.
		expect(README).toBe(fresh);
	});

	it("has docs/benchmarks.md's host-replay targets and cost ratios as the results file states them", () => {
		const docs = readFileSync(join(ROOT, "docs/benchmarks.md"), "utf8");
		// On failure: run `npm run readme` (or `npm run figures` to rerun the benchmark first) and commit.
		expect(docs).toBe(withSections(docs, benchmarkDocSections(ROOT), "docs/benchmarks.md"));
		expect(docs).toMatch(/#### Targets \(held-out real sessions: defaults against native\)\n\n- (PASS|FAIL) /);
	});

	it("quotes, for each bundled real log, the figures pi-fold report prints, as the results file holds them", () => {
		const figures = reportFigures(readFileSync(join(ROOT, REPORT_RESULTS), "utf8"));
		expect(figures.map((item) => item.log)).toEqual(["pi-mono-before-compaction", "pi-mono-large-session"]);
		const section = README.slice(
			README.indexOf("<!-- generated:figures -->"),
			README.indexOf("<!-- /generated:figures -->"),
		);
		for (const item of figures) {
			expect(item.foldCost).toMatch(/^\$\d+\.\d{4}$/);
			expect(section).toContain(
				`| \`${item.log}\` | ${item.aloneCost} → **${item.foldCost}** | ${item.alonePeak} → **${item.foldPeak}** |`,
			);
		}
		// Every dollar figure and token count of the section is one of those.
		const quoted = new Set(figures.flatMap((item) => [item.aloneCost, item.foldCost, item.alonePeak, item.foldPeak]));
		for (const number of section.matchAll(/\$?\d[\d,.]*\d/g)) expect(quoted).toContain(number[0]);
	});

	it("refuses a report results file without the table the figures need, naming the command", () => {
		expect(() => reportFigures("# Benchmark: report\n")).toThrow(
			/report\.md: no table under "### What `pi-fold report` says pi-fold would have saved".*npm run bench -- report/,
		);
	});

	it("says what a start costs with the bundle and the sources as the start-up results hold it", () => {
		const figures = startupFigures(readFileSync(join(ROOT, STARTUP_RESULTS), "utf8"));
		const section = README.slice(
			README.indexOf("<!-- generated:startup -->"),
			README.indexOf("<!-- /generated:startup -->"),
		);
		expect(section).toContain(
			`pi-fold adds **${figures.bundleAdds} s** from its bundle and **${figures.sourcesAdds} s** from its sources`,
		);
		expect(() => startupFigures("# Benchmark: startup\n")).toThrow(
			/startup\.md: no table under .*npm run bench -- startup/,
		);
	});

	it("leads with the real-host replay's figures: charged and raw over native per set and window, hidden replies, compactions", () => {
		const results = readFileSync(join(ROOT, HOST_REPLAY_RESULTS), "utf8");
		const figures = hostReplayFigures(results);
		expect(figures.map((item) => `${item.set} ${item.window}`).sort()).toEqual(
			["held-out 128,000", "held-out 200,000", "tuned 128,000", "tuned 200,000"].sort(),
		);
		const headline = README.slice(0, README.indexOf("## First success"));
		const share = (part: { replies: number; absent: number }) => `${((100 * part.absent) / part.replies).toFixed(1)}%`;
		for (const item of figures) {
			for (const figure of [item.charged, item.raw]) {
				expect(Number.parseFloat(figure.low)).toBeLessThanOrEqual(Number.parseFloat(figure.median));
				expect(Number.parseFloat(figure.median)).toBeLessThanOrEqual(Number.parseFloat(figure.high));
			}
			expect(item.hidden.defaults.replies).toBeGreaterThan(0);
			expect(headline).toContain(
				`| ${item.window} tokens | ${item.set}, ${item.sessions} real sessions | **${item.charged.median}** (${item.charged.low}–${item.charged.high}) | ${item.raw.median} (${item.raw.low}–${item.raw.high}) | ${share(item.hidden.native)} → **${share(item.hidden.defaults)}** | ${item.compactions.native} → **${item.compactions.defaults}** |`,
			);
		}
	});

	it("refuses a host-replay file that lacks what the figures need, naming what and the command", () => {
		const results = readFileSync(join(ROOT, HOST_REPLAY_RESULTS), "utf8");
		expect(() => hostReplayFigures("# Benchmark: host replay\n")).toThrow(
			/host-replay\.md: no "### <set> set, <window>-token window" cost-ratio tables.*npm run bench -- host-replay/,
		);
		expect(() => hostReplayFigures(results.replaceAll("defaults / native, charged", "pi-fold / native"))).toThrow(
			/no "defaults \/ native, charged" column in the table under "### held-out set, 200,000-token window"/,
		);
		expect(() =>
			hostReplayFigures(results.replace(/^### Out of view: tuned set, 128,000-token window$/m, "### gone")),
		).toThrow(/no "### Out of view: tuned set, 128,000-token window" table/);
		expect(() =>
			hostReplayFigures(
				results.replace(/^\| defaults \| \$[\d.]+ \|.*$/m, "| defaults | failed: boom | | | | | | | | | | | | | | |"),
			),
		).toThrow(
			/the defaults run under "### pi-mono-large-session \(tuned; real Pi log\), 200,000 window" has no compaction count/,
		);
	});

	it("lists every command the package registers, every /context subcommand and every tool action", () => {
		const { commands, tools } = registered();
		expect(commands.length).toBeGreaterThanOrEqual(2);
		for (const command of commands) expect(README).toContain(`\`/${command}`);
		for (const sub of Object.keys(CONTEXT_SUBCOMMANDS)) expect(README).toMatch(new RegExp(`\`/context ${sub}[\` ]`));
		for (const tool of tools) expect(README).toContain(`\`${tool}\``);
		for (const action of TOOL_ACTIONS) expect(README).toMatch(new RegExp(`^\\| [^|]*\`${action}\``, "m"));
	});

	it("links only files that exist and the npm package ships", () => {
		const files: string[] = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).files;
		const links = [...README.matchAll(/\]\(((?!https?:)[^)#\s]+)\)/g)].map((match) => match[1] ?? "");
		expect(links.length).toBeGreaterThan(0);
		for (const link of links) expect(existsSync(join(ROOT, link)), `${link} does not exist`).toBe(true);
		for (const link of links)
			expect(
				files.some((entry) => link === entry || link.startsWith(`${entry}/`)),
				`${link} is not in package.json files`,
			).toBe(true);
	});
});

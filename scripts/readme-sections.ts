/**
 * The README's generated sections, each between `<!-- generated:NAME -->`
 * and `<!-- /generated:NAME -->`: the headline figures (read from the
 * real-host replay's bench/results/host-replay.md, host-replay-figures.ts),
 * the figures `pi-fold report` prints for the bundled real logs (read from
 * bench/results/report.md, report-figures.ts), what a Pi start costs with
 * pi-fold's bundle and sources (bench/results/startup.md, startup-figures.ts),
 * the fold store's size against the session file (bench/results/store.md,
 * store-figures.ts), the settings
 * reference (src/settings/reference.ts, over the option table) and the
 * command list (the names and subcommands the package registers). `npm run
 * readme` rewrites them; test/readme.test.ts fails when README.md differs.
 */

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_COMMAND_NAMES } from "../src/fold/options.ts";
import { CONTEXT_SUBCOMMANDS } from "../src/fold/pi/commands.ts";
import { settingsReference } from "../src/settings/reference.ts";
import {
	estimateAgreement,
	HOST_REPLAY_RESULTS,
	hostReplayDate,
	hostReplayFigures,
	hostReplayJudgement,
} from "./host-replay-figures.ts";
import { REPORT_RESULTS, reportFigures } from "./report-figures.ts";
import { STARTUP_RESULTS, startupFigures } from "./startup-figures.ts";
import { STORE_RESULTS, storeFigures } from "./store-figures.ts";

function figuresSection(root: string): string {
	const rows = reportFigures(readFileSync(join(root, REPORT_RESULTS), "utf8")).map(
		(item) =>
			`| \`${item.log}\` | ${item.aloneCost} → **${item.foldCost}** | ${item.alonePeak} → **${item.foldPeak}** |`,
	);
	return [
		"| real log | modelled cost, Pi alone → with pi-fold | largest request (tokens) |",
		"| --- | --- | --- |",
		...rows,
		"",
		`*Generated from [\`${REPORT_RESULTS}\`](${REPORT_RESULTS}) (\`npm run bench -- report\`): what \`pi-fold report <log>\` prints for each log under "What pi-fold would have saved". Both columns are modelled the same way, so they differ only in what was sent; they are not what the session was billed (the report prints Pi's ledger too).*`,
	].join("\n");
}

/** What pi-fold adds to a Pi start from its bundle and from its sources. */
function startupSection(root: string): string {
	const item = startupFigures(readFileSync(join(root, STARTUP_RESULTS), "utf8"));
	return [
		`What a start costs (\`pi -p hi\` on a new session, until the first request): Pi alone ${item.alone} s; pi-fold adds **${item.bundleAdds} s** from its bundle and **${item.sourcesAdds} s** from its sources, of which the content check is ${item.checkMs} ms.`,
		"",
		`*Generated from [\`${STARTUP_RESULTS}\`](${STARTUP_RESULTS}) (\`npm run bench -- startup\`: medians of ${item.runs} runs per arm, the arms in turn; the machine's load average was ${item.load} at the start of the run, so read the differences, not the absolute times).*`,
	].join("\n");
}

/** The fold store's size against the session file at the store benchmark's two scales, and issue 28's targets; `link` is the results file as the page links it. */
function storeSection(root: string, link = STORE_RESULTS): string {
	const item = storeFigures(readFileSync(join(root, STORE_RESULTS), "utf8"));
	return [
		"| stage workload | entries | session file | fold store | store ÷ session | `pi-fold verify` |",
		"| ---: | ---: | ---: | ---: | ---: | --- |",
		...item.scales.map(
			(scale) =>
				`| ${scale.stages} stages | ${scale.entries} | ${scale.session} | ${scale.store} | **${scale.ratio}** | ${scale.verify} |`,
		),
		"",
		...item.targets.map((line) => `- ${line}`),
		"",
		`*Generated from [\`${STORE_RESULTS}\`](${link}) (run of ${item.date}; \`npm run bench -- store --preset full\`, then \`npm run readme\`): real Pi 1.6.0, the agent benchmark's staged workload (24–48 KB tool results) at a 64k window, pi-fold's defaults, Pi's compaction on. Before part lists the same workload kept a store 20.2× its session file at ~3,000 entries (issue 28).*`,
	].join("\n");
}

/** "12 of 431" as a share. */
function share(part: { replies: number; absent: number }): string {
	return part.replies === 0 ? "—" : `${((100 * part.absent) / part.replies).toFixed(1)}%`;
}

/** pi-fold's defaults against Pi alone in real Pi, per set and window: charged for what was hidden, raw beside. */
function headlineSection(root: string): string {
	const markdown = readFileSync(join(root, HOST_REPLAY_RESULTS), "utf8");
	const rows = hostReplayFigures(markdown).map(
		(item) =>
			`| ${item.window} tokens | ${item.set}, ${item.sessions} real sessions | **${item.charged.median}** (${item.charged.low}–${item.charged.high}) | ${item.raw.median} (${item.raw.low}–${item.raw.high}) | ${share(item.hidden.native)} → **${share(item.hidden.defaults)}** | ${item.compactions.native} → **${item.compactions.defaults}** |`,
	);
	const date = hostReplayDate(markdown);
	return [
		"| model window | sessions | pi-fold's cost over Pi alone's, charged for what each hid: median (range) | as billed, nothing charged | replies that referred to something their request did not show: Pi alone → pi-fold | compactions: Pi alone → pi-fold |",
		"| --- | --- | --- | --- | --- | --- |",
		...rows,
		"",
		`*Generated from [\`${HOST_REPLAY_RESULTS}\`](${HOST_REPLAY_RESULTS})${date ? ` (run of ${date})` : ""}, \`npm run bench -- host-replay\` (\`npm run figures\` reruns it and rewrites this table; docs/benchmarks.md says how): real Pi 1.6.0, offline, replays each recorded session message for message with pi-fold's defaults and without it. A replay answers every request with the recorded reply, so it never pays for what a window hid: the charged figure adds, for both arms alike, a search and a peek (a further request re-sending the prompt) per hidden source a reply referred to. Below 1× pi-fold cost less. The held-out sessions were not used to tune pi-fold; the tuned ones were. Costs are the benchmark's model (tokens from prompt characters, one prefix-cache model, the session model's catalog prices), not a provider's bill; the method is in the same file.*`,
	].join("\n");
}

/** The report's estimate against real Pi, in words, for the report section's paragraph. */
function estimateSection(root: string): string {
	const agreement = estimateAgreement(readFileSync(join(root, HOST_REPLAY_RESULTS), "utf8"));
	const { worst } = agreement;
	return `  within 0.05 of the host's ratio, raw and charged, on ${agreement.within} of the ${agreement.total} real sessions and windows of its latest run (the largest gap ${worst.gap.toFixed(3)}, ${worst.session} at ${worst.window}).`;
}

function commandsSection(): string {
	const status = DEFAULT_COMMAND_NAMES.status;
	return [
		"| command | what it does |",
		"| --- | --- |",
		`| \`/${status}\` | the model's window, folds, pending marks and the store |`,
		...Object.entries(CONTEXT_SUBCOMMANDS).map(([name, text]) => {
			// "a fold's brief and its exact source: peek <fold id>": the usage after the colon names the arguments.
			const usage = new RegExp(`^(.*): ${name} (.+)$`).exec(text);
			const command = usage ? `${name} ${usage[2]}` : name;
			return `| \`/${status} ${command}\` | ${usage?.[1] ?? text} |`;
		}),
		`| \`/${DEFAULT_COMMAND_NAMES.fold} [first id] [last id]\` | fold a named span, or the oldest closed chapter |`,
	].join("\n");
}

/** docs/benchmarks.md's generated sections: the real-host replay's targets and cost ratios and the store's size, from their results files. */
export function benchmarkDocSections(root: string): Record<string, string> {
	const markdown = readFileSync(join(root, HOST_REPLAY_RESULTS), "utf8");
	const date = hostReplayDate(markdown);
	return {
		store: storeSection(root, `../${STORE_RESULTS}`),
		"host-replay-judgement": [
			`*Generated from [\`${HOST_REPLAY_RESULTS}\`](../${HOST_REPLAY_RESULTS})${date ? ` (run of ${date})` : ""} by \`npm run readme\`; \`npm run figures\` reruns the benchmarks and rewrites it.*`,
			"",
			hostReplayJudgement(markdown),
		].join("\n"),
	};
}

/** Every generated section by name. */
export function readmeSections(root: string): Record<string, string> {
	return {
		headline: headlineSection(root),
		figures: figuresSection(root),
		startup: startupSection(root),
		estimate: estimateSection(root),
		store: storeSection(root),
		settings: settingsReference(),
		commands: commandsSection(),
	};
}

/** `readme` with each generated section replaced; throws naming a section whose markers are missing. */
export function withSections(readme: string, sections: Record<string, string>, file = "README.md"): string {
	let text = readme;
	for (const [name, body] of Object.entries(sections)) {
		const open = `<!-- generated:${name} -->`;
		const close = `<!-- /generated:${name} -->`;
		const start = text.indexOf(open);
		const end = text.indexOf(close);
		if (start === -1 || end < start) throw new Error(`${file} has no ${open} … ${close} markers`);
		text = `${text.slice(0, start + open.length)}\n${body}\n${text.slice(end)}`;
	}
	return text;
}

/**
 * What the person sees in real Pi 1.6.0 (SDK harness, faux model, captured
 * UI): the footer status after a fold, `/context` right after
 * `/fold-context` reporting the folded window, `/context peek`, `tree`,
 * `window`, an unknown subcommand, argument completions, the over-budget
 * warning, and a compacted-away fold shown as such.
 */

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { shortTokens } from "../../src/fold/pi/context-report.ts";
import { FOOTER_STATUS_KEY } from "../../src/fold/pi/footer.ts";
import type { FoldRuntime } from "../../src/fold/pi/runtime.ts";
import { PI_DEFAULT_RESERVE_TOKENS } from "../../src/fold/policy/budget.ts";
import { registerRuntime } from "../../src/register.ts";
import { terminalControls } from "../fixtures/common.ts";
import {
	callTools,
	createSdkHarness,
	FAUX_CONTEXT_WINDOW,
	type HarnessSettings,
	reply,
	type SdkHarness,
	toolCall,
} from "../harness/sdk.ts";

/** The footer's budget: Pi's compaction line, the faux model's window less Pi's default reserve. */
const BUDGET = shortTokens(FAUX_CONTEXT_WINDOW - PI_DEFAULT_RESERVE_TOKENS);

const SECRET = "ECHO-CONTENT-7f3a";
/** Pages of a 27-entry fold's source in a plain-text peek. */

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function uiHarness(
	contextWindow?: number,
	settings?: HarnessSettings,
	observer?: (pi: ExtensionAPI) => void,
): Promise<{ harness: SdkHarness; runtime: () => FoldRuntime }> {
	let runtime: FoldRuntime | undefined;
	const harness = await createSdkHarness({
		extensions: [
			(pi: ExtensionAPI) => {
				runtime = registerRuntime(pi);
			},
			...(observer ? [observer] : []),
		],
		tools: ["read", "active_context"],
		persist: true,
		...(contextWindow ? { contextWindow } : {}),
		...(settings ? { settings } : {}),
	});
	cleanups.push(() => harness.dispose());
	writeFileSync(join(harness.cwd, "e.txt"), `${SECRET}\n${"filler line for the window\n".repeat(400)}`);
	return {
		harness,
		runtime: () => {
			if (!runtime) throw new Error("runtime not loaded");
			return runtime;
		},
	};
}

async function twoExchanges(harness: SdkHarness): Promise<void> {
	harness.enqueue(callTools([toolCall("read", { path: "e.txt" }, "call_read")]), reply("Read e.txt."));
	await harness.run("Read e.txt.");
	harness.enqueue(reply("You're welcome."));
	await harness.run("Thanks.");
}

const commandNamed = (harness: SdkHarness, name: string) =>
	harness.session.extensionRunner.getRegisteredCommands().find((command) => command.name === name);

describe("pi-fold in Pi's UI", () => {
	it("/context right after /fold-context reports the folded window; the footer and peek agree", async () => {
		const { harness } = await uiHarness();
		await twoExchanges(harness);
		const before = await harness.run("/context");
		const tokensBefore = Number(/next request: ~([\d,]+) tokens/.exec(before[0] ?? "")?.[1]?.replace(/,/g, ""));
		expect(harness.ui.statuses.get(FOOTER_STATUS_KEY)).toMatch(new RegExp(`^pi-fold \\d+% of ${BUDGET}$`));

		const folded = await harness.run("/fold-context");
		expect(folded[0]).toMatch(/Folded chapter f-[0-9a-f]{12}/);
		expect(folded[0]).toMatch(
			/Window for the next request: ~[\d,]+ tokens, [\d.]+% of the budget; 1 collapsed fold holds/,
		);
		const id = /f-[0-9a-f]{12}/.exec(folded[0] ?? "")?.[0] ?? "";
		expect(harness.ui.statuses.get(FOOTER_STATUS_KEY)).toMatch(
			new RegExp(`^pi-fold \\d+% of ${BUDGET} · 1 fold \\([\\d.]+ KB out\\)$`),
		);

		const [report = ""] = await harness.run("/context");
		const tokensAfter = Number(/next request: ~([\d,]+) tokens/.exec(report)?.[1]?.replace(/,/g, ""));
		expect(tokensAfter).toBeLessThan(tokensBefore / 2);
		expect(report).toMatch(/Folds: 1 \(1 collapsed, holding [\d.]+ KB out of the window/);
		expect(report).toMatch(/pending edits? lands? with the next request/);
		expect(report).toContain(`${id}  chapter, collapsed`);
		expect(report).toMatch(/\n {4}“.+”/); // the brief, under its fold
		expect(report).toContain("/context peek <fold id>");
		expect(report).not.toContain('{"action"');
		expect(harness.requests).toHaveLength(3);

		const [peek = ""] = await harness.run(`/context peek ${id}`);
		expect(peek).toMatch(new RegExp(`^Fold ${id}: chapter, collapsed`));
		expect(peek).toContain("Brief:");
		expect(peek).toMatch(/Source \(sha256 [0-9a-f]{12}… verified\):/);
		expect(peek).toContain(SECRET);
		expect(peek).toMatch(/read result:$/m);

		const [tree = ""] = await harness.run("/context tree");
		expect(tree).toMatch(/^Fold tree, in transcript order$/m);
		const [window = ""] = await harness.run("/context window");
		expect(window).toContain(`${id} folded chapter`);
		expect(harness.requests).toHaveLength(3);
	});

	it("lets no terminal escape from tool output or a mistyped subcommand through /context, peek or /fold-context", async () => {
		const { harness } = await uiHarness();
		const hostile = "\u001b]0;pwned\u0007\u001b[2J\u009b31m";
		writeFileSync(join(harness.cwd, "e.txt"), `${SECRET} ${hostile}\n${"filler line for the window\n".repeat(400)}`);
		await twoExchanges(harness);
		const shown = [...(await harness.run("/fold-context"))];
		const id = /f-[0-9a-f]{12}/.exec(shown[0] ?? "")?.[0] ?? "";
		for (const command of [
			"/context",
			`/context peek ${id}`,
			"/context tree",
			"/context window",
			`/context x${hostile}`,
		]) {
			shown.push(...(await harness.run(command)));
		}
		const peek = shown.find((text) => text.startsWith(`Fold ${id}`)) ?? "";
		expect(peek).toContain(`${SECRET}  ]0;pwned`);
		expect(terminalControls(shown.join("\n"))).toEqual([]);
	});

	it("names an unknown subcommand and an unknown peek id, and completes subcommands and fold ids", async () => {
		const { harness } = await uiHarness();
		await twoExchanges(harness);
		const [unknown = ""] = await harness.run("/context foo");
		expect(unknown).toMatch(/^Unknown \/context subcommand "foo"; try tree, window, peek, search, settings, help\./);
		const [noSuch = ""] = await harness.run("/context peek f-000000000000");
		expect(noSuch).toMatch(/No fold or entry "f-000000000000" on this branch\. There are no folds yet\./);
		expect(harness.ui.notifications.at(-1)?.level).toBe("warning");

		const folded = await harness.run("/fold-context");
		const id = /f-[0-9a-f]{12}/.exec(folded[0] ?? "")?.[0] ?? "";
		const complete = commandNamed(harness, "context")?.getArgumentCompletions;
		expect(await complete?.("")).toEqual(
			expect.arrayContaining([expect.objectContaining({ value: "tree" }), expect.objectContaining({ value: "peek " })]),
		);
		expect(await complete?.("wi")).toEqual([expect.objectContaining({ value: "window" })]);
		expect(await complete?.("peek ")).toEqual([expect.objectContaining({ value: `peek ${id}`, label: id })]);
		expect(await complete?.("peek f-zz")).toBeNull();
	});

	it("refreshes the footer at each turn boundary, before the run settles", async () => {
		// What the footer shows when each turn starts: the second starts right after the first one's boundary.
		const atTurnStart: (string | undefined)[] = [];
		const ui: { statuses?: Map<string, string> } = {};
		const { harness } = await uiHarness(undefined, undefined, (pi) => {
			pi.on("turn_start", () => {
				atTurnStart.push(ui.statuses?.get(FOOTER_STATUS_KEY));
			});
		});
		ui.statuses = harness.ui.statuses;
		harness.enqueue(callTools([toolCall("read", { path: "e.txt" }, "call_read")]), reply("Read."));
		await harness.run("Read e.txt.");
		expect(atTurnStart).toHaveLength(2);
		const [before, afterRead] = atTurnStart;
		expect(afterRead).toMatch(new RegExp(`^pi-fold \\d+% of ${BUDGET}$`));
		const percent = (line: string | undefined) => Number(/(\d+)%/.exec(line ?? "")?.[1]);
		// The read's result (about 2,700 tokens) is counted at the boundary, not only once the run settles.
		expect(percent(afterRead)).toBeGreaterThan(percent(before));
	});

	it("warns above 100% of the budget, in the report and the footer", async () => {
		// A small model window: the read of e.txt alone does not fit.
		const { harness } = await uiHarness(2_000);
		harness.enqueue(callTools([toolCall("read", { path: "e.txt" }, "call_read")]), reply("Read."));
		await harness.run("Read e.txt.").catch(() => undefined);
		const [report = ""] = await harness.run("/context");
		expect(report).toMatch(/Warning: the next request is over the budget \(\d+\.\d%\)/);
		expect(harness.ui.statuses.get(FOOTER_STATUS_KEY)).toMatch(/^pi-fold ⚠ \d+% of /);
	});

	it("pages /context peek with every entry whole, naming the next page's command, and says when a pending mark lands", async () => {
		const { harness } = await uiHarness();
		const calls = Array.from({ length: 24 }, (_, at) => toolCall("read", { path: "e.txt" }, `call_${at}`));
		harness.enqueue(callTools(calls), reply("LAST-REPLY-OF-THE-CHAPTER"));
		await harness.run("Read e.txt many times.");
		harness.enqueue(reply("You're welcome."));
		await harness.run("Thanks.");
		const folded = await harness.run("/fold-context");
		const id = /f-[0-9a-f]{12}/.exec(folded[0] ?? "")?.[0] ?? "";
		// user, the calls, 24 results of ~10.8 KB, the reply: 27 entries, every one whole, a few KB a page.
		const [first = ""] = await harness.run(`/context peek ${id}`);
		const pages = Number(/^Page 1 of (\d+) \(entries 1–\d+ of 27\)\. Next: \/context peek \S+ 2$/m.exec(first)?.[1]);
		expect(pages, first).toBeGreaterThan(20);
		const shown = [first];
		for (let page = 2; page <= pages; page++) shown.push((await harness.run(`/context peek ${id} ${page}`))[0] ?? "");
		// Every line of every read is shown, once: 24 reads of 400 filler lines, nothing clipped.
		const filler = shown.join("\n").match(/^ {4}.*filler line for the window$/gm) ?? [];
		expect(filler).toHaveLength(24 * 400);
		expect(shown[0]).not.toContain("assistant: LAST-REPLY-OF-THE-CHAPTER");
		expect(shown.at(-1)).toContain("assistant: LAST-REPLY-OF-THE-CHAPTER");
		expect(shown.at(-1)).toMatch(new RegExp(`Page ${pages} of ${pages} \\(entries \\d+–27 of 27\\)\\. The last page`));
		const [beyond = ""] = await harness.run(`/context peek ${id} ${pages + 1}`);
		expect(beyond).toContain(`"${pages + 1}" is not a page of ${id}: its source has ${pages} pages`);
		expect(harness.ui.notifications.at(-1)?.level).toBe("warning");

		// The agent folds a read that a large read follows: a pending mark, not a fold yet.
		for (const id of ["call_a", "call_b"]) {
			harness.enqueue(callTools([toolCall("read", { path: "e.txt" }, id)]), reply("Read."));
			await harness.run("Read e.txt.");
		}
		const fold = toolCall("active_context", { action: "fold", ids: ["call_a"] }, "call_mark");
		harness.enqueue(callTools([fold]), reply("Marked."));
		await harness.run("Fold the first of those reads.");
		const [report = ""] = await harness.run("/context");
		const mark = /Pending marks: 1 \((f-[0-9a-f]{12})\)/.exec(report)?.[1];
		expect(mark, report).toBeDefined();
		expect(report).toContain("They land together at the next commit: when carrying the stale text");
		const [peekMark = ""] = await harness.run(`/context peek ${mark}`);
		expect(peekMark).toMatch(new RegExp(`^Pending mark ${mark}: a tool-batch of \\d+ entries .*not folded yet`));
		expect(peekMark).toContain("It lands at the next commit, with any other marks: when carrying the stale text");
		expect(peekMark).toMatch(/Source \(sha256 [0-9a-f]{12}… verified\):/);
	});

	it("counts in the footer only the marks that still hold text in the window, through a fold and a compaction", async () => {
		const { harness } = await uiHarness(undefined, { compaction: { enabled: false, keepRecentTokens: 1_500 } });
		for (const id of ["a", "b", "c", "d", "e"]) {
			harness.enqueue(callTools([toolCall("read", { path: "e.txt" }, `call_${id}`)]), reply("Read."));
			await harness.run("Read e.txt.");
		}
		const marks = ["call_a", "call_b"].map((id, at) =>
			toolCall("active_context", { action: "fold", ids: [id] }, `m${at}`),
		);
		harness.enqueue(callTools(marks), reply("Marked."));
		await harness.run("Fold the first two reads.");
		const footer = () => harness.ui.statuses.get(FOOTER_STATUS_KEY) ?? "";
		expect(footer()).toMatch(/ · 2 marks pending$/);

		// The oldest chapter folds by hand: it holds the first mark's entries, so that mark frees nothing now.
		await harness.run("/fold-context");
		expect(footer()).toMatch(/ · 1 mark pending$/);
		const [report = ""] = await harness.run("/context");
		expect(report).toMatch(/Pending marks: 1 \(f-[0-9a-f]{12}\)/);
		expect(report).toMatch(
			/Marks already out of the window: 1 \(f-[0-9a-f]{12}\): a later fold or a compaction took their entries out/,
		);

		// A compaction takes the other's entries out too: nothing is pending for the person.
		await harness.session.compact();
		expect(footer()).not.toMatch(/pending/);
		const [after = ""] = await harness.run("/context");
		expect(after).not.toMatch(/Pending marks:/);
		expect(after).toMatch(/Marks already out of the window: 2 /);
	});

	it("shows a fold a compaction removed as removed, not collapsed", async () => {
		// A tiny keep-recent budget gives a short session something to compact.
		const { harness } = await uiHarness(undefined, { compaction: { enabled: false, keepRecentTokens: 1_500 } });
		await twoExchanges(harness);
		const folded = await harness.run("/fold-context");
		const id = /f-[0-9a-f]{12}/.exec(folded[0] ?? "")?.[0] ?? "";
		for (let turn = 1; turn <= 3; turn++) {
			writeFileSync(join(harness.cwd, `part-${turn}.md`), `Part ${turn} of the design.\n`.repeat(200));
			harness.enqueue(callTools([toolCall("read", { path: `part-${turn}.md` }, `call_${turn}`)]), reply("Read."));
			await harness.run(`Read part-${turn}.md.`);
		}
		await harness.session.compact();
		const [report = ""] = await harness.run("/context");
		expect(report).toContain(`${id}  chapter, removed by a compaction`);
		expect(report).toMatch(/Folds: 1 \(0 collapsed, .*1 removed by a compaction\)/);
	});
});

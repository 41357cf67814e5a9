import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { expandFold, foldSpan, unmarkFold } from "../../../src/fold/actions/actions.ts";
import type { FoldDetail, StatusDetails } from "../../../src/fold/engine/status-facts.ts";
import type { ActionOutcome } from "../../../src/fold/engine/workspace.ts";
import { contextCompletions, parseContextArgs } from "../../../src/fold/pi/commands.ts";
import {
	budgetSource,
	compactedFolds,
	formatContextReport,
	formatFooter,
	readableBytes,
	shortTokens,
} from "../../../src/fold/pi/context-report.ts";
import { personText } from "../../../src/fold/pi/person-text.ts";
import type { ToolDetails } from "../../../src/fold/pi/render-tool.ts";
import { callLine, RESULT_LINE_CHARS, resultView } from "../../../src/fold/pi/render-tool.ts";
import { servingBudget } from "../../../src/fold/policy/budget.ts";
import { FoldBranch } from "../../fixtures/fold.ts";
import { foldWorkspace } from "../../fixtures/workspace.ts";

describe("human formatting", () => {
	it("sizes and the footer", () => {
		expect([readableBytes(512), readableBytes(46_182), readableBytes(2_400_000)]).toEqual([
			"512 B",
			"45.1 KB",
			"2.3 MB",
		]);
		expect([shortTokens(950), shortTokens(1_234), shortTokens(128_000), shortTokens(1_200_000)]).toEqual([
			"950",
			"1.2k",
			"128k",
			"1.2M",
		]);
		const held = { collapsed: 3, sourceBytes: 215_000, briefBytes: 900 };
		expect(formatFooter({ tokens: 52_000, budget: 128_000 }, held, 2)).toBe(
			"pi-fold 41% of 128k · 3 folds (210.0 KB out) · 2 marks pending",
		);
		expect(formatFooter({ tokens: 180_000, budget: 128_000 }, { ...held, collapsed: 0 }, 0)).toBe(
			"pi-fold ⚠ 141% of 128k",
		);
		expect(formatFooter({ tokens: 1_500, budget: undefined }, { ...held, collapsed: 0 }, 0)).toBe("pi-fold ~1.5k tok");
	});

	it("a fold before the latest compaction's first kept entry is compacted away", () => {
		const branch = ["a", "b", "c", "d"].map((id) => ({ id, type: "message" }) as unknown as SessionEntry);
		branch.push({ id: "k", type: "compaction", firstKeptEntryId: "c" } as unknown as SessionEntry);
		const fold = (id: string, range: [number, number]) => ({ id, range }) as FoldDetail;
		expect([...compactedFolds(branch, [fold("f-1", [0, 2]), fold("f-2", [1, 3])])]).toEqual(["f-1"]);
		expect([...compactedFolds(branch.slice(0, 4), [fold("f-1", [0, 2])])]).toEqual([]);
	});

	it("one line per tool call and result; a peek's source only when expanded", () => {
		expect(callLine({ action: "fold", ids: ["e1", "e2", "e9"] })).toBe("fold e1…e9");
		expect(callLine({ action: "peek", id: "f-1", offset: 4000 })).toBe("peek f-1 from byte 4000");
		expect(callLine({ action: "status", detail: "tree" })).toBe("status tree");
		expect(callLine({})).toBe("…");
		expect(callLine({ action: "search", query: "FACT S12" })).toBe('search "FACT S12"');
		expect(callLine({ action: "peek", id: "f-1", children: true })).toBe("list the folds inside f-1");
		const found = 'Search "FACT S12" (regex): 3 hits (1–2 shown) in 4 folds, sha256-verified; window unchanged.';
		expect(resultView({ action: "search", ok: true } as ToolDetails, found).line).toBe(
			"search: 3 hits, sources sha256 verified",
		);
		const literal = 'Search "port: 8080 hits": 1 hit in 4 folds, sha256-verified; window unchanged.';
		expect(resultView({ action: "search", ok: true } as ToolDetails, literal).line).toBe(
			"search: 1 hit, sources sha256 verified",
		);
		const entry = { id: "e1", type: "message", message: { role: "user", content: "hello there" } };
		const text = `Fold f-1 (chapter), source sha256 ${"a".repeat(64)} verified.\nBytes 0–2048 of 4096, one canonical JSON session entry per line.\n\n${JSON.stringify(entry)}\n{"cut`;
		const details = { action: "peek", ok: true, foldId: "f-1" } as ToolDetails;
		expect(resultView(details, text)).toEqual({
			line: "read fold f-1: 2.0 KB of 4.0 KB, sha256 verified",
			level: "success",
			body: ["e1 user: hello there", "… (cut at the end of this slice)"],
		});
		const refused = resultView({ action: "fold", ok: false, code: "fresh-tail" } as ToolDetails, "Too new. Try later.");
		expect(refused).toEqual({ line: "fresh-tail: Too new. Try later.", level: "error", body: [] });
	});

	it("a result row reads past its first colon, sizes readable, as whole sentences; expanded, the whole text once", () => {
		const marked =
			"Marked tool-batch f-000000000007 (2 entries, 13782 bytes): it folds at the next commit, together with every other pending mark; the window is unchanged until then. " +
			'Withdraw it with active_context {"action":"unmark","id":"f-000000000007"}.';
		const view = resultView({ action: "fold", ok: true } as ToolDetails, marked);
		expect(view.line).toBe(
			"Marked tool-batch f-000000000007 (2 entries, 13.5 KB): it folds at the next commit, together with every other pending mark; the window is unchanged until then.",
		);
		// A first sentence longer than a row ends at its last clause that fits.
		const longer = resultView(
			{ action: "fold", ok: true } as ToolDetails,
			marked.replace("until then", "until the runtime commits at a turn boundary"),
		);
		expect(longer.line).toBe(
			"Marked tool-batch f-000000000007 (2 entries, 13.5 KB): it folds at the next commit, together with every other pending mark.",
		);
		expect(view.expandedLine).toBe(personText(marked));
		expect(view.body).toEqual([]);

		const reason =
			"Span is exactly fold f-000000000003 (tool-batch); nothing new to fold. Use rebrief to change its brief, or name a wider span.";
		const error = resultView(
			{ action: "fold", ok: false, code: "already-folded" } as ToolDetails,
			`Error (already-folded): ${reason} Nothing changed.`,
		);
		expect(error.level).toBe("error");
		expect(error.line).toBe(`already-folded: ${reason} Nothing changed.`);
		expect(error.expandedLine).toBeUndefined();
		expect(error.line).not.toContain("Error (");

		const folded = resultView(
			{ action: "fold", ok: true } as ToolDetails,
			`Folded chapter f-1: entries a…b (4 entries, 2523 bytes) now show a 273-byte brief. Source sha256 ${"4a".repeat(32)} is stored.`,
		);
		expect(folded.line).toBe(
			"Folded chapter f-1: entries a…b (4 entries, 2.5 KB) now show a 273 B brief. Source sha256 4a4a4a4a4a4a… is stored.",
		);

		const short = resultView({ action: "protect", ok: true } as ToolDetails, "Protected e3…e5 (3 entries).");
		expect(short).toEqual({ line: "Protected e3…e5 (3 entries).", level: "success", body: [] });
	});

	it("every row the fold actions produce reads as complete sentences that fit, and expands to its text without repeating it", async () => {
		const b = new FoldBranch();
		b.user("go");
		b.tool({ id: "old", name: "bash", args: { command: "ls -la" } }, "o".repeat(16_000));
		b.tool({ id: "mid", name: "read", args: { path: "src/index.ts" } }, "m".repeat(9_000));
		b.assistant("done with the first part");
		b.user("next");
		b.tool({ id: "next", name: "bash" }, "n".repeat(12_000));
		b.tool({ id: "tail", name: "bash" }, "t".repeat(400));
		const epoch = foldWorkspace(b.entries, { options: { foldScheduling: "epoch" } });
		const immediate = foldWorkspace(b.entries);
		const outcomes = [await foldSpan(epoch.ws(), ["old"]), await foldSpan(epoch.ws(), ["old", "mid"])];
		epoch.apply(outcomes[0] as ActionOutcome);
		outcomes.push(await foldSpan(epoch.ws(), ["old"]), unmarkFold(epoch.ws(), outcomes[0]?.foldId ?? ""));
		const batch = await foldSpan(immediate.ws(), ["old"]);
		immediate.apply(batch);
		const second = await foldSpan(immediate.ws(), ["mid"]);
		immediate.apply(second);
		const joined = await foldSpan(immediate.ws(), [batch.foldId ?? "", second.foldId ?? ""]);
		outcomes.push(batch, second, joined, await foldSpan(immediate.ws(), [batch.foldId ?? ""]));
		immediate.apply(joined);
		const expanded = await expandFold(immediate.ws(), joined.foldId ?? "");
		outcomes.push(expanded, await foldSpan(immediate.ws(), ["nope"]));
		expect(outcomes.length).toBeGreaterThanOrEqual(9);
		for (const outcome of outcomes) {
			const details = {
				action: "fold",
				ok: outcome.ok,
				...(outcome.code ? { code: outcome.code } : {}),
			} as ToolDetails;
			const text = outcome.ok ? outcome.text : `Error (${outcome.code}): ${outcome.text} Nothing changed.`;
			const view = resultView(details, text);
			expect(view.line.length, view.line).toBeLessThanOrEqual(RESULT_LINE_CHARS);
			expect(view.line, view.line).toMatch(/[.!?)]$/);
			const shown = [view.expandedLine ?? view.line, ...view.body].join("\n");
			const prefix = outcome.ok ? "" : `${outcome.code}: `;
			expect(shown).toBe(`${prefix}${personText(text.replace(/^Error \([^)]*\):\s*/, "")).trim()}`);
		}
	});

	it("/context tells folds apart by their briefs' first lines, without repeating kind and id", () => {
		const status = {
			budget: { providerTotalWindow: undefined, outputReservation: 0, servingBudget: 100_000, occupancy: 0.1 },
			counts: { folds: 2, collapsed: 2, expanded: 0, hidden: 0, protectedEntries: 0 },
			pendingEdits: 0,
			automatic: { scheduling: { mode: "epoch", pendingMarks: [] }, commits: 1 },
			store: { kind: "memory", location: "memory" },
			instrument: { requests: 1, appends: 1, identical: 0, rewrites: 0, unattributed: 0 },
			skippedStateEntries: 0,
			folds: ["f-000000000001", "f-000000000002"].map((id, i) => ({
				id,
				kind: "tool-batch",
				state: "collapsed",
				depth: 0,
				firstEntryId: `e${2 * i + 1}`,
				lastEntryId: `e${2 * i + 2}`,
				entryCount: 2,
				sourceBytes: 40_000,
				briefBytes: 300,
				range: [2 * i, 2 * i + 2],
			})),
		} as unknown as StatusDetails;
		const briefs = new Map([
			["f-000000000001", 'Tool batch f-000000000001: repo_stage {"stage":1} → 39.1 KB: stage 1 notes\nmore'],
			["f-000000000002", 'Tool batch f-000000000002: repo_stage {"stage":2} → 39.1 KB: stage 2 notes'],
		]);
		const report = formatContextReport({
			sessionId: "s",
			branchEntries: 4,
			status,
			next: { tokens: 1_000, budget: 100_000 },
			hostTokens: null,
			briefs,
			compacted: new Set(),
			commands: { status: "context", fold: "fold-context" },
			tree: false,
		});
		expect(report).toContain('  “repo_stage {"stage":1} → 39.1 KB: stage 1 notes”');
		expect(report).toContain('  “repo_stage {"stage":2} → 39.1 KB: stage 2 notes”');
	});

	it("/context says what the budget is measured from, with figures that make the budget", () => {
		const facts = (descriptor: number, providerTotalWindow?: number) => {
			const budget = { tokens: 0, descriptor, providerTotalWindow, outputReservation: 4_096, reserveTokens: 16_384 };
			return { ...budget, servingBudget: servingBudget(budget), occupancy: 0 };
		};
		// 128,000 less 16,384 = 111,616 (Pi's line), not less the 4,096 output reservation.
		expect(facts(128_000).servingBudget).toBe(111_616);
		expect(budgetSource(facts(128_000))).toBe(
			"the model's window less Pi's reserve of 16,384 for the answer and compaction, where Pi compacts",
		);
		// A provider total below Pi's line decides: 50,000 less 4,096 = 45,904.
		expect(facts(64_000, 50_000).servingBudget).toBe(45_904);
		expect(budgetSource(facts(64_000, 50_000))).toBe("provider total 50,000 less 4,096 for output");
		// A larger provider total leaves Pi's line in force.
		expect(budgetSource(facts(64_000, 200_000))).toMatch(/^the model's window less Pi's reserve of 16,384/);
		expect(budgetSource(facts(8_000))).toBe("the model's whole window: it is no larger than Pi's reserve of 16,384");
	});

	it("/context arguments: subcommands, unknown names, completions", () => {
		expect(parseContextArgs(" peek  f-1 ")).toEqual({ sub: "peek", rest: "f-1" });
		expect(parseContextArgs("foo")).toEqual({ sub: { unknown: "foo" }, rest: "" });
		expect(parseContextArgs("")).toEqual({ sub: "", rest: "" });
		const folds = [
			{ id: "f-aaa", brief: "Chapter one\nmore" },
			{ id: "f-abb", brief: "Chapter two" },
		];
		expect(contextCompletions("t", folds)?.map((item) => item.value)).toEqual(["tree"]);
		expect(contextCompletions("peek f-a", folds)).toEqual([
			{ value: "peek f-abb", label: "f-abb", description: "Chapter two" },
			{ value: "peek f-aaa", label: "f-aaa", description: "Chapter one" },
		]);
		expect(contextCompletions("tree x", folds)).toBeNull();
	});
});

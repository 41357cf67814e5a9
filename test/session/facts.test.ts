/**
 * The one fact extractor over the two real logs: a fold brief and a
 * compaction summary of the same span list the same files, and the brief
 * examples read well (pinned).
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { compileSummary } from "../../src/compaction/summary/compile.ts";
import { deterministicBrief } from "../../src/fold/briefs/brief.ts";
import { analyzeBranch, closedChapters } from "../../src/fold/lattice/units.ts";
import { FILE_KINDS, failureRecords, fileTouchesByKind, spanFacts } from "../../src/session/facts.ts";
import { loadSessionFile } from "../../src/session/load.ts";
import { normalizeBranch } from "../../src/session/normalize.ts";
import { isLeadIn, proseSentences } from "../../src/text/sentences.ts";
import { scriptOf } from "../../src/text/tool-text.ts";
import { SessionBuilder } from "../fixtures/compaction-events.ts";
import { REAL_SESSIONS } from "../fixtures/session.ts";

interface Chapter {
	log: string;
	start: number;
	entries: SessionEntry[];
	cwd: string;
}

function chapters(): Chapter[] {
	const out: Chapter[] = [];
	for (const [log, path] of Object.entries(REAL_SESSIONS)) {
		const loaded = loadSessionFile(path);
		const view = analyzeBranch(loaded.manager.getBranch(), {});
		for (const chapter of closedChapters(view, 2)) {
			out.push({
				log,
				start: chapter.start,
				entries: view.entries.slice(chapter.start, chapter.end),
				cwd: loaded.manager.getCwd(),
			});
		}
	}
	return out;
}

const ALL = chapters();
/** What the issue counted: replies opening with "Perfect!" and the like (39 of 75 briefs ended on a colon, 22 on "Perfect"). */
const ACKNOWLEDGEMENT = /^(?:Perfect|Done|Great|Excellent|Good|Fixed|Updated|Yo|Thanks|Nice)\b[^.!?]{0,24}[.!]?$/;
const at = (log: string, start: number): Chapter => {
	const found = ALL.find((chapter) => chapter.log === log && chapter.start === start);
	if (!found) throw new Error(`no chapter at ${log}:${start}`);
	return found;
};

describe("one fact extractor", () => {
	it("gives a brief and a summary of the same span the same files, on every chapter of both logs", () => {
		expect(ALL.length).toBeGreaterThan(100);
		let withFiles = 0;
		for (const chapter of ALL) {
			const facts = spanFacts(chapter.entries);
			const touches = fileTouchesByKind(normalizeBranch(chapter.entries).events);
			for (const kind of FILE_KINDS) expect(facts.files[kind]).toEqual(touches[kind].map((touch) => touch.path));
			const summary = compileSummary({ entries: chapter.entries }).text;
			const files = summary.slice(summary.indexOf("[Files And Changes]"));
			for (const kind of FILE_KINDS) {
				for (const path of facts.files[kind]) {
					withFiles++;
					// The summary shows paths relative to its display root; the tail of each path is there.
					expect(files).toContain(path.split("/").at(-1));
				}
			}
		}
		expect(withFiles).toBeGreaterThan(200);
	});

	it("never lets a brief end on a lead-in or a trailing colon", () => {
		let ended = 0;
		for (const chapter of ALL) {
			const facts = spanFacts(chapter.entries);
			if (facts.ended === undefined) continue;
			ended++;
			expect(facts.ended.endsWith(":")).toBe(false);
			// An acknowledgement only when the reply's prose has nothing else ("Excellent!", "Done. Final structure:" + code).
			if (ACKNOWLEDGEMENT.test(facts.ended)) expect(proseSentences(facts.lastReply ?? "").every(isLeadIn)).toBe(true);
		}
		expect(ended).toBeGreaterThan(100);
	});

	it("names the script a command runs, arguments included, without its cd prefix, redirections or output viewers", () => {
		expect(scriptOf("cd /repo && npm run check 2>&1 | head -40")).toBe("npm run check");
		expect(scriptOf('grep -n "agent_end|x" src/a.ts')).toBe('grep -n "agent_end|x" src/a.ts');
		expect(scriptOf("FOO=1 npx tsx -e 'a && b'")).toBe("npx tsx -e 'a && b'");
		expect(scriptOf("git checkout -b refactor")).toBe("git checkout -b refactor");
		expect(scriptOf("npm test -- payments 2> /dev/null | tail -5")).toBe("npm test -- payments");
		expect(scriptOf("npm test -- payments")).not.toBe(scriptOf("npm test -- utils"));
		expect(scriptOf("python deploy.py --prod")).not.toBe(scriptOf("python scripts/lint_headers.py"));
	});

	it("marks a failure resolved only by a later success of the same command or the same file (brief and summary agree)", () => {
		const b = new SessionBuilder();
		b.user("ship it");
		const [, deploy] = b.tool("1", "bash", { command: "python deploy.py --prod" }, { isError: true, output: "boom" });
		b.tool("2", "bash", { command: "python scripts/lint_headers.py" });
		const [, payments] = b.tool(
			"3",
			"bash",
			{ command: "npm test -- payments" },
			{ isError: true, output: "1 failed" },
		);
		b.tool("4", "bash", { command: "npm test -- utils" });
		const [, edit] = b.tool("5", "edit", { path: "/r/a.ts", oldText: "x", newText: "y" }, { isError: true });
		b.tool("6", "edit", { path: "/r/b.ts", oldText: "x", newText: "y" });
		const [, check] = b.tool("7", "bash", { command: "npm run check" }, { isError: true, output: "TS2339" });
		const [, checkOk] = b.tool("8", "bash", { command: "cd /r && npm run check 2>&1 | tail -3" });
		const records = failureRecords(normalizeBranch(b.entries).events);
		expect(records.map((record) => [record.failure.address, record.resolvedBy?.address])).toEqual([
			[deploy, undefined],
			[payments, undefined],
			[edit, undefined],
			[check, checkOk],
		]);
		expect(spanFacts(b.entries).errors.map((error) => [error.address, error.resolved])).toEqual([
			[deploy, false],
			[payments, false],
			[edit, false],
			[check, true],
		]);
		const outstanding = compileSummary({ entries: b.entries }).text.split("[Outstanding Context]")[1] ?? "";
		expect(outstanding).toContain(`@${deploy} open bash: python deploy.py --prod`);
		expect(outstanding).toContain(`@${payments} open bash: npm test -- payments`);
		expect(outstanding).toContain(`@${check} resolved by @${checkOk} bash: npm run check`);
	});
});

describe("brief examples from the real logs (pinned)", () => {
	it("a small chapter: the ask, how it ended, the command and its outcome", () => {
		const chapter = at("beforeCompaction", 13);
		expect(
			deterministicBrief({ id: "f-000000000001", kind: "chapter", entries: chapter.entries, cwd: chapter.cwd }),
		).toBe(`Chapter f-000000000001: 4 entries, 1 user, 2 assistant, 1 tool call; bash git checkout -b refactor.
Ask: ok, create a branch refactor
Ended: On branch \`refactor\` now.
Commands: git checkout -b refactor → ok
Read exact source: active_context {"action":"peek","id":"f-000000000001"}
Restore in place: active_context {"action":"expand","id":"f-000000000001"}`);
	});

	it("a reply that opens with 'Done.' and a colon: the introduction joins the first item", () => {
		const chapter = at("beforeCompaction", 21);
		const brief = deterministicBrief({
			id: "f-000000000002",
			kind: "chapter",
			entries: chapter.entries,
			cwd: chapter.cwd,
		});
		expect(brief).toContain(
			"Ended: Created `packages/coding-agent/docs/refactor.md` with: Goals and motivation for the refactoring\n",
		);
		expect(brief).toContain("Changed: 1 write in 1 file: packages/coding-agent/docs/refactor.md\n");
	});

	it("a long chapter: landed edits with their files, commands with the last outcome, the error's own line", () => {
		const chapter = at("beforeCompaction", 90);
		const brief = deterministicBrief({
			id: "f-000000000003",
			kind: "chapter",
			entries: chapter.entries,
			cwd: chapter.cwd,
		});
		expect(brief.length).toBeLessThanOrEqual(1200);
		expect(brief).toContain("Ended: I see, there's no `tokensAfter`.\n");
		expect(brief).toContain(
			"Changed: 28 edits in 2 files: packages/coding-agent/docs/refactor.md, packages/coding-agent/src/core/agent-session.ts\n",
		);
		expect(brief).toContain("Commands: 13 run, 2 failed; last: ");
		// The error shows the compiler's own line, not npm's echo of the script.
		expect(brief).toContain(
			"Errors: bash npm run check exit 2: ../coding-agent/src/core/agent-session.ts(532,34): error TS2339:",
		);
		expect(brief).not.toContain("> pi-monorepo@");
		expect(brief.endsWith('Restore in place: active_context {"action":"expand","id":"f-000000000003"}')).toBe(true);
	});
});

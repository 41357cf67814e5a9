/**
 * Regression tests for issue 31's defects: what a compaction summary must
 * carry for the work to go on (files written, the current work, decisions,
 * true error lines, settled failures, sections sized by what they hold).
 */

import { describe, expect, it } from "vitest";
import { runQa, splitSections } from "../../../src/compaction/qa/qa.ts";
import { compileSummary } from "../../../src/compaction/summary/compile.ts";
import { TRANSCRIPT_HEADER, TURNS_HEADER } from "../../../src/compaction/summary/projections-activity.ts";
import { FILES_HEADER, OUTSTANDING_HEADER } from "../../../src/compaction/summary/projections-files.ts";
import { DECISIONS_HEADER, WORK_HEADER } from "../../../src/compaction/summary/projections-work.ts";
import { SUMMARY_MAX_BYTES } from "../../../src/compaction/summary/render.ts";
import { utf8ByteLength } from "../../../src/text/utf8.ts";
import { SessionBuilder } from "../../fixtures/compaction-events.ts";

function section(text: string, header: string): string {
	return [header, ...(splitSections(text).get(header) ?? [])].join("\n").trimEnd();
}

describe("a summary that carries the work", () => {
	it("lists every written and edited file (48 and more) by directory, never as an omitted count, read files after", () => {
		const b = new SessionBuilder();
		b.user("Build the feature.");
		for (let index = 0; index < 60; index++) b.tool(`r${index}`, "read", { path: `/repo/docs/page-${index}.md` });
		for (let index = 0; index < 48; index++) {
			const name = index % 2 === 0 ? "write" : "edit";
			b.tool(`c${index}`, name, { path: `/repo/src/module-${index % 6}/changed-${index}.ts`, content: "x" });
		}
		b.assistant("Done.");
		const result = compileSummary({ entries: b.entries });
		const files = section(result.text, FILES_HEADER);
		for (let index = 0; index < 48; index++) expect(files).toContain(`changed-${index}.ts`);
		const changed = files.slice(0, files.indexOf("Read:"));
		expect(changed).not.toMatch(/omitted/);
		expect(changed).toMatch(/^- @\S+ in src\/module-0\/: /m);
		expect(files.indexOf("Written:")).toBeLessThan(files.indexOf("Read:"));
		expect(result.bytes).toBeLessThanOrEqual(SUMMARY_MAX_BYTES);
		expect(runQa(result.text, result.qa).score).toBe(1);
	});

	it("lists the files a Codex apply_patch added or updated as changed files", () => {
		const b = new SessionBuilder();
		b.user("Fix the date format.");
		const patch =
			"*** Begin Patch\n*** Update File: lib/format.ts\n@@\n-old\n+new\n*** Add File: lib/date-utils.ts\n+export {};\n*** Delete File: lib/legacy.ts\n*** End Patch";
		b.tool("p1", "apply_patch", { input: patch }, { output: "Success. Updated the following files:\nM lib/format.ts" });
		b.assistant("Patched.");
		const result = compileSummary({ entries: b.entries });
		const files = section(result.text, FILES_HEADER);
		expect(files).toMatch(/Created:\n- @\S+ (?:lib\/)?date-utils\.ts/);
		expect(files).toMatch(/Modified:\n- @\S+ (?:lib\/)?format\.ts/);
		expect(files).not.toContain("legacy.ts");
		expect(section(result.text, WORK_HEADER)).toContain("lib/format.ts");
		expect(runQa(result.text, result.qa).score).toBe(1);
	});

	it("states the current work of the last steps, kept tail included, and a second compaction still carries it", () => {
		const b = new SessionBuilder();
		b.user("Start the parser work.");
		for (let index = 0; index < 10; index++) b.tool(`a${index}`, "read", { path: `/repo/src/early-${index}.ts` });
		const firstCut = b.entries.length;
		b.user("Rename parseFooBar to parseBazQux for PR #4821, then run the smoke_check tool.");
		b.assistant("The old tokenizer drops escapes, so I'm switching to the streaming parser instead.");
		b.tool("t1", "edit", { path: "/repo/src/tail-only.ts", oldText: "parseFooBar", newText: "parseBazQux" });
		b.tool("t2", "bash", { command: "npm run smoke_check -- --pr 4821" });
		const firstEnd = b.entries.length;
		const first = compileSummary({ entries: b.entries.slice(0, firstCut), keptEntries: b.entries.slice(firstCut) });
		const work = section(first.text, WORK_HEADER);
		for (const fact of ["parseBazQux", "#4821", "tail-only.ts", "npm run smoke_check", "smoke_check"]) {
			expect(work).toContain(fact);
		}
		expect(runQa(first.text, first.qa).score).toBe(1);

		// Later work pushes the first kept tail far back; the next summary is rebuilt from raw entries.
		b.user("Now clean up the rest of the modules.");
		for (let index = 0; index < 40; index++)
			b.tool(`m${index}`, "edit", { path: `/repo/src/later/module-${index}.ts` });
		const secondCut = b.entries.length;
		b.user("Finally update the changelog.");
		b.tool("z1", "edit", { path: "/repo/CHANGELOG.md" });
		expect(secondCut).toBeGreaterThan(firstEnd);
		const second = compileSummary({ entries: b.entries.slice(0, secondCut), keptEntries: b.entries.slice(secondCut) });
		for (const fact of ["tail-only.ts", "#4821", "switching to the streaming parser"]) {
			expect(second.text, fact).toContain(fact);
		}
		expect(runQa(second.text, second.qa).score).toBe(1);
	});

	it("keeps the decisions agents state, in Codex's and Claude Code's phrasings", () => {
		const b = new SessionBuilder();
		b.user("Fix the upload.");
		b.assistant("The multipart endpoint is flaky on Windows, so I’m switching to the presigned URL flow.");
		b.assistant("I'll use a temp file instead of streaming the body, since the proxy buffers it anyway.");
		b.assistant("Rather than patching the vendored client, I'm going to wrap it in our own retry helper.");
		b.assistant("Should we use a queue?");
		b.tool("r1", "read", { path: "/repo/a.ts" });
		b.assistant("Done.");
		const result = compileSummary({ entries: b.entries });
		const decisions = section(result.text, DECISIONS_HEADER);
		expect(decisions).toContain("switching to the presigned URL flow");
		expect(decisions).toContain("I'll use a temp file instead");
		expect(decisions).toContain("Rather than patching the vendored client");
		expect(decisions).not.toContain("Should we use a queue");
		expect(runQa(result.text, result.qa).score).toBe(1);
	});

	it("previews a Codex failure by its error line, without the host's output frame", () => {
		const b = new SessionBuilder();
		b.user("Build it.");
		b.tool(
			"x1",
			"bash",
			{ command: "npm.cmd run build" },
			{
				output:
					"Exit code: 1\nWall time: 14.2 seconds\nOutput:\n\n> web@0.1.0 build\n> next build\n\n./app/page.tsx:12:5\nType error: Cannot find name 'eventDate'.\n",
			},
		);
		b.assistant("The build fails on a type error.");
		const result = compileSummary({ entries: b.entries });
		const outstanding = section(result.text, OUTSTANDING_HEADER);
		expect(outstanding).toMatch(/open bash: npm\.cmd run build → "Type error: Cannot find name 'eventDate'\./);
		expect(outstanding).not.toContain("Wall time");
		expect(result.text).not.toContain("Chunk ID");
		expect(runQa(result.text, result.qa).score).toBe(1);
	});

	it("marks a failure a later run settled, and lists open ones first", () => {
		const b = new SessionBuilder();
		b.user("Make the build pass.");
		b.tool(
			"f1",
			"bash",
			{ command: "npm run build" },
			{ isError: true, output: "error TS2322: bad type\nCommand exited with code 1" },
		);
		b.tool(
			"f2",
			"bash",
			{ command: "npm run lint" },
			{ isError: true, output: "error: 3 problems\nCommand exited with code 1" },
		);
		b.tool("e1", "edit", { path: "/repo/src/a.ts" });
		b.tool("ok", "bash", { command: "cd /repo && npm run build 2>&1 | tail -20" });
		b.assistant("Build passes now.");
		const result = compileSummary({ entries: b.entries });
		const outstanding = section(result.text, OUTSTANDING_HEADER);
		expect(outstanding.indexOf("open bash: npm run lint")).toBeGreaterThan(-1);
		expect(outstanding).toMatch(/resolved by @\S+ bash: npm run build/);
		expect(outstanding.indexOf("npm run lint")).toBeLessThan(outstanding.indexOf("resolved by"));
		expect(section(result.text, WORK_HEADER)).toMatch(/failed, resolved by @\S+: npm run build/);
		expect(runQa(result.text, result.qa).score).toBe(1);
	});

	it("sizes sections by what they hold: the transcript is the last turn, turn lines do not repeat the requests", () => {
		const build = (lastTurnCalls: number) => {
			const b = new SessionBuilder();
			for (let turn = 0; turn < 30; turn++) {
				b.user(`Step ${turn}: change module ${turn} and keep its public API stable.`);
				for (let index = 0; index < 4; index++)
					b.tool(`e${turn}-${index}`, "edit", { path: `/repo/m${turn}/f${index}.ts` });
				b.assistant(`Step ${turn} done.`);
			}
			b.user("Last step.");
			for (let index = 0; index < lastTurnCalls; index++)
				b.tool(`l${index}`, "bash", { command: `make part-${index}` });
			return compileSummary({ entries: b.entries }).text;
		};
		const short = utf8ByteLength(section(build(1), TRANSCRIPT_HEADER));
		const long = utf8ByteLength(section(build(15), TRANSCRIPT_HEADER));
		expect(short).toBeLessThan(300);
		expect(long).toBeGreaterThan(4 * short);
		const turns = section(build(1), TURNS_HEADER);
		expect(turns).toMatch(/^- @\S+ user \[edit×4\]$/m);
		expect(turns).not.toContain("keep its public API stable");
	});
});

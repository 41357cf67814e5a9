import { describe, expect, it } from "vitest";
import { projectSummary } from "../../../src/compaction/summary/projections.ts";
import {
	HISTORICAL_LINE_MAX_BYTES,
	projectActivity,
	projectHistoricalRequests,
	projectStatus,
	projectTranscript,
	projectTurns,
} from "../../../src/compaction/summary/projections-activity.ts";
import {
	DISPLAY_ROOT_MAX_BYTES,
	displayRootOf,
	failureRecords,
	fileTouchesByKind,
	projectFiles,
} from "../../../src/compaction/summary/projections-files.ts";
import {
	EARLIER_TURN_LIMIT,
	FABRIC_ACTIVITY_LIMIT,
	FILE_LIMIT_PER_KIND,
	HISTORICAL_REQUEST_LIMIT,
	OPERATION_STATE_LIMIT,
	sampleIndices,
	TRANSCRIPT_EVENT_LIMIT,
	type ViewBlock,
} from "../../../src/compaction/summary/projections-model.ts";
import type { NormalizedEvent } from "../../../src/session/events.ts";
import { normalizeBranch } from "../../../src/session/normalize.ts";
import { SessionBuilder, traceV1 } from "../../fixtures/compaction-events.ts";

const eventsOf = (b: SessionBuilder): NormalizedEvent[] => normalizeBranch(b.entries).events;
const lines = (block: ViewBlock) =>
	block.groups.flatMap((group) => group.items.map((item) => item.lead + item.text + item.trail));

describe("projection limits and sampling", () => {
	it("pins the spec's collection limits", () => {
		expect(HISTORICAL_REQUEST_LIMIT).toBe(24);
		expect(FILE_LIMIT_PER_KIND).toBe(24);
		expect(OPERATION_STATE_LIMIT).toBe(32);
		expect(FABRIC_ACTIVITY_LIMIT).toBe(48);
		expect(EARLIER_TURN_LIMIT).toBe(32);
		expect(TRANSCRIPT_EVENT_LIMIT).toBe(40);
		expect(HISTORICAL_LINE_MAX_BYTES).toBe(1024);
	});

	it("keeps the earliest and latest items and omits one contiguous middle run", () => {
		expect(sampleIndices(10, 4, "earliest-latest")).toEqual({ kept: [0, 1, 8, 9], omitted: { start: 2, end: 8 } });
		expect(sampleIndices(10, 3, "earliest-latest")).toEqual({ kept: [0, 8, 9], omitted: { start: 1, end: 8 } });
		expect(sampleIndices(10, 1, "earliest-latest")).toEqual({ kept: [9], omitted: { start: 0, end: 9 } });
		expect(sampleIndices(10, 3, "latest")).toEqual({ kept: [7, 8, 9], omitted: { start: 0, end: 7 } });
		expect(sampleIndices(3, 5, "earliest-latest")).toEqual({ kept: [0, 1, 2] });
		expect(sampleIndices(4, 0, "all")).toEqual({ kept: [0, 1, 2, 3] });
	});
});

describe("files", () => {
	it("groups successful typed file operations as Created, Written, Modified and Read", () => {
		const b = new SessionBuilder();
		b.tool("1", "write", { path: "/p/new.ts", content: "" }, { details: { created: true } });
		b.tool("2", "write", { path: "/p/over.ts", content: "" });
		b.tool("3", "edit", { path: "/p/mod.ts", oldText: "", newText: "" });
		b.tool("4", "edit", { path: "/p/mod.ts", oldText: "", newText: "" });
		b.tool("5", "read", { path: "/p/read.ts" });
		b.tool("6", "edit", { path: "/p/failed.ts" }, { isError: true });
		b.tool("7", "bash", { command: "cat /p/not-a-file-fact.ts" });
		b.fabric("8", {
			details: { trace: traceV1([{ ref: "pi.write", args: { path: "/p/fab.ts" }, result: { created: true } }]) },
		});
		const touches = fileTouchesByKind(eventsOf(b));
		expect(touches.Created.map((touch) => touch.path)).toEqual(["/p/new.ts", "/p/fab.ts"]);
		expect(touches.Written.map((touch) => touch.path)).toEqual(["/p/over.ts"]);
		expect(touches.Modified.map((touch) => [touch.path, touch.count])).toEqual([["/p/mod.ts", 2]]);
		expect(touches.Read.map((touch) => touch.path)).toEqual(["/p/read.ts"]);
		const block = projectFiles(eventsOf(b));
		expect(block.prelude).toEqual(["Paths relative to /p/"]);
		expect(block.groups.map((group) => group.label)).toEqual(["Created:", "Written:", "Modified:", "Read:"]);
	});

	it("computes display roots by path segment only", () => {
		expect(displayRootOf(["/a/b/c.ts", "/a/b/d/e.ts"])).toBe("/a/b/");
		expect(displayRootOf(["/a/bc.ts", "/a/bd.ts"])).toBe("/a/");
		expect(displayRootOf(["C:\\w\\x.ts", "C:\\w\\y.ts"])).toBe("C:\\w\\");
		expect(displayRootOf(["/x.ts", "/y.ts"])).toBeUndefined();
		expect(displayRootOf(["a.ts", "b.ts"])).toBeUndefined();
	});

	it("shows full paths instead of a display root longer than DISPLAY_ROOT_MAX_BYTES", () => {
		expect(DISPLAY_ROOT_MAX_BYTES).toBe(256);
		const deep = `/${"very-long-directory-name/".repeat(20)}`;
		const b = new SessionBuilder();
		b.tool("1", "read", { path: `${deep}a.ts` });
		b.tool("2", "read", { path: `${deep}b.ts` });
		const files = projectFiles(normalizeBranch(b.entries).events);
		expect(files.prelude).toEqual([]);
		expect(files.groups.find((group) => group.label === "Read:")?.items.map((item) => item.text)).toEqual([
			`${deep}a.ts`,
			`${deep}b.ts`,
		]);
		const short = new SessionBuilder();
		short.tool("1", "read", { path: "/repo/src/a.ts" });
		short.tool("2", "read", { path: "/repo/src/b.ts" });
		expect(projectFiles(normalizeBranch(short.entries).events).prelude).toEqual(["Paths relative to /repo/src/"]);
	});
});

describe("operation state", () => {
	it("resolves a failure by a later success of the same tool on the same target", () => {
		const b = new SessionBuilder();
		const [, editFail] = b.tool("1", "edit", { path: "/a.ts", oldText: "x" }, { isError: true, output: "no match" });
		b.tool("2", "write", { path: "/a.ts" });
		b.tool("3", "read", { path: "/a.ts" });
		const [, editFix] = b.tool("4", "edit", { path: "/a.ts", oldText: "y" });
		const [, bashFail] = b.tool("5", "bash", { command: "npm test" }, { isError: true });
		// The same script with other spacing settles it; a later `!npm test` failure waits for the next success.
		const [, bashSame] = b.tool("6", "bash", { command: "npm test " });
		const userBashFail = b.bash("npm test", { exitCode: 1 });
		const [, bashFix] = b.tool("7", "bash", { command: "npm test" });
		const [, genericFail] = b.tool("8", "grep", { pattern: "x", path: "/" }, { isError: true });
		b.tool("9", "grep", { pattern: "x", path: "/src" });
		const records = failureRecords(eventsOf(b));
		expect(records.map((record) => [record.failure.address, record.resolvedBy?.address])).toEqual([
			[editFail, editFix],
			[bashFail, bashSame],
			[userBashFail, bashFix],
			[genericFail, undefined],
		]);
		expect(records[0]?.failure.errorText).toBe("no match");
	});

	it("settles a shell failure only by a later success of the same script, whatever its cd prefix and output plumbing", () => {
		const b = new SessionBuilder();
		const [, grepFail] = b.tool("1", "bash", { command: 'grep -n "agent_end" src/a.ts' }, { isError: true });
		const [, checkFail] = b.tool(
			"2",
			"bash",
			{ command: "cd /repo && npm run check 2>&1 | head -40" },
			{ isError: true },
		);
		const [, testFail] = b.tool("3", "bash", { command: "npm test" }, { isError: true });
		b.tool("4", "bash", { command: "grep -rn pendingBash src" });
		const [, checkOk] = b.tool("5", "bash", { command: "npm run check" });
		const records = failureRecords(eventsOf(b));
		expect(records.map((record) => [record.failure.address, record.resolvedBy?.address])).toEqual([
			// Another search is another script: the failed grep stays open.
			[grepFail, undefined],
			[checkFail, checkOk],
			// npm test is not npm run check.
			[testFail, undefined],
		]);
	});

	it("does not count a search that found nothing (grep exit 1) as a failure; exit 2 is one", () => {
		const b = new SessionBuilder();
		b.tool(
			"1",
			"bash",
			{ command: 'cd /r && grep -n "a\\|b" src/x.ts' },
			{ isError: true, output: "(no output)\n\nCommand exited with code 1" },
		);
		const [, missing] = b.tool(
			"2",
			"bash",
			{ command: "grep -n a src/gone.ts" },
			{
				isError: true,
				output: "grep: src/gone.ts: No such file or directory\n\nCommand exited with code 2",
			},
		);
		b.bash("rg TODO src", { exitCode: 1 });
		const [, piped] = b.tool(
			"3",
			"bash",
			{ command: "npm test | grep FAIL" },
			{ isError: true, output: "Command exited with code 1" },
		);
		expect(failureRecords(eventsOf(b)).map((record) => record.failure.address)).toEqual([missing, piped]);
	});

	it("resolves generic failures by the same ref and canonical JSON arguments", () => {
		const b = new SessionBuilder();
		const [, fail] = b.tool("1", "custom_tool", { b: 2, a: 1 }, { isError: true });
		const [, fix] = b.tool("2", "custom_tool", { a: 1, b: 2 });
		expect(failureRecords(eventsOf(b)).map((record) => record.resolvedBy?.address)).toEqual([fix]);
		expect(fail).toBeDefined();
	});

	it("reads nested trace failures from operation outcome and error only", () => {
		const b = new SessionBuilder();
		const [, result] = b.fabric("f", {
			output: "Error: misleading outer prose",
			details: {
				trace: traceV1([{ ref: "pi.bash", args: { command: "make" }, outcome: "timed_out", error: "took too long" }]),
			},
		});
		const records = failureRecords(eventsOf(b));
		expect(records.map((record) => [record.failure.address, record.failure.errorText])).toEqual([
			[`${result}/0`, "timed_out: took too long"],
		]);
	});
});

describe("activity, turns, status and transcript", () => {
	function fabricSession() {
		const b = new SessionBuilder();
		const user = b.user("build the index\nsecond line");
		const [call, result] = b.fabric("f1", {
			display: { name: "Index", description: "Walk the repo" },
			details: {
				trace: traceV1(
					[
						{ ref: "pi.read", args: { path: "/a.ts" } },
						{ ref: "pi.bash", args: { command: "make" } },
						{ ref: "agents.spawn", args: { task: "t" }, outcome: "failed", error: "quota" },
					],
					{ phases: ["scan"] },
				),
			},
		});
		b.assistant("All done.\nDetails follow.");
		return { b, user, call, result };
	}

	it("lists named runs as name — description → outcome, then phases and significant non-file operations", () => {
		const { b, call, result } = fabricSession();
		expect(lines(projectActivity(eventsOf(b)))).toEqual([
			`@${call} run "Index" — Walk the repo → succeeded`,
			`@${result}/phase:0 phase scan`,
			`@${result}/1 pi.bash → succeeded make`,
			`@${result}/2 agents.spawn → failed {"task":"t"}: "quota"`,
		]);
	});

	it("summarizes each turn by its address (the request is quoted elsewhere), tool counts and latest named run", () => {
		const { b, user, call } = fabricSession();
		const [turn] = lines(projectTurns(eventsOf(b)));
		expect(turn).toBe(`@${user} user [fabric_exec×1; run "Index" → succeeded]`);
		expect(call).toBeDefined();
	});

	it("reports the latest context, modification, named run and assistant line", () => {
		const { b, user, call } = fabricSession();
		const [, edit] = b.tool("e", "edit", { path: "/z.ts" });
		expect(lines(projectStatus(eventsOf(b)))).toEqual([
			`Latest user @${user}: "build the index second line"`,
			`Latest modification @${edit}: Modified /z.ts`,
			`Latest Fabric run @${call} run "Index" → succeeded`,
			`Latest assistant @${b.entries.at(-3)?.id}: "All done."`,
		]);
	});

	it("replaces a completed named run's generic call/result pair in the transcript and keeps the latest 40", () => {
		const { b, call } = fabricSession();
		const transcript = lines(projectTranscript(eventsOf(b)));
		expect(transcript.some((line) => line.includes("fabric_exec"))).toBe(false);
		expect(transcript).toContain(`@${call} run "Index" → succeeded`);
		expect(transcript.some((line) => line.includes("Walk the repo"))).toBe(false);
		const block = projectTranscript(eventsOf(b));
		expect(block.groups[0]).toMatchObject({ mode: "latest", limit: TRANSCRIPT_EVENT_LIMIT });
	});

	it("keeps historical requests out of the protected dialogue window", () => {
		const b = new SessionBuilder();
		for (let turn = 1; turn <= 6; turn++) {
			b.user(`request ${turn}\nmore`);
			b.assistant(`answer ${turn}`);
		}
		const branch = normalizeBranch(b.entries);
		const projection = projectSummary(branch.events, branch.cutEventIndex);
		const historical = projection.blocks.find((block) => block.key === "historical");
		expect(historical && lines(historical)).toEqual(
			// Requests 5 and 6 and the final answer fill the three protected slots.
			[1, 2, 3, 4].map((turn) => `@${b.entries[(turn - 1) * 2]?.id} "request ${turn}"`),
		);
		const direct = projectHistoricalRequests(branch.events, new Set());
		expect(lines(direct)).toHaveLength(6);
	});
});

import type {
	SessionBeforeCompactResult,
	SessionBeforeTreeResult,
	SessionEntry,
} from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { projectionEstimator } from "../../../src/compaction/compact-event.ts";
import {
	COMPACTOR_CLAIM_MARKER,
	LOG_PREFIX,
	PI_VCC_OVERRIDE_MARKER,
	type RegisterCompactionDeps,
	registerCompaction,
} from "../../../src/compaction/pi/hook.ts";
import { parseCompactionDetails } from "../../../src/compaction/records/details.ts";
import { COMPACT_REQUEST_PREFIX, PI_VCC_SENTINEL } from "../../../src/compaction/records/instructions.ts";
import { activeBranch, loadRealBranch, REAL_SESSIONS, SessionBuilder } from "../../fixtures/compaction-events.ts";
import {
	type CompactEventOptions,
	type ContextOptions,
	compactEvent,
	compactedEvent,
	contextDouble,
	GLOBAL_SETTINGS,
	memoryIo,
	msg,
	PROJECT_SETTINGS,
	RecordingPi,
	TEST_MODEL,
	treeEvent,
} from "../../fixtures/compaction-host.ts";

/** Turns with bulky tool output, so a Fabric summary fits well inside the observed size. */
function toolBranch(turns = 30): SessionEntry[] {
	const b = new SessionBuilder();
	for (let turn = 1; turn <= turns; turn++) {
		b.user(`Turn ${turn}: inspect module ${turn}.`);
		b.tool(`call-${turn}`, "read", { path: `/repo/m${turn}.ts` }, { output: `line ${turn}\n`.repeat(250) });
		b.assistant(`Inspected module ${turn}.`);
	}
	return b.entries;
}

const BRANCH = toolBranch();
const OBSERVED = BRANCH.reduce((sum, entry) => sum + projectionEstimator(BRANCH)(entry), 500);

function setup(options?: unknown, files: Record<string, unknown> = {}) {
	const pi = new RecordingPi();
	const logs: string[] = [];
	const deps: RegisterCompactionDeps = { io: memoryIo(files), log: (line) => logs.push(line) };
	const hooks = registerCompaction(pi.api, options, deps);
	return { pi, hooks, logs };
}

async function compact(
	pi: RecordingPi,
	eventOptions: CompactEventOptions & { branch?: SessionEntry[]; marks?: Record<string, unknown> } = {},
	contextOptions: ContextOptions = {},
) {
	const { branch = BRANCH, marks = {}, ...rest } = eventOptions;
	const event = Object.assign(
		compactEvent(branch, { tokensBefore: OBSERVED, keepRecentTokens: 2_000, ...rest }),
		marks,
	);
	const double = contextDouble(contextOptions);
	const result = (await pi.emit("session_before_compact", event, double.ctx)) as SessionBeforeCompactResult | undefined;
	return { event: event as unknown as Record<string, unknown>, result, ...double };
}

/** A branch whose last entry throws when its type is read: stands for an unexpected bug inside the pure compactor. */
function explodingBranch(base: readonly SessionEntry[] = BRANCH): SessionEntry[] {
	const bomb = new Proxy({ id: "bomb", parentId: base.at(-1)?.id ?? null } as unknown as SessionEntry, {
		get(target, key) {
			if (key === "type") throw new TypeError("boom");
			return Reflect.get(target, key);
		},
	});
	return [...base, bomb];
}

/** A request the summary cannot fit: the observed size is smaller than any summary. */
const TOO_SMALL = { tokensBefore: 600 };

describe("registerCompaction", () => {
	it("registers the compaction, tree, context, settle and lifecycle handlers", () => {
		const { pi } = setup();
		expect([...pi.handlers.keys()].sort()).toEqual([
			"agent_settled",
			"context",
			"session_before_compact",
			"session_before_tree",
			"session_compact",
			"session_compact_failed",
			"session_shutdown",
			"session_start",
		]);
	});
});

describe("session_before_compact on a real session log", () => {
	it("returns a compaction whose details validate as Fabric v2 and whose cut lies on the branch", async () => {
		const branch = loadRealBranch(REAL_SESSIONS.large);
		const { pi } = setup();
		const { result } = await compact(pi, { branch, tokensBefore: 160_000, keepRecentTokens: 20_000 });
		const compaction = result?.compaction;
		const parsed = parseCompactionDetails(JSON.parse(JSON.stringify(compaction?.details)));
		expect(parsed).toMatchObject({ ok: true, version: 2 });
		if (!parsed.ok || parsed.version !== 2) return;
		expect(parsed.details.counts.branchEntries).toBe(branch.length);
		expect(parsed.details.budget).toMatchObject({ contextWindow: TEST_MODEL.contextWindow, keepRecentTokens: 20_000 });
		expect(branch.some((entry) => entry.id === compaction?.firstKeptEntryId)).toBe(true);
		expect(Buffer.byteLength(compaction?.summary ?? "", "utf8")).toBeLessThanOrEqual(32 * 1024);
	});
});

describe("session_before_compact precedence", () => {
	it("calibrates with the system prompt plus the declared tools as fixed context", async () => {
		const read = { name: "read", description: "Read a file", parameters: { type: "object", properties: {} } };
		const inactive = { name: "deploy", description: "x".repeat(4_000), parameters: {} };
		const pi = new RecordingPi({ all: [read, inactive], active: ["read"] });
		registerCompaction(pi.api, undefined, { io: memoryIo(), log: () => {} });
		const toolTokens = Math.ceil(JSON.stringify(read).length / 4);
		const { result } = await compact(pi, {}, { systemPrompt: "p".repeat(400) });
		const details = parseCompactionDetails(result?.compaction?.details);
		if (!details.ok || details.version !== 2) throw new Error("expected v2 details");
		expect(details.details.budget?.fixedContextEstimateTokens).toBe(100 + toolTokens);
		// A host that cannot list tools leaves the system prompt alone.
		const { pi: bare } = setup();
		const plain = parseCompactionDetails(
			(await compact(bare, {}, { systemPrompt: "p".repeat(400) })).result?.compaction?.details,
		);
		expect(plain.ok && plain.version === 2 ? plain.details.budget?.fixedContextEstimateTokens : undefined).toBe(100);
	});

	it("compacts with Fabric by default, marks the event claimed and returns v2 details", async () => {
		const { pi } = setup();
		const { event, result } = await compact(pi);
		const compaction = result?.compaction;
		expect(compaction).toBeDefined();
		expect(parseCompactionDetails(compaction?.details)).toMatchObject({ ok: true, version: 2 });
		expect(compaction?.tokensBefore).toBe(OBSERVED);
		expect(BRANCH.some((entry) => entry.id === compaction?.firstKeptEntryId)).toBe(true);
		expect(event[COMPACTOR_CLAIM_MARKER]).toBe(true);
	});

	it("returns nothing for the exact pi-vcc sentinel, before reading anything else", async () => {
		const { pi } = setup({ engine: "fabric" });
		const { event, result, notices } = await compact(pi, { customInstructions: PI_VCC_SENTINEL, ...TOO_SMALL });
		expect(result).toBeUndefined();
		expect(event[COMPACTOR_CLAIM_MARKER]).toBeUndefined();
		expect(notices).toEqual([]);
	});

	it('lets Pi compact when the engine is "pi" in options, the global file or a trusted project file', async () => {
		const cases: { options?: unknown; files?: Record<string, unknown>; trusted?: boolean; defers: boolean }[] = [
			{ options: { engine: "pi" }, defers: true },
			{ files: { [GLOBAL_SETTINGS]: { compaction: { engine: "pi" } } }, defers: true },
			{ files: { [PROJECT_SETTINGS]: { compaction: { engine: "pi" } } }, trusted: true, defers: true },
			{ files: { [PROJECT_SETTINGS]: { compaction: { engine: "pi" } } }, trusted: false, defers: false },
			{ options: { engine: "pi" }, files: { [GLOBAL_SETTINGS]: { compaction: { engine: "fabric" } } }, defers: false },
		];
		for (const { options, files, trusted, defers } of cases) {
			const { pi } = setup(options, files);
			const { result } = await compact(pi, {}, { trusted: trusted ?? false });
			expect(result === undefined).toBe(defers);
		}
	});

	it("fails closed on a malformed typed request, naming the error code in an error notice", async () => {
		const { pi } = setup();
		const bad = `${COMPACT_REQUEST_PREFIX}{"version":1,"preserve":"x"}`;
		const { result, notices } = await compact(pi, { customInstructions: bad });
		expect(result).toEqual({ cancel: true });
		expect(notices).toHaveLength(1);
		expect(notices[0]?.level).toBe("error");
		expect(notices[0]?.text).toContain("(invalid-type)");
		expect(notices[0]?.text).not.toContain('"preserve":"x"');
	});

	it("writes a log line instead when there is no UI", async () => {
		const { pi, logs } = setup();
		const { result, notices } = await compact(
			pi,
			{ customInstructions: `${COMPACT_REQUEST_PREFIX}nope` },
			{ hasUI: false },
		);
		expect(result).toEqual({ cancel: true });
		expect(notices).toEqual([]);
		expect(logs).toHaveLength(1);
		expect(logs[0]).toMatch(new RegExp(`^\\${LOG_PREFIX} error: Compaction request rejected \\(`));
	});

	it("warns when a manual or overflow compaction cannot fit, and stays quiet for threshold", async () => {
		for (const [reason, warned] of [
			["manual", true],
			["overflow", true],
			["threshold", false],
		] as const) {
			const { pi } = setup();
			const { result, notices } = await compact(pi, { reason, ...TOO_SMALL });
			expect(result).toEqual({ cancel: true });
			expect(notices.map((notice) => notice.level)).toEqual(warned ? ["warning"] : []);
			if (warned) expect(notices[0]?.text).toContain("would not fit");
		}
	});

	it("cancels a rejected typed request even over an earlier pi-vcc result (fail closed)", async () => {
		const { pi } = setup();
		const bad = `${COMPACT_REQUEST_PREFIX}{"version":1,"preserve":"x"}`;
		const { event, result, notices } = await compact(pi, {
			customInstructions: bad,
			marks: { [PI_VCC_OVERRIDE_MARKER]: true },
		});
		expect(result).toEqual({ cancel: true });
		expect(notices.map((notice) => notice.level)).toEqual(["error"]);
		expect(event[COMPACTOR_CLAIM_MARKER]).toBeUndefined();
	});

	it("turns an exception inside the compactor into a bounded warning and a cancel, not an extension error", async () => {
		for (const [reason, warned] of [
			["manual", true],
			["threshold", false],
		] as const) {
			const { pi } = setup();
			const { result, notices } = await compact(pi, { reason, branch: explodingBranch() });
			expect(result).toEqual({ cancel: true });
			expect(notices.map((notice) => notice.level)).toEqual(warned ? ["warning"] : []);
			if (warned)
				expect(notices[0]?.text).toBe("Deterministic compaction cancelled: internal error (TypeError: boom).");
		}
		const { pi } = setup();
		const yielded = await compact(pi, { branch: explodingBranch(), marks: { [PI_VCC_OVERRIDE_MARKER]: true } });
		expect(yielded.result).toBeUndefined();
	});

	it("never cancels over an earlier pi-vcc result, but still claims when it can compact", async () => {
		const { pi } = setup();
		const yielded = await compact(pi, { ...TOO_SMALL, marks: { [PI_VCC_OVERRIDE_MARKER]: true } });
		expect(yielded.result).toBeUndefined();
		expect(yielded.notices).toEqual([]);
		const claimed = await compact(pi, { marks: { [PI_VCC_OVERRIDE_MARKER]: true } });
		expect(claimed.result?.compaction).toBeDefined();
	});

	it("defers Pi's threshold compaction until the model's own threshold, but never manual ones", async () => {
		const key = `${TEST_MODEL.provider}/${TEST_MODEL.id}`;
		const { pi } = setup({ tokenThresholds: { [key]: OBSERVED + 1 } });
		const deferred = await compact(pi, { reason: "threshold" });
		expect(deferred.result).toEqual({ cancel: true });
		expect(deferred.notices).toEqual([]);
		expect((await compact(pi, { reason: "manual" })).result?.compaction).toBeDefined();
		const reached = setup({ tokenThresholds: { [key]: OBSERVED } });
		expect((await compact(reached.pi, { reason: "threshold" })).result?.compaction).toBeDefined();
	});
});

describe("session_compact ownership", () => {
	it("warns once per session when another compactor won while Fabric is the engine", async () => {
		const { pi } = setup();
		const first = contextDouble({ sessionId: "s1" });
		await pi.emit("session_compact", compactedEvent({ readFiles: [] }, true), first.ctx);
		await pi.emit("session_compact", compactedEvent({ readFiles: [] }, false), first.ctx);
		expect(first.notices).toHaveLength(1);
		expect(first.notices[0]).toMatchObject({ level: "warning" });
		expect(first.notices[0]?.text).toContain("another extension");
		const other = contextDouble({ sessionId: "s2" });
		await pi.emit("session_compact", compactedEvent(undefined, false), other.ctx);
		expect(other.notices[0]?.text).toContain("Pi's own summarizer");
	});

	it('stays quiet for Fabric\'s own result, with engine "pi", and after deliberately yielding to pi-vcc', async () => {
		const { pi } = setup();
		const own = contextDouble();
		await pi.emit("session_compact", compactedEvent({ compactor: "fabric", version: 2 }, true), own.ctx);
		expect(own.notices).toEqual([]);

		const yielded = await compact(pi, { customInstructions: PI_VCC_SENTINEL });
		await pi.emit("session_compact", compactedEvent({ pivcc: true }, true), yielded.ctx);
		expect(yielded.notices).toEqual([]);

		const piEngine = setup({ engine: "pi" });
		const deferred = contextDouble();
		await piEngine.pi.emit("session_compact", compactedEvent(undefined, false), deferred.ctx);
		expect(deferred.notices).toEqual([]);
	});
});

describe("context repair", () => {
	it("returns repaired messages for a defect and nothing for a sound list", async () => {
		const { pi } = setup();
		const { ctx } = contextDouble();
		const broken = [msg.custom("summary"), msg.result("orphan"), msg.user("go")];
		const repaired = (await pi.emit("context", { type: "context", messages: broken }, ctx)) as {
			messages: unknown[];
		};
		expect(repaired.messages).toHaveLength(2);
		const sound = [msg.user("go"), msg.assistant(["a"]), msg.result("a")];
		expect(await pi.emit("context", { type: "context", messages: sound }, ctx)).toBeUndefined();
	});

	it("leaves the list alone when repairOrphans is off", async () => {
		const { pi } = setup({ repairOrphans: false });
		const { ctx } = contextDouble();
		const broken = [msg.result("orphan"), msg.user("go")];
		expect(await pi.emit("context", { type: "context", messages: broken }, ctx)).toBeUndefined();
	});
});

describe("session_before_tree", () => {
	function abandoned(): SessionEntry[] {
		const b = new SessionBuilder();
		b.user("start");
		b.user("abandoned idea");
		const leaf = b.tool("call-1", "write", { path: "/repo/idea.ts", content: "x" })[1];
		return activeBranch(b.entries, leaf).slice(1);
	}

	it("returns a deterministic summary with typed details when asked for one", async () => {
		const { pi } = setup();
		const { ctx } = contextDouble();
		const result = (await pi.emit("session_before_tree", treeEvent(abandoned()), ctx)) as SessionBeforeTreeResult;
		expect(result.summary?.summary).toContain("abandoned idea");
		expect(result.summary?.details).toMatchObject({ kind: "pi-fabric.branch-summary", version: 2 });
	});

	it('returns nothing without a wanted summary, with replacement instructions, or with engine "pi"', async () => {
		const { pi } = setup();
		const { ctx } = contextDouble();
		expect(await pi.emit("session_before_tree", treeEvent(abandoned(), { wants: false }), ctx)).toBeUndefined();
		const replace = treeEvent(abandoned(), { customInstructions: "Summarize as a poem", replaceInstructions: true });
		expect(await pi.emit("session_before_tree", replace, ctx)).toBeUndefined();
		const piEngine = setup({ engine: "pi" });
		expect(await piEngine.pi.emit("session_before_tree", treeEvent(abandoned()), ctx)).toBeUndefined();
	});

	it("cancels navigation with a bounded warning when the summary computation throws", async () => {
		const { pi } = setup();
		const double = contextDouble();
		const event = treeEvent(explodingBranch(abandoned()));
		expect(await pi.emit("session_before_tree", event, double.ctx)).toEqual({ cancel: true });
		expect(double.notices).toEqual([
			{ level: "warning", text: "Deterministic branch summary cancelled: internal error (TypeError: boom)." },
		]);
	});

	it("cancels navigation on a malformed typed request and says why", async () => {
		const { pi } = setup();
		const double = contextDouble();
		const event = treeEvent(abandoned(), { customInstructions: `${COMPACT_REQUEST_PREFIX}[]` });
		expect(await pi.emit("session_before_tree", event, double.ctx)).toEqual({ cancel: true });
		expect(double.notices[0]).toMatchObject({ level: "error" });
		expect(double.notices[0]?.text).toContain("(not-an-object)");
	});
});

describe("agent_settled triggers", () => {
	const key = `${TEST_MODEL.provider}/${TEST_MODEL.id}`;

	it("compacts at a settled boundary once the model threshold is reached, and keeps that compaction quiet", async () => {
		const { pi, hooks } = setup({ tokenThresholds: { [key]: 50_000 } });
		const below = contextDouble({ usage: { tokens: 49_999, contextWindow: 200_000 }, branch: BRANCH });
		await pi.emit("agent_settled", { type: "agent_settled", aborted: false }, below.ctx);
		expect(below.compactCalls).toHaveLength(0);

		const above = contextDouble({ usage: { tokens: 50_000, contextWindow: 200_000 }, branch: BRANCH });
		await pi.emit("agent_settled", { type: "agent_settled", aborted: false }, above.ctx);
		expect(above.compactCalls).toHaveLength(1);
		expect(hooks.lastAuto).toMatchObject({ trigger: "tokens", tokens: 50_000, outcome: "pending" });

		// Pi runs the triggered compaction as "manual"; a cancellation of it must not nag.
		const triggered = await compact(pi, { reason: "manual", ...TOO_SMALL });
		expect(triggered.result).toEqual({ cancel: true });
		expect(triggered.notices).toEqual([]);
		above.compactCalls[0]?.onError?.(new Error("Compaction cancelled"));
		expect(hooks.lastAuto?.outcome).toBe("failed");
	});

	it("does not trigger after an abort, without usage, right after a compaction, or twice at once", async () => {
		const { pi } = setup({ tokenThresholds: { [key]: 1_000 } });
		const usage = { tokens: 5_000, contextWindow: 200_000 };
		const aborted = contextDouble({ usage, branch: BRANCH });
		await pi.emit("agent_settled", { type: "agent_settled", aborted: true }, aborted.ctx);
		const unknown = contextDouble({ usage: { tokens: null, contextWindow: 200_000 }, branch: BRANCH });
		await pi.emit("agent_settled", { type: "agent_settled", aborted: false }, unknown.ctx);
		const b = new SessionBuilder();
		b.user("x");
		b.compaction("summary", "");
		const justCompacted = contextDouble({ usage, branch: b.entries });
		await pi.emit("agent_settled", { type: "agent_settled", aborted: false }, justCompacted.ctx);
		expect([aborted, unknown, justCompacted].map((double) => double.compactCalls.length)).toEqual([0, 0, 0]);

		const first = contextDouble({ usage, branch: BRANCH });
		await pi.emit("agent_settled", { type: "agent_settled", aborted: false }, first.ctx);
		await pi.emit("agent_settled", { type: "agent_settled", aborted: false }, first.ctx);
		expect(first.compactCalls).toHaveLength(1);
	});
});

/**
 * The compaction API's pure parts (carry list, owner claim slot, pressure
 * bands, trigger back-off) and how the hook state applies them: precedence
 * under a claim, the back-off after a cancelled automatic compaction and the
 * status that says why the trigger waits, and `compact.cancel`.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { CARRY_ENTRY_TYPE, checkCarry, latestCarry, MAX_CARRY_BYTES } from "../../../src/compaction/api/carry.ts";
import { OwnerClaims } from "../../../src/compaction/api/claim.ts";
import { compactionApiFrom } from "../../../src/compaction/api/controller.ts";
import { pressureBand } from "../../../src/compaction/api/pressure.ts";
import {
	BACKOFF_GROWTH_RATIO,
	BACKOFF_MIN_GROWTH_TOKENS,
	backoffAfterCancel,
	backoffHolds,
} from "../../../src/compaction/api/trigger.ts";
import { registerCompaction } from "../../../src/compaction/pi/hook.ts";
import { COMPACT_REQUEST_PREFIX } from "../../../src/compaction/records/wire.ts";
import { SessionBuilder } from "../../fixtures/compaction-events.ts";
import { compactEvent, contextDouble, memoryIo, RecordingPi, TEST_MODEL } from "../../fixtures/compaction-host.ts";

const KEY = `${TEST_MODEL.provider}/${TEST_MODEL.id}`;
const SETTLED = { type: "agent_settled", aborted: false };

function carryEntry(id: string, data: unknown): SessionEntry {
	return {
		type: "custom",
		id,
		parentId: null,
		timestamp: "2026-01-01T00:00:00.000Z",
		customType: CARRY_ENTRY_TYPE,
		data,
	} as SessionEntry;
}

function setup(options?: unknown) {
	const pi = new RecordingPi();
	const hooks = registerCompaction(pi.api, options, { io: memoryIo(), log: () => {} });
	const api = compactionApiFrom(pi.api.events);
	if (!api) throw new Error("API not served on the bus");
	return { pi, hooks, api };
}

describe("carry list", () => {
	it("accepts trimmed strings within the byte limit and refuses the rest by name", () => {
		expect(checkCarry([" a ", "", "b"])).toEqual({ ok: true, items: ["a", "b"] });
		expect(checkCarry("a")).toMatchObject({ ok: false });
		expect(checkCarry([1])).toMatchObject({ ok: false, error: "carry items must be strings" });
		const result = checkCarry(["x".repeat(MAX_CARRY_BYTES)]);
		expect(result.ok ? "" : result.error).toContain(`limit is ${MAX_CARRY_BYTES}`);
	});

	it("takes the latest valid carry entry on the branch", () => {
		const branch = [
			carryEntry("c1", { version: 1, items: ["first"] }),
			carryEntry("c2", { version: 1, items: ["second"] }),
			carryEntry("c3", { version: 9, items: ["unknown version"] }),
		];
		expect(latestCarry(branch)).toEqual(["second"]);
		expect(latestCarry([...branch, carryEntry("c4", { version: 1, items: [] })])).toEqual([]);
		expect(latestCarry([])).toEqual([]);
	});
});

describe("owner claim slot", () => {
	it("has one holder, released by withdraw, abort or shutdown", () => {
		const claims = new OwnerClaims();
		const first = claims.claim({ holder: "a" });
		expect(first.ok).toBe(true);
		expect(claims.claim({ holder: "b" })).toEqual({ ok: false, heldBy: "a" });
		if (first.ok) first.claim.withdraw();
		expect(claims.held).toBeUndefined();

		const signal = new AbortController();
		expect(claims.claim({ holder: "b", signal: signal.signal }).ok).toBe(true);
		signal.abort();
		expect(claims.held).toBeUndefined();

		expect(claims.claim({ holder: "c" }).ok).toBe(true);
		claims.releaseAll();
		expect(claims.held).toBeUndefined();
		const aborted = new AbortController();
		aborted.abort();
		expect(claims.claim({ holder: "d", signal: aborted.signal }).ok).toBe(false);
	});
});

describe("pressure bands and back-off", () => {
	it("labels usage by the configured bands", () => {
		const bands = { warn: 0.6, urgent: 0.8 };
		expect(pressureBand(59, 100, bands).band).toBe("ok");
		expect(pressureBand(60, 100, bands).band).toBe("warn");
		expect(pressureBand(80, 100, bands)).toMatchObject({ band: "urgent", ratio: 0.8 });
		expect(pressureBand(null, 100, bands).band).toBe("unknown");
	});

	it("waits for the named growth after a cancelled threshold compaction", () => {
		const backoff = backoffAfterCancel(100_000, 200_000, "summary-does-not-fit");
		expect(backoff.resumeAtTokens).toBe(100_000 + 200_000 * BACKOFF_GROWTH_RATIO);
		expect(backoffHolds(backoff, backoff.resumeAtTokens - 1)).toBe(true);
		expect(backoffHolds(backoff, backoff.resumeAtTokens)).toBe(false);
		expect(backoffAfterCancel(10, undefined, "x").resumeAtTokens).toBe(10 + BACKOFF_MIN_GROWTH_TOKENS);
	});
});

describe("hook state under the API", () => {
	const builder = new SessionBuilder();
	builder.user("hello");
	builder.assistant("hi");
	const tooSmall = builder.entries;

	it("backs off after a cancelled automatic compaction and says why in status", async () => {
		const { pi, api } = setup({ tokenThresholds: { [KEY]: 50_000 } });
		const high = contextDouble({ usage: { tokens: 60_000, contextWindow: 200_000 }, branch: tooSmall });
		await pi.emit("agent_settled", SETTLED, high.ctx);
		expect(high.compactCalls).toHaveLength(1);
		const result = await pi.emit(
			"session_before_compact",
			compactEvent(tooSmall, { reason: "manual", tokensBefore: 60_000 }),
			high.ctx,
		);
		expect(result).toEqual({ cancel: true });
		high.compactCalls[0]?.onError?.(new Error("cancelled"));

		await pi.emit("agent_settled", SETTLED, high.ctx);
		expect(high.compactCalls).toHaveLength(1);
		const status = api.status(high.ctx);
		expect(status.waiting).toMatchObject({ why: "backoff", cancelledAtTokens: 60_000, resumeAtTokens: 70_000 });
		expect(status.waiting?.why === "backoff" && status.waiting.text).toContain("waits until the context reaches 70000");
		expect(status.lastResult).toMatchObject({ reason: "manual", outcome: "cancelled" });

		const grown = contextDouble({ usage: { tokens: 70_000, contextWindow: 200_000 }, branch: tooSmall });
		await pi.emit("agent_settled", SETTLED, grown.ctx);
		expect(grown.compactCalls).toHaveLength(1);
	});

	it("under a claim neither triggers, compacts nor defers, and the claim ends at shutdown", async () => {
		const { pi, api } = setup({ tokenThresholds: { [KEY]: 150_000 } });
		const claim = api.claim({ holder: "other" });
		expect(claim.ok).toBe(true);
		const ctx = contextDouble({ usage: { tokens: 160_000, contextWindow: 200_000 }, branch: tooSmall });
		await pi.emit("agent_settled", SETTLED, ctx.ctx);
		expect(ctx.compactCalls).toHaveLength(0);
		// Below the model threshold Pi's threshold compaction would be deferred; under a claim it is left alone.
		const event = compactEvent(tooSmall, { reason: "threshold", tokensBefore: 100_000 });
		expect(await pi.emit("session_before_compact", event, ctx.ctx)).toBeUndefined();
		expect(api.status(ctx.ctx)).toMatchObject({ claim: { holder: "other" }, waiting: { why: "owner-claim" } });
		await pi.emit("session_shutdown", { type: "session_shutdown" }, ctx.ctx);
		expect(api.status(ctx.ctx).claim).toBeUndefined();
	});

	it("forwards preserve as the exact typed prefix and cancels only a pending request", async () => {
		const { pi, api } = setup();
		const ctx = contextDouble({ branch: tooSmall });
		expect(api.cancel()).toBe(false);
		const result = api.request(ctx.ctx, { instructions: "keep it", preserve: ["a"] });
		expect(result).toEqual({
			ok: true,
			customInstructions: `${COMPACT_REQUEST_PREFIX}{"version":1,"instructions":"keep it","preserve":["a"]}`,
		});
		expect(ctx.compactCalls).toHaveLength(1);
		expect(api.cancel()).toBe(true);
		const event = compactEvent(tooSmall, { reason: "manual" });
		expect(await pi.emit("session_before_compact", event, ctx.ctx)).toEqual({ cancel: true });
		expect(api.status(ctx.ctx).lastResult).toMatchObject({ outcome: "cancelled", code: "cancelled-by-api" });
		expect(api.cancel()).toBe(false);
	});

	it("persists carry through appendEntry", () => {
		const { pi, api } = setup();
		const ctx = contextDouble();
		expect(api.carry(ctx.ctx, ["focus"])).toEqual({ ok: true, items: ["focus"] });
		expect(pi.appended).toEqual([{ customType: CARRY_ENTRY_TYPE, data: { version: 1, items: ["focus"] } }]);
	});
});

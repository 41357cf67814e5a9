/**
 * The compaction API in the real Pi 1.6.0 host, driven from a second inline
 * extension that finds it over `pi.events`: a typed request with `preserve`,
 * status and pressure, an owner claim that blocks the threshold trigger until
 * its signal aborts, carry-forward that survives a reload and renders, and
 * the `__pi_vcc__` sentinel that hands the compaction to pi-vcc, and a
 * compacted entry recalled through the context tool, verified against the
 * hash the compaction recorded.
 */

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CompactionEntry, ExtensionAPI, ExtensionContext, InlineExtension } from "@earendil-works/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { type CompactionApi, compactionApiFrom, PI_VCC_SENTINEL } from "../../src/api.ts";
import piFold, { registerPiFold } from "../../src/index.ts";
import {
	callTools,
	createSdkHarness,
	FAUX_MODEL_ID,
	FAUX_PROVIDER_ID,
	reply,
	type SdkHarness,
	toolCall,
} from "../harness/sdk.ts";

/** A small continuity tail so a few turns leave something to compact. */
const HARNESS = { tools: ["read", "active_context"], settings: { compaction: { keepRecentTokens: 1_500 } } };
const FAUX_KEY = `${FAUX_PROVIDER_ID}/${FAUX_MODEL_ID}`;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** What the probe extension saw; the test reads it after each command. */
interface Probe {
	api?: CompactionApi;
	ctx?: ExtensionContext;
}

/** A second extension: it looks the API up on the bus and keeps the latest context its command ran with. */
function probeExtension(probe: Probe): InlineExtension {
	return (pi: ExtensionAPI) => {
		pi.registerCommand("probe", {
			description: "test probe",
			handler: async (_args, ctx) => {
				probe.api = compactionApiFrom(pi.events);
				probe.ctx = ctx;
			},
		});
	};
}

/** A stand-in pi-vcc, loaded before pi-fold: it answers only its sentinel and marks the event. */
const piVcc: InlineExtension = (pi: ExtensionAPI) => {
	pi.on("session_before_compact", (event) => {
		if (event.customInstructions !== PI_VCC_SENTINEL) return undefined;
		(event as unknown as Record<string, unknown>)._piVccOverriding = true;
		return {
			compaction: {
				summary: "pi-vcc summary",
				firstKeptEntryId: event.preparation.firstKeptEntryId,
				tokensBefore: event.preparation.tokensBefore,
			},
		};
	});
};

async function session(probe: Probe, options: Partial<Parameters<typeof createSdkHarness>[0]> = {}, turns = 4) {
	const harness = await createSdkHarness({
		extensions: [probeExtension(probe), piFold],
		...HARNESS,
		...options,
	});
	cleanups.push(() => harness.dispose());
	await play(harness, turns, 1);
	await harness.run("/probe");
	return harness;
}

/** Play `turns` turns, each reading a file of about 1,600 tokens. */
async function play(harness: SdkHarness, turns: number, from: number): Promise<void> {
	for (let turn = from; turn < from + turns; turn++) {
		writeFileSync(join(harness.cwd, `part-${turn}.md`), `Part ${turn}: a line of project notes.\n`.repeat(170));
		harness.enqueue(callTools([toolCall("read", { path: `part-${turn}.md` }, `call-${turn}`)]), reply(`Read ${turn}.`));
		await harness.run(`Turn ${turn}: read part-${turn}.md.`);
	}
}

function compactions(harness: SdkHarness): CompactionEntry[] {
	return harness.session.sessionManager
		.getBranch()
		.filter((entry): entry is CompactionEntry => entry.type === "compaction");
}

/** Request a compaction through the API and wait for it to finish. */
function requestAndWait(api: CompactionApi, ctx: ExtensionContext, request: Parameters<CompactionApi["request"]>[1]) {
	return new Promise<ReturnType<CompactionApi["request"]>>((resolve, reject) => {
		const result = api.request(ctx, {
			...request,
			onComplete: () => resolve(result),
			onError: (error) => reject(error),
		});
		if (!result.ok) resolve(result);
	});
}

describe("compaction API from another extension", () => {
	it("requests a typed compaction and reads status and pressure", async () => {
		const probe: Probe = {};
		const harness = await session(probe);
		const { api, ctx } = probe;
		if (!api || !ctx) throw new Error("API not found on pi.events");
		expect(api.status(ctx)).toMatchObject({ engine: "fabric", owner: "none", carry: [] });
		const pressure = api.pressure(ctx);
		expect(["ok", "warn", "urgent"]).toContain(pressure.band);
		expect(pressure.bands).toEqual({ warn: 0.6, urgent: 0.8 });

		const result = await requestAndWait(api, ctx, { preserve: ["release commit is 0badc0de"] });
		expect(result).toMatchObject({ ok: true });
		expect(result.ok && result.customInstructions?.startsWith("__pi_fabric_compact_request_v1__:{")).toBe(true);
		const [entry] = compactions(harness);
		expect(entry?.summary).toContain("release commit is 0badc0de");
		expect(api.status(ctx)).toMatchObject({
			owner: "fabric",
			lastResult: { reason: "manual", outcome: "compacted" },
		});
		expect(api.pressure(ctx).owner).toBe("fabric");

		// Recall through the context tool: a compacted entry is verified against the hash the compaction recorded.
		const compacted = harness.session.sessionManager
			.getBranch()
			.find((e) => e.type === "message" && e.message.role === "toolResult");
		if (!compacted || !entry) throw new Error("no compacted tool result");
		expect(entry.details).toMatchObject({ sourceHashes: { entries: { [compacted.id]: expect.any(String) } } });
		harness.enqueue(
			callTools([toolCall("active_context", { action: "peek", id: `@${compacted.id}` }, "peek-1")]),
			reply("Peeked."),
		);
		await harness.run("Peek that entry.");
		const peeked = harness.session.sessionManager
			.getBranch()
			.find((e) => e.type === "message" && e.message.role === "toolResult" && e.message.toolCallId === "peek-1");
		const text =
			peeked?.type === "message" && peeked.message.role === "toolResult" ? JSON.stringify(peeked.message.content) : "";
		expect(text).toContain(`verified against the hash compaction ${entry.id} recorded`);
	});

	it("a request Pi refuses leaves nothing armed: cancel() answers false and the user's next /compact compacts", async () => {
		const probe: Probe = {};
		// One turn: Pi refuses to compact ("Nothing to compact") before any extension sees the event.
		const harness = await session(probe, {}, 1);
		const { api, ctx } = probe;
		if (!api || !ctx) throw new Error("API not found on pi.events");
		const refused = await new Promise<Error | undefined>((resolve) => {
			const result = api.request(ctx, { onComplete: () => resolve(undefined), onError: (error) => resolve(error) });
			expect(result).toMatchObject({ ok: true });
		});
		expect(refused?.message).toBe("Nothing to compact (session too small)");
		expect(api.cancel()).toBe(false);

		// A cancel armed for a request Pi then refuses is disarmed with it.
		const refusedAgain = new Promise<Error | undefined>((resolve) => {
			api.request(ctx, { onComplete: () => resolve(undefined), onError: (error) => resolve(error) });
		});
		expect(api.cancel()).toBe(true);
		expect((await refusedAgain)?.message).toBe("Nothing to compact (session too small)");
		expect(api.cancel()).toBe(false);

		await play(harness, 3, 2);
		await harness.session.compact();
		expect(compactions(harness)).toHaveLength(1);
		expect(api.status(ctx)).toMatchObject({ lastResult: { reason: "manual", outcome: "compacted" } });
	});

	it("refuses an invalid typed request before Pi sees it", async () => {
		const probe: Probe = {};
		const harness = await session(probe, {}, 1);
		const { api, ctx } = probe;
		if (!api || !ctx) throw new Error("API not found on pi.events");
		const result = api.request(ctx, { preserve: Array.from({ length: 17 }, (_, i) => `item ${i}`) });
		expect(result).toMatchObject({ ok: false });
		expect(compactions(harness)).toHaveLength(0);
	});

	it("an owner claim blocks the threshold trigger until its signal aborts", async () => {
		const probe: Probe = {};
		const fold: InlineExtension = (pi) => {
			registerPiFold(pi, { compaction: { tokenThresholds: { [FAUX_KEY]: 5_000 } } });
		};
		const harness = await createSdkHarness({ extensions: [probeExtension(probe), fold], ...HARNESS });
		cleanups.push(() => harness.dispose());
		await harness.run("/probe");
		const { api, ctx } = probe;
		if (!api || !ctx) throw new Error("API not found on pi.events");
		const owner = new AbortController();
		const claimed = api.claim({ holder: "probe", signal: owner.signal });
		expect(claimed.ok).toBe(true);
		expect(api.claim({ holder: "second" })).toEqual({ ok: false, heldBy: "probe" });
		await play(harness, 4, 1);
		await harness.session.waitForIdle();
		expect(harness.session.getContextUsage()?.tokens).toBeGreaterThan(5_000);
		expect(compactions(harness)).toHaveLength(0);
		expect(api.status(ctx)).toMatchObject({ claim: { holder: "probe" }, waiting: { why: "owner-claim" } });

		owner.abort();
		expect(api.status(ctx).claim).toBeUndefined();
		await play(harness, 1, 5);
		await harness.session.waitForIdle();
		await until(() => compactions(harness).length > 0);
		expect(api.status(ctx).lastAuto).toMatchObject({ trigger: "tokens" });
	});

	it("carry survives a reload and renders under [Carry Forward]", async () => {
		const probe: Probe = {};
		const harness = await session(probe, { persist: true });
		const first = probe.api;
		if (!first || !probe.ctx) throw new Error("API not found on pi.events");
		expect(first.carry(probe.ctx, ["keep the v2 schema", "  "])).toEqual({ ok: true, items: ["keep the v2 schema"] });
		expect(first.carry(probe.ctx, ["x".repeat(4000)])).toMatchObject({ ok: false });
		await harness.session.reload();
		await harness.run("/probe");
		const { api, ctx } = probe;
		if (!api || !ctx) throw new Error("API not found after reload");
		expect(api.carry(ctx)).toEqual({ ok: true, items: ["keep the v2 schema"] });
		await requestAndWait(api, ctx, {});
		const summary = compactions(harness)[0]?.summary ?? "";
		expect(summary).toContain("[Carry Forward]\n- keep the v2 schema");
	});

	it("the __pi_vcc__ sentinel routes the compaction to pi-vcc without a warning", async () => {
		const probe: Probe = {};
		const harness = await createSdkHarness({ extensions: [piVcc, probeExtension(probe), piFold], ...HARNESS });
		cleanups.push(() => harness.dispose());
		await play(harness, 3, 1);
		await harness.run("/probe");
		const { api, ctx } = probe;
		if (!api || !ctx) throw new Error("API not found on pi.events");
		const before = harness.ui.notifications.length;
		await requestAndWait(api, ctx, { instructions: PI_VCC_SENTINEL });
		expect(compactions(harness)[0]?.summary).toBe("pi-vcc summary");
		expect(api.status(ctx)).toMatchObject({
			owner: "external",
			lastResult: { outcome: "yielded", code: "pi-vcc-sentinel" },
		});
		expect(harness.ui.notifications.slice(before)).toEqual([]);
	});
});

async function until(done: () => boolean, timeoutMs = 10_000): Promise<void> {
	const start = Date.now();
	while (!done()) {
		if (Date.now() - start > timeoutMs) throw new Error("timed out");
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}

/**
 * Property tests for fold state pi-fold did not write: records with valid
 * hashes and ids over random spans of random sessions, and a folded session
 * whose record lines are damaged at random. Whatever loads, the request the
 * `context` hook sends keeps every tool call with its result, every edit it
 * persists is one Pi accepts, and every brief in it names a fold peek
 * answers. CI runs a bounded count; PI_FOLD_FUZZ_RUNS scales it (a tenth of
 * that count here: each case is a whole session), see docs/reliability.md.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { foldSpan } from "../../src/fold/actions/actions.ts";
import { peekFold } from "../../src/fold/actions/peek.ts";
import { FoldEngine } from "../../src/fold/engine/engine.ts";
import { modelHostFacts } from "../../src/fold/engine/host-facts.ts";
import type { FoldKind } from "../../src/fold/lattice/records.ts";
import { resolveOptions } from "../../src/fold/options.ts";
import { stateEntryTypes } from "../../src/fold/state/state.ts";
import { repairToolPairing } from "../../src/session/tool-pairing.ts";
import { FoldBranch } from "../fixtures/fold.ts";
import { appendBoundary, forgedRecord } from "../fixtures/forge.ts";

const RUNS = Math.max(100, Math.floor(Number(process.env.PI_FOLD_FUZZ_RUNS ?? 300) / 10));
/**
 * A fixed seed: CI must not pass or fail by chance. PI_FOLD_FUZZ_SEED picks another for a search; a
 * counterexample one finds becomes an explicit case below (seed 43772905 found the first).
 */
const PROPERTY_SEED = Number(process.env.PI_FOLD_FUZZ_SEED ?? 1);
const TIMEOUT_MS = Math.max(60_000, RUNS * 50);
const PREFIX = "pi-fold-active-context";
const options = resolveOptions({ foldScheduling: "immediate" });
const host = modelHostFacts(undefined, options, "", "/");
const BRIEF_ID = /\[pi-fold fold (f-[0-9a-f]+)/g;

/** User turns with a few tool batches each (some with two calls), a failed reply now and then, and a reply. */
function session(turns: readonly number[]): SessionEntry[] {
	const b = new FoldBranch();
	let call = 0;
	turns.forEach((batches, turn) => {
		b.user(`turn ${turn}`);
		for (let k = 0; k < batches; k++) {
			call++;
			if (k % 3 === 2) {
				b.calls([
					{ id: `t${call}a`, name: "read", args: { path: `p${call}` } },
					{ id: `t${call}b`, name: "bash", args: { command: `c${call}` } },
				]);
				b.result(`t${call}a`, "read", `read ${call} `.repeat(10));
				b.result(`t${call}b`, "bash", `ran ${call} `.repeat(10));
			} else b.tool({ id: `t${call}`, name: "bash", args: { stage: call } }, `output ${call} `.repeat(20));
		}
		if (turn % 2 === 1) b.assistant("", { stopReason: "error", errorMessage: "overloaded" });
		b.assistant(`reply ${turn}`);
	});
	return b.entries;
}

/** What the engine's `context` hook sends for the branch, and the engine that decided it. */
function sentFor(branch: readonly SessionEntry[]): { engine: FoldEngine; sent: AgentMessage[] } {
	const engine = new FoldEngine(options);
	engine.reset(branch);
	const outcome = engine.request(host);
	return { engine, sent: [...(outcome.sent ?? engine.requestMessages())] };
}

/** The request is provider-valid, the boundary persists through Pi's checks, and every brief has a live record. */
async function expectTruthful(branch: readonly SessionEntry[]): Promise<void> {
	const { engine, sent } = sentFor(branch);
	expect(repairToolPairing(sent).messages).toBe(sent);
	const handed = engine.boundaryEntries();
	const persisted = appendBoundary(branch, handed?.custom ?? [], handed?.drafts ?? []);
	const after = sentFor(persisted);
	expect(repairToolPairing(after.sent).messages).toBe(after.sent);
	for (const { engine: at, sent: messages } of [{ engine, sent }, after]) {
		const named = new Set([...JSON.stringify(messages).matchAll(BRIEF_ID)].map((match) => match[1] ?? ""));
		for (const id of named) {
			const peek = await peekFold(at.workspace("agent", "/"), id, 0, 64);
			expect(peek.ok, `brief of ${id} without a record: ${peek.text}`).toBe(true);
		}
	}
}

const kindArb = fc.constantFrom<FoldKind>("tool-batch", "chapter", "consolidation");

/** Forged `:fold` lines over `[at % length, at % length + 1 + extra)` of the session, as the property draws them. */
function forgedLines(entries: readonly SessionEntry[], spans: readonly (readonly [number, number, FoldKind])[]) {
	const fold = stateEntryTypes(PREFIX).fold;
	return spans.map(([at, extra, kind]) => {
		const start = at % entries.length;
		const end = Math.min(entries.length, start + 1 + extra);
		return { customType: fold, data: { v: 1, record: forgedRecord(entries, start, end, kind) } };
	});
}

describe("forged and damaged fold records", () => {
	it("a consolidation forged over entries a forged tool batch also covers leaves no message out (seed 43772905)", async () => {
		const entries = session([3]);
		const lines = forgedLines(entries, [
			[19, 6, "consolidation"],
			[14, 2, "tool-batch"],
			[0, 0, "tool-batch"],
		]);
		await expectTruthful(appendBoundary(entries, lines));
	});

	it(
		"random valid-hash records over random spans never yield a provider-invalid request or a brief without a record",
		async () => {
			await fc.assert(
				fc.asyncProperty(
					fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 4 }),
					fc.array(fc.tuple(fc.nat(80), fc.nat(8), kindArb), { minLength: 1, maxLength: 5 }),
					async (turns, spans) => {
						const entries = session(turns);
						await expectTruthful(appendBoundary(entries, forgedLines(entries, spans)));
					},
				),
				{ numRuns: RUNS, seed: PROPERTY_SEED },
			);
		},
		TIMEOUT_MS,
	);

	it(
		"a folded session with record lines damaged at random shows no brief without a record",
		async () => {
			await fc.assert(
				fc.asyncProperty(
					fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 2, maxLength: 4 }),
					fc.array(fc.tuple(fc.nat(80), fc.nat(80)), { minLength: 1, maxLength: 6 }),
					fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
					fc.constantFrom<unknown>(null, [null], "x", [{ type: "entry" }]),
					async (turns, spans, damage, parts) => {
						const entries = session(turns);
						const engine = new FoldEngine(options);
						engine.reset(entries);
						for (const [a, b] of spans) {
							const ids = [entries[a % entries.length]?.id ?? "", entries[b % entries.length]?.id ?? ""];
							engine.apply(
								await foldSpan({ ...engine.workspace("command", "/"), freshTailStart: entries.length }, ids),
							);
						}
						const handed = engine.boundaryEntries();
						const folded = appendBoundary(entries, handed?.custom ?? [], handed?.drafts ?? []);
						const types = stateEntryTypes(PREFIX);
						let line = 0;
						const damaged = folded.map((entry) => {
							if (entry.type !== "custom" || entry.customType !== types.fold) return entry;
							if (!damage[line++ % damage.length]) return entry;
							const data = entry.data as { record: object };
							return { ...entry, data: { ...data, record: { ...data.record, parts } } };
						});
						await expectTruthful(damaged);
					},
				),
				{ numRuns: RUNS, seed: PROPERTY_SEED },
			);
		},
		TIMEOUT_MS,
	);
});

/**
 * Property and fuzz tests (fast-check). CI runs a bounded count; set
 * PI_FOLD_FUZZ_RUNS for a large run (docs/reliability.md records one):
 *
 *   PI_FOLD_FUZZ_RUNS=1000000 npx vitest run --project unit test/fuzz
 *
 * The lattice sequences run a tenth of that count (each is a whole session).
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { buildSessionProjection, type SessionEntry } from "@earendil-works/pi-coding-agent";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeCustomInstructions, encodePreserveRequest } from "../../src/compaction/records/instructions.ts";
import {
	expandFold,
	foldSpan,
	protectEntries,
	reboundary,
	rebrief,
	refoldFold,
	unmarkFold,
} from "../../src/fold/actions/actions.ts";
import { peekFold } from "../../src/fold/actions/peek.ts";
import { editDrafts, planWindow } from "../../src/fold/engine/materialize.ts";
import { checkLattice } from "../../src/fold/lattice/lattice-view.ts";
import { analyzeBranch } from "../../src/fold/lattice/units.ts";
import { liveLattice, rebuildState, stateEntryTypes } from "../../src/fold/state/state.ts";
import { canonicalJson, canonicalSpanBytes, sha256Hex } from "../../src/session/canonical.ts";
import { repairToolPairing } from "../../src/session/tool-pairing.ts";
import { FoldBranch, persistDrafts } from "../fixtures/fold.ts";
import { foldWorkspace } from "../fixtures/workspace.ts";
import { pairingDefects } from "../harness/provider-rules.ts";

/** Cases per property in CI; a large run sets the variable. */
const RUNS = Number(process.env.PI_FOLD_FUZZ_RUNS ?? 300);
const SEQUENCE_RUNS = Math.max(20, Math.floor(RUNS / 10));
/** A long fuzz run must not hit vitest's per-test timeout. */
const TIMEOUT_MS = Math.max(60_000, RUNS * 5);

const PREFIX = "pi-fold-active-context";

describe("persisted state decoding", () => {
	it(
		"never throws on arbitrary JSON and never trusts it",
		() => {
			const types = stateEntryTypes(PREFIX);
			fc.assert(
				fc.property(
					fc.array(fc.tuple(fc.constantFrom(types.fold, types.delta, types.checkpoint), fc.jsonValue()), {
						maxLength: 8,
					}),
					(items) => {
						const branch = items.map(
							([customType, data], index): SessionEntry => ({
								type: "custom",
								customType,
								data: typeof data === "object" && data !== null && !Array.isArray(data) ? { v: 1, ...data } : data,
								id: `x${index}`,
								parentId: index === 0 ? null : `x${index - 1}`,
								timestamp: "2026-01-01T00:00:00.000Z",
							}),
						);
						const state = rebuildState(branch, PREFIX);
						// Whatever was accepted is usable: the live lattice builds and the window plans without throwing.
						liveLattice(state);
						expect(state.skipped).toBeGreaterThanOrEqual(0);
					},
				),
				{ numRuns: RUNS },
			);
		},
		TIMEOUT_MS,
	);
});

describe("typed preserve request decoder", () => {
	it(
		"never throws, on any text",
		() => {
			fc.assert(
				fc.property(
					fc.oneof(
						fc.string(),
						fc.string({ unit: "binary" }),
						fc.jsonValue().map((v) => `__pi_fabric_compact_request_v1__:${JSON.stringify(v)}`),
					),
					(text) => {
						const decoded = decodeCustomInstructions(text);
						expect(typeof decoded.ok).toBe("boolean");
					},
				),
				{ numRuns: RUNS },
			);
		},
		TIMEOUT_MS,
	);

	it(
		"accepts exactly what the encoder produces and decodes it back",
		() => {
			fc.assert(
				fc.property(
					fc.option(fc.string({ maxLength: 200 }), { nil: undefined }),
					fc.option(fc.array(fc.string({ maxLength: 60 }), { maxLength: 20 }), { nil: undefined }),
					(instructions, preserve) => {
						const encoded = encodePreserveRequest({ instructions, preserve });
						if (!encoded.ok) return;
						const decoded = decodeCustomInstructions(encoded.text);
						expect(decoded.ok).toBe(true);
					},
				),
				{ numRuns: RUNS },
			);
		},
		TIMEOUT_MS,
	);
});

describe("orphan repair", () => {
	type Step = { kind: "user" } | { kind: "call"; ids: string[] } | { kind: "result"; turn: number; id: string };
	const step: fc.Arbitrary<Step> = fc.oneof(
		fc.constant({ kind: "user" as const }),
		fc
			.uniqueArray(fc.constantFrom("a", "b", "c"), { minLength: 1, maxLength: 3 })
			.map((ids) => ({ kind: "call" as const, ids })),
		fc.record({ kind: fc.constant("result" as const), turn: fc.nat(4), id: fc.constantFrom("a", "b", "c", "z") }),
	);
	/** Messages from steps; call ids are unique per assistant message (`<message index>:<id>`), as models issue them. */
	function messagesOf(steps: readonly Step[]): AgentMessage[] {
		return steps.map((s, index): AgentMessage => {
			if (s.kind === "user") return { role: "user", content: "hi", timestamp: 0 };
			if (s.kind === "call") {
				return {
					role: "assistant",
					content: s.ids.map((id) => ({ type: "toolCall", id: `${index}:${id}`, name: "bash", arguments: {} })),
					api: "openai-completions",
					provider: "p",
					model: "m",
					usage: {
						input: 0,
						output: 0,
						cacheRead: 0,
						cacheWrite: 0,
						totalTokens: 0,
						cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
					},
					stopReason: "toolUse",
					timestamp: 0,
				};
			}
			return {
				role: "toolResult",
				toolCallId: `${Math.max(0, index - 1 - s.turn)}:${s.id}`,
				toolName: "bash",
				content: [{ type: "text", text: "out" }],
				isError: false,
				timestamp: 0,
			};
		});
	}

	it(
		"always yields provider-valid pairing and is idempotent",
		() => {
			fc.assert(
				fc.property(fc.array(step, { maxLength: 12 }), (steps) => {
					const once = repairToolPairing(messagesOf(steps)).messages;
					const wire = once.map((m) =>
						m.role === "assistant"
							? {
									role: "assistant",
									tool_calls: m.content.flatMap((p) => (p.type === "toolCall" ? [{ id: p.id }] : [])),
								}
							: m.role === "toolResult"
								? { role: "tool", tool_call_id: m.toolCallId }
								: { role: m.role },
					);
					// A final assistant's calls are still being answered (pi-ai fills placeholders for those).
					const final = once.at(-1)?.role === "assistant" ? once.length - 1 : -1;
					const defects = pairingDefects(wire).filter((d) => d.kind !== "missing-result" || d.messageIndex !== final);
					expect(defects).toEqual([]);
					expect(canonicalJson(repairToolPairing(once).messages)).toBe(canonicalJson(once));
				}),
				{ numRuns: RUNS },
			);
		},
		TIMEOUT_MS,
	);
});

/** A session of user turns, each with a few tool batches and a reply; ids e1, e2, … and tool calls t1, t2, …. */
function session(turns: readonly number[]): SessionEntry[] {
	const b = new FoldBranch();
	let call = 0;
	turns.forEach((batches, turn) => {
		b.user(`turn ${turn}`);
		for (let k = 0; k < batches; k++) {
			call++;
			b.tool(
				{ id: `t${call}`, name: k % 2 === 0 ? "read" : "bash", args: { stage: call } },
				`output ${call} `.repeat(20),
			);
		}
		b.assistant(`reply ${turn}`);
	});
	return b.entries;
}

type Op =
	| { op: "fold"; a: number; b: number }
	| { op: "consolidate"; a: number; b: number }
	| { op: "expand" | "refold" | "rebrief" | "reboundary" | "unmark" | "peek"; fold: number }
	| { op: "protect" | "unprotect"; entry: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
	fc.record({ op: fc.constant("fold" as const), a: fc.nat(60), b: fc.nat(60) }),
	fc.record({ op: fc.constant("consolidate" as const), a: fc.nat(20), b: fc.nat(20) }),
	fc.record({
		op: fc.constantFrom(
			"expand" as const,
			"refold" as const,
			"rebrief" as const,
			"reboundary" as const,
			"unmark" as const,
			"peek" as const,
		),
		fold: fc.nat(20),
	}),
	fc.record({ op: fc.constantFrom("protect" as const, "unprotect" as const), entry: fc.nat(60) }),
);

describe("lattice and state under random operation sequences", () => {
	it(
		"keep every structural rule, persist only edits Pi accepts, and round-trip every fold to its exact bytes",
		async () => {
			await fc.assert(
				fc.asyncProperty(
					fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 5 }),
					fc.constantFrom("immediate" as const, "epoch" as const),
					fc.array(opArb, { maxLength: 16 }),
					async (turns, scheduling, ops) => {
						const entries = session(turns);
						const fold = foldWorkspace(entries, { options: { foldScheduling: scheduling }, cwd: "/" });
						const { ws, apply, state: current } = fold;
						const idAt = (n: number) => entries[n % entries.length]?.id ?? "";
						const foldAt = (n: number) => {
							const state = current();
							const ids = [...liveLattice(state).folds.keys(), ...state.data.marks.map((m) => m.record.id)];
							return ids.length === 0 ? "f-000000000000" : (ids[n % ids.length] ?? "");
						};
						for (const op of ops) {
							const w = ws();
							if (op.op === "fold") apply(await foldSpan(w, [idAt(op.a), idAt(op.b)]));
							else if (op.op === "consolidate") apply(await foldSpan(w, [foldAt(op.a), foldAt(op.b)]));
							else if (op.op === "expand") apply(await expandFold(w, foldAt(op.fold)));
							else if (op.op === "refold") apply(refoldFold(w, foldAt(op.fold)));
							else if (op.op === "rebrief") apply(rebrief(w, foldAt(op.fold)));
							else if (op.op === "reboundary") apply(await reboundary(w, foldAt(op.fold)));
							else if (op.op === "unmark") apply(unmarkFold(w, foldAt(op.fold)));
							else if (op.op === "peek") expect((await peekFold(w, foldAt(op.fold))).code).not.toBe("integrity");
							else if (op.op === "protect" || op.op === "unprotect")
								apply(protectEntries(w, [idAt(op.entry)], op.op === "protect"));
						}
						const view = analyzeBranch(entries);
						const lattice = liveLattice(current());
						expect(checkLattice(lattice, view, { verifySources: true })).toEqual([]);
						// The window Pi would build accepts every edit (persistDrafts runs Pi's own checks).
						const expanded = new Set(current().data.expanded);
						const plan = planWindow(entries, { lattice, expanded, brandNoun: "ac" });
						const persisted = persistDrafts(entries, editDrafts(entries, plan));
						buildSessionProjection(persisted, persisted.at(-1)?.id);
						// Every fold is one exact peek away.
						for (const record of lattice.folds.values()) {
							const peek = await peekFold(ws(), record.id, 0, 48_000);
							expect(peek.ok).toBe(true);
							const leaves = entries.filter((entry) => peek.text.includes(`"id":"${entry.id}"`));
							if (record.sizes.sourceBytes <= 48_000)
								expect(sha256Hex(canonicalSpanBytes(leaves))).toBe(record.sourceHash);
						}
					},
				),
				{ numRuns: SEQUENCE_RUNS },
			);
		},
		TIMEOUT_MS,
	);
});

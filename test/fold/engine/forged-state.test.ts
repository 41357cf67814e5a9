/**
 * Fold state pi-fold did not write, or could not read back, never reaches
 * the model as a lie: a hash-consistent record over a span that cuts a tool
 * call from its result shows no brief (the request stays provider-valid),
 * and a brief whose record was skipped on load leaves the window at the
 * next request (it would advertise an id nothing answers).
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { buildSessionProjection, type SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { peekFold } from "../../../src/fold/actions/peek.ts";
import { FoldEngine } from "../../../src/fold/engine/engine.ts";
import { modelHostFacts } from "../../../src/fold/engine/host-facts.ts";
import { checkLattice } from "../../../src/fold/lattice/lattice-view.ts";
import { resolveOptions } from "../../../src/fold/options.ts";
import { stateEntryTypes } from "../../../src/fold/state/state.ts";
import { repairToolPairing } from "../../../src/session/tool-pairing.ts";
import { FoldBranch, threeTurns } from "../../fixtures/fold.ts";
import { appendBoundary, forgedRecord, twoFoldsHanded } from "../../fixtures/forge.ts";

const PREFIX = "pi-fold-active-context";
const options = resolveOptions();
const host = modelHostFacts(undefined, options, "", "/");

/** What the engine's `context` hook sends for the branch: its preview, or Pi's projection as it stands. */
function sentFor(branch: readonly SessionEntry[]): { engine: FoldEngine; sent: AgentMessage[] } {
	const engine = new FoldEngine(options);
	engine.reset(branch);
	const outcome = engine.request(host);
	return { engine, sent: [...(outcome.sent ?? engine.requestMessages())] };
}

function text(messages: readonly AgentMessage[]): string {
	return JSON.stringify(messages);
}

describe("a forged, hash-consistent record", () => {
	/** user, [call a, result a], reply, user: the tool batch is entries 1..2. */
	function batchSession(): SessionEntry[] {
		const b = new FoldBranch();
		b.user("go");
		b.tool({ id: "a", name: "bash", args: { command: "make" } }, "alpha output");
		b.assistant("done");
		b.user("next");
		return b.entries;
	}

	it.each([
		["a tool call without its result", 1, 2],
		["a result with the reply after it", 2, 4],
	])("over %s shows no brief, and the request keeps every call with its result", (_, start, end) => {
		const entries = batchSession();
		const forged = forgedRecord(entries, start, end, "tool-batch");
		const branch = appendBoundary(entries, [
			{ customType: stateEntryTypes(PREFIX).fold, data: { v: 1, record: forged } },
		]);
		const { engine, sent } = sentFor(branch);
		expect(repairToolPairing(sent).messages).toBe(sent);
		expect(text(sent)).not.toContain(forged.id);
		expect(text(sent)).toContain("alpha output");
		expect(engine.pendingDrafts()).toEqual([]);
		// The same check names it for verify, and the actions treat it as not on this branch.
		expect(checkLattice(engine.lattice(), engine.view).map((defect) => defect.code)).toEqual(["misaligned"]);
	});
});

describe("a brief whose record was skipped on load", () => {
	async function foldedAndPersisted(): Promise<{ branch: SessionEntry[]; foldIds: string[] }> {
		const { entries, custom, drafts, foldIds } = await twoFoldsHanded(options);
		return { branch: appendBoundary(entries, custom, drafts), foldIds };
	}

	it("shows the briefs while the records load", async () => {
		const { branch, foldIds } = await foldedAndPersisted();
		const { sent } = sentFor(branch);
		for (const id of foldIds) expect(text(sent)).toContain(`fold ${id}`);
	});

	it("goes back to the raw entries at the next request, as if never folded", async () => {
		const { branch, foldIds } = await foldedAndPersisted();
		const types = stateEntryTypes(PREFIX);
		// Damage every record line: the state decoder skips them all (named and counted).
		const damaged = branch.map((entry) =>
			entry.type === "custom" && entry.customType === types.fold
				? { ...entry, data: { v: 1, record: { ...(entry.data as { record: object }).record, parts: null } } }
				: entry,
		);
		const { engine, sent } = sentFor(damaged);
		expect(engine.foldState.skipped).toBeGreaterThan(0);
		for (const id of foldIds) {
			expect(text(sent)).not.toContain(id);
			expect((await peekFold(engine.workspace("agent", "/"), id)).ok).toBe(false);
		}
		const raw = buildSessionProjection(threeTurns().entries, "e13").messages.filter((m) => m.role !== "system");
		expect(text(sent)).toBe(text(raw));
		expect(repairToolPairing(sent).messages).toBe(sent);
		// Persisting what the engine decided leaves a branch that shows the raw entries with no preview.
		const handed = engine.boundaryEntries();
		const healed = appendBoundary(damaged, handed?.custom ?? [], handed?.drafts ?? []);
		const again = sentFor(healed);
		expect(text(again.sent)).toBe(text(raw));
		expect(again.engine.pendingDrafts()).toEqual([]);
	});

	it("recognises briefs headed with the brand noun's earlier default (active-context)", async () => {
		const { branch, foldIds } = await foldedAndPersisted();
		const types = stateEntryTypes(PREFIX);
		// Records skipped on load (damaged), briefs headed as before issue 19.5.
		const earlier = branch.map((entry): SessionEntry => {
			if (entry.type === "custom" && entry.customType === types.fold)
				return { ...entry, data: { v: 1, record: { ...(entry.data as { record: object }).record, parts: null } } };
			if (entry.type !== "context_edit" || !entry.replacement) return entry;
			const content = JSON.parse(
				JSON.stringify(entry.replacement.content).replaceAll("[pi-fold fold ", "[active-context fold "),
			);
			return { ...entry, replacement: { content } };
		});
		expect(JSON.stringify(earlier)).toContain("[active-context fold ");
		const { sent } = sentFor(earlier);
		for (const id of foldIds) expect(text(sent)).not.toContain(id);
		const raw = buildSessionProjection(threeTurns().entries, "e13").messages.filter((m) => m.role !== "system");
		expect(text(sent)).toBe(text(raw));
	});

	it("leaves another extension's edits alone", async () => {
		const { entries } = threeTurns();
		const other = appendBoundary(
			entries,
			[],
			[
				{ type: "context_edit", targetId: "e4", replacement: { content: [{ type: "text", text: "[someone] edit" }] } },
				{ type: "context_edit", targetId: "e13", replacement: null },
			],
		);
		const { engine, sent } = sentFor(other);
		expect(engine.pendingDrafts()).toEqual([]);
		expect(text(sent)).toContain("[someone] edit");
	});
});

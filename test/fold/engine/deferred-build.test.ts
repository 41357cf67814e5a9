/**
 * A reset rebuilds the fold state at once and the branch (view, window,
 * lattice) at first need, so a resumed long session's first request does
 * not wait for a linear pass over its branch: with the host's own list,
 * under the serving budget, with every fold entry decoded and every brief in
 * the window its record's, it goes out as Pi projected it (the persisted
 * window); otherwise the branch is built first and the request previews
 * what the fold state shows. Whatever needs the branch builds
 * it, and what a stopped session left unpersisted reaches the next request.
 */

import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { buildSessionProjection, type SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { FoldEngine } from "../../../src/fold/engine/engine.ts";
import { modelHostFacts } from "../../../src/fold/engine/host-facts.ts";
import { resolveOptions } from "../../../src/fold/options.ts";
import { stateEntryTypes } from "../../../src/fold/state/state.ts";
import { appendBoundary, twoFoldsHanded } from "../../fixtures/forge.ts";

const options = resolveOptions();
const host = modelHostFacts(undefined, options, "", "/");

/** What Pi sends for a branch: its projection, system messages aside. */
function piProjection(branch: SessionEntry[]): AgentMessage[] {
	return buildSessionProjection(branch, branch.at(-1)?.id ?? null).messages.filter((m) => m.role !== "system");
}

/** Two folds, their records and edits persisted; also the branch with the records but not yet the edits (a stop between). */
async function foldedSession(): Promise<{ persisted: SessionEntry[]; editsLost: SessionEntry[]; foldIds: string[] }> {
	const { entries, custom, drafts, foldIds } = await twoFoldsHanded(options);
	return { persisted: appendBoundary(entries, custom, drafts), editsLost: appendBoundary(entries, custom), foldIds };
}

describe("the engine after a reset", () => {
	it("sends the first request as persisted without building the branch, and builds when the branch is needed", async () => {
		const { persisted, foldIds } = await foldedSession();
		const engine = new FoldEngine(options);
		engine.reset(persisted);
		expect(engine.built).toBe(false);
		const messages = piProjection(persisted);
		const outcome = engine.request(host, messages);
		expect(outcome.refused).toBeUndefined();
		expect(outcome.sent).toBeUndefined();
		expect(engine.built).toBe(false);
		// The fold state is there already (the lost-fold notice reads it before the first request).
		expect(engine.foldState.records.map((record) => record.id)).toEqual(foldIds);
		expect(engine.lostFolds()).toEqual([]);
		expect(engine.built).toBe(false);
		// The next request sees the same window: no rewrite, and nothing left to draft.
		expect(engine.pendingDrafts()).toEqual([]);
		expect(engine.built).toBe(true);
		const next = engine.request(host, messages);
		expect(next.rewrite).toBeUndefined();
		expect(next.sent).toBeUndefined();
	});

	it("takes entries appended before the build into it", async () => {
		const { persisted } = await foldedSession();
		const engine = new FoldEngine(options);
		engine.reset(persisted);
		const grown = appendBoundary(persisted, [{ customType: "other", data: {} }]);
		engine.append(grown.slice(persisted.length));
		engine.build();
		expect(engine.entries.map((entry) => entry.id)).toEqual(grown.map((entry) => entry.id));
	});

	it("previews what a stopped session left unpersisted from the second request on", async () => {
		const { persisted, editsLost, foldIds } = await foldedSession();
		const engine = new FoldEngine(options);
		engine.reset(editsLost);
		const first = engine.request(host, piProjection(editsLost));
		expect(first.sent).toBeUndefined();
		const second = engine.request(host, piProjection(editsLost));
		const text = JSON.stringify(second.sent);
		for (const id of foldIds) expect(text).toContain(`fold ${id}`);
		expect(text).toBe(JSON.stringify(piProjection(persisted)));
		expect(second.rewrite?.causes).toContain("commit");
	});

	it("builds before the first request when a fold entry did not decode: a brief must not advertise a lost record", async () => {
		const { persisted, foldIds } = await foldedSession();
		const types = stateEntryTypes(options.entryTypePrefix);
		const damaged = persisted.map((entry) =>
			entry.type === "custom" && entry.customType === types.fold
				? { ...entry, data: { v: 1, record: { ...(entry.data as { record: object }).record, parts: null } } }
				: entry,
		);
		const engine = new FoldEngine(options);
		engine.reset(damaged);
		const outcome = engine.request(host, piProjection(damaged));
		expect(engine.built).toBe(true);
		for (const id of foldIds) expect(JSON.stringify(outcome.sent)).not.toContain(id);
	});

	it("builds before the first request when a brief's record line is gone: its id would answer unknown-fold", async () => {
		const { persisted, foldIds } = await foldedSession();
		const types = stateEntryTypes(options.entryTypePrefix);
		const [lost, kept] = foldIds;
		// The first fold's record line is gone from the file (a crash of another writer, a hand edit): another line
		// stands where it was, so the branch still links; nothing failed to decode.
		const missing = persisted.map((entry) =>
			entry.type === "custom" &&
			entry.customType === types.fold &&
			(entry.data as { record: { id: string } }).record.id === lost
				? { ...entry, customType: "other", data: {} }
				: entry,
		);
		const engine = new FoldEngine(options);
		engine.reset(missing);
		expect(engine.foldState.skipped).toBe(0);
		const sent = JSON.stringify(engine.request(host, piProjection(missing)).sent);
		expect(engine.built).toBe(true);
		expect(sent).not.toContain(`fold ${lost}`);
		expect(sent).toContain(`fold ${kept}`);
	});

	it("builds before the first request when a brief in the window is not its record's: the record's goes out", async () => {
		const { persisted, foldIds } = await foldedSession();
		const [forged] = foldIds;
		const edited = persisted.map((entry) => {
			const content = entry.type === "context_edit" ? entry.replacement?.content : undefined;
			const first = Array.isArray(content) ? content[0] : undefined;
			if (entry.type !== "context_edit" || first?.type !== "text" || !first.text.includes(`fold ${forged} ·`))
				return entry;
			const text = `${first.text.split("\n", 1)[0]}\nNothing of note happened here.`;
			return { ...entry, replacement: { content: [{ type: "text" as const, text }] } };
		});
		expect(JSON.stringify(edited)).toContain("Nothing of note happened here.");
		const engine = new FoldEngine(options);
		engine.reset(edited);
		const sent = JSON.stringify(engine.request(host, piProjection(edited)).sent);
		expect(engine.built).toBe(true);
		expect(sent).not.toContain("Nothing of note happened here.");
		expect(sent).toBe(JSON.stringify(piProjection(persisted)));
	});

	it("builds before the first request when it is over the serving budget: the fence may fold", async () => {
		const { persisted } = await foldedSession();
		const engine = new FoldEngine(options);
		engine.reset(persisted);
		const messages = piProjection(persisted);
		const tight = { ...host, budget: 10, limit: 10 };
		expect(engine.overBudget(tight, messages)).toBe(true);
		expect(engine.built).toBe(false);
		const outcome = engine.request(tight, messages);
		expect(engine.built).toBe(true);
		expect(outcome.refused).toBeDefined();
	});
});

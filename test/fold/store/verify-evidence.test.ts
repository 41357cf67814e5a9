/**
 * `pi-fold verify` reads every evidence artifact the transcript names (issue
 * 32: evidence is part of what the fold state references): an ingested
 * result's window text names its artifact by the peek call it carries.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { evidenceReferences } from "../../../src/fold/store/evidence.ts";
import { createMemoryFoldStore } from "../../../src/fold/store/store.ts";
import { verifySession } from "../../../src/fold/store/verify.ts";
import { sha256Hex } from "../../../src/session/canonical.ts";
import { zeroUsage } from "../../fixtures/common.ts";

const artifact = new TextEncoder().encode('{"content":[{"type":"text","text":"a large MCP result"}]}');
const hash = sha256Hex(artifact);

/** A session whose one tool result was ingested as evidence (the window text names the artifact). */
function session(text: string): SessionEntry[] {
	const base = { timestamp: "2026-01-01T00:00:00.000Z" };
	return [
		{
			...base,
			type: "message",
			id: "a1",
			parentId: null,
			message: {
				role: "assistant",
				content: [{ type: "toolCall", id: "c1", name: "mcp__srv__get", arguments: {} }],
				api: "faux",
				provider: "faux",
				model: "faux-1",
				usage: zeroUsage(),
				stopReason: "toolUse",
				timestamp: 1,
			},
		},
		{
			...base,
			type: "message",
			id: "r1",
			parentId: "a1",
			message: {
				role: "toolResult",
				toolCallId: "c1",
				toolName: "mcp__srv__get",
				content: [{ type: "text", text }],
				isError: false,
				timestamp: 2,
			},
		},
	] as SessionEntry[];
}

const windowText = `[pi-fold evidence] mcp__srv__get returned 40,000 bytes. Read it back: active_context {"action":"peek","id":"evidence:${hash}"}`;

describe("verify and evidence", () => {
	it("finds the artifacts ingested results name, and only those", () => {
		expect([...evidenceReferences(session(windowText))]).toEqual([[hash, "r1"]]);
		expect(evidenceReferences(session(`the model mentions evidence:${hash} in passing`)).size).toBe(0);
	});

	it("reads and hashes each: counted when intact, a named defect when missing or flipped", async () => {
		const blobs = new Map<string, Uint8Array>();
		const evidence = createMemoryFoldStore({ blobs });
		const entries = session(windowText);
		const missing = await verifySession(
			entries,
			{ store: createMemoryFoldStore(), evidence },
			"pi-fold-active-context",
		);
		expect(missing.defects.map((d) => [d.kind, d.where])).toEqual([["evidence-missing", "r1"]]);

		await evidence.put(artifact);
		const clean = await verifySession(entries, { store: createMemoryFoldStore(), evidence }, "pi-fold-active-context");
		expect(clean.defects).toEqual([]);
		expect(clean.checked.evidence).toBe(1);

		const stored = blobs.get(hash);
		if (stored) stored[3] = (stored[3] ?? 0) ^ 0x01;
		const flipped = await verifySession(
			entries,
			{ store: createMemoryFoldStore(), evidence },
			"pi-fold-active-context",
		);
		expect(flipped.defects.map((d) => [d.kind, d.where])).toEqual([["evidence-corrupt", "r1"]]);
		expect(flipped.defects[0]?.problem).toContain(`evidence artifact ${hash}`);
	});
});

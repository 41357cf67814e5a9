import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
	EVIDENCE_DIR_NAME,
	EVIDENCE_HEAD_BYTES,
	EVIDENCE_OVERSIZED_BYTES,
	evidenceArtifact,
	evidenceOwner,
	evidenceWindowText,
	formatEvidence,
	parseEvidenceAddress,
	type ToolResultShape,
} from "../../../src/fold/store/evidence.ts";
import { EvidenceStore, evidenceDir } from "../../../src/fold/store/evidence-store.ts";
import { sha256Hex } from "../../../src/session/canonical.ts";

const big = (seed: string, bytes = EVIDENCE_OVERSIZED_BYTES + 10): ToolResultShape => ({
	toolName: "mcp__srv__big",
	toolCallId: "c1",
	content: [{ type: "text", text: `${seed} ${"é".repeat(bytes / 2)}` }],
	structuredContent: { rows: [1, 2, 3], seed },
});

describe("evidence", () => {
	it("owners: mcp__<server>__<tool> projects the server; other names the entryTypePrefix namespace", () => {
		expect(evidenceOwner("mcp__github__search", "pfx")).toEqual({ server: "github", namespace: "pfx", parsed: true });
		expect(evidenceOwner("lookup", "pfx")).toEqual({ server: "pfx", namespace: "pfx", parsed: false });
		expect(evidenceOwner("mcp____x", "pfx").parsed).toBe(false);
	});

	it("the evidence directory is the prefix's own: pi-fold-evidence by default, another namespace apart", () => {
		expect(evidenceDir("/s", "id", "pi-fold-active-context")).toBe(join("/s", EVIDENCE_DIR_NAME, "id"));
		expect(evidenceDir("/s", "id", "acme-active-context")).toBe(join("/s", "acme-evidence", "id"));
		expect(evidenceDir("/s", "id", "team.ctx")).toBe(join("/s", "team.ctx-evidence", "id"));
	});

	it("an oversized result becomes a 0444 artifact in a 0700 directory whose hash matches and holds the exact result", async () => {
		const sessionDir = mkdtempSync(join(tmpdir(), "pi-fold-evidence-"));
		const root = evidenceDir(sessionDir, "s1", "pi-fold-active-context");
		expect(root).toBe(join(sessionDir, "pi-fold-evidence", "s1"));
		const store = new EvidenceStore(root);
		const result = big("a");
		const outcome = await store.ingest(result);
		if (!outcome.ingested) throw new Error(outcome.reason);
		const path = join(root, "sha256", outcome.hash.slice(0, 2), outcome.hash);
		const bytes = readFileSync(path);
		expect(statSync(path).mode & 0o777).toBe(0o444);
		expect(statSync(join(sessionDir, "pi-fold-evidence", "s1")).mode & 0o777).toBe(0o700);
		expect(sha256Hex(bytes)).toBe(outcome.hash);
		expect(JSON.parse(bytes.toString("utf8"))).toEqual({
			content: result.content,
			structuredContent: result.structuredContent,
		});
		// Paged reads through the store come back verified and whole.
		let text = "";
		for (let offset: number | undefined = 0; offset !== undefined; ) {
			const slice = await store.read(outcome.hash, offset, 10_000);
			text += slice.text;
			offset = slice.nextOffset;
		}
		expect(Buffer.from(text, "utf8").equals(bytes)).toBe(true);
		// The same result again reuses the artifact and costs nothing.
		expect(await store.ingest(result)).toMatchObject({ ingested: true, reused: true });
		expect(store.facts(true)).toMatchObject({ artifacts: 1, bytes: bytes.length });
		expect(
			(await store.ingest({ ...result, content: [{ type: "text", text: "small" }], structuredContent: undefined }))
				.ingested,
		).toBe(false);
	});

	it("the session cap holds across many results; past it nothing is written and status says so", async () => {
		const sessionDir = mkdtempSync(join(tmpdir(), "pi-fold-evidence-"));
		const root = evidenceDir(sessionDir, "s2", "pi-fold-active-context");
		const one = evidenceArtifact(big("0")).length;
		const limits = { capBytes: one * 3 + 100, oversizedBytes: EVIDENCE_OVERSIZED_BYTES };
		const store = new EvidenceStore(root, limits);
		const outcomes = [];
		for (let i = 0; i < 8; i++) outcomes.push(await store.ingest(big(String(i))));
		expect(outcomes.filter((o) => o.ingested)).toHaveLength(3);
		expect(outcomes.slice(3).every((o) => !o.ingested && o.reason === "over-cap")).toBe(true);
		const written = readdirSync(join(root, "sha256"), { recursive: true, withFileTypes: true }).filter((e) =>
			e.isFile(),
		);
		expect(written).toHaveLength(3);
		expect(written.reduce((sum, e) => sum + statSync(join(e.parentPath, e.name)).size, 0)).toBeLessThanOrEqual(
			limits.capBytes,
		);
		// A new store over the same directory (a resume) counts what is there: the cap still holds.
		const resumed = new EvidenceStore(root, limits);
		expect(await resumed.ingest(big("late"))).toMatchObject({ ingested: false, reason: "over-cap" });
		expect(resumed.facts(true)).toMatchObject({ artifacts: 3, refusedOverCap: 1 });
		expect(formatEvidence(resumed.facts(true))).toMatch(
			/Session cap reached: 1 oversized results were not ingested and stay in the window as returned/,
		);
	});

	it("a session without a file ingests nothing", async () => {
		expect(await new EvidenceStore(undefined).ingest(big("x"))).toMatchObject({
			ingested: false,
			reason: "no-session-file",
		});
	});

	it("the window text is bounded and says how to get the exact bytes back", () => {
		const result = big("w", 200_000);
		const hash = "a".repeat(64);
		const text = evidenceWindowText({
			result,
			hash,
			bytes: 200_000,
			owner: evidenceOwner(result.toolName, "pfx"),
			brandNoun: "active-context",
			contextToolName: "active_context",
		});
		expect(text).toContain(`active_context {"action":"peek","id":"evidence:${hash}"}`);
		expect(text).toContain('MCP server "srv"');
		expect(Buffer.byteLength(text)).toBeLessThan(EVIDENCE_HEAD_BYTES + 1_000);
		expect(parseEvidenceAddress(`evidence:${hash}`)).toBe(hash);
		expect(parseEvidenceAddress("evidence:../x")).toBeUndefined();
	});
});

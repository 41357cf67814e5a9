/**
 * Evidence says what it is: a tampered artifact is an evidence integrity
 * failure (not a "fold blob" with code unknown-id), the directory follows
 * the entry type prefix, and a session id no directory can be named by is
 * said to be that, not "no file".
 */

import { chmodSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { storeLine } from "../../../src/fold/actions/status.ts";
import { resolveOptions } from "../../../src/fold/options.ts";
import { EvidenceHost } from "../../../src/fold/pi/evidence-host.ts";
import { openSessionStore } from "../../../src/fold/pi/runtime-support.ts";
import { formatEvidence } from "../../../src/fold/store/evidence.ts";

const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function host(prefix?: string) {
	const sessionDir = mkdtempSync(join(tmpdir(), "pi-fold-evidence-host-"));
	dirs.push(sessionDir);
	const options = resolveOptions({ isMcpTool: () => true, ...(prefix ? { entryTypePrefix: prefix } : {}) });
	const evidence = new EvidenceHost(options);
	evidence.open(join(sessionDir, "s.jsonl"), sessionDir, "s1");
	return { evidence, sessionDir };
}

const big = {
	toolName: "mcp__srv__get",
	toolCallId: "c1",
	content: [{ type: "text" as const, text: "x".repeat(40_000) }],
};

describe("evidence says what it is", () => {
	it("a tampered artifact is an evidence integrity failure with code integrity", async () => {
		const { evidence, sessionDir } = host();
		expect(await evidence.onToolResult(big)).toBeDefined();
		const root = join(sessionDir, "pi-fold-evidence", "s1", "sha256");
		const shard = readdirSync(root)[0] ?? "";
		const hash = readdirSync(join(root, shard))[0] ?? "";
		const path = join(root, shard, hash);
		chmodSync(path, 0o644);
		writeFileSync(path, "tampered");
		const peek = await evidence.peek(`evidence:${hash}`);
		expect(peek).toMatchObject({ ok: false, code: "integrity" });
		expect(peek.text).toMatch(/^Evidence artifact .* fails SHA-256 verification .* altered after it was written/);
		expect(peek.text).not.toMatch(/fold blob|the fold/i);
		const missing = await evidence.peek(`evidence:${"0".repeat(64)}`);
		expect(missing).toMatchObject({ ok: false, code: "missing" });
	});

	it("writes artifacts under the prefix's own evidence directory", async () => {
		const { evidence, sessionDir } = host("acme-active-context");
		expect(await evidence.onToolResult(big)).toBeDefined();
		expect(readdirSync(sessionDir)).toEqual(["acme-evidence"]);
	});

	it("a session id no store can be named by is said so, for folds and evidence alike", () => {
		const { sessionDir } = host();
		const store = openSessionStore(join(sessionDir, "s.jsonl"), sessionDir, "a..b");
		const line = storeLine({ kind: store.kind, location: store.location });
		expect(line).toMatch(/^Store: in memory \(no durable store: .*a\.\.b.*; sources are lost when Pi exits\)\.$/);
		expect(line).not.toContain("has no file");
		const evidence = new EvidenceHost(resolveOptions({ isMcpTool: () => true }));
		evidence.open(join(sessionDir, "s.jsonl"), sessionDir, "a..b");
		const text = formatEvidence(evidence.facts()) ?? "";
		expect(text).toMatch(/nowhere \(no evidence directory: .*a\.\.b/);
		expect(text).not.toContain("has no file");
	});
});

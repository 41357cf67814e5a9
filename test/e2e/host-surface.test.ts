/**
 * Issue 13 on the real host: evidence ingestion of an oversized MCP result
 * (the artifact, what the window shows, exact recovery through peek; on a
 * sibling branch neither search nor peek answers for it, issue 29), no
 * evidence at all with `evidenceIngestion: false`, and suggestion reports
 * that persist without changing the window.
 */

import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { afterEach, describe, expect, it } from "vitest";
import type { PiFoldOptions } from "../../src/fold/options.ts";
import { EVIDENCE_DIR_NAME } from "../../src/fold/store/evidence.ts";
import type { RegisterSuggestionSource } from "../../src/fold/suggestions.ts";
import { registerPiFold } from "../../src/index.ts";
import { sha256Hex } from "../../src/session/canonical.ts";
import { callTools, createSdkHarness, reply, type SdkHarness, toolCall } from "../harness/sdk.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** 120 KB of structured-looking text: oversized by any reading of the constant. */
const BIG_TEXT = JSON.stringify({ rows: Array.from({ length: 3000 }, (_, i) => ({ i, name: `row-${i}-ünï` })) });

async function surfaceHarness(options: PiFoldOptions): Promise<SdkHarness> {
	const extension = (pi: ExtensionAPI) => {
		registerPiFold(pi, { isMcpTool: (name) => name.startsWith("mcp__"), ...options });
		pi.registerTool({
			name: "mcp__srv__big",
			label: "Big",
			description: "An MCP tool with a large structured result",
			parameters: Type.Object({}),
			async execute() {
				return { content: [{ type: "text", text: BIG_TEXT }], details: {} };
			},
		});
	};
	const harness = await createSdkHarness({
		extensions: [extension],
		tools: ["mcp__srv__big", "active_context"],
		persist: true,
	});
	cleanups.push(() => harness.dispose());
	return harness;
}

function evidenceFiles(harness: SdkHarness): string[] {
	const root = join(harness.sessionDir, EVIDENCE_DIR_NAME);
	if (!existsSync(root)) return [];
	return readdirSync(root, { recursive: true, withFileTypes: true })
		.filter((entry) => entry.isFile())
		.map((entry) => join(entry.parentPath, entry.name));
}

const toolResultText = (message: unknown): string =>
	((message as { content?: { type: string; text?: string }[] }).content ?? []).map((part) => part.text ?? "").join("");

describe("host surface (real Pi)", () => {
	it("an oversized MCP result becomes a 0444 artifact; the window shows a bounded head and the exact bytes come back by peek", async () => {
		const harness = await surfaceHarness({});
		harness.enqueue(callTools([toolCall("mcp__srv__big", {}, "big1")]), reply("got it"));
		await harness.run("fetch the big thing");
		const files = evidenceFiles(harness);
		expect(files).toHaveLength(1);
		const path = files[0] as string;
		const bytes = readFileSync(path);
		const hash = sha256Hex(bytes);
		expect(path.endsWith(hash)).toBe(true);
		expect(statSync(path).mode & 0o777).toBe(0o444);
		expect(statSync(join(harness.sessionDir, EVIDENCE_DIR_NAME)).mode & 0o777).toBe(0o700);
		expect(JSON.parse(bytes.toString("utf8"))).toEqual({ content: [{ type: "text", text: BIG_TEXT }] });
		// What the model saw: the bounded replacement, not 120 KB.
		const seen = harness.requests.at(-1)?.messages.find((m) => m.role === "toolResult");
		const seenText = toolResultText(seen);
		expect(seenText).toContain(`{"action":"peek","id":"evidence:${hash}"}`);
		expect(seenText).toContain('MCP server "srv"');
		expect(seenText.length).toBeLessThan(4_000);
		// Exact recovery: page through peek until the end, then compare bytes.
		let recovered = "";
		let offset: number | undefined = 0;
		for (let call = 0; offset !== undefined && call < 10; call++) {
			harness.enqueue(
				callTools([toolCall("active_context", { action: "peek", id: `evidence:${hash}`, offset }, `peek${call}`)]),
				reply("read"),
			);
			await harness.run("read the evidence");
			const result = toolResultText(harness.session.messages.filter((m) => m.role === "toolResult").at(-1));
			expect(result).toContain(`Evidence ${hash}, sha256 verified`);
			recovered += result.slice(result.indexOf("\n\n") + 2);
			const next = /"offset":(\d+)\}/.exec(result.split("\n\n")[0] ?? "");
			offset = next ? Number(next[1]) : undefined;
		}
		expect(Buffer.from(recovered, "utf8").equals(bytes)).toBe(true);
	});

	it("on a sibling branch, the other branch's artifact is neither found by search nor served by peek", async () => {
		const harness = await surfaceHarness({});
		harness.enqueue(reply("hello back"));
		await harness.run("hello");
		const fork = harness.session.sessionManager.getLeafId();
		if (!fork) throw new Error("no leaf");
		harness.enqueue(callTools([toolCall("mcp__srv__big", {}, "big1")]), reply("got it"));
		await harness.run("fetch the big thing");
		const [path] = evidenceFiles(harness);
		if (!path) throw new Error("no evidence artifact");
		const address = `evidence:${sha256Hex(readFileSync(path))}`;
		const lastResults = (count: number) =>
			harness.session.messages
				.filter((m) => m.role === "toolResult")
				.slice(-count)
				.map((m) => ({ isError: m.isError, text: toolResultText(m) }));
		const lookUp = async (label: string) => {
			harness.enqueue(
				callTools([
					toolCall("active_context", { action: "search", query: "row-2999-" }, `search-${label}`),
					toolCall("active_context", { action: "peek", id: address }, `peek-${label}`),
				]),
				reply("looked"),
			);
			await harness.run("look it up");
			return lastResults(2);
		};
		// On the branch whose tool result names the artifact, both answer.
		const [found, served] = await lookUp("here");
		expect(found?.text).toContain(address);
		expect(served).toMatchObject({ isError: false });
		expect(served?.text).toContain("sha256 verified");
		// A sibling branch from before the call: the session's evidence directory still holds the artifact.
		await harness.session.navigateTree(fork, { summarize: false });
		expect(evidenceFiles(harness)).toEqual([path]);
		const [missed, refused] = await lookUp("sibling");
		expect(missed?.text).toContain("no hits");
		expect(missed?.text).not.toContain(address);
		expect(refused?.isError).toBe(true);
		expect(refused?.text).toContain("named by no tool result on this branch");
		expect(refused?.text).not.toContain("row-2999-");
	});

	it("evidenceIngestion: false registers no hook and writes nothing; the result stays as returned", async () => {
		const harness = await surfaceHarness({ evidenceIngestion: false });
		expect(harness.session.extensionRunner.hasHandlers("tool_result")).toBe(false);
		harness.enqueue(callTools([toolCall("mcp__srv__big", {}, "big1")]), reply("got it"));
		await harness.run("fetch the big thing");
		expect(evidenceFiles(harness)).toEqual([]);
		const seen = harness.requests.at(-1)?.messages.find((m) => m.role === "toolResult");
		expect(toolResultText(seen)).toBe(BIG_TEXT);
	});

	it("suggestion reports persist as custom entries and the window does not change", async () => {
		let register: RegisterSuggestionSource | undefined;
		const harness = await surfaceHarness({ setSuggestionSourceRegistrar: (fn) => (register = fn) });
		await harness.run("hello");
		if (!register) throw new Error("registrar never called");
		const before = harness.session.sessionManager.buildSessionProjection().messages;
		const source = register({ id: "slate" });
		source.reportAccept({ suggestionId: "s1", accepted: true });
		const after = harness.session.sessionManager.buildSessionProjection().messages;
		expect(after).toEqual(before);
		const reports = harness.session.sessionManager
			.getBranch()
			.filter((entry) => entry.type === "custom" && entry.customType.endsWith(":suggestion-accept"));
		expect(reports).toHaveLength(1);
		await harness.run("again");
		const last = harness.requests.at(-1)?.messages ?? [];
		expect(JSON.stringify(last)).not.toContain("suggestion");
	});
});

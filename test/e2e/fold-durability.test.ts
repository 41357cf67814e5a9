/**
 * Fold state that must survive the host: tampered store blobs, commands
 * typed while Pi is idle, and `/tree` navigation between branches.
 * Real Pi 1.6.0 through the SDK with the faux model; the session is a file.
 */

import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Message } from "@earendil-works/pi-ai";
import type { ExtensionAPI, InlineExtension } from "@earendil-works/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import type { FoldRuntime } from "../../src/fold/pi/runtime.ts";
import { rebuildState } from "../../src/fold/state/state.ts";
import { registerRuntime } from "../../src/register.ts";
import { canonicalJson } from "../../src/session/canonical.ts";
import { callTools, createSdkHarness, reply, type SdkHarness, toolCall } from "../harness/sdk.ts";
import { takeProblems } from "../harness/tripwire.ts";

const SECRET = "DELTA-CONTENT-0b1e";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function harnessWithRuntime(
	after: InlineExtension[] = [],
): Promise<{ harness: SdkHarness; runtime: () => FoldRuntime }> {
	let runtime: FoldRuntime | undefined;
	const extension = (pi: ExtensionAPI) => {
		runtime = registerRuntime(pi);
	};
	const harness = await createSdkHarness({
		extensions: [extension, ...after],
		tools: ["read", "active_context"],
		persist: true,
	});
	cleanups.push(() => harness.dispose());
	// The first line shows in the brief (a brief names what a call returned); the secret is past it.
	writeFileSync(join(harness.cwd, "d.txt"), `notes for d\n${SECRET}\n`);
	return {
		harness,
		runtime: () => {
			if (!runtime) throw new Error("runtime not loaded");
			return runtime;
		},
	};
}

const ctxOf = (harness: SdkHarness) => harness.session.extensionRunner.createContext();
const lastRequestText = (harness: SdkHarness) =>
	canonicalJson((harness.requests.at(-1)?.messages ?? []).filter((m: Message) => m.role !== "system"));

/** Exchange 1 reads the file; exchange 2 is small talk, so exchange 1 is a closed chapter. */
async function twoExchanges(harness: SdkHarness): Promise<void> {
	harness.enqueue(callTools([toolCall("read", { path: "d.txt" }, "call_read")]), reply("Read d.txt."));
	await harness.run("Read d.txt.");
	harness.enqueue(reply("You're welcome."));
	await harness.run("Thanks.");
}

function blobFiles(dir: string): string[] {
	const out: string[] = [];
	for (const name of readdirSync(dir)) {
		const path = join(dir, name);
		if (statSync(path).isDirectory()) out.push(...blobFiles(path));
		else out.push(path);
	}
	return out;
}

describe("fold durability in Pi", () => {
	it("/fold-context while idle: the next request carries the fold, and the one after it only appends", async () => {
		const { harness, runtime } = await harnessWithRuntime();
		await twoExchanges(harness);
		const shown = await harness.run("/fold-context");
		expect(shown.join("\n")).toMatch(/Folded chapter f-[0-9a-f]{12}/);
		expect(harness.requests).toHaveLength(3);

		harness.enqueue(reply("Noted."));
		await harness.run("Go on.");
		expect(lastRequestText(harness)).not.toContain(SECRET);
		harness.enqueue(reply("Still noted."));
		await harness.run("And again.");
		expect(lastRequestText(harness)).not.toContain(SECRET);

		const instrument = runtime().status(ctxOf(harness)).instrument;
		expect(instrument).toMatchObject({ rewrites: 1, unattributed: 0 });
		expect(instrument.history[0]?.causes).toEqual(["commit"]);
		// The edits the context hook previewed were persisted at the turn boundary, so Pi's projection agrees.
		expect(canonicalJson(harness.session.sessionManager.buildSessionProjection().messages)).not.toContain(SECRET);
		expect(runtime().status(ctxOf(harness)).pendingEdits).toBe(0);
	});

	it("a flipped byte in the stored blob makes peek and expand fail with a named integrity error; the fold stays", async () => {
		const { harness, runtime } = await harnessWithRuntime();
		await twoExchanges(harness);
		await harness.run("/fold-context");
		const id = runtime().status(ctxOf(harness)).folds[0]?.id ?? "";
		const store = runtime().status(ctxOf(harness)).store;
		expect(store.kind).toBe("file");
		const [blob] = blobFiles(store.location);
		if (!blob) throw new Error("no blob was written");
		expect(statSync(blob).mode & 0o777).toBe(0o444);
		const bytes = readFileSync(blob);
		bytes[10] = (bytes[10] ?? 0) ^ 0x01;
		chmodSync(blob, 0o644);
		writeFileSync(blob, bytes);

		harness.enqueue(
			callTools([
				toolCall("active_context", { action: "peek", id }, "call_peek"),
				toolCall("active_context", { action: "expand", id }, "call_expand"),
			]),
			reply("Both failed."),
		);
		await harness.run("Look at the fold.");
		const results = (harness.requests.at(-1)?.messages ?? []).filter(
			(m): m is Extract<Message, { role: "toolResult" }> => m.role === "toolResult" && m.toolCallId.startsWith("call_"),
		);
		const peek = results.find((m) => m.toolCallId === "call_peek");
		const expand = results.find((m) => m.toolCallId === "call_expand");
		for (const result of [peek, expand]) {
			expect(result?.isError).toBe(true);
			expect(canonicalJson(result?.content)).toMatch(/Error \(integrity\)/);
		}
		expect(runtime().status(ctxOf(harness)).folds[0]).toMatchObject({ id, state: "collapsed" });
		expect(lastRequestText(harness)).not.toContain(SECRET);
	});

	it("/tree navigation shows each branch its own folds", async () => {
		const { harness, runtime } = await harnessWithRuntime();
		await twoExchanges(harness);
		const beforeFold = harness.session.sessionManager.getLeafId();
		if (!beforeFold) throw new Error("no leaf");
		await harness.run("/fold-context");
		harness.enqueue(reply("Folded branch."));
		await harness.run("Continue on the folded branch.");
		const foldedLeaf = harness.session.sessionManager.getLeafId();
		if (!foldedLeaf) throw new Error("no leaf");
		expect(runtime().status(ctxOf(harness)).counts.folds).toBe(1);

		// Back to before the fold: the fold record is not on that branch.
		await harness.session.navigateTree(beforeFold, { summarize: false });
		expect(runtime().status(ctxOf(harness)).counts.folds).toBe(0);
		harness.enqueue(reply("Raw branch."));
		await harness.run("Continue on the raw branch.");
		expect(lastRequestText(harness)).toContain(SECRET);
		expect(runtime().status(ctxOf(harness)).counts.folds).toBe(0);

		// And forward again to the folded leaf: its fold is back, collapsed.
		await harness.session.navigateTree(foldedLeaf, { summarize: false });
		expect(
			runtime()
				.status(ctxOf(harness))
				.folds.map((fold) => fold.state),
		).toEqual(["collapsed"]);
		harness.enqueue(reply("Folded again."));
		await harness.run("Continue on the folded branch again.");
		expect(lastRequestText(harness)).not.toContain(SECRET);
		// Each branch switch was a rewrite the instrument attributes to the navigation.
		const causes = runtime()
			.status(ctxOf(harness))
			.instrument.history.map((event) => event.causes);
		expect(causes).toEqual([["commit"], ["navigation"], ["navigation"]]);
	});

	it("a fold survives another extension making Pi drop the whole turn boundary", async () => {
		let sabotage = false;
		// Loaded after pi-fold: proposes an edit Pi refuses, so Pi appends none of the boundary's entries.
		const saboteur: InlineExtension = (pi) => {
			pi.on("turn_end", (event) => {
				if (!sabotage) return undefined;
				sabotage = false;
				return { entries: [...event.entries, { type: "context_edit", targetId: "no-such-entry", replacement: null }] };
			});
		};
		const { harness, runtime } = await harnessWithRuntime([saboteur]);
		await twoExchanges(harness);
		sabotage = true;
		harness.enqueue(
			callTools([toolCall("active_context", { action: "fold", ids: ["call_read"] }, "call_fold")]),
			reply("Folded."),
		);
		await expect(harness.run("Fold the read.")).rejects.toThrow(/Invalid boundary entries/);
		// The saboteur's error is expected; the fold record must be on disk all the same.
		expect(takeProblems()).toEqual([expect.stringMatching(/Invalid boundary entries/)]);
		const branch = harness.session.sessionManager.getBranch();
		const rebuilt = rebuildState(branch, "pi-fold-active-context");
		expect(rebuilt.records.map((record) => record.kind)).toEqual(["tool-batch"]);
		expect(runtime().status(ctxOf(harness)).folds).toHaveLength(1);
		harness.enqueue(reply("Later."));
		await harness.run("Later.");
		expect(lastRequestText(harness)).not.toContain(SECRET);
	});

	it("expand restores another extension's earlier edit, not the raw entry: byte-identical to never folded", async () => {
		let redact = true;
		// Loaded after pi-fold: once, it replaces the read result with its own text, as a redaction extension might.
		const redactor: InlineExtension = (pi) => {
			pi.on("turn_end", (event) => {
				const target = event.toolResultEntryIds[0];
				if (!redact || !target) return undefined;
				redact = false;
				return {
					entries: [
						...event.entries,
						{
							type: "context_edit",
							targetId: target,
							replacement: { content: [{ type: "text", text: "REDACTED BY ANOTHER EXTENSION" }] },
						},
					],
				};
			});
		};
		const { harness } = await harnessWithRuntime([redactor]);
		await twoExchanges(harness);
		const neverFolded = (harness.requests.at(-1)?.messages ?? []).filter((m: Message) => m.role !== "system");
		expect(canonicalJson(neverFolded)).toContain("REDACTED BY ANOTHER EXTENSION");
		expect(canonicalJson(neverFolded)).not.toContain(SECRET);
		harness.enqueue(
			callTools([toolCall("active_context", { action: "fold", ids: ["call_read"] }, "call_fold")]),
			reply("Folded."),
		);
		await harness.run("Fold the read.");
		const id = harness.session.sessionManager
			.getBranch()
			.flatMap((e) =>
				e.type === "custom" && e.customType.endsWith(":fold") ? [(e.data as { record: { id: string } }).record.id] : [],
			)[0];
		harness.enqueue(
			callTools([toolCall("active_context", { action: "expand", id: id ?? "" }, "call_expand")]),
			reply("Expanded."),
		);
		await harness.run("Expand it.");
		const expanded = (harness.requests.at(-1)?.messages ?? []).filter((m: Message) => m.role !== "system");
		expect(canonicalJson(expanded.slice(0, neverFolded.length))).toBe(canonicalJson(neverFolded));
	});
});

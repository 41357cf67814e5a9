/**
 * Issue 32: `pi-fold verify` reads every blob the fold state references,
 * pending marks included. A real Pi session (SDK harness, faux model,
 * `persist: true`, epoch scheduling) ends with a pending mark; one byte
 * flipped in the mark's blob makes verify fail naming the mark, the entry
 * that recorded it and that the log can rebuild it; committing the mark
 * afterwards rebuilds the blob from the log (the corrupt copy kept aside)
 * and never serves the flipped bytes.
 */

import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.ts";
import type { VerifyOutcome } from "../../src/cli/verify.ts";
import { peekFold } from "../../src/fold/actions/peek.ts";
import type { FoldRuntime } from "../../src/fold/pi/runtime.ts";
import { registerRuntime } from "../../src/register.ts";
import { callTools, createSdkHarness, reply, type SdkHarness, toolCall } from "../harness/sdk.ts";

const SECRET = "MARKED-READ-5e1f";

let harness: SdkHarness;
let runtime: FoldRuntime;
const ctxOf = () => harness.session.extensionRunner.createContext();

beforeAll(async () => {
	harness = await createSdkHarness({
		extensions: [
			(pi: ExtensionAPI) => {
				runtime = registerRuntime(pi, { foldScheduling: "epoch" });
			},
		],
		tools: ["read", "active_context"],
		persist: true,
	});
	writeFileSync(join(harness.cwd, "a.txt"), `${SECRET}\n`);
	// Past the fresh tail after the folded read: the agent's fold waits for a commit (a pending mark) the ladder can make.
	writeFileSync(join(harness.cwd, "big.txt"), "a line of the large file that follows the marked read\n".repeat(800));
	harness.enqueue(callTools([toolCall("read", { path: "a.txt" }, "call_a")]), reply("Read a."));
	await harness.run("Read a.txt.");
	harness.enqueue(callTools([toolCall("read", { path: "big.txt" }, "call_big")]), reply("Read big."));
	await harness.run("Read big.txt.");
	harness.enqueue(
		callTools([toolCall("active_context", { action: "fold", ids: ["call_a"] }, "call_mark")]),
		reply("Marked."),
	);
	await harness.run("Fold the first read.");
}, 60_000);

afterAll(async () => {
	await harness?.dispose();
});

function sessionFiles(): { path: string; storeDir: string } {
	const file = readdirSync(harness.sessionDir).find((name) => name.endsWith(".jsonl"));
	const store = readdirSync(harness.sessionDir).find((name) => name.endsWith(".pi-fold"));
	if (!file || !store) throw new Error("Pi wrote no session file or no fold store");
	return { path: join(harness.sessionDir, file), storeDir: join(harness.sessionDir, store) };
}

async function verify(path: string): Promise<{ code: number; json: VerifyOutcome }> {
	const run = await runCli(["verify", "--json", path]);
	return { code: run.code, json: JSON.parse(run.stdout) as VerifyOutcome };
}

describe("a pending mark's blob (issue 32)", () => {
	it("is read by verify; flipped, verify fails naming it; its commit rebuilds it from the log", async () => {
		const [mark] = runtime.engine.foldState.data.marks;
		if (!mark) throw new Error("the agent's fold should be a pending mark");
		const { path, storeDir } = sessionFiles();
		const clean = await verify(path);
		expect(clean.json.defects).toEqual([]);
		expect(clean.json.counts.checked).toMatchObject({ folds: 0, marks: 1 });

		const hash = mark.record.sourceHash;
		const blob = join(storeDir, "sha256", hash.slice(0, 2), hash);
		const bytes = readFileSync(blob);
		const at = bytes.indexOf(SECRET);
		bytes[at] = (bytes[at] ?? 0) ^ 0x01;
		chmodSync(blob, 0o644);
		writeFileSync(blob, bytes);

		const flipped = await verify(path);
		expect(flipped.code).toBe(1);
		expect(flipped.json.defects.map((d) => [d.kind, d.where])).toEqual([["blob-corrupt", mark.record.id]]);
		const lines = readFileSync(path, "utf8").trimEnd().split("\n");
		const markLine = lines.findIndex((line) => line.includes('"op":"mark"') && line.includes(hash)) + 1;
		const entryId = (JSON.parse(lines[markLine - 1] ?? "{}") as { id?: string }).id;
		expect(flipped.json.defects[0]?.line).toBe(markLine);
		expect(flipped.json.defects[0]?.problem).toMatch(
			new RegExp(`^pending mark ${mark.record.id} \\(recorded in entry ${entryId}\\): .*fails SHA-256 verification`),
		);
		expect(flipped.json.defects[0]?.problem).toContain("the log still holds its exact bytes");
		const human = await runCli(["verify", path]);
		expect(human.stdout).toMatch(/checked\s+1 blob: 0 folds, 1 pending mark,/);

		// Peek of the mark refuses the flipped bytes.
		const peeked = await peekFold(runtime.workspace(ctxOf(), "agent"), mark.record.id);
		expect(peeked.ok).toBe(false);
		expect(peeked.text).toContain("fails SHA-256 verification");

		// The commit plans the mark's source from the log again: the blob is rebuilt, the corrupt copy kept aside.
		const committed = await runtime.autoCommit(ctxOf(), { force: "fence" });
		expect(committed.folded).toBe(true);
		expect(runtime.engine.foldState.data.marks).toEqual([]);
		expect(readFileSync(blob, "utf8")).toContain(SECRET);
		expect(existsSync(`${blob}.corrupt`)).toBe(true);
		const read = await peekFold(runtime.workspace(ctxOf(), "agent"), mark.record.id);
		expect(read.ok, read.text).toBe(true);
		expect(read.text).toContain(`source sha256 ${hash} verified`);
		expect(read.text).toContain(SECRET);
		expect(warnings()).toContain(mark.record.id);
	});
});

function warnings(): string {
	return harness.ui.notifications
		.filter((note) => note.level === "warning")
		.map((note) => note.message)
		.join("\n");
}

/**
 * Fold state pi-fold did not write, in a real Pi session: a hash-consistent
 * record over a tool call without its result (the provider would answer 400
 * and Pi exit 1), and a fold whose record line was damaged after its brief
 * was persisted (the brief would advertise an id nothing answers). Both
 * resume to a request the provider accepts, with the raw entries.
 */

import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { stateEntryTypes } from "../../src/fold/state/state.ts";
import { loadSessionFile } from "../../src/session/load.ts";
import { forgedRecord } from "../fixtures/forge.ts";
import { cleanupsAfterEach, loopbackSandbox } from "../harness/cli-setup.ts";
import { callTools, type LoopbackProvider, say } from "../harness/loopback-provider.ts";
import { onlySessionFile, type PiSandbox, runPrint } from "../harness/pi-cli.ts";

const PREFIX = "pi-fold-active-context";
const cleanups = cleanupsAfterEach();
const setup = () => loopbackSandbox(cleanups, { "c.txt": "line of c\n".repeat(200) });

async function readTurn(provider: LoopbackProvider, sandbox: PiSandbox): Promise<void> {
	provider.enqueue(callTools([{ id: "call_read", name: "read", arguments: { path: "c.txt" } }]), say("Read it."));
	expect((await runPrint(sandbox, "Read c.txt.")).code).toBe(0);
}

describe("forged and damaged fold state in real Pi", () => {
	it("a hash-consistent record over a tool call without its result never reaches the provider", async () => {
		const { provider, sandbox } = await setup();
		await readTurn(provider, sandbox);
		const file = onlySessionFile(sandbox);
		const branch = loadSessionFile(file).manager.getBranch();
		const call = branch.findIndex((entry) => JSON.stringify(entry).includes('"toolCall"'));
		const record = forgedRecord(branch, call, call + 1, "tool-batch");
		const leaf = branch.at(-1)?.id;
		const line = {
			type: "custom",
			customType: stateEntryTypes(PREFIX).fold,
			data: { v: 1, record },
			id: "forged01",
			parentId: leaf,
			timestamp: new Date().toISOString(),
		};
		appendFileSync(file, `${JSON.stringify(line)}\n`);

		provider.enqueue(say("Fine."));
		expect((await runPrint(sandbox, ["--continue", "--", "Anything else?"])).code).toBe(0);
		expect(provider.rejections).toEqual([]);
		const sent = JSON.stringify(provider.requests.at(-1)?.body.messages);
		expect(sent).not.toContain(record.id);
		expect(sent).toContain("line of c");
	});

	it("a brief whose record line was damaged leaves the window on resume", async () => {
		const { provider, sandbox } = await setup();
		await readTurn(provider, sandbox);
		provider.enqueue(
			callTools([{ id: "call_fold", name: "active_context", arguments: { action: "fold", ids: ["call_read"] } }]),
			say("Folded."),
		);
		expect((await runPrint(sandbox, ["--continue", "--", "Fold that read."])).code).toBe(0);
		provider.enqueue(say("Still folded."));
		expect((await runPrint(sandbox, ["--continue", "--", "Is it folded?"])).code).toBe(0);
		const folded = JSON.stringify(provider.requests.at(-1)?.body.messages);
		const foldId = /fold (f-[0-9a-f]{12}) · tool-batch/.exec(folded)?.[1];
		expect(foldId, folded).toBeDefined();
		expect(folded).not.toContain("line of c\\nline of c");

		// Damage the record: the state decoder skips the line (parts must be a list of parts).
		const file = onlySessionFile(sandbox);
		const lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
		const damaged = lines.map((text) => {
			const entry = JSON.parse(text) as { type?: string; customType?: string; data?: { record?: object } };
			if (entry.type !== "custom" || !String(entry.customType).startsWith(`${PREFIX}:`)) return text;
			if (!entry.data?.record) return text;
			return JSON.stringify({ ...entry, data: { ...entry.data, record: { ...entry.data.record, parts: null } } });
		});
		expect(damaged).not.toEqual(lines);
		writeFileSync(file, `${damaged.join("\n")}\n`);

		provider.enqueue(say("Raw again."));
		expect((await runPrint(sandbox, ["--continue", "--", "And now?"])).code).toBe(0);
		expect(provider.rejections).toEqual([]);
		const after = JSON.stringify(provider.requests.at(-1)?.body.messages);
		expect(after).not.toContain(`fold ${foldId}`);
		expect(after).toContain("line of c\\nline of c");
	});
});

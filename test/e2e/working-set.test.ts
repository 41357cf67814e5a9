/**
 * The working set in the real Pi 1.6.0 host (SDK, faux model, Pi's own
 * `read` and `edit` tools on real files): an agent reads a file, works six
 * more steps whose replies name what it read, then edits it: the read is raw
 * in the edit's request, though the window was full enough that the ladder
 * folded the other reads. An agent that reads twenty files and names none of
 * them again has its old reads folded.
 */

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Message } from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import type { FoldRuntime } from "../../src/fold/pi/runtime.ts";
import { registerRuntime } from "../../src/register.ts";
import { contentText } from "../../src/text/lines.ts";
import { callTools, createSdkHarness, reply, type SdkHarness, toolCall } from "../harness/sdk.ts";

/** A window the reads below fill past the ladder's backstop, so it folds whatever is out of play. */
const WINDOW = 40_000;
/** About 2,200 estimated tokens per file: six of them and a seventh fill the window's serving budget. */
const FILE_LINES = 190;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A source file that declares `name` on its first line, then filler code. */
function sourceFile(name: string): string {
	const lines = [`export function ${name}(level: number): string {`];
	for (let i = 0; i < FILE_LINES; i++) lines.push(`\tconst value${i} = level * ${i} + ${i * 7}; // ${name} step ${i}`);
	lines.push("\treturn String(level);", "}");
	return lines.join("\n");
}

async function session(files: Record<string, string>): Promise<{ harness: SdkHarness; runtime: FoldRuntime }> {
	let runtime: FoldRuntime | undefined;
	const harness = await createSdkHarness({
		extensions: [
			(pi: ExtensionAPI) => {
				runtime = registerRuntime(pi);
			},
		],
		tools: ["read", "edit", "active_context"],
		contextWindow: WINDOW,
		settings: { compaction: { enabled: true, reserveTokens: 4_096, keepRecentTokens: 8_000 } },
	});
	cleanups.push(() => harness.dispose());
	for (const [path, text] of Object.entries(files)) writeFileSync(join(harness.cwd, path), text);
	if (!runtime) throw new Error("fold runtime not loaded");
	return { harness, runtime };
}

/** True when the request shows the file's content raw: a tool result holding its first and last lines. */
function showsRaw(messages: readonly Message[], text: string): boolean {
	const [first] = text.split("\n");
	return messages.some(
		(message) =>
			message.role === "toolResult" &&
			contentText(message.content).includes(first ?? "") &&
			contentText(message.content).includes("return String(level);"),
	);
}

describe("the working set in Pi", () => {
	it("keeps a read raw until the edit six steps later quotes it, while the other reads fold", async () => {
		const theme = sourceFile("getMarkdownTheme");
		const others = Array.from({ length: 6 }, (_, k) => sourceFile(`renderPanel${k + 1}`));
		const { harness } = await session({
			"theme.ts": theme,
			...Object.fromEntries(others.map((text, k) => [`panel${k + 1}.ts`, text])),
		});
		harness.enqueue(callTools([toolCall("read", { path: "theme.ts" }, "read-theme")], "Reading the theme."));
		for (let k = 1; k <= 6; k++) {
			harness.enqueue(
				callTools(
					[toolCall("read", { path: `panel${k}.ts` }, `read-${k}`)],
					`Checking how panel ${k} calls getMarkdownTheme.`,
				),
			);
		}
		harness.enqueue(
			callTools(
				[
					toolCall(
						"edit",
						{
							path: "theme.ts",
							edits: [
								{
									oldText: "export function getMarkdownTheme(level: number): string {",
									newText: "export function getMarkdownTheme(level = 0): string {",
								},
							],
						},
						"edit-theme",
					),
				],
				"Defaulting the level in getMarkdownTheme.",
			),
			reply("Done."),
		);
		await harness.run("Give getMarkdownTheme a default level.");
		const editRequest = harness.requests.find((request) =>
			request.messages.some((message) => message.role === "toolResult" && message.toolCallId === "read-6"),
		);
		expect(editRequest).toBeDefined();
		const messages = editRequest?.messages ?? [];
		// The ladder did fold in this window: the first panel's read is no longer raw…
		expect(showsRaw(messages, others[0] ?? "")).toBe(false);
		// …but the read the agent kept naming, and now edits, is.
		expect(showsRaw(messages, theme)).toBe(true);
		const branch = harness.session.sessionManager.getBranch();
		expect(branch.filter((entry) => entry.type === "compaction")).toEqual([]);
	});

	it("folds the old reads of an agent that reads twenty files and names none of them again", async () => {
		const files = Array.from({ length: 20 }, (_, k) => sourceFile(`moduleEntry${k + 1}`));
		const { harness, runtime } = await session(Object.fromEntries(files.map((text, k) => [`m${k + 1}.ts`, text])));
		for (let k = 1; k <= 20; k++) {
			harness.enqueue(callTools([toolCall("read", { path: `m${k}.ts` }, `read-${k}`)], "Next file."));
		}
		harness.enqueue(reply("Read them all."));
		await harness.run("Read every module.");
		const last = harness.requests.at(-1)?.messages ?? [];
		// The newest read is raw; the oldest ones are folded, each one exact peek away by its fold's brief.
		expect(showsRaw(last, files[19] ?? "")).toBe(true);
		for (const k of [0, 1, 2]) expect(showsRaw(last, files[k] ?? "")).toBe(false);
		const status = runtime.status(harness.session.extensionRunner.createContext());
		expect(status.automatic.commits).toBeGreaterThan(0);
		// The ladder folded them on its own, before Pi's line: no threshold forced it.
		expect(status.automatic.cancelledCompactions).toBe(0);
		expect(["backstop", "priced"]).toContain(status.automatic.lastCommit?.reason);
		expect(status.instrument.unattributed).toBe(0);
		// A brief in its place names the file the first read read.
		const briefs = last
			.map((message) =>
				message.role === "assistant" || message.role === "toolResult" ? contentText(message.content) : "",
			)
			.filter((text) => text.startsWith("[pi-fold fold"));
		expect(briefs.some((text) => /\bread m1\.ts\b/.test(text))).toBe(true);
	});
});

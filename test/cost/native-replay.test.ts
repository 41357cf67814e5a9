import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { replayNativeCompaction, summariesCost } from "../../src/cost/native-replay.ts";
import { sessionRequests } from "../../src/cost/session-requests.ts";
import { namedRateCard } from "../../src/pricing/rate-card.ts";
import { IDENTITY_CALIBRATION } from "../../src/session/tokens.ts";
import { appendLinked } from "../fixtures/common.ts";
import { readTurns, SMALL_PI_COMPACTION } from "../fixtures/session.ts";

const session = readTurns;
const SETTINGS = SMALL_PI_COMPACTION;

function promptSizes(branch: SessionEntry[]): number[] {
	return sessionRequests(branch).map((request) => request.context.reduce((sum, message) => sum + message.tokens, 0));
}

describe("replayNativeCompaction", () => {
	it("compacts where the context passes window − reserve, keeping the newest messages and a summary", () => {
		const branch = session(20, 4_000);
		const replay = replayNativeCompaction(branch, SETTINGS, IDENTITY_CALIBRATION);
		expect(replay.compactions).toBeGreaterThan(1);
		const sizes = promptSizes(replay.branch);
		expect(sizes).toHaveLength(promptSizes(branch).length);
		// Pi compacts before the line is passed again; one exchange (about 1k tokens here) may cross it.
		expect(Math.max(...sizes)).toBeLessThan(SETTINGS.contextWindow - SETTINGS.reserveTokens + 1_100);
		expect(Math.max(...promptSizes(branch))).toBeGreaterThan(SETTINGS.contextWindow);
		// Each compaction keeps at least keepRecentTokens of the newest messages after the summary.
		let carried: string[] = [];
		for (const entry of replay.branch.filter((candidate) => candidate.type === "compaction")) {
			if (entry.type !== "compaction") continue;
			// One summary, or for a cut inside a turn the history and the turn's start, as Pi merges them,
			// then the files the summarized messages read, as Pi appends them (earlier compactions' carried).
			const [text = "", files = ""] = entry.summary.split("\n\n<read-files>\n");
			expect([1_200, 2 * 1_200 + "\n\n---\n\n**Turn Context (split turn):**\n\n".length]).toContain(text.length);
			const read = files.replace(/\n<\/read-files>$/, "").split("\n");
			expect(read.length).toBeGreaterThan(carried.length);
			expect(read).toEqual(expect.arrayContaining(carried));
			expect(read.every((path) => /^f\d+$/.test(path))).toBe(true);
			expect(entry.details).toEqual({ readFiles: read, modifiedFiles: [] });
			carried = read;
			const kept = replay.branch.findIndex((candidate) => candidate.id === entry.firstKeptEntryId);
			const at = replay.branch.indexOf(entry);
			expect(kept).toBeGreaterThan(0);
			expect(kept).toBeLessThan(at);
		}
		// One summary request per compaction, two for a split turn.
		const split = replay.branch.filter(
			(entry) => entry.type === "compaction" && entry.summary.includes("**Turn Context (split turn):**"),
		).length;
		expect(replay.summaries).toHaveLength(replay.compactions + split);
		expect(replay.summaries.every((summary) => summary.outputTokens === 300 && summary.promptTokens > 0)).toBe(true);
	});

	it("adds nothing when the session never reaches the line, and keeps a recorded compaction where it was", () => {
		const branch = session(3, 400);
		const before = branch.length;
		appendLinked(branch, "k1", {
			type: "compaction",
			summary: "recorded",
			firstKeptEntryId: branch[before - 4]?.id,
			tokensBefore: 100,
		});
		const replay = replayNativeCompaction(branch, SETTINGS, IDENTITY_CALIBRATION);
		expect(replay.compactions).toBe(0);
		expect(replay.summaries).toEqual([]);
		expect(replay.branch.map((entry) => entry.id)).toEqual(branch.map((entry) => entry.id));
	});

	it("measures against the calibrated size: a larger scale compacts sooner", () => {
		const branch = session(8, 4_000);
		const plain = replayNativeCompaction(branch, SETTINGS, IDENTITY_CALIBRATION).compactions;
		const scaled = replayNativeCompaction(branch, SETTINGS, { ...IDENTITY_CALIBRATION, scale: 2, overhead: 1_000 });
		expect(scaled.compactions).toBeGreaterThan(plain);
	});
});

describe("summariesCost", () => {
	it("bills each summary's prompt fresh and its text as output", () => {
		const card = namedRateCard("gpt-5.6");
		if (!card) throw new Error("card missing");
		const cost = summariesCost([{ promptTokens: 100_000, outputTokens: 100_000 }], card);
		expect(cost).toBeCloseTo((card.base.input + card.base.output) / 10, 9);
	});
});

/**
 * `compaction`: compile time of the deterministic compactor (`compileSummary`
 * in src/compaction/summary/compile.ts) on the 2.4 MB real log and on generated
 * 2,000- and 20,000-entry sessions, and the time of one whole compaction
 * event (`buildDeterministicCompaction` in src/compaction/compact-event.ts: Pi's
 * per-entry estimate, live cut, compile, reconstruction QA and details) on the
 * real log and the 2,000- and 20,000-entry sessions.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { buildDeterministicCompaction, projectionEstimator } from "../../src/compaction/compact-event.ts";
import { compileSummary } from "../../src/compaction/summary/compile.ts";
import { canonicalJson } from "../../src/session/canonical.ts";
import { loadSessionFile } from "../../src/session/load.ts";
import { generateSession } from "../generate.ts";
import { type BenchCase, type Benchmark, BenchUnavailable } from "../harness.ts";
import { realLogs } from "../sessions.ts";

const REAL_LOG = "pi-mono-before-compaction";
/** Inputs whose whole compaction event is timed too. */
const EVENT_INPUTS = [`real ${REAL_LOG}`, "generated 2,000", "generated 20,000"];
/** Event settings: Pi's defaults on a 200K window, a 5,000-token system prompt known to the calibration. */
const EVENT_SETTINGS = {
	reserveTokens: 16_384,
	keepRecentTokens: 20_000,
	contextWindow: 200_000,
	targetContextRatio: 0.65,
	reason: "threshold",
	fixedContextEstimate: 5_000,
} as const;
const GENERATED_SIZES = [2_000, 20_000] as const;
/** The kept tail starts at the last user message at or before this fraction of the branch. */
const KEPT_FROM_FRACTION = 0.9;

/** Split a branch at the last user message at or before KEPT_FROM_FRACTION of its length. */
function splitForCompaction(branch: readonly SessionEntry[]): { entries: SessionEntry[]; keptEntries: SessionEntry[] } {
	let cut = Math.floor(branch.length * KEPT_FROM_FRACTION);
	while (cut > 0) {
		const entry = branch[cut];
		if (entry?.type === "message" && entry.message.role === "user") break;
		cut--;
	}
	return { entries: branch.slice(0, cut), keptEntries: branch.slice(cut) };
}

const integer = new Intl.NumberFormat("en-US");

export const compactionBench: Benchmark = {
	name: "compaction",
	description:
		"Deterministic compactor compile time on the real 2.4 MB log and generated 2,000 / 20,000-entry sessions, and whole compaction events on the real log and the 2,000 / 20,000-entry sessions.",
	async prepare() {
		const inputs: { label: string; branch: SessionEntry[]; bytes: number }[] = [];
		const notes: string[] = [];
		let real: ReturnType<typeof realLogs>[number] | undefined;
		try {
			real = realLogs().find((log) => log.name === REAL_LOG);
		} catch (error) {
			if (!(error instanceof BenchUnavailable)) throw error;
		}
		if (real) {
			const session = loadSessionFile(real.path);
			inputs.push({ label: `real ${REAL_LOG}`, branch: session.manager.getBranch(), bytes: real.bytes });
		} else {
			notes.push(`- Real log ${REAL_LOG} not found; only generated sessions measured.`);
		}
		for (const size of GENERATED_SIZES) {
			const branch = generateSession(size);
			const bytes = branch.reduce((sum, entry) => sum + Buffer.byteLength(canonicalJson(entry)) + 1, 0);
			inputs.push({ label: `generated ${integer.format(size)}`, branch, bytes });
		}
		const cases: BenchCase[] = [];
		const facts = [
			"| input | summarized entries | kept entries | events | summary bytes | identical on rerun |",
			"| --- | ---: | ---: | ---: | ---: | --- |",
		];
		for (const input of inputs) {
			const split = splitForCompaction(input.branch);
			const first = compileSummary(split);
			const again = compileSummary(split);
			facts.push(
				`| ${input.label} | ${integer.format(split.entries.length)} | ${integer.format(split.keptEntries.length)} | ` +
					`${integer.format(first.eventCount)} | ${integer.format(first.bytes)} | ${first.text === again.text ? "yes" : "NO"} |`,
			);
			cases.push({
				label: `compileSummary ${input.label}`,
				input: { bytes: input.bytes, entries: input.branch.length },
				run: () => compileSummary(split),
			});
		}
		facts.push(
			"",
			"| event input | tokensBefore | outcome | kept from entry | summary bytes | QA | projected / target | identical on rerun |",
			"| --- | ---: | --- | ---: | ---: | ---: | --- | --- |",
		);
		for (const input of inputs.filter((candidate) => EVENT_INPUTS.includes(candidate.label))) {
			const estimate = projectionEstimator(input.branch);
			const raw = input.branch.reduce((sum, entry) => sum + estimate(entry), 0);
			const eventInput = {
				branchEntries: input.branch,
				tokensBefore: raw + EVENT_SETTINGS.fixedContextEstimate,
				...EVENT_SETTINGS,
			};
			const first = buildDeterministicCompaction(eventInput);
			const again = buildDeterministicCompaction(eventInput);
			const same = JSON.stringify(first) === JSON.stringify(again) ? "yes" : "NO";
			if (first.kind === "compaction") {
				const kept = input.branch.findIndex((entry) => entry.id === first.result.firstKeptEntryId);
				const budget = first.result.details.budget;
				facts.push(
					`| ${input.label} | ${integer.format(eventInput.tokensBefore)} | compaction | ` +
						`${kept < 0 ? "none (compact all)" : integer.format(kept)} | ` +
						`${integer.format(Buffer.byteLength(first.result.summary))} | ${first.qa.score} | ` +
						`${budget ? `${integer.format(budget.projectedTokensAfter)} / ${integer.format(budget.targetContextTokens)}` : "n/a"} | ${same} |`,
				);
			} else {
				const why = first.kind === "cancel" ? first.message : "deferred";
				facts.push(`| ${input.label} | ${integer.format(eventInput.tokensBefore)} | ${why} | | | | | ${same} |`);
			}
			cases.push({
				label: `buildDeterministicCompaction ${input.label}`,
				input: { bytes: input.bytes, entries: input.branch.length },
				run: () => buildDeterministicCompaction(eventInput),
			});
		}
		notes.push(
			"- Input is the active branch (raw entries, as loaded and migrated); it is split at the last user message at or before 90% of its length: the prefix is summarized, the tail passed as `keptEntries`.",
			"- Generated sessions: `bench/generate.ts`, seed 1 — user asks, 1–4 tool calls (read / grep / bash / edit / write) with results of 50–6,500 characters, 8% errors, 30% of calls preceded by thinking, a closing reply; usage on every assistant message. Their byte size is the canonical JSONL size.",
			"- The `compileSummary` cases time `compileSummary({ entries, keptEntries })` only (no loading, no QA).",
			"- The `buildDeterministicCompaction` cases (real log, 2,000 and 20,000 entries) time one whole `session_before_compact` computation on the unsplit branch: Pi's per-entry structural estimate (`buildSessionProjection` + `estimateTokens`), the calibrated live cut, compile, reconstruction QA and details v2. Settings: window 200,000, `targetContextRatio` 0.65, `reserveTokens` 16,384, `keepRecentTokens` 20,000, reason threshold; `tokensBefore` is the branch's structural estimate plus a 5,000-token system prompt passed as `fixedContextEstimate` (scale 1).",
		);
		return { cases, facts, notes };
	},
};

/**
 * `compaction`: compile time of the deterministic compactor (`compileSummary`
 * in src/compaction/compile.ts) on the 2.4 MB real log and on generated
 * 2,000- and 20,000-entry sessions. The compactor is loaded at prepare time;
 * when it is missing or does not export `compileSummary` the benchmark fails
 * with "compactor not available".
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { canonicalJson } from "../../src/session/canonical.ts";
import { loadSessionFile } from "../../src/session/load.ts";
import { generateSession } from "../generate.ts";
import { type BenchCase, type Benchmark, BenchUnavailable } from "../harness.ts";
import { realLogs } from "../sessions.ts";

/** The part of the compactor's contract this benchmark relies on. */
type CompileSummary = (input: { entries: readonly SessionEntry[]; keptEntries?: readonly SessionEntry[] }) => {
	text: string;
	bytes: number;
	eventCount: number;
	sourceEntryCount: number;
};

const COMPACTOR_MODULE = "../../src/compaction/compile.ts";
const REAL_LOG = "pi-mono-before-compaction";
const GENERATED_SIZES = [2_000, 20_000] as const;
/** The kept tail starts at the last user message at or before this fraction of the branch. */
const KEPT_FROM_FRACTION = 0.9;

async function loadCompactor(): Promise<CompileSummary> {
	let module: { compileSummary?: unknown };
	try {
		module = await import(COMPACTOR_MODULE);
	} catch (error) {
		const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
		throw new BenchUnavailable(`compactor not available: cannot load ${COMPACTOR_MODULE} (${reason})`, false);
	}
	if (typeof module.compileSummary !== "function") {
		throw new BenchUnavailable(`compactor not available: ${COMPACTOR_MODULE} does not export compileSummary`, false);
	}
	return module.compileSummary as CompileSummary;
}

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
		"Deterministic compactor compile time on the real 2.4 MB log and generated 2,000 / 20,000-entry sessions.",
	async prepare() {
		const compileSummary = await loadCompactor();
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
		notes.push(
			"- Input is the active branch (raw entries, as loaded and migrated); it is split at the last user message at or before 90% of its length: the prefix is summarized, the tail passed as `keptEntries`.",
			"- Generated sessions: `bench/generate.ts`, seed 1 — user asks, 1–4 tool calls (read / grep / bash / edit / write) with results of 50–6,500 characters, 8% errors, 30% of calls preceded by thinking, a closing reply; usage on every assistant message. Their byte size is the canonical JSONL size.",
			"- The timed call is `compileSummary({ entries, keptEntries })` only (no loading, no QA).",
		);
		return { cases, facts, notes };
	},
};

/**
 * The agent benchmark's staged workload, as pure functions of (seed, stage).
 *
 * Owns what `repo_stage` returns and what the scripted agent is asked: each
 * stage is deterministic repository-like text of a size drawn from the
 * workload's bounds (24–48 KB in the full preset; size bands for mixed
 * workloads) with one planted fact line (`FACT S<k>: <12 hex>`), some stages
 * end with a probe asking for the fact of a stage 3 to 150 back, and the
 * stages may be split over several user turns. The bench extension
 * (inside Pi) and the scripted agent (in the bench process) both call these
 * functions, so the agent knows the truth it checks answers against without
 * reading Pi's state. Nothing here reads the clock or a random source.
 */

import { createHash } from "node:crypto";

/** A share of the stages whose sizes come from their own bounds. */
export interface SizeBand {
	share: number;
	minBytes: number;
	maxBytes: number;
}

/** What one run's workload is: the same value drives the extension and the agent. */
export interface Workload {
	seed: number;
	stages: number;
	/** Stage payload size bounds in bytes (ASCII, so bytes = characters). */
	minBytes: number;
	maxBytes: number;
	/** Optional size bands (shares summing to at most 1); stages outside them use minBytes–maxBytes. */
	bands?: readonly SizeBand[];
	/** User turns the stages are split into, as evenly as possible (default 1). */
	turns?: number;
}

/** Name of the staged tool the bench extension registers. */
export const STAGE_TOOL_NAME = "repo_stage";

/** First stage that can carry a probe: earlier stages have too little history to ask about. */
export const PROBE_FIRST_STAGE = 5;
/** A probe every this many stages from the first: about a third of the stages ask about the past. */
export const PROBE_EVERY = 3;
/** A probe asks about a stage at least this many stages back, so a marking agent (k−2) has folded it. */
export const PROBE_MIN_AGE = 3;
/** …and at most this many back: far enough to cross turns and consolidations, as issue 16 asks. */
export const PROBE_MAX_AGE = 150;
/** Hex digits of a fact value: long enough that a truncated copy never matches. */
export const FACT_HEX_DIGITS = 12;
/** Where in a stage's lines the fact sits (fraction of the way down): inside the first peek slice. */
const FACT_POSITION = 0.4;

function digest(...parts: (string | number)[]): Buffer {
	return createHash("sha256").update(parts.join("\u0000")).digest();
}

/** The planted fact value of a stage. */
export function factValue(seed: number, stage: number): string {
	return digest("fact", seed, stage).toString("hex").slice(0, FACT_HEX_DIGITS);
}

/** The fact line exactly as a stage result carries it. */
export function factLine(seed: number, stage: number): string {
	return `FACT S${stage}: ${factValue(seed, stage)}`;
}

/** A pattern matching the fact line of `stage` with any value (the agent reads values, never assumes them). */
export function factPattern(stage: number): RegExp {
	return new RegExp(`FACT S${stage}: ([0-9a-f]{${FACT_HEX_DIGITS}})(?![0-9a-f])`);
}

/** The earlier stage whose fact stage `stage` asks for, or undefined when it asks nothing. */
export function probeTarget(seed: number, stage: number): number | undefined {
	if (stage < PROBE_FIRST_STAGE || (stage - PROBE_FIRST_STAGE) % PROBE_EVERY !== 0) return undefined;
	const first = Math.max(1, stage - PROBE_MAX_AGE);
	const span = stage - PROBE_MIN_AGE - first + 1;
	return first + (digest("probe", seed, stage).readUInt32BE(0) % span);
}

/** Stages that carry a probe, with their targets, in order. */
export function probeSchedule(workload: Workload): { stage: number; target: number }[] {
	const probes: { stage: number; target: number }[] = [];
	for (let stage = 1; stage <= workload.stages; stage++) {
		const target = probeTarget(workload.seed, stage);
		if (target !== undefined) probes.push({ stage, target });
	}
	return probes;
}

/** The probe line (it names the stage but never contains the fact pattern). */
export function probeLine(target: number): string {
	return `PROBE: before the next stage, report the value recorded on the FACT line of stage ${target} (answer as ANSWER S${target}: <value>).`;
}

/** Pattern of a probe line; group 1 is the target stage. */
export const PROBE_PATTERN =
	/^PROBE: before the next stage, report the value recorded on the FACT line of stage (\d+)\b/m;

/** Payload size of a stage in bytes: a band drawn by its share, then a size inside the band's bounds. */
export function stageBytes(workload: Workload, stage: number): number {
	let bounds: { minBytes: number; maxBytes: number } = workload;
	const draw = digest("band", workload.seed, stage).readUInt32BE(0) / 2 ** 32;
	let below = 0;
	for (const band of workload.bands ?? []) {
		below += band.share;
		if (draw < below) {
			bounds = band;
			break;
		}
	}
	const span = bounds.maxBytes - bounds.minBytes + 1;
	return bounds.minBytes + (digest("size", workload.seed, stage).readUInt32BE(0) % span);
}

/** The stages of each user turn, `[first, last]`, as evenly as possible. */
export function turnRanges(workload: Workload): [number, number][] {
	const turns = Math.max(1, Math.min(workload.turns ?? 1, workload.stages));
	const ranges: [number, number][] = [];
	for (let turn = 0; turn < turns; turn++) {
		const first = Math.floor((turn * workload.stages) / turns) + 1;
		const last = Math.floor(((turn + 1) * workload.stages) / turns);
		ranges.push([first, last]);
	}
	return ranges;
}

/** The user message of each turn: which stages to call, in order, answering every probe. */
export function userMessages(workload: Workload): string[] {
	const ranges = turnRanges(workload);
	if (ranges.length === 1)
		return [
			`Work through the staged repository assignment: call repo_stage for stages 1 to ${workload.stages} in order, and answer every probe a stage asks before moving on.`,
		];
	return ranges.map(
		([first, last], turn) =>
			`Turn ${turn + 1} of ${ranges.length} of the staged repository assignment: call repo_stage for stages ${first} to ${last} in order, and answer every probe a stage asks before moving on.`,
	);
}

/** Pattern of a user message's stage range; groups 1 and 2 are the first and last stage. */
export const TURN_RANGE_PATTERN = /call repo_stage for stages (\d+) to (\d+)/;

const WORDS = [
	"alloc",
	"buffer",
	"connect",
	"cookie",
	"easy",
	"handle",
	"header",
	"multi",
	"parse",
	"proxy",
	"socket",
	"timeout",
	"transfer",
	"url",
	"version",
	"write",
] as const;

/** One deterministic filler line: a path, a line number and a few identifiers. */
function fillerLine(seed: number, stage: number, index: number): string {
	const bytes = digest("line", seed, stage, index);
	const word = (at: number) => WORDS[(bytes[at] ?? 0) % WORDS.length] ?? "x";
	const file = `lib/${word(0)}_${word(1)}.c`;
	const line = bytes.readUInt16BE(2);
	return `${file}:${line}: ${word(4)}_${word(5)}(${word(6)}, ${word(7)}) -> ${bytes.toString("hex", 8, 14)} ${word(14)}`;
}

/**
 * The text `repo_stage` returns for a stage: header, filler with the fact
 * line 40% down, and the probe when the stage has one (never on a re-read, so
 * a re-read cannot raise a new question).
 */
export function stageText(workload: Workload, stage: number, reread = false): string {
	const target = reread ? undefined : probeTarget(workload.seed, stage);
	const header = `repo_stage ${stage} of ${workload.stages}${reread ? " (re-read)" : ""}: notes for this stage follow.`;
	const tail = target === undefined ? "" : `\n${probeLine(target)}`;
	const fact = factLine(workload.seed, stage);
	// Filler bytes, each line's newline included: header + filler + fact are joined by one more newline.
	const budget = stageBytes(workload, stage) - header.length - tail.length - fact.length - 1;
	const filler: string[] = [];
	let used = 0;
	for (let index = 0; used < budget; index++) {
		// The last line is cut to what is left, so the text is exactly stageBytes long.
		const line = fillerLine(workload.seed, stage, index).slice(0, budget - used - 1);
		filler.push(line);
		used += line.length + 1;
	}
	const at = Math.floor(filler.length * FACT_POSITION);
	const lines = [header, ...filler.slice(0, at), fact, ...filler.slice(at)];
	return `${lines.join("\n")}${tail}`;
}

/** Scale stage bounds (24–48 KB at full size) by a factor, for smaller presets. */
export function scaledBounds(factor: number): { minBytes: number; maxBytes: number } {
	return { minBytes: Math.round(FULL_MIN_BYTES * factor), maxBytes: Math.round(FULL_MAX_BYTES * factor) };
}

/** The stage payload bounds: 24–48 KB. */
export const FULL_MIN_BYTES = 24 * 1024;
export const FULL_MAX_BYTES = 48 * 1024;

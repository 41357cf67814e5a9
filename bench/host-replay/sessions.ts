/**
 * The host replay's configuration, as data: which sessions it replays, which
 * are held out, the windows, the arms, Pi's compaction settings and the
 * provider's cache rules.
 *
 * The held-out set is fixed here, before any fold policy is tuned on this
 * benchmark: the ladder work (issue 20, item 3) may look only at the "tuned"
 * set's figures while it designs; the held-out figures are reported
 * separately and are the ones its targets are judged on.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { loadSessionFile } from "../../src/session/load.ts";
import { type RealSessionName, realSessionPath } from "../../test/fixtures/real-sessions.ts";
import type { PromptCacheRules } from "../../test/harness/provider-rules.ts";
import type { ArmSetup } from "./config.ts";
import { type GeneratedShape, generateReplaySession } from "./generate.ts";
import { DEFAULT_REFERENCE } from "./reference.ts";

export type SessionSet = "tuned" | "held-out";

export interface ReplaySession {
	name: string;
	set: SessionSet;
	/** What it is, for the report. */
	shape: string;
	/** The recorded linear branch (loaded or generated on call). */
	branch(): SessionEntry[];
	/** Replay only the first this many user turns (the CI smoke run); all when undefined. */
	turns?: number;
}

function real(name: RealSessionName, set: SessionSet): ReplaySession {
	return {
		name,
		set,
		shape: "real Pi log",
		branch: () => loadSessionFile(realSessionPath(name)).manager.getBranch(),
	};
}

function generated(shape: GeneratedShape, seed: number, set: SessionSet): ReplaySession {
	return {
		name: `${shape}-s${seed}`,
		set,
		shape: shape === "multi-turn" ? "generated multi-turn" : "generated, 400 small results in one turn",
		branch: () => generateReplaySession(shape, seed),
	};
}

/** Every session of the full run: the split is decided here, once. */
export const SESSIONS: readonly ReplaySession[] = [
	real("pi-mono-large-session", "tuned"),
	generated("multi-turn", 1, "tuned"),
	generated("multi-turn", 2, "tuned"),
	generated("small-results", 1, "tuned"),
	real("pi-mono-before-compaction", "held-out"),
	generated("multi-turn", 3, "held-out"),
	generated("multi-turn", 4, "held-out"),
	generated("small-results", 2, "held-out"),
];

export interface ArmSpec {
	name: string;
	label: string;
	setup: ArmSetup;
}

export const NATIVE_ARM: ArmSpec = {
	name: "native",
	label: "Pi's own threshold compaction, no pi-fold",
	setup: { kind: "native" },
};
export const DEFAULTS_ARM: ArmSpec = { name: "defaults", label: "`registerPiFold(pi)`", setup: { kind: "pi-fold" } };
export const REFERENCE_ARM: ArmSpec = {
	name: "reference",
	label: `price-blind stubs past ${DEFAULT_REFERENCE.triggerTokens / 1000}k tokens, ${DEFAULT_REFERENCE.tailTokens / 1000}k fresh tail (lossy, bench only)`,
	setup: { kind: "reference", ...DEFAULT_REFERENCE },
};

/** Pi 1.6.0's compaction defaults (docs/compaction.md); at 128k and 200k windows a user runs with these. */
export const PI_COMPACTION: PiCompaction = { reserveTokens: 16_384, keepRecentTokens: 20_000 };

/** A prefix shorter than Anthropic's documented 1,024-token minimum is not cached; no block rounding. */
export const CACHE_RULES: PromptCacheRules = { minCachedTokens: 1_024 };

/** Characters of one brief in the floor's model (about what a one-batch pi-fold brief takes). */
export const FLOOR_BRIEF_CHARS = 600;
/** Fresh tail the floor keeps raw: pi-fold's 8,192 estimated tokens, in characters. */
export const FLOOR_TAIL_CHARS = 8_192 * 4;

export interface PiCompaction {
	reserveTokens: number;
	keepRecentTokens: number;
}

export interface Preset {
	name: string;
	sessions: readonly ReplaySession[];
	windows: readonly number[];
	arms: readonly ArmSpec[];
	piCompaction: PiCompaction;
	/** What the compaction settings are, for the report. */
	compactionNote: string;
	/** Upper bound for one turn. */
	turnTimeoutMs: number;
}

/** The CI smoke run's session: the first six user turns of the larger real log (103 requests, about 60k tokens). */
export const SMOKE_SESSION: ReplaySession = { ...real("pi-mono-large-session", "tuned"), turns: 6 };

/** One set at the given windows, native and defaults only: what a loaded machine can afford when the full run cannot. */
function setPreset(name: string, set: SessionSet, windows: readonly number[]): Preset {
	return {
		name,
		sessions: SESSIONS.filter((session) => session.set === set),
		windows,
		arms: [NATIVE_ARM, DEFAULTS_ARM],
		piCompaction: PI_COMPACTION,
		compactionNote: "Pi's defaults: reserveTokens 16,384, keepRecentTokens 20,000",
		turnTimeoutMs: 15 * 60_000,
	};
}

export const PRESETS: Readonly<Record<string, Preset>> = {
	full: {
		name: "full",
		sessions: SESSIONS,
		windows: [200_000, 128_000],
		arms: [NATIVE_ARM, DEFAULTS_ARM, REFERENCE_ARM],
		piCompaction: PI_COMPACTION,
		compactionNote: "Pi's defaults: reserveTokens 16,384, keepRecentTokens 20,000",
		turnTimeoutMs: 15 * 60_000,
	},
	// The ladder's runs when the machine is too loaded for the full preset: each set, both windows, native
	// and defaults only (the reference arm does not depend on pi-fold; the full preset's figures for it
	// stand). Together about two thirds of the full run.
	"ladder-held-out": setPreset("ladder-held-out", "held-out", [200_000, 128_000]),
	"ladder-tuned": setPreset("ladder-tuned", "tuned", [200_000, 128_000]),
	smoke: {
		name: "smoke",
		sessions: [SMOKE_SESSION],
		windows: [200_000],
		arms: [NATIVE_ARM, DEFAULTS_ARM],
		piCompaction: PI_COMPACTION,
		compactionNote: "Pi's defaults: reserveTokens 16,384, keepRecentTokens 20,000",
		turnTimeoutMs: 2 * 60_000,
	},
	// The report's estimate against the host on one set at one window, native and defaults only
	// (about a third of the full run): what a loaded machine can afford when the full run cannot.
	"tuned-128k": setPreset("tuned-128k", "tuned", [128_000]),
	"held-out-128k": setPreset("held-out-128k", "held-out", [128_000]),
};
export const DEFAULT_PRESET = "full";

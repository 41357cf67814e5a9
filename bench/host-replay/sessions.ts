/**
 * The host replay's configuration, as data: which sessions it replays, which
 * are held out, the windows, the arms, Pi's compaction settings and the
 * provider's cache rules.
 *
 * The held-out set is fixed here, before any fold policy is tuned on this
 * benchmark (issue 27 fixed the current split before its working-set ladder
 * was tuned): a policy may look only at the "tuned" set's figures while it
 * is designed; the held-out figures are reported separately and are the
 * ones its targets are judged on.
 *
 * Three of the real sessions are other hosts' recordings converted to Pi
 * sessions: benchmark input read where they lie, from the folder
 * `OTHER_HOSTS_DIR_ENV` names (test/fixtures/real-sessions.ts, the variable
 * the survival benchmark reads too), never copied into the repository
 * (their licences are unknown). When it is unset or lacks one (CI, a fresh
 * clone), that session is left out and the run says so.
 */

import type { AssistantMessage } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { loadSessionFile } from "../../src/session/load.ts";
import {
	OTHER_HOSTS_DIR_ENV,
	otherHostSession,
	type RealSessionName,
	realSessionPath,
} from "../../test/fixtures/real-sessions.ts";
import type { PromptCacheRules } from "../../test/harness/provider-rules.ts";
import type { ArmSetup } from "./config.ts";
import { type GeneratedShape, generateReplaySession } from "./generate.ts";
import { DEFAULT_REFERENCE } from "./reference.ts";

export type SessionSet = "tuned" | "held-out";

export interface ReplaySession {
	name: string;
	set: SessionSet;
	/** A recorded session, or one the bench generated (reported, never judged on). */
	origin: "real" | "generated";
	/** What it is, for the report. */
	shape: string;
	/** The recorded linear branch (loaded or generated on call). */
	branch(): SessionEntry[];
	/** Replay only the first this many user turns (the CI smoke run); all when undefined. */
	turns?: number;
	/** Read from outside the checkout (the folder `OTHER_HOSTS_DIR_ENV` names): may be absent. */
	external?: boolean;
}

function real(name: RealSessionName, set: SessionSet): ReplaySession {
	return {
		name,
		set,
		origin: "real",
		shape: "real Pi log",
		branch: () => loadSessionFile(realSessionPath(name)).manager.getBranch(),
	};
}

function generated(shape: GeneratedShape, seed: number, set: SessionSet): ReplaySession {
	return {
		name: `${shape}-s${seed}`,
		set,
		origin: "generated",
		shape: shape === "multi-turn" ? "generated multi-turn" : "generated, 400 small results in one turn",
		branch: () => generateReplaySession(shape, seed),
	};
}

/**
 * A converted session's branch without its recorded usage: the conversion
 * wrote input 0 and an output of its own making, so nothing may price from
 * it. Output is then Pi's estimate of the reply on both sides (the provider's
 * report and `pi-fold report`), and the calibration is the identity.
 */
export function withoutRecordedUsage(branch: readonly SessionEntry[]): SessionEntry[] {
	return branch.map((entry) => {
		if (entry.type !== "message" || entry.message.role !== "assistant") return entry;
		const message = entry.message as AssistantMessage;
		const usage = { ...message.usage, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
		return { ...entry, message: { ...message, usage } } as SessionEntry;
	});
}

function external(name: string, set: SessionSet, shape: string): ReplaySession {
	return {
		name,
		set,
		origin: "real",
		shape,
		branch: () => {
			const found = otherHostSession(name);
			if (!("path" in found))
				throw new Error(
					`host replay: ${name} cannot be read: ${found.missing} (${OTHER_HOSTS_DIR_ENV} names the folder)`,
				);
			return withoutRecordedUsage(loadSessionFile(found.path).manager.getBranch());
		},
		external: true,
	};
}

/** Every session of the full run: the split is decided here, once (issue 27; before any working-set tuning). */
export const SESSIONS: readonly ReplaySession[] = [
	real("pi-mono-large-session", "tuned"),
	external("raveera-codex", "tuned", "real Codex CLI session, converted"),
	generated("multi-turn", 1, "tuned"),
	generated("multi-turn", 2, "tuned"),
	generated("small-results", 1, "tuned"),
	real("pi-mono-before-compaction", "held-out"),
	external("agenttask-gjc", "held-out", "real GJC session (a Pi-format host)"),
	external("pvreview-cc", "held-out", "real Claude Code session, converted"),
	generated("multi-turn", 3, "held-out"),
	generated("multi-turn", 4, "held-out"),
	generated("small-results", 2, "held-out"),
];

/** The sessions of `sessions` this checkout can read, and a line for each it cannot (the run says so). */
export function availableSessions(sessions: readonly ReplaySession[]): {
	sessions: ReplaySession[];
	missing: string[];
} {
	const missing: string[] = [];
	const found = sessions.filter((session) => {
		if (!session.external) return true;
		const where = otherHostSession(session.name);
		if ("path" in where) return true;
		missing.push(`${session.name}: ${where.missing}; left out of this run (${OTHER_HOSTS_DIR_ENV} names the folder)`);
		return false;
	});
	return { sessions: found, missing };
}

export interface ArmSpec {
	name: string;
	label: string;
	setup: ArmSetup;
	/** A window of its own, whatever the column's: the arm runs once per session (at the preset's first window). */
	window?: number;
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

/** The sanity arm's window: so large that nothing a session holds reaches Pi's line. */
export const SANITY_WINDOW = 100_000_000;

/** Pi alone with nothing ever compacted: every reference stays raw, so it must score 0 out of view. */
export const SANITY_ARM: ArmSpec = {
	name: "sanity",
	label: `Pi alone on a ${SANITY_WINDOW.toLocaleString("en-US")}-token window (nothing compacts; must score 0 out of view)`,
	setup: { kind: "native" },
	window: SANITY_WINDOW,
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
		arms: [NATIVE_ARM, DEFAULTS_ARM, SANITY_ARM],
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
		arms: [NATIVE_ARM, DEFAULTS_ARM, REFERENCE_ARM, SANITY_ARM],
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
		arms: [NATIVE_ARM, DEFAULTS_ARM, SANITY_ARM],
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

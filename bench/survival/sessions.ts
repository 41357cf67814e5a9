/**
 * The "what survives compaction" benchmark's sessions, as data: which real
 * sessions it reads, where each comes from, and which are held out.
 *
 * The held-out set was fixed here before the compactor was changed for issue
 * 31: tuning may look only at the tuned set's figures; the held-out figures
 * are reported separately and are the ones the targets are judged on. Whole
 * sessions are held out, one of them a host (Claude Code) whose sessions the
 * tuning never saw.
 *
 * The two Pi logs are part of the checkout (test/fixtures/sessions/). The
 * three sessions from other hosts are benchmark input only and are read from
 * `../shared/sessions/real/` (never copied into the repo); when that folder
 * is absent the report says so and scores the Pi logs alone.
 */

import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { loadSessionFile } from "../../src/session/load.ts";
import { type RealSessionName, realSessionPath } from "../../test/fixtures/real-sessions.ts";

export type SessionSet = "tuned" | "held-out";

export interface SurvivalSession {
	name: string;
	set: SessionSet;
	/** The host that recorded it, for the report. */
	host: string;
	/** Absolute path of the log, or undefined when it is not on this machine. */
	path(): string | undefined;
}

/** Where the sessions from other hosts live: beside the repository, never inside it. */
export const OTHER_HOSTS_DIR = fileURLToPath(new URL("../../../shared/sessions/real/", import.meta.url));

function fixture(name: RealSessionName, set: SessionSet): SurvivalSession {
	return { name, set, host: "Pi", path: () => realSessionPath(name) };
}

function otherHost(name: string, host: string, set: SessionSet): SurvivalSession {
	return {
		name,
		set,
		host,
		path: () => {
			const path = `${OTHER_HOSTS_DIR}${name}.jsonl`;
			return existsSync(path) ? path : undefined;
		},
	};
}

/** Every session; the split is decided here, once. */
export const SURVIVAL_SESSIONS: readonly SurvivalSession[] = [
	fixture("pi-mono-large-session", "tuned"),
	otherHost("agenttask-gjc", "GJC (Pi format)", "tuned"),
	otherHost("raveera-codex", "Codex CLI", "tuned"),
	fixture("pi-mono-before-compaction", "held-out"),
	otherHost("pvreview-cc", "Claude Code", "held-out"),
];

/**
 * The session's recorded linear branch with the host's own compactions taken
 * out (their summaries were written by a model; the benchmark compacts the
 * raw history itself) and parent links rewritten to the remaining chain.
 */
export function rawBranch(path: string): SessionEntry[] {
	const branch = loadSessionFile(path).manager.getBranch();
	const kept = branch.filter((entry) => entry.type !== "compaction" && entry.type !== "branch_summary");
	return kept.map((entry, index) => ({ ...entry, parentId: index === 0 ? null : (kept[index - 1]?.id ?? null) }));
}

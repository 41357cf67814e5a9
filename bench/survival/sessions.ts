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
 * three sessions from other hosts are benchmark input only (their licences
 * are unknown): they are never copied into the repo, and the checkout names
 * no path outside itself (test/repo-standalone.test.ts), so the folder that
 * holds them is given by `OTHER_HOSTS_DIR_ENV` (test/fixtures/real-sessions.ts). When it is unset or lacks a
 * session, the report names what is absent and scores the others.
 */

import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { loadSessionFile } from "../../src/session/load.ts";
import { otherHostSession, type RealSessionName, realSessionPath } from "../../test/fixtures/real-sessions.ts";

export type SessionSet = "tuned" | "held-out";

export interface SurvivalSession {
	name: string;
	set: SessionSet;
	/** The host that recorded it, for the report. */
	host: string;
	/** Absolute path of the log, or undefined when it is not on this machine. */
	path(): string | undefined;
}

function fixture(name: RealSessionName, set: SessionSet): SurvivalSession {
	return { name, set, host: "Pi", path: () => realSessionPath(name) };
}

function otherHost(name: string, host: string, set: SessionSet): SurvivalSession {
	return {
		name,
		set,
		host,
		path: () => {
			const found = otherHostSession(name);
			return "path" in found ? found.path : undefined;
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

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { availableSessions, SESSIONS } from "../../../bench/host-replay/sessions.ts";
import { OTHER_HOSTS_DIR_ENV } from "../../fixtures/real-sessions.ts";

const saved = process.env[OTHER_HOSTS_DIR_ENV];
afterEach(() => {
	if (saved === undefined) delete process.env[OTHER_HOSTS_DIR_ENV];
	else process.env[OTHER_HOSTS_DIR_ENV] = saved;
});

const realOf = (set: string) =>
	SESSIONS.filter((session) => session.set === set && session.origin === "real").map((session) => session.name);

describe("the host replay's sessions", () => {
	it("holds the split issue 27 fixed before any tuning", () => {
		expect(realOf("tuned")).toEqual(["pi-mono-large-session", "raveera-codex"]);
		expect(realOf("held-out")).toEqual(["pi-mono-before-compaction", "agenttask-gjc", "pvreview-cc"]);
	});

	it("leaves out the sessions from other hosts, naming why, when the folder is not given or lacks one", () => {
		delete process.env[OTHER_HOSTS_DIR_ENV];
		const unset = availableSessions(SESSIONS);
		expect(unset.sessions.some((session) => session.external)).toBe(false);
		expect(unset.missing).toHaveLength(3);
		expect(unset.missing[0]).toMatch(/^raveera-codex: PI_FOLD_SESSIONS_DIR is not set; left out of this run/);

		const dir = mkdtempSync(join(tmpdir(), "pi-fold-other-hosts-"));
		try {
			writeFileSync(join(dir, "pvreview-cc.jsonl"), "");
			process.env[OTHER_HOSTS_DIR_ENV] = dir;
			const partial = availableSessions(SESSIONS);
			expect(partial.sessions.filter((session) => session.external).map((session) => session.name)).toEqual([
				"pvreview-cc",
			]);
			expect(partial.missing).toEqual([
				`raveera-codex: ${join(dir, "raveera-codex.jsonl")} not found; left out of this run (PI_FOLD_SESSIONS_DIR names the folder)`,
				`agenttask-gjc: ${join(dir, "agenttask-gjc.jsonl")} not found; left out of this run (PI_FOLD_SESSIONS_DIR names the folder)`,
			]);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
});

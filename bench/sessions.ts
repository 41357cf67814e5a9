/**
 * Where benchmarks find the two real Pi session logs: $PI_FOLD_SESSIONS_DIR,
 * else /work/shared/sessions next to the checkout. Missing logs skip the
 * benchmark with a message rather than fail it.
 */

import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BenchUnavailable } from "./harness.ts";

export const REAL_LOG_NAMES = ["pi-mono-before-compaction.jsonl", "pi-mono-large-session.jsonl"] as const;

export function sessionsDir(): string {
	return process.env.PI_FOLD_SESSIONS_DIR ?? fileURLToPath(new URL("../../shared/sessions/", import.meta.url));
}

export interface RealLog {
	name: string;
	path: string;
	bytes: number;
}

/** The real logs present; throws a skip when none are. */
export function realLogs(): RealLog[] {
	const dir = sessionsDir();
	const found: RealLog[] = [];
	for (const name of REAL_LOG_NAMES) {
		const path = join(dir, name);
		if (existsSync(path)) found.push({ name: name.replace(/\.jsonl$/, ""), path, bytes: statSync(path).size });
	}
	if (found.length === 0) {
		throw new BenchUnavailable(
			`no real session logs at ${dir} (set PI_FOLD_SESSIONS_DIR to the folder holding ${REAL_LOG_NAMES.join(", ")})`,
			true,
		);
	}
	return found;
}

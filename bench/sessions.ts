/**
 * The two real Pi session logs the benchmarks replay. They live in the repo
 * (test/fixtures/sessions/*.jsonl.gz); test/fixtures/real-sessions.ts owns
 * reading them, and this module only adapts its answer to the benchmarks'
 * shape. A missing or altered log fails the benchmark naming the file: the
 * logs are part of the checkout, so their absence is never a skip.
 */

import { statSync } from "node:fs";
import { REAL_SESSION_NAMES, realSessionPath } from "../test/fixtures/real-sessions.ts";

export interface RealLog {
	/** The log's name as Pi recorded it, without `.jsonl`. */
	name: string;
	/** A plain `.jsonl` copy, checked against its pinned hash; read only. */
	path: string;
	/** Decompressed size, i.e. the bytes Pi wrote. */
	bytes: number;
}

/** Both real logs; throws (failing the benchmark) when one is missing or altered. */
export function realLogs(): RealLog[] {
	return REAL_SESSION_NAMES.map((name) => {
		const path = realSessionPath(name);
		return { name, path, bytes: statSync(path).size };
	});
}

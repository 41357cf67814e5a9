/**
 * Whether the bundle Pi would load (`bundle/pi-fold.ts`, written by
 * scripts/bundle.ts from src/) was built from the sources the package holds
 * now. Pi loads a package through jiti, module by module, on every start:
 * one prebuilt module instead of ~150 saves a fixed ~0.2 s a start
 * (docs/benchmarks.md). A bundle built from other sources would run code that
 * is no longer there, so the package entry (src/package/load.ts) loads it
 * only when it is current, and the sources otherwise.
 *
 * Current means by content, never by file time: the bundle's first lines
 * record a SHA-256 over every file under src/ (path and bytes), and the entry
 * computes the same over the files it finds. A touched but unchanged source
 * keeps the bundle current; an edited source restored with an old time does
 * not. Installers stamp files in their own order, so times prove nothing
 * under node_modules either.
 */

import { createHash } from "node:crypto";
import { closeSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";
import { join, relative, sep } from "node:path";

/** The bundle's path under the package root. */
export const BUNDLE_PATH = "bundle/pi-fold.ts";
/** The folder the bundle is built from (its entry is `src/index.ts`). */
export const SOURCE_DIR = "src";
/** How the bundle's header names the sources it was built from; the fingerprint follows on the same line. */
export const FINGERPRINT_MARK = "// pi-fold sources: sha256 ";
/** Bytes of the bundle read to find its fingerprint: the header is its first three lines. */
const HEADER_BYTES = 1024;
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** One source file: its path under src/ with `/` separators, and its bytes. */
export interface SourceFile {
	path: string;
	bytes: Uint8Array;
}

/**
 * SHA-256 over the sources, in path order: each file as its path, its byte
 * length and its bytes, so no two different trees (a file renamed, split or
 * moved) hash the same stream.
 */
export function sourceFingerprint(files: readonly SourceFile[]): string {
	const hash = createHash("sha256");
	for (const file of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
		hash.update(`${file.path}\0${file.bytes.byteLength}\0`);
		hash.update(file.bytes);
	}
	return hash.digest("hex");
}

/** Every file under `root`/src, as `sourceFingerprint` reads them. */
export function readSources(root: string): SourceFile[] {
	const dir = join(root, SOURCE_DIR);
	return readdirSync(dir, { recursive: true, withFileTypes: true })
		.filter((item) => item.isFile())
		.map((item) => {
			const path = join(item.parentPath, item.name);
			return { path: relative(dir, path).split(sep).join("/"), bytes: readFileSync(path) };
		});
}

/** The header line that records the sources' fingerprint (scripts/bundle.ts writes it). */
export function fingerprintLine(fingerprint: string): string {
	return `${FINGERPRINT_MARK}${fingerprint}`;
}

/** The fingerprint a bundle's header records, or undefined when it records none. */
export function recordedFingerprint(header: string): string | undefined {
	for (const line of header.split("\n")) {
		if (!line.startsWith(FINGERPRINT_MARK)) continue;
		const value = line.slice(FINGERPRINT_MARK.length).trim();
		return SHA256_HEX.test(value) ? value : undefined;
	}
	return undefined;
}

/** What the package holds: a bundle built from its sources, one built from others, one that records none, or none. */
export type BundleState =
	| { kind: "current" }
	| { kind: "stale"; recorded: string; actual: string }
	| { kind: "unrecorded" }
	| { kind: "missing" };

/** The first bytes of the bundle, or undefined when there is no readable bundle. */
function bundleHeader(root: string): string | undefined {
	let fd: number;
	try {
		fd = openSync(join(root, BUNDLE_PATH), "r");
	} catch {
		return undefined;
	}
	try {
		const buffer = Buffer.alloc(HEADER_BYTES);
		const read = readSync(fd, buffer, 0, HEADER_BYTES, 0);
		return buffer.subarray(0, read).toString("utf8");
	} finally {
		closeSync(fd);
	}
}

/** The bundle under `root` against the sources under `root`/src. */
export function bundleState(root: string): BundleState {
	const header = bundleHeader(root);
	if (header === undefined) return { kind: "missing" };
	const recorded = recordedFingerprint(header);
	if (recorded === undefined) return { kind: "unrecorded" };
	const actual = sourceFingerprint(readSources(root));
	return recorded === actual ? { kind: "current" } : { kind: "stale", recorded, actual };
}

/**
 * `pi-fold verify` and `pi-fold gc`: argument parsing, the human and JSON
 * reports, and the thin I/O shell around the checks in src/fold/verify.ts.
 * Formatting is pure over the loaded session and the check's result; only
 * `runVerify` / `runGc` touch the disk (the store is opened read-only for
 * verify; gc removes blobs only with `--apply`).
 */

import { statSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_ENTRY_TYPE_PREFIX } from "../fold/options.ts";
import { stateEntryTypes } from "../fold/state/state.ts";
import { evidenceDir } from "../fold/store/evidence-store.ts";
import { collectGarbage, GC_GRACE_MS, type GcReport } from "../fold/store/gc.ts";
import { openBlobDirectory } from "../fold/store/store-file.ts";
import { type Defect, readOnlyStore, type VerifyReport, verifySession } from "../fold/store/verify.ts";
import type { LoadDiagnostic, LoadedSession } from "../session/load.ts";
import { readableBytes } from "./report.ts";

export const VERIFY_HELP = `Usage: pi-fold verify [options] <session.jsonl>

Check a session's fold state against its entries and its fold store: every
fold record (blob hash, parts, sizes, nesting rules), every state delta,
checkpoint and commit, every details record of pi-fold's compactor, and every
line of the file. Reads and hashes every blob gc keeps: committed folds,
pending marks, the parts consolidations are stored as, blobs a damaged line
names, and every evidence artifact the transcript names. Never writes. Exit 0
when clean, 1 on any defect.

Options:
  --json             Print the result as JSON
  --prefix <prefix>  Custom entry type prefix pi-fold was configured with
                     (default ${DEFAULT_ENTRY_TYPE_PREFIX})
  -h, --help         Show this help
`;

export const GC_HELP = `Usage: pi-fold gc [options] <session.jsonl>

List the blobs and part lists in the session's fold store that nothing
references (the blobs verify reads: committed folds on any branch, pending
marks, the parts of consolidations, blobs a damaged line names), with their
size, and the store's size against the session's. A dry run unless --apply
is given; referenced files are never removed, nor files younger than the
grace period (a running Pi may be about to name them), nor anything outside
the store.

Options:
  --apply            Remove the unreferenced blobs and part lists
  --grace <minutes>  Keep unreferenced files modified within this many minutes
                     (default ${GC_GRACE_MS / 60_000}; 0 when no Pi has the session open)
  --json             Print the result as JSON
  --prefix <prefix>  Custom entry type prefix pi-fold was configured with
                     (default ${DEFAULT_ENTRY_TYPE_PREFIX})
  -h, --help         Show this help
`;

export interface StoreArgs {
	path?: string;
	json: boolean;
	apply: boolean;
	/** gc: unreferenced files younger than this are kept. */
	graceMs: number;
	prefix: string;
	help: boolean;
}

/** `verify` / `gc` arguments; `--apply` only for gc. */
export function parseStoreArgs(command: "verify" | "gc", args: readonly string[]): StoreArgs | { problem: string } {
	let parsed: ReturnType<typeof parseArgs<{ options: typeof STORE_OPTIONS; allowPositionals: true; strict: true }>>;
	try {
		parsed = parseArgs({ args: [...args], allowPositionals: true, strict: true, options: STORE_OPTIONS });
	} catch (error) {
		const message = error instanceof Error ? error.message : String(error);
		const option = /option '([^' ]+)/i.exec(message)?.[1] ?? "";
		const code = (error as { code?: unknown }).code;
		if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") return { problem: `unknown option "${option}" for ${command}` };
		if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") return { problem: `${option} needs a value` };
		return { problem: message };
	}
	const { values, positionals } = parsed;
	if (command === "verify" && values.apply) return { problem: `unknown option "--apply" for verify` };
	if (command === "verify" && values.grace !== undefined) return { problem: `unknown option "--grace" for verify` };
	const grace = values.grace === undefined ? GC_GRACE_MS / 60_000 : Number(values.grace);
	if (!/^\d+(\.\d+)?$/.test(values.grace ?? "0") || !Number.isFinite(grace))
		return { problem: `--grace takes a number of minutes (0 or more), got "${values.grace}"` };
	if (positionals.length > 1) return { problem: `${command} takes one session path, got ${positionals.length}` };
	const prefix = values.prefix ?? DEFAULT_ENTRY_TYPE_PREFIX;
	if (prefix === "") return { problem: "--prefix needs a value" };
	const result: StoreArgs = {
		json: values.json === true,
		apply: values.apply === true,
		graceMs: grace * 60_000,
		prefix,
		help: values.help === true,
	};
	if (positionals[0] !== undefined) result.path = positionals[0];
	else if (!result.help) return { problem: `${command} needs a session path` };
	return result;
}

const STORE_OPTIONS = {
	json: { type: "boolean" },
	apply: { type: "boolean" },
	grace: { type: "string" },
	prefix: { type: "string" },
	help: { type: "boolean", short: "h" },
} as const;

/** A defect as shown: verify's, or a line the loader skipped. */
export interface ShownDefect extends Omit<Defect, "kind"> {
	kind: Defect["kind"] | "bad-line" | "parent-cycle";
	/** File line of the entry the defect is at, when known. */
	line?: number;
}

/** Lines the loader skipped are defects of the file; repaired ones (a cut parent cycle) too. */
function lineDefect(diagnostic: LoadDiagnostic): ShownDefect {
	return {
		kind: diagnostic.kind === "parent-cycle" ? "parent-cycle" : "bad-line",
		where: `line ${diagnostic.line}`,
		line: diagnostic.line,
		problem: diagnostic.message.replace(/^line \d+: /, ""),
		next:
			diagnostic.kind === "truncated-last-line"
				? "the last write was cut off (a crash); Pi ignores the line too, nothing is lost beyond it"
				: "Pi and pi-fold ignore this line; restore it from a backup or remove it",
	};
}

/** File line of a fold or mark id: the first fold-state entry that records it. */
function foldLines(session: LoadedSession, prefix: string): Map<string, number> {
	const types = stateEntryTypes(prefix);
	const own = new Set<string>(Object.values(types));
	const lines = new Map<string, number>();
	const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
	for (const entry of session.entries) {
		if (entry.type !== "custom" || !own.has(entry.customType)) continue;
		const data = entry.data as
			| { record?: unknown; records?: unknown; ops?: unknown; state?: { marks?: unknown } }
			| undefined;
		const marks = [...list(data?.ops), ...list(data?.state?.marks)].map(
			(item) =>
				(item as { mark?: { record?: unknown }; record?: unknown } | undefined)?.mark?.record ??
				(item as { record?: unknown } | undefined)?.record,
		);
		const records = [data?.record, ...list(data?.records), ...marks];
		for (const record of records) {
			const id = (record as { id?: unknown } | undefined)?.id;
			if (typeof id === "string" && !lines.has(id)) lines.set(id, session.lines.get(entry.id) ?? 0);
		}
	}
	return lines;
}

export interface VerifyOutcome {
	session: string;
	path: string;
	clean: boolean;
	counts: {
		lines: number;
		entries: number;
		branches: number;
		stateEntries: number;
		folds: number;
		blobsChecked: number;
		/** What was read and hashed, by what references it. */
		checked: VerifyReport["checked"];
		rebuildable: number;
		compactions: number;
		defects: number;
	};
	store: { location: string; kind: string } | { problem: string };
	defects: ShownDefect[];
	rebuildable: string[];
}

/** The verify result as data: defects located by file line where possible. Pure. */
export function verifyOutcome(
	session: LoadedSession,
	report: VerifyReport,
	store: VerifyOutcome["store"],
	prefix: string,
): VerifyOutcome {
	const folds = foldLines(session, prefix);
	const byId = new Map(session.entries.map((entry) => [entry.id, entry]));
	const located = report.defects.map((defect): ShownDefect => {
		const line = session.lines.get(defect.where) ?? folds.get(defect.where);
		const entry = byId.get(defect.where);
		// An unreadable state entry is named by its type: "…:checkpoint entry: malformed checkpoint".
		const named =
			defect.kind === "unreadable-state" && entry?.type === "custom"
				? { ...defect, problem: `${entry.customType} entry: ${defect.problem}` }
				: defect;
		return line === undefined ? named : { ...named, line };
	});
	const defects = [...session.diagnostics.map(lineDefect), ...located];
	const lastLine = Math.max(0, ...session.lines.values(), ...session.diagnostics.map((d) => d.line));
	return {
		session: session.header.id,
		path: session.path,
		clean: defects.length === 0,
		counts: {
			lines: lastLine,
			entries: session.entries.length,
			branches: report.branches,
			stateEntries: report.stateEntries,
			folds: report.folds,
			blobsChecked: report.blobsChecked,
			checked: report.checked,
			rebuildable: report.rebuildable.length,
			compactions: report.compactions,
			defects: defects.length,
		},
		store,
		defects,
		rebuildable: report.rebuildable,
	};
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** What verify read and hashed, by what references it: "7 blobs: 2 folds, 1 pending mark, …". */
function checkedLine(checked: VerifyReport["checked"], blobs: number): string {
	return (
		`${plural(blobs, "blob")}: ${plural(checked.folds, "fold")}, ${plural(checked.marks, "pending mark")}, ` +
		`${plural(checked.parts, "consolidation part")}, ${checked.named} named by unreadable lines; ` +
		`${plural(checked.evidence, "evidence artifact")}`
	);
}

/** The human verify report: counts, then each defect with where, what and the next step. Pure. */
export function formatVerify(outcome: VerifyOutcome): string {
	const { counts } = outcome;
	const lines = [
		`Verify session ${outcome.session}`,
		`  file               ${outcome.path}`,
		`  entries            ${counts.entries} on ${plural(counts.branches, "branch")}`.replace(/branchs/, "branches"),
		`  fold state entries ${counts.stateEntries}`,
		`  folds              ${counts.folds} (${counts.rebuildable} rebuildable from the log)`,
		`  checked            ${checkedLine(counts.checked, counts.blobsChecked)}`,
		`  compactions        ${counts.compactions} with pi-fold compaction details`,
		"problem" in outcome.store
			? `  store              none: ${outcome.store.problem}`
			: `  store              ${outcome.store.location} (read-only)`,
		"",
	];
	if (outcome.rebuildable.length > 0) {
		lines.push(
			`Rebuildable (not defects): ${plural(outcome.rebuildable.length, "fold")} whose blob is missing; the log still holds the exact bytes and peek (or the mark's commit) rebuilds the blob: ${outcome.rebuildable.join(", ")}`,
			"",
		);
	}
	if (outcome.clean) {
		lines.push("Result: clean, no defects.");
		return `${lines.join("\n")}\n`;
	}
	lines.push(`Defects: ${counts.defects}`);
	outcome.defects.forEach((defect, index) => {
		const at = defect.line !== undefined && !defect.where.startsWith("line ") ? ` (line ${defect.line})` : "";
		lines.push(
			`  ${index + 1}. ${defect.kind} at ${defect.where}${at}`,
			`     ${defect.problem}`,
			`     next: ${defect.next}`,
		);
	});
	lines.push(
		"",
		`Result: ${plural(counts.defects, "defect")}. Act on each "next:" above, then run pi-fold verify again.`,
	);
	return `${lines.join("\n")}\n`;
}

/** Verify one loaded session against its store and its evidence directory. */
export async function runVerify(session: LoadedSession, prefix: string): Promise<VerifyOutcome> {
	const sessionDir = dirname(resolve(session.path));
	const opened = readOnlyStore(sessionDir, basename(session.header.id));
	const store = "problem" in opened ? undefined : opened;
	const evidence = store
		? openBlobDirectory({ root: evidenceDir(sessionDir, session.header.id, prefix), readOnly: true })
		: undefined;
	const report = await verifySession(session.entries, { store, evidence }, prefix);
	const shownStore = "problem" in opened ? opened : { location: opened.location, kind: opened.kind };
	return verifyOutcome(session, report, shownStore, prefix);
}

export interface GcOutcome extends GcReport {
	session: string;
	sessionBytes: number;
	apply: boolean;
	graceMs: number;
	unreferencedBytes: number;
}

/** Collect unreferenced blobs of a loaded session's store. */
export async function runGc(
	session: LoadedSession,
	prefix: string,
	options: { apply: boolean; graceMs: number },
): Promise<GcOutcome> {
	const path = resolve(session.path);
	const report = await collectGarbage(session.entries, dirname(path), session.header.id, prefix, options);
	return {
		...report,
		session: session.header.id,
		sessionBytes: statSync(path).size,
		apply: options.apply,
		graceMs: options.graceMs,
		unreferencedBytes: report.unreferenced.reduce((sum, blob) => sum + blob.bytes, 0),
	};
}

/** Lines the loader skipped (not repaired): a damaged line may name blobs gc cannot see. */
export function skippedLines(session: LoadedSession): LoadDiagnostic[] {
	return session.diagnostics.filter((diagnostic) => !diagnostic.repaired);
}

/** The human gc report. Pure. */
export function formatGc(outcome: GcOutcome, sessionPath: string): string {
	const share =
		outcome.sessionBytes > 0
			? ` (${((outcome.storeBytes / outcome.sessionBytes) * 100).toFixed(1)}% of the session)`
			: "";
	const minutes = `${outcome.graceMs / 60_000} minute${outcome.graceMs === 60_000 ? "" : "s"}`;
	const lines = [
		`Fold store ${outcome.storeDir}`,
		`  session file  ${readableBytes(outcome.sessionBytes)}`,
		`  store         ${plural(outcome.blobs, "blob")} and ${plural(outcome.lists, "part list")}, ${readableBytes(outcome.storeBytes)}${share}`,
		`  referenced    ${outcome.referenced} (never removed)`,
		`  recent        ${outcome.recent} unreferenced, kept: modified within the last ${minutes} (a running Pi may be about to name them)`,
		`  unreferenced  ${outcome.unreferenced.length}, ${readableBytes(outcome.unreferencedBytes)}`,
	];
	for (const file of outcome.unreferenced)
		lines.push(`    ${file.hash}${file.form === "parts" ? " (part list)" : ""}  ${readableBytes(file.bytes)}`);
	if (outcome.links.length > 0) {
		lines.push(
			`  links         ${outcome.links.length}, never followed or removed (a store holds no links; check them):`,
		);
		for (const link of outcome.links) lines.push(`    ${link}`);
	}
	for (const list of outcome.damaged) lines.push(`  damaged list  ${list.hash}: ${list.problem}`);
	lines.push("");
	if (outcome.unreferenced.length === 0) lines.push("Nothing to remove.");
	else if (outcome.damaged.length > 0)
		lines.push(
			`Nothing removed: ${plural(outcome.damaged.length, "part list")} cannot be read, so what ${outcome.damaged.length === 1 ? "it names" : "they name"} is unknown. Run "pi-fold verify ${sessionPath}" and act on it first.`,
		);
	else if (outcome.apply)
		lines.push(`Removed ${plural(outcome.removed, "file")}, ${readableBytes(outcome.unreferencedBytes)} freed.`);
	else lines.push(`Dry run: nothing removed. Run "pi-fold gc --apply ${sessionPath}" to remove them.`);
	return `${lines.join("\n")}\n`;
}

/**
 * Every settings problem pi-fold finds, told in one format, once.
 *
 * pi-fold reads two keys of Pi's settings files: `piFold` (fold options,
 * src/fold/settings-file.ts) and `compaction` (the compactor's settings,
 * src/compaction/settings/). Both readers report what they could not use as
 * `SettingsProblem`s; the package entry gathers them at session start and
 * shows one notice: a warning in the TUI or RPC mode, one stderr line in
 * print and json mode. Problems are grouped by file, each names the key, the
 * value found, why it was refused and what is used instead.
 *
 * A file Pi cannot read or parse is not repeated here: Pi reports it itself
 * ("Invalid settings file …") and reads nothing from it, and neither does
 * pi-fold, so a second line would say the same thing again.
 */

/** One thing a settings file (or code) asked for that was not done as written. */
export interface SettingsProblem {
	/** The file, or "registerPiFold options" for code. */
	path: string;
	/** `piFold.<option>` or `compaction.<key>`. */
	key: string;
	/** The value found, when there was one. */
	value?: unknown;
	reason: string;
	/** What is in force instead, as the person reads it. */
	using?: string;
}

/** Characters of a found value shown: enough to recognise it, never a pasted blob. */
export const NOTICE_VALUE_CHARS = 80;
/** Problems listed in one notice; the rest are counted. */
export const NOTICE_MAX_PROBLEMS = 12;
/** Every notice starts with this, so a person (and a test) can find it. */
export const NOTICE_HEAD = "pi-fold settings:";

/** A JSON value as a notice shows it, bounded. */
export function shownValue(value: unknown): string {
	let text: string;
	try {
		text = value === undefined ? "(missing)" : (JSON.stringify(value) ?? String(value));
	} catch {
		text = String(value);
	}
	return text.length > NOTICE_VALUE_CHARS ? `${text.slice(0, NOTICE_VALUE_CHARS - 1)}…` : text;
}

/** `key = value: reason; using x.` */
function problemText(problem: SettingsProblem): string {
	const value = problem.value === undefined ? "" : ` = ${shownValue(problem.value)}`;
	const using = problem.using === undefined ? "" : `; using ${problem.using}`;
	const reason = problem.reason.replace(/[.\s]+$/, "");
	return `${problem.key}${value}: ${reason}${using}.`;
}

/** The same problem reported twice (two readers, or two phases) is told once. */
function unique(problems: readonly SettingsProblem[]): SettingsProblem[] {
	const seen = new Set<string>();
	return problems.filter((problem) => {
		const key = `${problem.path}\n${problem.key}\n${problemText(problem)}`;
		if (seen.has(key)) return false;
		seen.add(key);
		return true;
	});
}

export interface SettingsNotice {
	/** For a UI: a head line, then each file and its problems indented under it. */
	text: string;
	/** For stderr: the same on one line. */
	oneLine: string;
}

/** One notice for all problems, or undefined when there are none. */
export function settingsNotice(problems: readonly SettingsProblem[]): SettingsNotice | undefined {
	const all = unique(problems);
	if (all.length === 0) return undefined;
	const listed = all.slice(0, NOTICE_MAX_PROBLEMS);
	const byFile = new Map<string, string[]>();
	for (const problem of listed) byFile.set(problem.path, [...(byFile.get(problem.path) ?? []), problemText(problem)]);
	const more = all.length - listed.length;
	const count = all.length === 1 ? "one problem" : `${all.length} problems`;
	const head = `${NOTICE_HEAD} ${count}; every other setting is in use.`;
	const tail = more > 0 ? [`… and ${more} more.`] : [];
	const lines = [head];
	for (const [path, texts] of byFile) lines.push(`  ${path}`, ...texts.map((text) => `    ${text}`));
	const flat = [...byFile].map(([path, texts]) => `${path}: ${texts.join(" ")}`);
	return {
		text: [...lines, ...tail.map((line) => `  ${line}`)].join("\n"),
		oneLine: [head, ...flat, ...tail].join(" "),
	};
}

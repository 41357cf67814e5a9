/**
 * The settings reference: every option a settings file can carry, its
 * default and what it does, as the README prints it. The `piFold` table is
 * typed over `JsonOptionKey`, so an option added to the option table
 * (src/fold/options.ts) without a meaning here fails to compile; defaults are
 * read from the resolver and the compactor's constants, never typed twice.
 * `npm run readme` writes the tables into README.md and test/readme.test.ts
 * fails when they drift.
 */

import {
	DEFAULT_ENGINE,
	DEFAULT_KEEP_RECENT_TOKENS,
	DEFAULT_OUTPUT_RESERVE_TOKENS,
	DEFAULT_PRESSURE_BANDS,
	DEFAULT_REPAIR_ORPHANS,
	DEFAULT_TARGET_CONTEXT_RATIO,
	MAX_TARGET_CONTEXT_RATIO,
	MAX_THRESHOLD_RATIO,
	MIN_TARGET_CONTEXT_RATIO,
	MIN_THRESHOLD_RATIO,
} from "../compaction/settings/settings.ts";
import {
	DEFAULT_COMMAND_NAMES,
	JSON_OPTION_KEYS,
	type JsonOptionKey,
	REGISTRATION_OPTION_KEYS,
	resolveOptions,
} from "../fold/options.ts";

/** What each `piFold` option does, in a person's words. */
const FOLD_OPTION_MEANINGS: Readonly<Record<JsonOptionKey, string>> = {
	toolName: "Name of the context tool the model calls.",
	toolLabel: "Label of the tool's rows in Pi's TUI.",
	commandPrefix: `Prefix for the two commands: \`"pf"\` makes them \`/pf-${DEFAULT_COMMAND_NAMES.status}\` and \`/pf-${DEFAULT_COMMAND_NAMES.fold}\`.`,
	commandNames:
		'Full names for the two commands, `{ "status": …, "fold": … }` (distinct, kebab-case); wins over `commandPrefix`.',
	foldScheduling:
		'`"epoch"`: a fold is a pending mark and all marks land in one rewrite at a commit, so the provider\'s cache survives; `"immediate"`: each fold lands when it is made.',
	toolActions: "Which actions the tool offers the model (a replacement list).",
	evidenceIngestion: "Keep oversized MCP tool results as read-only evidence files; `false` writes none.",
	brandNoun:
		"Short noun heading each fold's brief in the model's window (`[pi-fold fold f-…]`) and the refusal of a request too large to send.",
	entryTypePrefix: "Prefix of pi-fold's entries in the session file; changing it starts a separate fold state.",
	summarizer:
		'Who writes chapter and consolidation briefs: `"session"` (the session\'s model), `"deterministic"` (no model calls) or `{ "provider", "model" }`.',
	foldPeekResults: "Count a peek's result as a finished read that the ladder may fold again.",
	providerTotalWindow:
		"Total window the provider serves, less the model's output reservation: the budget is the smaller of it and Pi's compaction line (the window less Pi's reserve), and the fence sends requests up to it instead of refusing them. A value above the model's window is warned about, naming the budget and limit it gives.",
	blockingTools: "Tools before which pi-fold folds stale tool output once (a replacement list; `[]` turns it off).",
	readOnlyTools:
		"Tools whose finished batches the ladder folds first (a replacement list); every completed batch may fold, since a fold is lossless, so `[]` is refused.",
};

const json = (value: unknown): string => {
	if (value instanceof Set) return JSON.stringify([...value]);
	return value === undefined ? "the model's window" : JSON.stringify(value);
};

/** The default a person would write in JSON. */
function foldDefault(key: JsonOptionKey): string {
	const resolved = resolveOptions();
	if (key === "commandPrefix") return '`""`';
	if (key === "commandNames") return `\`${JSON.stringify(resolved.commandNames)}\``;
	const value = resolved[key];
	return value === undefined ? "the model's window" : `\`${json(value)}\``;
}

const percent = (ratio: number) => `${Math.round(ratio * 100)}%`;

/** The `compaction` keys pi-fold reads, with their defaults and meanings. */
const COMPACTION_ROWS: readonly [key: string, defaultValue: string, meaning: string][] = [
	[
		"engine",
		`\`${JSON.stringify(DEFAULT_ENGINE)}\``,
		'Who compacts: `"fabric"` (pi-fold\'s deterministic compactor; the value is the spec\'s wire name) or `"pi"` (Pi\'s own summarizer).',
	],
	[
		"targetContextRatio",
		`\`${DEFAULT_TARGET_CONTEXT_RATIO}\``,
		`Max occupancy: the most of the window a compaction may leave filled (${percent(MIN_TARGET_CONTEXT_RATIO)}–${percent(MAX_TARGET_CONTEXT_RATIO)}).`,
	],
	[
		"thresholds",
		"`{}`",
		`Per model (\`"provider/model"\`): compact when the context reaches this share of the window (${percent(MIN_THRESHOLD_RATIO)}–${percent(MAX_THRESHOLD_RATIO)}); otherwise Pi's own threshold.`,
	],
	[
		"tokenThresholds",
		"`{}`",
		"Per model: compact at this many tokens; a value above the model's window is warned about (it is never reached).",
	],
	[
		"outputReserveTokens",
		`\`${DEFAULT_OUTPUT_RESERVE_TOKENS}\``,
		"Compact at a turn boundary once less than this is left for the model's answer (`0`: off).",
	],
	[
		"pressureBands",
		`\`${JSON.stringify(DEFAULT_PRESSURE_BANDS)}\``,
		"Occupancy shares at which the compaction API reports warn and urgent pressure.",
	],
	[
		"repairOrphans",
		`\`${DEFAULT_REPAIR_ORPHANS}\``,
		"Give a tool call whose result is missing a placeholder result, so the provider accepts the request.",
	],
	[
		"keepRecentTokens",
		`\`${DEFAULT_KEEP_RECENT_TOKENS}\``,
		"Pi's own setting: the recent raw tail a compaction keeps.",
	],
];

const REGISTRATION = new Set<string>(REGISTRATION_OPTION_KEYS);

/** The README's settings reference: both tables as markdown. */
export function settingsReference(): string {
	const fold = JSON_OPTION_KEYS.map(
		(key) =>
			`| \`${key}\` | ${foldDefault(key)} | ${FOLD_OPTION_MEANINGS[key]}${REGISTRATION.has(key) ? " Global file only; applies after `/reload`." : ""} |`,
	);
	const compaction = COMPACTION_ROWS.map(([key, value, meaning]) => `| \`${key}\` | ${value} | ${meaning} |`);
	return [
		"`piFold` options:",
		"",
		"| option | default | what it does |",
		"| --- | --- | --- |",
		...fold,
		"",
		"`compaction` settings:",
		"",
		"| key | default | what it does |",
		"| --- | --- | --- |",
		...compaction,
	].join("\n");
}

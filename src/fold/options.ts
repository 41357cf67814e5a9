/**
 * Options of `registerPiFold` and their defaults, validated once at
 * registration. Names and defaults follow the spec's configuration table so
 * sessions interoperate; replacement lists and sets replace the defaults.
 */

import type { CompactionOptions } from "../compaction/settings/settings-source.ts";
import { PRODUCT_NAME } from "../product.ts";
import { DEFAULT_READ_ONLY_TOOLS } from "./lattice/units.ts";
import type { ProjectionProvider } from "./projection-candidates.ts";
import type { RegisterSuggestionSource } from "./suggestions.ts";

export { DEFAULT_READ_ONLY_TOOLS };

export const DEFAULT_TOOL_NAME = "active_context";
export const DEFAULT_TOOL_LABEL = PRODUCT_NAME;
/**
 * The spec's default is "active-context"; issue 19.5 (one product name in
 * what a person reads) makes it the product's name. Briefs written under the
 * old default are still recognised (engine/stray-briefs.ts).
 */
export const DEFAULT_BRAND_NOUN = PRODUCT_NAME;
export const DEFAULT_ENTRY_TYPE_PREFIX = "pi-fold-active-context";
export const DEFAULT_COMMAND_NAMES = { status: "context", fold: "fold-context" } as const;
export const DEFAULT_BLOCKING_TOOLS: readonly string[] = ["Agent"];

export const TOOL_ACTIONS = [
	"status",
	"peek",
	"search",
	"fold",
	"expand",
	"refold",
	"protect",
	"unprotect",
	"rebrief",
	"reboundary",
	"unmark",
] as const;
export type ToolAction = (typeof TOOL_ACTIONS)[number];

export type FoldScheduling = "immediate" | "epoch";
/** Default scheduling; see docs/benchmarks.md for the measurement behind it. */
export const DEFAULT_FOLD_SCHEDULING: FoldScheduling = "epoch";

/** What a host's `summarizeContextSpan` is asked to brief (the summarizer module decides how it is called). */
export interface ContextSpanRequest {
	/** Canonical JSON of the span's leaf entries, one per line, bounded by the caller. */
	span: string;
	/** Longest brief accepted, in characters. */
	maxBriefChars: number;
	signal?: AbortSignal;
}

/** A host brief: bounded text plus who wrote it; `toolCalls` must be 0 (a brief never runs tools). */
export interface ContextSpanBrief {
	brief: string;
	provider: string;
	model: string;
	effort?: string;
	toolCalls: 0;
}

/** Optional async brief generator; any failure falls back to the deterministic brief. */
export type SummarizeContextSpan = (request: ContextSpanRequest) => Promise<ContextSpanBrief>;
/** Synchronous predicate: is this tool an MCP tool whose oversized results become evidence? */
export type IsMcpTool = (toolName: string) => boolean;

/** Default `isMcpTool`: no tool is an MCP tool, so nothing is ingested until a host says which are. */
export const DEFAULT_IS_MCP_TOOL: IsMcpTool = () => false;

export interface PiFoldOptions {
	toolName?: string;
	toolLabel?: string;
	brandNoun?: string;
	entryTypePrefix?: string;
	commandPrefix?: string;
	commandNames?: { status?: string; fold?: string };
	summarizer?: "session" | "deterministic" | { provider: string; model: string; effort?: string };
	foldScheduling?: FoldScheduling;
	foldPeekResults?: boolean;
	providerTotalWindow?: number;
	toolActions?: readonly ToolAction[];
	blockingTools?: readonly string[];
	/** A set, or a list (as a settings file writes it). */
	readOnlyTools?: ReadonlySet<string> | readonly string[];
	evidenceIngestion?: boolean;
	/** Code only. Mutually exclusive with `summarizer` (any explicit value). */
	summarizeContextSpan?: SummarizeContextSpan;
	/** Code only. Default: no tool is an MCP tool. */
	isMcpTool?: IsMcpTool;
	/** Code only. Receives the projection-candidate provider once, at registration. */
	setProjectionProvider?: (provider: ProjectionProvider) => void;
	/** Code only. Receives the suggestion-source registration function once, at registration. */
	setSuggestionSourceRegistrar?: (register: RegisterSuggestionSource) => void;
	/** Compaction settings (engine, targetContextRatio, …); Pi's settings files are read on top at use time. */
	compaction?: CompactionOptions;
}

/** Options resolved against the defaults: a frozen value; new options are a new value (`FoldRuntime.configure`). */
export interface ResolvedOptions {
	readonly toolName: string;
	readonly toolLabel: string;
	readonly brandNoun: string;
	readonly entryTypePrefix: string;
	readonly commandNames: { status: string; fold: string };
	readonly summarizer: NonNullable<PiFoldOptions["summarizer"]>;
	readonly foldScheduling: FoldScheduling;
	readonly foldPeekResults: boolean;
	readonly providerTotalWindow: number | undefined;
	readonly toolActions: readonly ToolAction[];
	readonly blockingTools: readonly string[];
	readonly readOnlyTools: ReadonlySet<string>;
	readonly evidenceIngestion: boolean;
	readonly summarizeContextSpan: SummarizeContextSpan | undefined;
	readonly isMcpTool: IsMcpTool;
	readonly setProjectionProvider: ((provider: ProjectionProvider) => void) | undefined;
	readonly setSuggestionSourceRegistrar: ((register: RegisterSuggestionSource) => void) | undefined;
	/**
	 * Not an option: no settings file or `registerPiFold` argument sets it
	 * (the ladder's thresholds are constants). The tuning front's benchmark
	 * puts it on a resolved value to vary the working-set horizon's share of
	 * the budget (`LadderInput.workingSetShare`); undefined: the constant.
	 */
	readonly workingSetShare?: number;
}

const KEBAB = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
/** Prefix of durable custom-entry types: Pi stores it verbatim, so it must stay one plain token. */
const ENTRY_TYPE_PREFIX = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** Options that shape what Pi registers (tool, schema, commands); read once, when Pi loads the extension. */
export const REGISTRATION_OPTION_KEYS = [
	"toolName",
	"toolLabel",
	"commandPrefix",
	"commandNames",
	"foldScheduling",
	"toolActions",
	"evidenceIngestion",
] as const satisfies readonly (keyof PiFoldOptions)[];

/** Options the runtime reads at use time; a settings file's values apply from the next session start. */
export const SESSION_OPTION_KEYS = [
	"brandNoun",
	"entryTypePrefix",
	"summarizer",
	"foldPeekResults",
	"providerTotalWindow",
	"blockingTools",
	"readOnlyTools",
] as const satisfies readonly (keyof ResolvedOptions & keyof PiFoldOptions)[];

export type RegistrationOptionKey = (typeof REGISTRATION_OPTION_KEYS)[number];
export type SessionOptionKey = (typeof SESSION_OPTION_KEYS)[number];
/** Every option a JSON settings file can carry (the `compaction` section has its own top-level key). */
export type JsonOptionKey = RegistrationOptionKey | SessionOptionKey;
export const JSON_OPTION_KEYS: readonly JsonOptionKey[] = [...REGISTRATION_OPTION_KEYS, ...SESSION_OPTION_KEYS];
/** Options only code can pass (functions); a settings file naming one is told so. */
export const CODE_ONLY_OPTION_KEYS = [
	"summarizeContextSpan",
	"isMcpTool",
	"setProjectionProvider",
	"setSuggestionSourceRegistrar",
] as const satisfies readonly (keyof PiFoldOptions)[];

const fail = (message: string): never => {
	throw new Error(`pi-fold: ${message}`);
};
const isStringList = (value: unknown): value is readonly string[] =>
	Array.isArray(value) && value.every((item) => typeof item === "string");
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
	typeof value === "object" && value !== null && !Array.isArray(value);

function nonEmptyText(name: string, value: unknown, fallback: string): string {
	if (value === undefined) return fallback;
	if (typeof value !== "string" || value.trim() === "") fail(`${name} must be a non-empty string`);
	return value as string;
}

function optionalFunction<T>(name: string, value: unknown, shape: string): T | undefined {
	if (value !== undefined && typeof value !== "function") fail(`${name} must be a function ${shape} or omitted`);
	return value as T | undefined;
}

function optionalBoolean(name: string, value: unknown): boolean | undefined {
	if (value !== undefined && typeof value !== "boolean") fail(`${name} must be true or false`);
	return value as boolean | undefined;
}

function resolveSummarizer(value: unknown): ResolvedOptions["summarizer"] {
	if (value === undefined) return "session";
	if (value === "session" || value === "deterministic") return value;
	if (isPlainObject(value)) {
		const { provider, model, effort } = value;
		const text = (item: unknown) => typeof item === "string" && item.trim() !== "";
		if (text(provider) && text(model) && (effort === undefined || text(effort)))
			return value as { provider: string; model: string; effort?: string };
	}
	return fail('summarizer must be "session", "deterministic" or { "provider", "model", "effort"? } with string values');
}

function resolveCommandNames(options: PiFoldOptions): ResolvedOptions["commandNames"] {
	const rawPrefix = options.commandPrefix ?? "";
	if (typeof rawPrefix !== "string") fail('commandPrefix must be a string such as "pf" (or "" for none)');
	const given = options.commandNames ?? {};
	if (!isPlainObject(given)) fail('commandNames must be an object like { "status": "ctx", "fold": "ctx-fold" }');
	for (const key of Object.keys(given))
		if (key !== "status" && key !== "fold") fail(`commandNames has no ${JSON.stringify(key)}; use "status" and "fold"`);
	const prefix = rawPrefix.replace(/-+$/, "");
	const withPrefix = (name: string) => (prefix ? `${prefix}-${name}` : name);
	const commandNames = {
		status: given.status ?? withPrefix(DEFAULT_COMMAND_NAMES.status),
		fold: given.fold ?? withPrefix(DEFAULT_COMMAND_NAMES.fold),
	};
	for (const name of Object.values(commandNames)) {
		if (typeof name !== "string" || !KEBAB.test(name))
			fail(`commandNames: command name ${JSON.stringify(name)} must be kebab-case (lowercase letters, digits, "-")`);
	}
	if (commandNames.status === commandNames.fold)
		fail(`commandNames: status and fold must be distinct names; both are ${JSON.stringify(commandNames.fold)}`);
	return commandNames;
}

/** Resolve options against defaults. Throws a named error for values Pi could not use. */
export function resolveOptions(options: PiFoldOptions = {}): ResolvedOptions {
	const toolName = options.toolName ?? DEFAULT_TOOL_NAME;
	if (typeof toolName !== "string" || !TOOL_NAME.test(toolName))
		fail(
			`toolName ${JSON.stringify(toolName)} is not a valid tool name; use 1-64 letters, digits, "_" or "-", starting with a letter or "_"`,
		);
	const commandNames = resolveCommandNames(options);
	const foldScheduling = options.foldScheduling ?? DEFAULT_FOLD_SCHEDULING;
	if (foldScheduling !== "immediate" && foldScheduling !== "epoch") {
		fail(`foldScheduling ${JSON.stringify(foldScheduling)} is not a scheduling; use "immediate" or "epoch"`);
	}
	const allowed = new Set<string>(TOOL_ACTIONS);
	// unmark withdraws pending marks, which only epoch scheduling creates.
	const toolActions =
		options.toolActions ??
		(foldScheduling === "epoch" ? TOOL_ACTIONS : TOOL_ACTIONS.filter((action) => action !== "unmark"));
	if (!isStringList(toolActions) || toolActions.length === 0)
		fail(`toolActions must be a non-empty list drawn from ${TOOL_ACTIONS.join(", ")}`);
	for (const action of toolActions) {
		if (!allowed.has(action))
			fail(`toolActions: unknown tool action ${JSON.stringify(action)}; allowed: ${TOOL_ACTIONS.join(", ")}`);
		if (action === "unmark" && foldScheduling !== "epoch")
			fail('tool action "unmark" needs foldScheduling "epoch": only epoch scheduling has marks');
	}
	const blockingTools = options.blockingTools ?? DEFAULT_BLOCKING_TOOLS;
	if (!isStringList(blockingTools))
		fail('blockingTools must be a list of tool names such as ["Agent"] ([] disables it)');
	const readOnly = options.readOnlyTools ?? DEFAULT_READ_ONLY_TOOLS;
	const readOnlyList = readOnly instanceof Set ? [...readOnly] : readOnly;
	if (!isStringList(readOnlyList))
		fail('readOnlyTools must be a list (or set) of tool names such as ["read", "grep", "find", "ls"]');
	// The ladder folds any completed batch (lossless; a shell-heavy turn must not fall back to compaction); this set
	// orders it, read-only batches first. An empty set asks for what the ladder does not offer: say so.
	if ((readOnlyList as readonly string[]).length === 0)
		fail(
			"readOnlyTools [] cannot stop automatic folding of tool batches: the ladder folds every completed batch (a fold is lossless), read-only ones first; list the tools whose batches fold first, or leave the default",
		);
	const window = options.providerTotalWindow;
	if (window !== undefined && !(Number.isInteger(window) && window > 0)) {
		fail("providerTotalWindow must be a positive integer (tokens) or omitted");
	}
	const entryTypePrefix = nonEmptyText("entryTypePrefix", options.entryTypePrefix, DEFAULT_ENTRY_TYPE_PREFIX);
	if (!ENTRY_TYPE_PREFIX.test(entryTypePrefix))
		fail(`entryTypePrefix ${JSON.stringify(entryTypePrefix)} must be letters, digits, ".", "_" or "-"`);
	const foldPeekResults = optionalBoolean("foldPeekResults", options.foldPeekResults);
	const evidenceIngestion = optionalBoolean("evidenceIngestion", options.evidenceIngestion);
	const summarizeContextSpan = optionalFunction<SummarizeContextSpan>(
		"summarizeContextSpan",
		options.summarizeContextSpan,
		"(request) => Promise<{ brief, provider, model, effort?, toolCalls: 0 }>",
	);
	// The spec makes them exclusive: an explicit summarizer, even the default "session", is refused.
	if (summarizeContextSpan && options.summarizer !== undefined)
		fail(
			`summarizeContextSpan cannot be combined with summarizer ${JSON.stringify(options.summarizer)}; pass one or the other`,
		);
	const isMcpTool = optionalFunction<IsMcpTool>("isMcpTool", options.isMcpTool, "(toolName) => boolean");
	// The hook calls it on every tool result and cannot wait: a promise would read as "yes".
	if (isMcpTool?.constructor.name === "AsyncFunction")
		fail("isMcpTool must be a synchronous function (toolName) => boolean, not an async one");
	const resolved: ResolvedOptions = {
		toolName,
		toolLabel: nonEmptyText("toolLabel", options.toolLabel, DEFAULT_TOOL_LABEL),
		brandNoun: nonEmptyText("brandNoun", options.brandNoun, DEFAULT_BRAND_NOUN),
		entryTypePrefix,
		commandNames,
		summarizer: resolveSummarizer(options.summarizer),
		foldScheduling,
		// A peek batch is a completed read under epoch scheduling; immediate mode opts in.
		foldPeekResults: foldPeekResults ?? foldScheduling === "epoch",
		providerTotalWindow: window,
		toolActions: toolActions as readonly ToolAction[],
		blockingTools,
		readOnlyTools: readOnly instanceof Set ? readOnly : new Set(readOnlyList as readonly string[]),
		evidenceIngestion: evidenceIngestion ?? true,
		summarizeContextSpan,
		isMcpTool: isMcpTool ?? DEFAULT_IS_MCP_TOOL,
		setProjectionProvider: optionalFunction(
			"setProjectionProvider",
			options.setProjectionProvider,
			"(provider) => void",
		),
		setSuggestionSourceRegistrar: optionalFunction(
			"setSuggestionSourceRegistrar",
			options.setSuggestionSourceRegistrar,
			"(register) => void",
		),
	};
	// A value: new options are a new object, never a change in place to one a runtime holds.
	return Object.freeze(resolved);
}

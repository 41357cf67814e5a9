/**
 * Options of `registerPiFold` and their defaults, validated once at
 * registration. Names and defaults follow the spec's configuration table so
 * sessions interoperate; replacement lists and sets replace the defaults.
 */

import type { CompactionOptions } from "../compaction/settings-source.ts";
import { DEFAULT_READ_ONLY_TOOLS } from "./units.ts";

export { DEFAULT_READ_ONLY_TOOLS };

export const DEFAULT_TOOL_NAME = "active_context";
export const DEFAULT_TOOL_LABEL = "Active Context";
export const DEFAULT_BRAND_NOUN = "active-context";
export const DEFAULT_ENTRY_TYPE_PREFIX = "pi-fold-active-context";
export const DEFAULT_COMMAND_NAMES = { status: "context", fold: "fold-context" } as const;
export const DEFAULT_BLOCKING_TOOLS: readonly string[] = ["Agent"];

export const TOOL_ACTIONS = [
	"status",
	"peek",
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
	readOnlyTools?: ReadonlySet<string>;
	evidenceIngestion?: boolean;
	/** Compaction settings (engine, targetContextRatio, …); Pi's settings files are read on top at use time. */
	compaction?: CompactionOptions;
}

export interface ResolvedOptions {
	toolName: string;
	toolLabel: string;
	brandNoun: string;
	entryTypePrefix: string;
	commandNames: { status: string; fold: string };
	summarizer: NonNullable<PiFoldOptions["summarizer"]>;
	foldScheduling: FoldScheduling;
	foldPeekResults: boolean;
	providerTotalWindow: number | undefined;
	toolActions: readonly ToolAction[];
	blockingTools: readonly string[];
	readOnlyTools: ReadonlySet<string>;
	evidenceIngestion: boolean;
}

const KEBAB = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

/** Resolve options against defaults. Throws a named error for values Pi could not use. */
export function resolveOptions(options: PiFoldOptions = {}): ResolvedOptions {
	const toolName = options.toolName ?? DEFAULT_TOOL_NAME;
	if (!TOOL_NAME.test(toolName))
		throw new Error(`pi-fold: toolName ${JSON.stringify(toolName)} is not a valid tool name`);
	const prefix = (options.commandPrefix ?? "").replace(/-+$/, "");
	const withPrefix = (name: string) => (prefix ? `${prefix}-${name}` : name);
	const commandNames = {
		status: options.commandNames?.status ?? withPrefix(DEFAULT_COMMAND_NAMES.status),
		fold: options.commandNames?.fold ?? withPrefix(DEFAULT_COMMAND_NAMES.fold),
	};
	for (const name of Object.values(commandNames)) {
		if (!KEBAB.test(name)) throw new Error(`pi-fold: command name ${JSON.stringify(name)} must be kebab-case`);
	}
	if (commandNames.status === commandNames.fold) throw new Error("pi-fold: command names must be distinct");
	const foldScheduling = options.foldScheduling ?? DEFAULT_FOLD_SCHEDULING;
	if (foldScheduling !== "immediate" && foldScheduling !== "epoch") {
		throw new Error(
			`pi-fold: foldScheduling ${JSON.stringify(foldScheduling)} is not a scheduling; use "immediate" or "epoch"`,
		);
	}
	const allowed = new Set<string>(TOOL_ACTIONS);
	// unmark withdraws pending marks, which only epoch scheduling creates.
	const toolActions =
		options.toolActions ??
		(foldScheduling === "epoch" ? TOOL_ACTIONS : TOOL_ACTIONS.filter((action) => action !== "unmark"));
	for (const action of toolActions) {
		if (!allowed.has(action)) throw new Error(`pi-fold: unknown tool action ${JSON.stringify(action)}`);
		if (action === "unmark" && foldScheduling !== "epoch")
			throw new Error('pi-fold: tool action "unmark" needs foldScheduling "epoch": only epoch scheduling has marks');
	}
	const blockingTools = options.blockingTools ?? DEFAULT_BLOCKING_TOOLS;
	if (!Array.isArray(blockingTools) || !blockingTools.every((name) => typeof name === "string"))
		throw new Error("pi-fold: blockingTools must be a list of tool names");
	const window = options.providerTotalWindow;
	if (window !== undefined && !(Number.isInteger(window) && window > 0)) {
		throw new Error("pi-fold: providerTotalWindow must be a positive integer");
	}
	return {
		toolName,
		toolLabel: options.toolLabel ?? DEFAULT_TOOL_LABEL,
		brandNoun: options.brandNoun ?? DEFAULT_BRAND_NOUN,
		entryTypePrefix: options.entryTypePrefix ?? DEFAULT_ENTRY_TYPE_PREFIX,
		commandNames,
		summarizer: options.summarizer ?? "session",
		foldScheduling,
		// A peek batch is a completed read under epoch scheduling; immediate mode opts in.
		foldPeekResults: options.foldPeekResults ?? foldScheduling === "epoch",
		providerTotalWindow: window,
		toolActions,
		blockingTools,
		readOnlyTools: options.readOnlyTools ?? DEFAULT_READ_ONLY_TOOLS,
		evidenceIngestion: options.evidenceIngestion ?? true,
	};
}

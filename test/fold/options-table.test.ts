import { describe, expect, it } from "vitest";
import { type PiFoldOptions, resolveOptions } from "../../src/fold/options.ts";
import { registerPiFold } from "../../src/index.ts";

type Row = {
	option: keyof PiFoldOptions;
	/** The default, as resolveOptions reports it (functions: checked by behaviour). */
	check: (resolved: ReturnType<typeof resolveOptions>) => void;
	valid: PiFoldOptions;
	validCheck: (resolved: ReturnType<typeof resolveOptions>) => void;
	invalid: unknown;
	error: RegExp;
};

const fn = () => undefined;

/** Every option of the spec's configuration table: default, a valid override, an invalid value and its error. */
const TABLE: Row[] = [
	{
		option: "toolName",
		check: (r) => expect(r.toolName).toBe("active_context"),
		valid: { toolName: "ctx" },
		validCheck: (r) => expect(r.toolName).toBe("ctx"),
		invalid: "bad name",
		error: /toolName "bad name" is not a valid tool name; use 1-64 letters/,
	},
	{
		option: "toolLabel",
		check: (r) => expect(r.toolLabel).toBe("pi-fold"),
		valid: { toolLabel: "Ctx" },
		validCheck: (r) => expect(r.toolLabel).toBe("Ctx"),
		invalid: "  ",
		error: /toolLabel must be a non-empty string/,
	},
	{
		option: "brandNoun",
		check: (r) => expect(r.brandNoun).toBe("pi-fold"),
		valid: { brandNoun: "ctx" },
		validCheck: (r) => expect(r.brandNoun).toBe("ctx"),
		invalid: 3,
		error: /brandNoun must be a non-empty string/,
	},
	{
		option: "entryTypePrefix",
		check: (r) => expect(r.entryTypePrefix).toBe("pi-fold-active-context"),
		valid: { entryTypePrefix: "mine" },
		validCheck: (r) => expect(r.entryTypePrefix).toBe("mine"),
		invalid: "a b",
		error: /entryTypePrefix "a b" must be letters, digits/,
	},
	{
		option: "commandPrefix",
		check: (r) => expect(r.commandNames.status).toBe("context"),
		valid: { commandPrefix: "pf" },
		validCheck: (r) => expect(r.commandNames).toEqual({ status: "pf-context", fold: "pf-fold-context" }),
		invalid: 7,
		error: /commandPrefix must be a string such as "pf"/,
	},
	{
		option: "commandNames",
		check: (r) => expect(r.commandNames).toEqual({ status: "context", fold: "fold-context" }),
		valid: { commandNames: { status: "ctx" } },
		validCheck: (r) => expect(r.commandNames.status).toBe("ctx"),
		invalid: { status: "Bad Name" },
		error: /commandNames: command name "Bad Name" must be kebab-case/,
	},
	{
		option: "summarizer",
		check: (r) => expect(r.summarizer).toBe("session"),
		valid: { summarizer: "deterministic" },
		validCheck: (r) => expect(r.summarizer).toBe("deterministic"),
		invalid: "gpt",
		error: /summarizer must be "session", "deterministic"/,
	},
	{
		option: "summarizeContextSpan",
		check: (r) => expect(r.summarizeContextSpan).toBeUndefined(),
		valid: { summarizeContextSpan: async () => ({ brief: "b", provider: "p", model: "m", toolCalls: 0 }) },
		validCheck: (r) => expect(typeof r.summarizeContextSpan).toBe("function"),
		invalid: "write briefs",
		error: /summarizeContextSpan must be a function/,
	},
	{
		option: "foldScheduling",
		check: (r) => expect(r.foldScheduling).toBe("epoch"),
		valid: { foldScheduling: "immediate" },
		validCheck: (r) => expect(r.foldScheduling).toBe("immediate"),
		invalid: "lazy",
		error: /foldScheduling "lazy" is not a scheduling; use "immediate" or "epoch"/,
	},
	{
		option: "foldPeekResults",
		check: (r) => expect(r.foldPeekResults).toBe(true),
		valid: { foldPeekResults: false },
		validCheck: (r) => expect(r.foldPeekResults).toBe(false),
		invalid: "yes",
		error: /foldPeekResults must be true or false/,
	},
	{
		option: "providerTotalWindow",
		check: (r) => expect(r.providerTotalWindow).toBeUndefined(),
		valid: { providerTotalWindow: 400_000 },
		validCheck: (r) => expect(r.providerTotalWindow).toBe(400_000),
		invalid: -1,
		error: /providerTotalWindow must be a positive integer/,
	},
	{
		option: "toolActions",
		check: (r) => expect(r.toolActions).toContain("peek"),
		valid: { toolActions: ["status", "peek"] },
		validCheck: (r) => expect(r.toolActions).toEqual(["status", "peek"]),
		invalid: ["status", "commit"],
		error: /toolActions: unknown tool action "commit"; allowed: status, peek/,
	},
	{
		option: "blockingTools",
		check: (r) => expect(r.blockingTools).toEqual(["Agent"]),
		valid: { blockingTools: [] },
		validCheck: (r) => expect(r.blockingTools).toEqual([]),
		invalid: "Agent",
		error: /blockingTools must be a list of tool names such as \["Agent"\]/,
	},
	{
		option: "readOnlyTools",
		check: (r) => expect([...r.readOnlyTools]).toEqual(["read", "grep", "find", "ls"]),
		valid: { readOnlyTools: new Set(["read"]) },
		validCheck: (r) => expect([...r.readOnlyTools]).toEqual(["read"]),
		invalid: [1],
		error: /readOnlyTools must be a list \(or set\) of tool names/,
	},
	{
		option: "isMcpTool",
		check: (r) => expect(r.isMcpTool("mcp__srv__x")).toBe(false),
		valid: { isMcpTool: (name) => name.startsWith("mcp__") },
		validCheck: (r) => expect(r.isMcpTool("mcp__srv__x")).toBe(true),
		invalid: async () => true,
		error: /isMcpTool must be a synchronous function \(toolName\) => boolean/,
	},
	{
		option: "evidenceIngestion",
		check: (r) => expect(r.evidenceIngestion).toBe(true),
		valid: { evidenceIngestion: false },
		validCheck: (r) => expect(r.evidenceIngestion).toBe(false),
		invalid: "off",
		error: /evidenceIngestion must be true or false/,
	},
	{
		option: "setProjectionProvider",
		check: (r) => expect(r.setProjectionProvider).toBeUndefined(),
		valid: { setProjectionProvider: fn },
		validCheck: (r) => expect(r.setProjectionProvider).toBe(fn),
		invalid: {},
		error: /setProjectionProvider must be a function \(provider\) => void/,
	},
	{
		option: "setSuggestionSourceRegistrar",
		check: (r) => expect(r.setSuggestionSourceRegistrar).toBeUndefined(),
		valid: { setSuggestionSourceRegistrar: fn },
		validCheck: (r) => expect(r.setSuggestionSourceRegistrar).toBe(fn),
		invalid: true,
		error: /setSuggestionSourceRegistrar must be a function \(register\) => void/,
	},
];

describe("options table (spec: Configuration)", () => {
	it("covers all 18 options of the spec's table", () => {
		expect(TABLE.map((row) => row.option)).toHaveLength(18);
		expect(new Set(TABLE.map((row) => row.option)).size).toBe(18);
	});

	const defaults = resolveOptions();
	for (const row of TABLE) {
		it(`${row.option}: default, a valid override, an invalid value with its error`, () => {
			row.check(defaults);
			row.validCheck(resolveOptions(row.valid));
			expect(() => resolveOptions({ [row.option]: row.invalid } as PiFoldOptions)).toThrow(row.error);
			expect(() => resolveOptions({ [row.option]: row.invalid } as PiFoldOptions)).toThrow(/^pi-fold: /);
		});
	}

	it("summarizeContextSpan cannot be combined with a non-default summarizer", () => {
		expect(() =>
			resolveOptions({
				summarizer: "deterministic",
				summarizeContextSpan: async () => ({ brief: "b", provider: "p", model: "m", toolCalls: 0 }),
			}),
		).toThrow(/summarizeContextSpan cannot be combined with summarizer "deterministic"/);
	});

	it("a bad option fails the load with one message naming it, before anything is registered", () => {
		const calls: string[] = [];
		const pi = new Proxy(
			{},
			{
				get:
					(_target, name) =>
					(..._args: unknown[]) => {
						calls.push(String(name));
						return undefined;
					},
			},
		) as Parameters<typeof registerPiFold>[0];
		expect(() => registerPiFold(pi, { evidenceIngestion: "off" as never })).toThrow(
			/^pi-fold: evidenceIngestion must be true or false$/,
		);
		expect(calls).toEqual([]);
	});
});

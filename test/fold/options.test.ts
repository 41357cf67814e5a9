import { describe, expect, it } from "vitest";
import {
	DEFAULT_COMMAND_NAMES,
	DEFAULT_ENTRY_TYPE_PREFIX,
	DEFAULT_READ_ONLY_TOOLS,
	DEFAULT_TOOL_NAME,
	resolveOptions,
	TOOL_ACTIONS,
} from "../../src/fold/options.ts";

describe("resolveOptions", () => {
	it("pins the spec's defaults", () => {
		const options = resolveOptions();
		expect(options).toMatchObject({
			toolName: "active_context",
			toolLabel: "Active Context",
			brandNoun: "active-context",
			entryTypePrefix: "pi-fold-active-context",
			commandNames: { status: "context", fold: "fold-context" },
			summarizer: "session",
			foldScheduling: "immediate",
			foldPeekResults: false,
			blockingTools: ["Agent"],
			evidenceIngestion: true,
		});
		expect(DEFAULT_TOOL_NAME).toBe("active_context");
		expect(DEFAULT_ENTRY_TYPE_PREFIX).toBe("pi-fold-active-context");
		expect(DEFAULT_COMMAND_NAMES).toEqual({ status: "context", fold: "fold-context" });
		expect([...DEFAULT_READ_ONLY_TOOLS]).toEqual(["read", "grep", "find", "ls"]);
		expect(options.toolActions).toEqual(TOOL_ACTIONS.filter((action) => action !== "unmark"));
	});

	it("prefixes commands (trailing hyphens removed) and lets full names win", () => {
		expect(resolveOptions({ commandPrefix: "pf--" }).commandNames).toEqual({
			status: "pf-context",
			fold: "pf-fold-context",
		});
		expect(resolveOptions({ commandPrefix: "pf", commandNames: { fold: "squash" } }).commandNames).toEqual({
			status: "pf-context",
			fold: "squash",
		});
	});

	it("refuses epoch scheduling until pending marks exist, rather than folding immediately behind the user's back", () => {
		expect(() => resolveOptions({ foldScheduling: "epoch" })).toThrow(/not available/);
		expect(() => resolveOptions({ toolActions: ["status", "unmark"] })).toThrow(/unmark/);
	});

	it("refuses option values Pi could not use, naming them", () => {
		expect(() => resolveOptions({ commandNames: { status: "Bad Name" } })).toThrow(/kebab-case/);
		expect(() => resolveOptions({ commandNames: { status: "same", fold: "same" } })).toThrow(/distinct/);
		expect(() => resolveOptions({ toolName: "has space" })).toThrow(/toolName/);
		expect(() => resolveOptions({ toolActions: ["status", "explode" as never] })).toThrow(/explode/);
		expect(() => resolveOptions({ providerTotalWindow: -5 })).toThrow(/providerTotalWindow/);
	});
});

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
	it("pins the spec's defaults, except epoch scheduling (measured cheaper; docs/benchmarks.md) , the tool row's label and the brand noun (one product name, issue 19)", () => {
		const options = resolveOptions();
		expect(options).toMatchObject({
			toolName: "active_context",
			toolLabel: "pi-fold",
			brandNoun: "pi-fold",
			entryTypePrefix: "pi-fold-active-context",
			commandNames: { status: "context", fold: "fold-context" },
			summarizer: "session",
			foldScheduling: "epoch",
			foldPeekResults: true,
			blockingTools: ["Agent"],
			evidenceIngestion: true,
		});
		expect(DEFAULT_TOOL_NAME).toBe("active_context");
		expect(DEFAULT_ENTRY_TYPE_PREFIX).toBe("pi-fold-active-context");
		expect(DEFAULT_COMMAND_NAMES).toEqual({ status: "context", fold: "fold-context" });
		expect([...DEFAULT_READ_ONLY_TOOLS]).toEqual(["read", "grep", "find", "ls"]);
		expect(options.toolActions).toEqual(TOOL_ACTIONS);
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

	it("epoch scheduling adds unmark and classifies peeks as completed reads; immediate refuses unmark", () => {
		const epoch = resolveOptions({ foldScheduling: "epoch" });
		expect(epoch.toolActions).toContain("unmark");
		expect(epoch.foldPeekResults).toBe(true);
		const immediate = resolveOptions({ foldScheduling: "immediate" });
		expect(immediate.foldScheduling).toBe("immediate");
		expect(immediate.toolActions).not.toContain("unmark");
		expect(immediate.foldPeekResults).toBe(false);
		expect(resolveOptions({ foldScheduling: "immediate", foldPeekResults: true }).foldPeekResults).toBe(true);
		expect(() => resolveOptions({ foldScheduling: "immediate", toolActions: ["status", "unmark"] })).toThrow(
			/unmark.*epoch/,
		);
		expect(() => resolveOptions({ foldScheduling: "lazy" as never })).toThrow(/foldScheduling "lazy"/);
		expect(() => resolveOptions({ blockingTools: "Agent" as never })).toThrow(/blockingTools/);
		expect(resolveOptions({ blockingTools: [] }).blockingTools).toEqual([]);
	});

	it("refuses readOnlyTools [] (it cannot stop the ladder folding batches) and keeps any other set as an order", () => {
		expect(() => resolveOptions({ readOnlyTools: [] })).toThrow(
			/readOnlyTools \[\] cannot stop automatic folding of tool batches: the ladder folds every completed batch/,
		);
		expect([...resolveOptions({ readOnlyTools: ["read", "bash"] }).readOnlyTools]).toEqual(["read", "bash"]);
	});

	it("refuses option values Pi could not use, naming them", () => {
		expect(() => resolveOptions({ commandNames: { status: "Bad Name" } })).toThrow(/kebab-case/);
		expect(() => resolveOptions({ commandNames: { status: "same", fold: "same" } })).toThrow(/distinct/);
		expect(() => resolveOptions({ toolName: "has space" })).toThrow(/toolName/);
		expect(() => resolveOptions({ toolActions: ["status", "explode" as never] })).toThrow(/explode/);
		expect(() => resolveOptions({ providerTotalWindow: -5 })).toThrow(/providerTotalWindow/);
	});
});

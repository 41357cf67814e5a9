import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import type { FoldDetail } from "../../../src/fold/actions/status.ts";
import { contextCompletions, parseContextArgs } from "../../../src/fold/pi/commands.ts";
import { compactedFolds, formatFooter, readableBytes, shortTokens } from "../../../src/fold/pi/context-report.ts";
import type { ToolDetails } from "../../../src/fold/pi/render-tool.ts";
import { callLine, resultView } from "../../../src/fold/pi/render-tool.ts";

describe("human formatting", () => {
	it("sizes and the footer", () => {
		expect([readableBytes(512), readableBytes(46_182), readableBytes(2_400_000)]).toEqual([
			"512 B",
			"45.1 KB",
			"2.3 MB",
		]);
		expect([shortTokens(950), shortTokens(1_234), shortTokens(128_000), shortTokens(1_200_000)]).toEqual([
			"950",
			"1.2k",
			"128k",
			"1.2M",
		]);
		const held = { collapsed: 3, sourceBytes: 215_000, briefBytes: 900 };
		expect(formatFooter({ tokens: 52_000, budget: 128_000 }, held, 2)).toBe(
			"fold 41% of 128k · 3 folds (210.0 KB out) · 2 marks pending",
		);
		expect(formatFooter({ tokens: 180_000, budget: 128_000 }, { ...held, collapsed: 0 }, 0)).toBe(
			"fold ⚠ 141% of 128k",
		);
		expect(formatFooter({ tokens: 1_500, budget: undefined }, { ...held, collapsed: 0 }, 0)).toBe("fold ~1.5k tok");
	});

	it("a fold before the latest compaction's first kept entry is compacted away", () => {
		const branch = ["a", "b", "c", "d"].map((id) => ({ id, type: "message" }) as unknown as SessionEntry);
		branch.push({ id: "k", type: "compaction", firstKeptEntryId: "c" } as unknown as SessionEntry);
		const fold = (id: string, range: [number, number]) => ({ id, range }) as FoldDetail;
		expect([...compactedFolds(branch, [fold("f-1", [0, 2]), fold("f-2", [1, 3])])]).toEqual(["f-1"]);
		expect([...compactedFolds(branch.slice(0, 4), [fold("f-1", [0, 2])])]).toEqual([]);
	});

	it("one line per tool call and result; a peek's source only when expanded", () => {
		expect(callLine({ action: "fold", ids: ["e1", "e2", "e9"] })).toBe("fold e1…e9");
		expect(callLine({ action: "peek", id: "f-1", offset: 4000 })).toBe("peek f-1 from byte 4000");
		expect(callLine({ action: "status", detail: "tree" })).toBe("status tree");
		expect(callLine({})).toBe("…");
		const entry = { id: "e1", type: "message", message: { role: "user", content: "hello there" } };
		const text = `Fold f-1 (chapter), source sha256 ${"a".repeat(64)} verified.\nBytes 0–2048 of 4096, one canonical JSON session entry per line.\n\n${JSON.stringify(entry)}\n{"cut`;
		const details = { action: "peek", ok: true, foldId: "f-1" } as ToolDetails;
		expect(resultView(details, text)).toEqual({
			line: "read fold f-1: 2.0 KB of 4.0 KB, sha256 verified",
			level: "success",
			body: ["e1 user: hello there", "… (cut at the end of this slice)"],
		});
		const refused = resultView({ action: "fold", ok: false, code: "fresh-tail" } as ToolDetails, "Too new. Try later.");
		expect(refused).toMatchObject({ line: "fresh-tail: Too new.", level: "error" });
	});

	it("/context arguments: subcommands, unknown names, completions", () => {
		expect(parseContextArgs(" peek  f-1 ")).toEqual({ sub: "peek", rest: "f-1" });
		expect(parseContextArgs("foo")).toEqual({ sub: { unknown: "foo" }, rest: "" });
		expect(parseContextArgs("")).toEqual({ sub: "", rest: "" });
		const folds = [
			{ id: "f-aaa", brief: "Chapter one\nmore" },
			{ id: "f-abb", brief: "Chapter two" },
		];
		expect(contextCompletions("t", folds)?.map((item) => item.value)).toEqual(["tree"]);
		expect(contextCompletions("peek f-a", folds)).toEqual([
			{ value: "peek f-abb", label: "f-abb", description: "Chapter two" },
			{ value: "peek f-aaa", label: "f-aaa", description: "Chapter one" },
		]);
		expect(contextCompletions("tree x", folds)).toBeNull();
	});
});

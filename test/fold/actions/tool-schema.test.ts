import { describe, expect, it } from "vitest";
import { PEEK_MAX_BYTES } from "../../../src/fold/actions/peek.ts";
import { isArgumentError, MAX_IDS, validateToolArgs } from "../../../src/fold/actions/tool-schema.ts";
import { TOOL_ACTIONS } from "../../../src/fold/options.ts";

const actions = TOOL_ACTIONS.filter((action) => action !== "unmark");
const error = (raw: unknown) => {
	const result = validateToolArgs(raw, actions);
	return isArgumentError(result) ? result.message : undefined;
};

describe("validateToolArgs", () => {
	it("accepts the documented shapes", () => {
		for (const raw of [
			{ action: "status" },
			{ action: "status", detail: "tree" },
			{ action: "status", detail: "window" },
			{ action: "fold", ids: ["a1b2c3d4", "call_abc|fc_1"], brief: "short" },
			{ action: "peek", id: "f-0123456789ab", offset: 0, bytes: 100 },
			{ action: "reboundary", id: "f-0123456789ab" },
			{ action: "peek", id: "@a1b2c3d4" },
			{ action: "peek", id: "a1b2c3d4/3" },
			{ action: "peek", id: "a1b2c3d4/phase:0" },
			{ action: "peek", id: "a1b2c3d4/call:call_abc|fc_1" },
			{ action: "peek", id: "f-0123456789ab", children: true, offset: 50, limit: 50 },
			{ action: "search", query: "FACT S12" },
			{ action: "search", query: "FACT S\\d+", regex: true, offset: 10, limit: 20 },
		]) {
			expect(error(raw)).toBeUndefined();
		}
	});

	it("refuses search and children arguments by name", () => {
		expect(error({ action: "search" })).toMatch(/search needs "query"/);
		expect(error({ action: "search", query: "" })).toMatch(/search needs "query"/);
		expect(error({ action: "search", query: "x".repeat(257) })).toMatch(/at most 256/);
		expect(error({ action: "search", query: "x", limit: 21 })).toMatch(/at most 20 hits/);
		expect(error({ action: "search", query: "x", regex: "yes" })).toMatch(/regex must be true or false/);
		expect(error({ action: "peek", id: "f-0123456789ab", query: "x" })).toMatch(/belong to search/);
		expect(error({ action: "status", children: true })).toMatch(/children belongs to peek/);
	});

	it("names the problem and the fix for each malformed call", () => {
		expect(error(null)).toMatch(/JSON object/);
		expect(error({ action: "explode" })).toMatch(/action must be one of status, peek/);
		expect(error({ action: "unmark", id: "f-0123456789ab" })).toMatch(/action must be one of/);
		expect(error({ action: "expand" })).toMatch(/needs "id".*status/);
		expect(error({ action: "peek", id: 7 })).toMatch(/non-empty string/);
		expect(error({ action: "peek", id: "../../etc/passwd" })).toMatch(/characters ids never contain/);
		expect(error({ action: "peek", id: "a..b" })).toMatch(/looks like a path/);
		expect(error({ action: "peek", id: "a1b2/x/2" })).toMatch(/characters ids never contain/);
		expect(error({ action: "peek", id: "/etc/passwd" })).toMatch(/characters ids never contain/);
		expect(error({ action: "fold" })).toMatch(/needs "ids"/);
		expect(error({ action: "fold", ids: Array.from({ length: MAX_IDS + 1 }, (_, i) => `e${i}`) })).toMatch(
			/at most 64/,
		);
		expect(error({ action: "fold", ids: ["ok", "bad id"] })).toMatch(/ids\[1\]/);
		expect(error({ action: "peek", id: "f-0123456789ab", bytes: PEEK_MAX_BYTES + 1 })).toMatch(/slices with offset/);
		expect(error({ action: "peek", id: "f-0123456789ab", offset: -1 })).toMatch(/non-negative integer/);
		expect(error({ action: "status", detail: "forest" })).toMatch(/"tree" or "window"/);
		expect(error({ action: "status", extra: 1 })).toMatch(/Unknown field "extra"/);
		expect(error({ action: "fold", ids: ["a"], brief: "x".repeat(1201) })).toMatch(/at most 1200/);
	});
});

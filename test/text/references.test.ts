/**
 * What a message points back at: paths (any separator, with `:line`), code
 * identifiers, hex ids and URLs, and the trailing keys a path is found by.
 */

import { describe, expect, it } from "vitest";
import { isPathToken, pathKeys, pathTokens, referenceTokens } from "../../src/text/references.ts";

describe("referenceTokens", () => {
	it("reads paths, code identifiers, hex ids and URLs, and leaves prose out", () => {
		const tokens = referenceTokens(
			"Edit src/fold/policy/ladder.ts:42 and C:\\repo\\app\\page.tsx; see README.md. Then getCapacityPercent, " +
				"EVENT_SELECT_FIELDS and TypedSupabaseClient; commit 3f9a2c1d; https://github.com/a/b. The problems " +
				"with Tailwind: WARNING, e.g. console.log, version 1.5.",
		);
		expect([...tokens].sort()).toEqual(
			[
				"src/fold/policy/ladder.ts",
				"C:\\repo\\app\\page.tsx",
				"README.md",
				"getCapacityPercent",
				"EVENT_SELECT_FIELDS",
				"TypedSupabaseClient",
				"3f9a2c1d",
				"https://github.com/a/b",
			].sort(),
		);
	});

	it("reads a very long text at its start and end, in linear time", () => {
		const long = `getStartName ${"x".repeat(1_000_000)} getEndName`;
		const tokens = referenceTokens(long);
		expect(tokens.has("getStartName")).toBe(true);
		expect(tokens.has("getEndName")).toBe(true);
	});
});

describe("paths", () => {
	it("are found by any trailing part, whatever the separator or case", () => {
		expect(pathKeys("C:\\Users\\x\\App\\page.tsx")).toEqual([
			"users/x/app/page.tsx",
			"x/app/page.tsx",
			"app/page.tsx",
			"page.tsx",
		]);
		expect(pathKeys("./src/a.ts")).toEqual(["src/a.ts", "a.ts"]);
	});

	it("are told from identifiers and URLs", () => {
		expect(pathTokens("cat src/a.ts && less https://x.y/z")).toEqual(["src/a.ts"]);
		expect(isPathToken("src/a.ts")).toBe(true);
		expect(isPathToken("getCapacityPercent")).toBe(false);
		expect(isPathToken("https://x.y/z")).toBe(false);
	});
});

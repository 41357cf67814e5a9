import { describe, expect, it } from "vitest";
import {
	decodeBoundedJson,
	type JsonDecodeErrorCode,
	type JsonNode,
} from "../../../src/compaction/records/json-decoder.ts";

const LIMITS = { maxDepth: 4, maxNodes: 64 };

function decode(source: string, limits = LIMITS) {
	return decodeBoundedJson(source, limits);
}

function errorCode(source: string, limits = LIMITS): JsonDecodeErrorCode | undefined {
	const result = decode(source, limits);
	return result.ok ? undefined : result.error.code;
}

function value(source: string): JsonNode {
	const result = decode(source);
	if (!result.ok) throw new Error(`expected ${source} to decode: ${result.error.detail}`);
	return result.value;
}

/** `depth` nested arrays, e.g. depth 2 → "[[]]". */
function nestedArrays(depth: number): string {
	return `${"[".repeat(depth)}${"]".repeat(depth)}`;
}

describe("decodeBoundedJson", () => {
	it("decodes objects in source order with typed scalars", () => {
		const node = value(' {"b": [1, -0.5e+2, true, false, null], "a": "x\\n\\u00e9\\/"} ');
		expect(node.kind).toBe("object");
		if (node.kind !== "object") return;
		expect([...node.members.keys()]).toEqual(["b", "a"]);
		expect(node.members.get("a")).toEqual({ kind: "string", value: "x\né/" });
		const list = node.members.get("b");
		expect(list?.kind === "array" && list.items).toEqual([
			{ kind: "number", lexeme: "1", value: 1 },
			{ kind: "number", lexeme: "-0.5e+2", value: -50 },
			{ kind: "boolean", value: true },
			{ kind: "boolean", value: false },
			{ kind: "null" },
		]);
	});

	it("keeps prototype-named keys as plain data", () => {
		const node = value('{"__proto__": 1, "constructor": 2}');
		expect(node.kind === "object" && [...node.members.keys()]).toEqual(["__proto__", "constructor"]);
	});

	it("rejects duplicate keys by their decoded value, including escaped aliases", () => {
		expect(errorCode('{"version": 1, "version": 1}')).toBe("duplicate-key");
		expect(errorCode('{"version": 1, "\\u0076ersion": 2}')).toBe("duplicate-key");
		expect(errorCode('{"a\\/b": 1, "a/b": 2}')).toBe("duplicate-key");
		expect(errorCode('{"x": {"k": 1, "\\u006b": 2}}')).toBe("duplicate-key");
		// The same key in sibling objects is not a duplicate.
		expect(errorCode('[{"k": 1}, {"k": 2}]')).toBeUndefined();
	});

	it("accepts surrogate pairs written in one form", () => {
		expect(value('"\\ud83d\\ude00"')).toEqual({ kind: "string", value: "😀" });
		expect(value('"😀"')).toEqual({ kind: "string", value: "😀" });
	});

	it("rejects unpaired surrogates, escaped or raw", () => {
		for (const source of [
			'"\\ud800"',
			'"\\ud800x"',
			'"\\ud800\\u0041"',
			'"\\udc00"',
			'"\\ude00\\ud83d"',
			'"\ud800"',
			'"\udc00"',
			'"\ud83d\\ude00"',
			'"\\ud83d\ude00"',
		]) {
			expect(errorCode(source), source).toBe("unpaired-surrogate");
		}
		expect(errorCode('{"\\ud800": 1}')).toBe("unpaired-surrogate");
	});

	it("validates scalar grammar", () => {
		for (const source of [
			"01",
			"1.",
			"1.e5",
			"1e",
			"1e+",
			"-",
			"-01",
			"1e400",
			"tru",
			"trueish",
			"nul",
			"NaN",
			"Infinity",
			'"\\x41"',
			'"\\u12G4"',
			'"a\tb"',
			'"line\nbreak"',
		]) {
			expect(errorCode(source), source).toBe("invalid-scalar");
		}
		expect(value("-0")).toEqual({ kind: "number", lexeme: "-0", value: -0 });
		expect(value("1E-2")).toEqual({ kind: "number", lexeme: "1E-2", value: 0.01 });
	});

	it("rejects malformed structure", () => {
		for (const source of [
			"",
			"   ",
			"+1",
			".5",
			"'x'",
			'"unterminated',
			'"\\',
			"[1,]",
			'{"a":1,}',
			'{"a" 1}',
			"{a:1}",
			"[1 2]",
			'{"a":1}}',
			'{"a":1} x',
			"[1]\u00a0",
			"{",
			"[",
		]) {
			expect(errorCode(source), JSON.stringify(source)).toBe("malformed-json");
		}
	});

	it("accepts nesting exactly at the depth limit and rejects one more", () => {
		expect(errorCode(nestedArrays(4))).toBeUndefined();
		expect(errorCode(nestedArrays(5))).toBe("too-deep");
		expect(errorCode('{"a":{"b":{"c":{"d":1}}}}')).toBeUndefined();
		expect(errorCode('{"a":{"b":{"c":{"d":{}}}}}')).toBe("too-deep");
	});

	it("accepts exactly the node limit and rejects one more", () => {
		const items = (count: number) => `[${Array.from({ length: count }, () => "0").join(",")}]`;
		// The array itself is one node.
		expect(errorCode(items(63))).toBeUndefined();
		expect(errorCode(items(64))).toBe("too-many-nodes");
	});

	it("stops deep input without exhausting the stack", () => {
		expect(errorCode(nestedArrays(100_000))).toBe("too-deep");
	});

	it("reports offsets into the source", () => {
		const result = decode('{"a": 1, "a": 2}');
		expect(result.ok).toBe(false);
		if (!result.ok) expect(result.error.offset).toBe(9);
	});
});

import { describe, expect, it } from "vitest";
import {
	COMPACT_REQUEST_NAMESPACE,
	COMPACT_REQUEST_PREFIX,
	COMPACT_REQUEST_VERSION,
	canonicalizeWhitespace,
	type DecodedInstructions,
	decodeCustomInstructions,
	encodePreserveRequest,
	type InstructionErrorCode,
	MAX_INSTRUCTION_ERROR_MESSAGE_BYTES,
	MAX_INSTRUCTIONS_BYTES,
	MAX_INSTRUCTIONS_CHARS,
	MAX_PRESERVE_ITEM_BYTES,
	MAX_PRESERVE_ITEM_CHARS,
	MAX_PRESERVE_ITEMS,
	MAX_QUOTED_FIELD_CHARS,
	MAX_REQUEST_SOURCE_BYTES,
	PI_VCC_SENTINEL,
	REQUEST_JSON_LIMITS,
} from "../../../src/compaction/records/instructions.ts";
import { utf8ByteLength } from "../../../src/text/utf8.ts";

/** A typed request whose JSON is written verbatim. */
function typed(json: string): string {
	return `${COMPACT_REQUEST_PREFIX}${json}`;
}

/** A typed request built from values (JSON.stringify only writes the test input). */
function typedOf(body: Record<string, unknown>): string {
	return typed(JSON.stringify(body));
}

function codeOf(result: DecodedInstructions): InstructionErrorCode | undefined {
	return result.ok ? undefined : result.error.code;
}

function rejectCode(customInstructions: string): InstructionErrorCode | undefined {
	return codeOf(decodeCustomInstructions(customInstructions));
}

function accepted(customInstructions: string) {
	const result = decodeCustomInstructions(customInstructions);
	if (!result.ok) throw new Error(`expected acceptance, got ${result.error.code}: ${result.error.message}`);
	return result;
}

describe("limits and constants", () => {
	it("pins the protocol constants", () => {
		expect(PI_VCC_SENTINEL).toBe("__pi_vcc__");
		expect(COMPACT_REQUEST_NAMESPACE).toBe("__pi_fabric_compact_request_");
		expect(COMPACT_REQUEST_PREFIX).toBe("__pi_fabric_compact_request_v1__:");
		expect(COMPACT_REQUEST_VERSION).toBe(1);
		expect(MAX_QUOTED_FIELD_CHARS).toBe(64);
		expect(MAX_REQUEST_SOURCE_BYTES).toBe(16_384);
		expect(MAX_INSTRUCTIONS_CHARS).toBe(8_192);
		expect(MAX_INSTRUCTIONS_BYTES).toBe(8_192);
		expect(MAX_PRESERVE_ITEMS).toBe(16);
		expect(MAX_PRESERVE_ITEM_CHARS).toBe(2_048);
		expect(MAX_PRESERVE_ITEM_BYTES).toBe(2_048);
		expect(REQUEST_JSON_LIMITS).toEqual({ maxDepth: 4, maxNodes: 64 });
		expect(MAX_INSTRUCTION_ERROR_MESSAGE_BYTES).toBe(512);
	});
});

describe("routing", () => {
	it("treats absent and empty instructions as none", () => {
		expect(decodeCustomInstructions(undefined)).toEqual({ ok: true, mode: "none", sourceBytes: 0, request: undefined });
		expect(decodeCustomInstructions("")).toMatchObject({ ok: true, mode: "none" });
		expect(decodeCustomInstructions(42)).toMatchObject({ ok: true, mode: "none" });
		expect(decodeCustomInstructions(" \n\t ")).toMatchObject({ ok: true, mode: "none", sourceBytes: 4 });
	});

	it("routes the exact pi-vcc sentinel on compaction and never yields text for it", () => {
		const result = decodeCustomInstructions(PI_VCC_SENTINEL);
		expect(result).toEqual({ ok: true, mode: "pi-vcc", sourceBytes: 10, request: undefined });
	});

	it("treats near-sentinels as plain text and the sentinel as text on the tree path", () => {
		expect(accepted(" __pi_vcc__").mode).toBe("plain");
		expect(accepted("__PI_VCC__").mode).toBe("plain");
		const tree = decodeCustomInstructions(PI_VCC_SENTINEL, "tree");
		expect(tree.ok && tree.mode === "plain" && tree.request.instructions).toBe("__pi_vcc__");
	});
});

describe("plain instructions", () => {
	it("canonicalizes whitespace without reading the text", () => {
		const result = accepted("  Keep\t\tthe  API \r\n\r\n\r\n\n - stable  \r and\u00a0fast \u2028done  ");
		expect(result.mode).toBe("plain");
		expect(result.request?.instructions).toBe("Keep the API\n\n- stable\nand fast\ndone");
		expect(result.request?.canonicalized).toBe(true);
		expect(result.request?.decoderTruncated).toBe(false);
	});

	it("marks text that needed no canonicalization", () => {
		expect(accepted("Line one\n\nLine two").request?.canonicalized).toBe(false);
	});

	it("replaces unpaired surrogates instead of carrying them", () => {
		expect(canonicalizeWhitespace("a\ud800b")).toBe("a\ufffdb");
	});

	it("never parses plain text as the protocol, whatever it looks like", () => {
		const result = accepted('{"version":1,"preserve":["x"]}');
		expect(result.mode).toBe("plain");
		expect(result.request?.preserve).toEqual([]);
		expect(result.request?.instructions).toBe('{"version":1,"preserve":["x"]}');
		expect(accepted("PI-FABRIC.COMPACT-REQUEST/v1:{}").mode).toBe("plain");
	});

	it("keeps text exactly at the limits and truncates one over", () => {
		const atLimit = accepted("a".repeat(MAX_INSTRUCTIONS_BYTES));
		expect(atLimit.request?.decoderTruncated).toBe(false);
		expect(atLimit.request?.instructions).toHaveLength(8192);

		const over = accepted("a".repeat(MAX_INSTRUCTIONS_BYTES + 1));
		expect(over.request?.decoderTruncated).toBe(true);
		expect(over.request?.instructions).toHaveLength(8192);
		expect(over.request?.instructionsOmittedBytes).toBe(1);
		expect(over.sourceBytes).toBe(8193);
	});

	it("truncates by UTF-8 bytes on whole characters", () => {
		const twoByte = accepted("é".repeat(4096));
		expect(twoByte.request?.decoderTruncated).toBe(false);
		const overBytes = accepted("é".repeat(4097));
		expect(overBytes.request?.decoderTruncated).toBe(true);
		expect(overBytes.request?.instructions).toBe("é".repeat(4096));
		expect(overBytes.request?.instructionsOmittedBytes).toBe(2);
		const emoji = accepted(`a${"😀".repeat(2048)}`);
		// 1 + 2047 × 4 = 8189 bytes fit; the next emoji would need 8193.
		expect(emoji.request?.instructions).toBe(`a${"😀".repeat(2047)}`);
		expect(emoji.request?.instructionsOmittedBytes).toBe(4);
	});

	it("bounds after canonicalization, so whitespace padding costs nothing", () => {
		const result = accepted(`${" ".repeat(50_000)}keep`);
		expect(result.request?.instructions).toBe("keep");
		expect(result.request?.decoderTruncated).toBe(false);
	});
});

describe("typed requests: accepted", () => {
	it("decodes a minimal request", () => {
		const result = accepted(typed('{"version":1}'));
		expect(result.mode).toBe("typed-v1");
		expect(result.request).toEqual({
			instructions: "",
			instructionsOmittedBytes: 0,
			preserve: [],
			canonicalized: false,
			decoderTruncated: false,
		});
	});

	it("decodes instructions and preserve items and canonicalizes them after the limits", () => {
		const source = typed(
			' {"preserve":["commit  abc123", "PR\\n\\n\\n#42"], "instructions":" keep tests\\tgreen ", "version":1} ',
		);
		const result = accepted(source);
		expect(result.request?.instructions).toBe("keep tests green");
		expect(result.request?.preserve).toEqual(["commit abc123", "PR\n\n#42"]);
		expect(result.request?.canonicalized).toBe(true);
		expect(result.sourceBytes).toBe(utf8ByteLength(source));
	});

	it("accepts escaped and raw surrogate pairs", () => {
		expect(accepted(typed('{"version":1,"preserve":["\\ud83d\\ude00","😀"]}')).request?.preserve).toEqual(["😀", "😀"]);
	});

	it("accepts each limit exactly", () => {
		expect(accepted(typedOf({ version: 1, instructions: "a".repeat(8192) })).request?.instructions).toHaveLength(8192);
		expect(accepted(typedOf({ version: 1, instructions: "é".repeat(4096) })).ok).toBe(true);
		expect(accepted(typedOf({ version: 1, preserve: Array.from({ length: 16 }, (_, i) => `item ${i}`) })).ok).toBe(
			true,
		);
		expect(accepted(typedOf({ version: 1, preserve: ["a".repeat(2048)] })).ok).toBe(true);
		expect(accepted(typedOf({ version: 1, preserve: ["é".repeat(1024)] })).ok).toBe(true);
		expect(accepted(typedOf({ version: 1, preserve: ["😀".repeat(512)] })).ok).toBe(true);
	});

	it("accepts a source of exactly 16 KiB and rejects one byte more before parsing", () => {
		const body = typedOf({ version: 1, instructions: "a".repeat(8000), preserve: ["b".repeat(2000)] });
		const exact = `${body}${" ".repeat(MAX_REQUEST_SOURCE_BYTES - utf8ByteLength(body))}`;
		expect(utf8ByteLength(exact)).toBe(16_384);
		expect(accepted(exact).sourceBytes).toBe(16_384);
		expect(rejectCode(`${exact} `)).toBe("request-too-large");
		// The aggregate check runs first: oversized malformed JSON reports the size.
		expect(rejectCode(`${COMPACT_REQUEST_PREFIX}{${"x".repeat(MAX_REQUEST_SOURCE_BYTES)}`)).toBe("request-too-large");
	});
});

describe("typed requests: rejected and failing closed", () => {
	const cases: [string, string, InstructionErrorCode][] = [
		["malformed JSON", "{version:1}", "malformed-json"],
		["truncated JSON", '{"version":1', "malformed-json"],
		["empty payload", "", "malformed-json"],
		["trailing content", '{"version":1} trailing', "malformed-json"],
		["bad number", '{"version":01}', "invalid-scalar"],
		["bad escape", '{"version":1,"instructions":"\\q"}', "invalid-scalar"],
		["raw control character", '{"version":1,"instructions":"a\u0001b"}', "invalid-scalar"],
		["duplicate key", '{"version":1,"version":1}', "duplicate-key"],
		["escaped-key alias", '{"version":1,"\\u0076ersion":1}', "duplicate-key"],
		["duplicate preserve", '{"version":1,"preserve":[],"pr\\u0065serve":[]}', "duplicate-key"],
		["escaped unpaired surrogate", '{"version":1,"instructions":"\\ud800"}', "unpaired-surrogate"],
		["raw unpaired surrogate", '{"version":1,"preserve":["\udc00"]}', "unpaired-surrogate"],
		["excessive depth", '{"version":1,"x":[[[[]]]]}', "too-deep"],
		["excessive node count", `{"version":1,"preserve":[${Array(70).fill('"x"').join(",")}]}`, "too-many-nodes"],
		["array root", '[{"version":1}]', "not-an-object"],
		["string root", '"version"', "not-an-object"],
		["unknown field", '{"version":1,"goal":"x"}', "unknown-field"],
		["missing version", '{"instructions":"x"}', "missing-version"],
		["unknown version", '{"version":2}', "unsupported-version"],
		["non-canonical version", '{"version":1.0}', "unsupported-version"],
		["exponent version", '{"version":1e0}', "unsupported-version"],
		["string version", '{"version":"1"}', "invalid-type"],
		["null instructions", '{"version":1,"instructions":null}', "invalid-type"],
		["numeric instructions", '{"version":1,"instructions":5}', "invalid-type"],
		["preserve string", '{"version":1,"preserve":"x"}', "invalid-type"],
		["preserve item number", '{"version":1,"preserve":["a",2]}', "invalid-type"],
		["empty preserve item", '{"version":1,"preserve":["a"," \\n "]}', "preserve-item-empty"],
	];
	for (const [name, json, code] of cases) {
		it(`rejects ${name} as ${code}`, () => {
			const result = decodeCustomInstructions(typed(json));
			expect(codeOf(result)).toBe(code);
			expect(result.mode).toBe("typed-v1");
			expect("request" in result).toBe(false);
		});
	}

	it("rejects each limit one over", () => {
		expect(rejectCode(typedOf({ version: 1, instructions: "a".repeat(8193) }))).toBe("instructions-too-many-chars");
		expect(rejectCode(typedOf({ version: 1, instructions: "é".repeat(4097) }))).toBe("instructions-too-many-bytes");
		expect(rejectCode(typedOf({ version: 1, preserve: Array(17).fill("x") }))).toBe("preserve-too-many-items");
		expect(rejectCode(typedOf({ version: 1, preserve: ["a".repeat(2049)] }))).toBe("preserve-item-too-many-chars");
		expect(rejectCode(typedOf({ version: 1, preserve: ["é".repeat(1025)] }))).toBe("preserve-item-too-many-bytes");
		expect(rejectCode(typedOf({ version: 1, preserve: ["😀".repeat(513)] }))).toBe("preserve-item-too-many-bytes");
	});

	it("checks the preserve count before looking at any item", () => {
		expect(rejectCode(typed(`{"version":1,"preserve":[${Array(17).fill("0").join(",")}]}`))).toBe(
			"preserve-too-many-items",
		);
	});

	it("applies limits to decoded values before canonicalization", () => {
		// Canonical text would be one word, but the decoded value is over the limit.
		expect(rejectCode(typedOf({ version: 1, instructions: `${" ".repeat(8192)}x` }))).toBe(
			"instructions-too-many-chars",
		);
	});

	it("fails closed for a reserved prefix that is not exact", () => {
		expect(rejectCode(` ${typed('{"version":1}')}`)).toBe("prefix-not-exact");
		expect(rejectCode(`\n${typed('{"version":1}')}`)).toBe("prefix-not-exact");
		expect(rejectCode('__pi_fabric_compact_request_v2__:{"version":2}')).toBe("unsupported-protocol");
		expect(rejectCode("__pi_fabric_compact_request_")).toBe("unsupported-protocol");
	});

	it("writes bounded messages that name the problem and the next action without echoing the payload", () => {
		const secret = "TOP-SECRET-PAYLOAD";
		const huge = decodeCustomInstructions(typed(`{"version":1,"${"k".repeat(5000)}":"${secret}"}`));
		expect(huge.ok).toBe(false);
		if (huge.ok) return;
		expect(huge.error.message).toContain("unknown-field");
		expect(huge.error.message).toContain("resend a valid request");
		expect(huge.error.message).not.toContain(secret);
		expect(huge.error.message).not.toContain("kkkk");
		expect(utf8ByteLength(huge.error.message)).toBeLessThanOrEqual(MAX_INSTRUCTION_ERROR_MESSAGE_BYTES);
		const named = (key: string) => {
			const result = decodeCustomInstructions(typed(`{"version":1,"${key}":0}`));
			return result.ok ? "" : result.error.message;
		};
		expect(named("k".repeat(64))).toContain(`"${"k".repeat(64)}" is not a request field`);
		expect(named("k".repeat(65))).toContain("an unnamed field is not a request field");
		expect(named("a\\u0007b")).toContain("an unnamed field");
		const tooMany = decodeCustomInstructions(typedOf({ version: 1, preserve: Array(17).fill("x") }));
		expect(tooMany.ok || tooMany.error.message).toMatch(/17 items, the limit is 16/);
	});
});

describe("encodePreserveRequest", () => {
	it("round-trips through the decoder", () => {
		const input = { instructions: 'Keep "quotes" \\ and\nnewlines', preserve: ["commit abc123", "é 😀 \u2028"] };
		const encoded = encodePreserveRequest(input);
		expect(encoded.ok).toBe(true);
		if (!encoded.ok) return;
		expect(encoded.text.startsWith(COMPACT_REQUEST_PREFIX)).toBe(true);
		const decoded = accepted(encoded.text);
		expect(decoded.mode).toBe("typed-v1");
		expect(decoded.request?.instructions).toBe('Keep "quotes" \\ and\nnewlines');
		expect(decoded.request?.preserve).toEqual(["commit abc123", "é 😀"]);
	});

	it("writes only the fields given", () => {
		expect(encodePreserveRequest({})).toEqual({ ok: true, text: typed('{"version":1}') });
		expect(encodePreserveRequest({ preserve: ["x"] })).toEqual({
			ok: true,
			text: typed('{"version":1,"preserve":["x"]}'),
		});
	});

	it("refuses requests the decoder would reject", () => {
		const tooMany = encodePreserveRequest({ preserve: Array(17).fill("x") });
		expect(tooMany.ok || tooMany.error.code).toBe("preserve-too-many-items");
		const tooLong = encodePreserveRequest({ preserve: ["a".repeat(2049)] });
		expect(tooLong.ok || tooLong.error.code).toBe("preserve-item-too-many-chars");
		const lone = encodePreserveRequest({ instructions: "\ud800" });
		expect(lone.ok || lone.error.code).toBe("unpaired-surrogate");
		const big = encodePreserveRequest({ instructions: "a".repeat(8000), preserve: Array(5).fill("b".repeat(2000)) });
		expect(big.ok || big.error.code).toBe("request-too-large");
	});
});

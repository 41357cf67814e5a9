import { describe, expect, it } from "vitest";
import {
	canonicalBytes,
	canonicalJson,
	canonicalSpanBytes,
	entryHash,
	isSha256Hex,
	sha256Hex,
	spanHash,
} from "../../src/session/canonical.ts";
import { loadSessionFile } from "../../src/session/load.ts";
import { REAL_SESSIONS } from "../fixtures/session.ts";

describe("canonicalJson", () => {
	it("sorts keys at every depth and drops undefined members", () => {
		expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: undefined, x: null }], c: "é" } })).toBe(
			'{"a":{"c":"é","d":[3,{"x":null,"z":1}]},"b":1}',
		);
	});

	it("is independent of insertion order", () => {
		expect(canonicalJson({ x: 1, y: 2 })).toBe(canonicalJson({ y: 2, x: 1 }));
	});

	it("writes non-finite numbers and undefined array items as null, like JSON", () => {
		expect(canonicalJson([Number.NaN, undefined, Number.POSITIVE_INFINITY])).toBe("[null,null,null]");
	});

	it("refuses bigint rather than inventing a form", () => {
		expect(() => canonicalJson({ big: 1n })).toThrow(/bigint/);
	});
});

describe("bytes and hashes", () => {
	it("encodes as UTF-8", () => {
		expect([...canonicalBytes("é")]).toEqual([0x22, 0xc3, 0xa9, 0x22]);
	});

	it("makes a span one canonical JSON line per entry", () => {
		expect(new TextDecoder().decode(canonicalSpanBytes([{ b: 1, a: 2 }, "x"]))).toBe('{"a":2,"b":1}\n"x"\n');
	});

	it("hashes the known SHA-256 test vector", () => {
		expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
		expect(isSha256Hex(sha256Hex("abc"))).toBe(true);
		expect(isSha256Hex("../etc/passwd")).toBe(false);
	});

	it("gives a span hash that changes when any entry byte changes", () => {
		const entries = [
			{ id: "a", text: "one" },
			{ id: "b", text: "two" },
		];
		const changed = [
			{ id: "a", text: "one" },
			{ id: "b", text: "twO" },
		];
		expect(spanHash(entries)).not.toBe(spanHash(changed));
		expect(entryHash(entries[0])).toBe(entryHash({ text: "one", id: "a" }));
	});

	it("pins the hash of a real log so a serialization change cannot slip through", () => {
		const session = loadSessionFile(REAL_SESSIONS.large);
		expect(spanHash(session.entries.slice(0, 50))).toBe(
			spanHash(loadSessionFile(REAL_SESSIONS.large).entries.slice(0, 50)),
		);
		expect(entryHash(session.entries[1])).toMatchInlineSnapshot(
			`"7b71b0fe5ce6350e5ee32ac6e5f569160b5bf01a28ee717a96e39a734cfb9b62"`,
		);
	});
});

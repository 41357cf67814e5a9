import { describe, expect, it } from "vitest";
import {
	type CompactionRequest,
	decodeCustomInstructions,
	encodePreserveRequest,
} from "../../../src/compaction/records/instructions.ts";
import {
	byteLossMarker,
	compactionInstructionPolicy,
	MAX_REQUEST_BLOCK_BYTES,
	REQUEST_BLOCK_HEADER,
	renderCompactionRequestBlock,
} from "../../../src/compaction/summary/request-render.ts";
import { utf8ByteLength } from "../../../src/text/utf8.ts";

function request(instructions: string, preserve: string[] = [], instructionsOmittedBytes = 0): CompactionRequest {
	return {
		instructions,
		instructionsOmittedBytes,
		preserve,
		canonicalized: false,
		decoderTruncated: instructionsOmittedBytes > 0,
	};
}

function decodedOk(customInstructions: string) {
	const decoded = decodeCustomInstructions(customInstructions);
	if (!decoded.ok) throw new Error(decoded.error.message);
	return decoded;
}

/** Bytes of the block for one preserve item of `size` ASCII bytes. */
function oneItemBlockBytes(size: number): number {
	return renderCompactionRequestBlock(request("", ["x".repeat(size)])).bytes;
}

describe("renderCompactionRequestBlock", () => {
	it("pins the block ceiling and header", () => {
		expect(MAX_REQUEST_BLOCK_BYTES).toBe(3072);
		expect(REQUEST_BLOCK_HEADER).toBe("[Compaction Request]");
		expect(byteLossMarker(12)).toBe(" [... 12 bytes omitted]");
	});

	it("renders nothing for an absent or empty request", () => {
		expect(renderCompactionRequestBlock(undefined)).toEqual({
			text: "",
			bytes: 0,
			truncated: false,
			renderedOmittedBytes: 0,
		});
		expect(renderCompactionRequestBlock(request("")).text).toBe("");
	});

	it("renders every item complete when they fit, in request order", () => {
		const block = renderCompactionRequestBlock(
			request("Keep tests green", ["commit abc123", "PR #42\nand its review"]),
		);
		expect(block.text).toBe(
			[
				"[Compaction Request]",
				"Instructions: Keep tests green",
				"Preserve:",
				"- commit abc123",
				"- PR #42",
				"  and its review",
			].join("\n"),
		);
		expect(block.bytes).toBe(utf8ByteLength(block.text));
		expect(block.truncated).toBe(false);
		expect(block.renderedOmittedBytes).toBe(0);
	});

	it("applies no per-line cap: a 2 KiB item stays complete", () => {
		const item = "z".repeat(2048);
		const block = renderCompactionRequestBlock(request("", [item]));
		expect(block.text).toContain(`- ${item}`);
		expect(block.truncated).toBe(false);
	});

	it("keeps a block of exactly 3072 bytes complete and cuts one byte more", () => {
		const overhead = oneItemBlockBytes(0);
		const exact = MAX_REQUEST_BLOCK_BYTES - overhead;
		expect(oneItemBlockBytes(exact)).toBe(3072);
		const fits = renderCompactionRequestBlock(request("", ["x".repeat(exact)]));
		expect(fits.truncated).toBe(false);

		const over = renderCompactionRequestBlock(request("", ["x".repeat(exact + 1)]));
		expect(over.truncated).toBe(true);
		expect(over.bytes).toBeLessThanOrEqual(3072);
		expect(over.text).toMatch(/ \[\.\.\. \d+ bytes omitted\]$/);
		const kept = over.text.split("\n- ")[1]?.replace(/ \[\.\.\..*$/, "") ?? "";
		expect(over.renderedOmittedBytes).toBe(exact + 1 - kept.length);
		expect(over.text).toContain(byteLossMarker(over.renderedOmittedBytes));
	});

	it("gives every item a bounded excerpt with a byte-loss marker when all are large", () => {
		const preserve = Array.from({ length: 16 }, (_, i) => `${String(i).padStart(2, "0")}${"p".repeat(2046)}`);
		const block = renderCompactionRequestBlock(request("i".repeat(8192), preserve));
		expect(block.bytes).toBeLessThanOrEqual(3072);
		expect(block.truncated).toBe(true);
		const lines = block.text.split("\n");
		expect(lines.filter((line) => line.startsWith("- "))).toHaveLength(16);
		expect(lines.filter((line) => / \[\.\.\. \d+ bytes omitted\]$/.test(line))).toHaveLength(17);
		// Every item keeps its own head, so no middle item is dropped.
		for (let i = 0; i < 16; i++) expect(block.text).toContain(`- ${String(i).padStart(2, "0")}pp`);
		const omitted = [...block.text.matchAll(/\[\.\.\. (\d+) bytes omitted\]/g)].reduce(
			(sum, m) => sum + Number(m[1]),
			0,
		);
		expect(block.renderedOmittedBytes).toBe(omitted);
		const keptBytes = utf8ByteLength(block.text.replace(/ \[\.\.\. \d+ bytes omitted\]/g, ""));
		// Source bytes = kept bytes + omitted bytes, measured apart from labels.
		const labelBytes = utf8ByteLength(["[Compaction Request]", "Instructions: ", "Preserve:"].join("")) + 16 * 2 + 18;
		expect(keptBytes - labelBytes + omitted).toBe(8192 + 16 * 2048);
	});

	it("keeps small items complete and shares the rest among large ones", () => {
		const block = renderCompactionRequestBlock(request("x".repeat(8000), ["commit abc123", "y".repeat(2048)]));
		expect(block.bytes).toBeLessThanOrEqual(3072);
		expect(block.text).toContain("\n- commit abc123\n");
		const marked = block.text.split("\n").filter((line) => line.includes("bytes omitted]"));
		expect(marked).toHaveLength(2);
		// Both large items get about the same share; neither starves.
		const [first, second] = marked.map((line) => line.length);
		expect(Math.abs((first ?? 0) - (second ?? 0))).toBeLessThan(40);
	});

	it("cuts on whole characters and counts omitted UTF-8 bytes", () => {
		const block = renderCompactionRequestBlock(request("", ["😀".repeat(1000)]));
		expect(block.bytes).toBeLessThanOrEqual(3072);
		expect(block.text).not.toContain("\ufffd");
		const kept = [...(block.text.split("- ")[1] ?? "")].filter((char) => char === "😀").length;
		expect(block.renderedOmittedBytes).toBe((1000 - kept) * 4);
	});

	it("shows decoder truncation with a marker without counting it as rendering loss", () => {
		const block = renderCompactionRequestBlock(request("abc", [], 500));
		expect(block.text).toBe(`[Compaction Request]\nInstructions: abc${byteLossMarker(500)}`);
		expect(block.truncated).toBe(false);
		expect(block.renderedOmittedBytes).toBe(0);
	});
});

describe("compactionInstructionPolicy", () => {
	it("records a typed request with rendering loss apart from decoder loss", () => {
		const encoded = encodePreserveRequest({ preserve: Array(16).fill("q".repeat(900)) });
		if (!encoded.ok) throw new Error(encoded.error.message);
		const decoded = decodedOk(encoded.text);
		const rendered = renderCompactionRequestBlock(decoded.request);
		expect(compactionInstructionPolicy(decoded, rendered)).toEqual({
			mode: "typed-v1",
			canonicalized: false,
			sourceBytes: utf8ByteLength(encoded.text),
			truncated: true,
			decoderTruncated: false,
			preserveCount: 16,
			omittedPreserveCount: 0,
			renderedOmittedBytes: rendered.renderedOmittedBytes,
		});
		expect(rendered.renderedOmittedBytes).toBeGreaterThan(0);
	});

	it("records decoder truncation of plain text as truncated", () => {
		const decoded = decodedOk("a".repeat(9000));
		const policy = compactionInstructionPolicy(decoded, renderCompactionRequestBlock(decoded.request));
		expect(policy).toMatchObject({ mode: "plain", truncated: true, decoderTruncated: true, preserveCount: 0 });
		expect(policy.renderedOmittedBytes).toBeGreaterThan(0);
	});

	it("records none for absent instructions and for the pi-vcc sentinel", () => {
		const none = decodedOk("");
		expect(compactionInstructionPolicy(none, renderCompactionRequestBlock(none.request))).toMatchObject({
			mode: "none",
			truncated: false,
			sourceBytes: 0,
		});
		const vcc = decodedOk("__pi_vcc__");
		expect(compactionInstructionPolicy(vcc, renderCompactionRequestBlock(vcc.request)).mode).toBe("none");
	});
});

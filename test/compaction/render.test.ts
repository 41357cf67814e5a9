import { describe, expect, it } from "vitest";
import { compileSummary } from "../../src/compaction/compile.ts";
import { DIALOGUE_HEADER } from "../../src/compaction/dialogue.ts";
import { normalizeBranch } from "../../src/compaction/normalize.ts";
import { projectSummary } from "../../src/compaction/projections.ts";
import {
	ACTIVITY_HEADER,
	HISTORICAL_HEADER,
	STATUS_HEADER,
	TRANSCRIPT_HEADER,
	TURNS_HEADER,
} from "../../src/compaction/projections-activity.ts";
import { FILES_HEADER, OUTSTANDING_HEADER } from "../../src/compaction/projections-files.ts";
import type { ViewBlock, ViewItem } from "../../src/compaction/projections-model.ts";
import { runQa, splitSections } from "../../src/compaction/qa.ts";
import {
	BLOCK_CEILINGS,
	BLOCK_ORDER,
	CARRY_FORWARD_HEADER,
	COMPACTION_REQUEST_HEADER,
	FOOTER_HEADER,
	guardRequestBlock,
	renderCarryForward,
	renderFooter,
	SUMMARY_MAX_BYTES,
} from "../../src/compaction/render.ts";
import { fitBlock, MIN_TEXT_BYTES, minimalBlock, omissionMarker } from "../../src/compaction/render-fit.ts";
import { utf8Bytes } from "../../src/compaction/render-text.ts";
import { generateSession, SessionBuilder, traceV1 } from "../fixtures/compaction-events.ts";

const HEADER_BY_BLOCK = {
	dialogue: DIALOGUE_HEADER,
	historical: HISTORICAL_HEADER,
	request: COMPACTION_REQUEST_HEADER,
	carry: CARRY_FORWARD_HEADER,
	files: FILES_HEADER,
	activity: ACTIVITY_HEADER,
	outstanding: OUTSTANDING_HEADER,
	turns: TURNS_HEADER,
	status: STATUS_HEADER,
	annotations: "[Annotations]",
	transcript: TRANSCRIPT_HEADER,
	footer: FOOTER_HEADER,
} as const;

/** A session whose every historical block wants far more than its ceiling, with multibyte text. */
function pressureSession(turns = 60): SessionBuilder {
	const b = new SessionBuilder();
	for (let turn = 0; turn < turns; turn++) {
		b.user(`Request ${turn} ${"ünïcödé 🚀 ".repeat(120)}\nsecond line ${turn}`);
		b.tool(`r${turn}`, "read", { path: `/work/project/${"deep/".repeat(20)}read-${turn}.ts` });
		b.tool(`e${turn}`, "edit", { path: `/work/project/${"deep/".repeat(20)}edit-${turn}.ts` });
		b.tool(
			`w${turn}`,
			"write",
			{ path: `/work/project/${"deep/".repeat(20)}write-${turn}.ts` },
			{ details: { created: turn % 2 === 0 } },
		);
		b.tool(
			`b${turn}`,
			"bash",
			{ command: `make target-${turn} ${"--flag ".repeat(30)}` },
			{
				isError: true,
				output: `error ${turn}: ${"failure detail ".repeat(80)}`,
			},
		);
		b.fabric(`f${turn}`, {
			display: { name: `Run ${turn} ${"name ".repeat(30)}`, description: "describe ".repeat(150) },
			details: {
				trace: traceV1(
					[{ ref: "agents.spawn", args: { task: "t".repeat(400) }, outcome: "failed", error: "e".repeat(500) }],
					{
						phases: [`phase ${turn} ${"p".repeat(300)}`],
					},
				),
			},
		});
		b.assistant(`Answer ${turn} ${"ответ ".repeat(800)}`);
	}
	return b;
}

describe("render constants", () => {
	it("pins the global ceiling and every block ceiling (headers included)", () => {
		expect(SUMMARY_MAX_BYTES).toBe(32_768);
		expect(BLOCK_CEILINGS).toEqual({
			dialogue: 12288,
			historical: 4096,
			request: 3072,
			carry: 3072,
			files: 4608,
			activity: 2048,
			outstanding: 4608,
			turns: 3072,
			status: 2048,
			annotations: 1024,
			transcript: 5120,
			footer: 1536,
		});
	});

	it("pins the section headers byte for byte and their order", () => {
		expect(Object.values(HEADER_BY_BLOCK)).toEqual([
			"[Recent user directions and discussion]",
			"[Historical requests]",
			"[Compaction Request]",
			"[Carry Forward]",
			"[Files And Changes]",
			"[Fabric Activity]",
			"[Outstanding Context]",
			"[Earlier Turns]",
			"[Current Status]",
			"[Annotations]",
			"[Transcript]",
			"[Source]",
		]);
		expect(BLOCK_ORDER).toEqual(Object.keys(HEADER_BY_BLOCK));
	});
});

describe("renderSummary", () => {
	const request = `${COMPACTION_REQUEST_HEADER}\nInstructions: ${"keep the public API ".repeat(400)}`;
	const carry = Array.from({ length: 12 }, (_, index) => `carry item ${index} ${"detail ".repeat(80)}`);

	it("renders sections in order, protected blocks intact, within every ceiling and the 32 KiB guard", () => {
		const b = pressureSession();
		const result = compileSummary({ entries: b.entries, requestBlock: request, carryForward: carry });
		expect(result.bytes).toBeLessThanOrEqual(SUMMARY_MAX_BYTES);
		expect(new TextEncoder().encode(result.text).length).toBe(result.bytes);
		expect(new TextDecoder("utf-8", { fatal: true }).decode(new TextEncoder().encode(result.text))).toBe(result.text);
		const positions = BLOCK_ORDER.filter((key) => key !== "annotations").map((key) =>
			result.text.split("\n").indexOf(HEADER_BY_BLOCK[key]),
		);
		expect(positions.every((position) => position >= 0)).toBe(true);
		expect([...positions].sort((a, b) => a - b)).toEqual(positions);
		const sections = splitSections(result.text);
		for (const key of BLOCK_ORDER) {
			const lines = sections.get(HEADER_BY_BLOCK[key]);
			if (!lines) continue;
			const block = [HEADER_BY_BLOCK[key], ...lines].join("\n").trimEnd();
			expect(utf8Bytes(block), key).toBeLessThanOrEqual(BLOCK_CEILINGS[key]);
		}
		expect(result.text).toContain(guardRequestBlock(request).text);
		expect(result.text).toContain(renderCarryForward(carry).text);
		expect(runQa(result.text, result.qa).score).toBe(1);
	});

	it("reduces historical blocks proportionally under pressure, never below their minimal form", () => {
		const b = pressureSession();
		const relaxed = compileSummary({ entries: b.entries });
		const pressed = compileSummary({ entries: b.entries, requestBlock: request, carryForward: carry });
		const branch = normalizeBranch(b.entries);
		const blocks = projectSummary(branch.events, branch.cutEventIndex).blocks;
		const sizeOf = (text: string, header: string) =>
			utf8Bytes([header, ...(splitSections(text).get(header) ?? [])].join("\n").trimEnd());
		let shrunk = 0;
		for (const block of blocks) {
			const relaxedBytes = sizeOf(relaxed.text, block.header);
			const pressedBytes = sizeOf(pressed.text, block.header);
			expect(pressedBytes).toBeLessThanOrEqual(relaxedBytes);
			expect(pressedBytes).toBeGreaterThanOrEqual(minimalBlock(block).bytes);
			if (pressedBytes < relaxedBytes) shrunk++;
		}
		expect(shrunk).toBeGreaterThanOrEqual(5);
	});

	it("keeps each historical block at its ceiling render when demand fits", () => {
		const b = generateSession(2000, 3);
		const result = compileSummary({ entries: b.entries });
		expect(result.bytes).toBeLessThan(SUMMARY_MAX_BYTES - 4096);
		const branch = normalizeBranch(b.entries);
		for (const block of projectSummary(branch.events, branch.cutEventIndex).blocks) {
			const expected = fitBlock(block, BLOCK_CEILINGS[block.key]);
			expect(result.text).toContain(expected?.text);
		}
	});

	it("takes the footer's source timestamp and range from the entries", () => {
		const b = new SessionBuilder();
		const first = b.user("hello");
		const last = b.assistant("hi");
		const result = compileSummary({ entries: b.entries });
		expect(result.text.endsWith(`${renderFooter(result.qa.footer)}\n`)).toBe(true);
		expect(result.text).toContain(`Source timestamp: ${b.entries[1]?.timestamp}`);
		expect(result.text).toContain(`Source range: @${first} … @${last} (2 entries, 2 events, 0 thinking blocks erased)`);
		expect(result.text).toContain('active_context {"action":"peek","id":"<entry-id>"}');
	});
});

describe("protected request and carry-forward blocks", () => {
	it("guards an oversized request block to 3,072 bytes on a code-point boundary", () => {
		const guarded = guardRequestBlock(`${COMPACTION_REQUEST_HEADER}\n${"🚀".repeat(2000)}`);
		expect(utf8Bytes(guarded.text)).toBeLessThanOrEqual(3072);
		expect(guarded.text).toBe(guarded.text.normalize());
		expect(guarded.omittedBytes).toBeGreaterThan(0);
		expect(guardRequestBlock(undefined)).toEqual({ text: "", omittedBytes: 0 });
	});

	it("renders complete carry-forward items when they fit and bounded excerpts with byte-loss markers otherwise", () => {
		expect(renderCarryForward(["keep API", "  ship  docs "])).toEqual({
			text: `${CARRY_FORWARD_HEADER}\n- keep API\n- ship docs`,
			omittedBytes: 0,
		});
		const big = renderCarryForward(
			Array.from({ length: 5 }, (_, index) => `START${index} ${"x".repeat(2000)} END${index}`),
		);
		expect(utf8Bytes(big.text)).toBeLessThanOrEqual(3072);
		for (let index = 0; index < 5; index++) {
			expect(big.text).toContain(`START${index}`);
			expect(big.text).toContain(`END${index}`);
		}
		expect(big.text.match(/\[\.\.\. \d+ bytes omitted\]/g)).toHaveLength(5);
		const many = renderCarryForward(Array.from({ length: 200 }, (_, index) => `item ${index} ${"y".repeat(100)}`));
		expect(utf8Bytes(many.text)).toBeLessThanOrEqual(3072);
		expect(many.text).toMatch(/- \[\d+ more items omitted\]$/);
	});
});

describe("fitBlock", () => {
	const item = (index: number, text: string, required = true): ViewItem => ({
		entryId: `e${index}`,
		lead: `@e${index} `,
		text,
		trail: "",
		keep: "start",
		textRequired: required,
	});
	const block = (items: ViewItem[]): ViewBlock => ({
		key: "turns",
		header: "[Earlier Turns]",
		prelude: [],
		groups: [{ key: "turns", items, limit: 32, mode: "earliest-latest", maxTextBytes: 512 }],
	});

	it("never exceeds its budget and marks omitted items with count and entry range", () => {
		const items = Array.from({ length: 100 }, (_, index) => item(index, `text ${index} ${"z".repeat(300)}`));
		for (const budget of [120, 400, 1000, 3072]) {
			const fitted = fitBlock(block(items), budget);
			expect(fitted?.bytes).toBeLessThanOrEqual(budget);
		}
		const fitted = fitBlock(block(items), 3072);
		const omitted = fitted?.omitted.turns ?? 0;
		const kept = 100 - omitted;
		const head = Math.floor(kept / 2);
		expect(fitted?.text).toContain(omissionMarker(omitted, `e${head}`, `e${head + omitted - 1}`));
	});

	it("returns nothing when not even the header and marker fit", () => {
		expect(fitBlock(block([item(0, "x")]), 5)).toBeUndefined();
	});

	it("lets optional text vanish while required text keeps its floor", () => {
		const items = [item(0, `required ${"r".repeat(200)}`), item(1, `optional ${"o".repeat(200)}`, false)];
		// Header + newline, required line at its floor, optional line with no text.
		const floor = 16 + (6 + MIN_TEXT_BYTES) + 1 + 6;
		const fitted = fitBlock(block(items), floor + 11);
		expect(fitted?.text).toBe(`[Earlier Turns]\n- @e0 required ${"r".repeat(MIN_TEXT_BYTES - 12)}…\n- @e1 `);
		// One byte less and an item has to go instead (the latest one stays).
		expect(fitBlock(block(items), floor - 1)?.text).toBe("[Earlier Turns]\n- [1 omitted: @e0 … @e0]\n- @e1 ");
	});
});

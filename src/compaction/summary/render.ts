/**
 * Assemble the bounded summary text from its blocks.
 *
 * Order: recent dialogue, current turn plan, current work, historical
 * requests, compaction request, carry forward, files, decisions, Fabric
 * activity, outstanding context, earlier turns, current status, (enricher
 * annotations), transcript, footer. Protected blocks (dialogue, plan, current
 * work, request, carry forward) and the footer render first; the
 * historical blocks share what remains of the 32 KiB ceiling. When their
 * capped demand fits, each keeps its own ceiling. Under pressure each keeps
 * its minimal form (header, labels, omission markers, fixed lines) plus a
 * share of the rest proportional to its extra demand; unused share passes to
 * later blocks. A minimal form never exceeds its block ceiling or the pool:
 * past them it keeps whole lines only (never expected, since every address
 * and identifier in a fixed part is bounded; QA then fails). A final UTF-8
 * guard keeps the result within 32,768 bytes by cutting blocks before the
 * footer at a line boundary, so the footer and the final newline always
 * survive. Identical input gives identical bytes.
 */

import { truncateUtf8, truncateUtf8Start, utf8ByteLength } from "../../text/utf8.ts";
import type { RenderedDialogue } from "./dialogue.ts";
import { type BlockKey, blockHasContent, type OmissionKey, type ViewBlock } from "./projections-model.ts";
import { clipLines, type FittedBlock, fitBlock, minimalBlock } from "./render-fit.ts";
import { boundedOneLine, identifierLabel, omittedBytesMarker, renderAddress, sanitizeText } from "./render-text.ts";

/** Hard ceiling of the whole rendered summary, in UTF-8 bytes. */
export const SUMMARY_MAX_BYTES = 32 * 1024;

/** Per-block UTF-8 ceilings; each includes its header line. */
export const BLOCK_CEILINGS = {
	dialogue: 12288,
	plan: 3072,
	work: 4096,
	historical: 4096,
	request: 3072,
	carry: 3072,
	files: 8192,
	decisions: 3072,
	activity: 2048,
	outstanding: 4608,
	turns: 2048,
	status: 2048,
	annotations: 1024,
	transcript: 3072,
	footer: 1536,
} as const satisfies Record<BlockKey | "dialogue" | "request" | "carry" | "footer", number>;

export const CARRY_FORWARD_HEADER = "[Carry Forward]";
export const FOOTER_HEADER = "[Source]";
export const SECTION_SEPARATOR = "\n\n";

/** Render order of every block. */
export const BLOCK_ORDER = [
	"dialogue",
	"plan",
	"work",
	"historical",
	"request",
	"carry",
	"files",
	"decisions",
	"activity",
	"outstanding",
	"turns",
	"status",
	"annotations",
	"transcript",
	"footer",
] as const;

/** Smallest share of a carry-forward item before later items are dropped whole. */
const CARRY_ITEM_MIN_BYTES = 64;

export type OmittedCounts = Record<Exclude<OmissionKey, "status"> | "dialogueBytes", number>;

export function emptyOmittedCounts(): OmittedCounts {
	return {
		plan: 0,
		work: 0,
		decisions: 0,
		goal: 0,
		filesCreated: 0,
		filesWritten: 0,
		filesModified: 0,
		filesRead: 0,
		operations: 0,
		activity: 0,
		turns: 0,
		transcript: 0,
		annotations: 0,
		dialogueBytes: 0,
	};
}

export interface FooterInput {
	sourceTimestamp?: string;
	firstEntryId?: string;
	lastEntryId?: string;
	entryCount: number;
	eventCount: number;
	thinkingErased: number;
	/** Tool named in the recall guidance. Default: DEFAULT_RECALL_TOOL. */
	recallTool?: string;
	/** What Pi keeps raw after this summary, one line (e.g. that nothing is kept, and why). */
	keptNote?: string;
	/** The folds inside the summarized range, one line, so they stay one call away. */
	foldsNote?: string;
}

/** Bound of the footer's kept-raw line. */
export const KEPT_NOTE_MAX_BYTES = 256;
/** Bound of the footer's folds line: a few dozen fold ids, then a count. */
export const FOLDS_NOTE_MAX_BYTES = 480;

/** Footer timestamp bound (UTF-8 bytes, one line); normalization already keeps it this short. */
export const SOURCE_TIMESTAMP_MAX_BYTES = 64;

/** Tool whose `peek` re-reads an entry's exact source (the fold runtime's context tool). */
export const DEFAULT_RECALL_TOOL = "active_context";

/** Bytes of the entry id the recall example names; real ids are 8 hex characters. */
export const RECALL_EXAMPLE_ID_MAX_BYTES = 64;

/**
 * How the model gets exact source back: the tool call is spelled out so it
 * can be made as written, with a real entry id of the summarized range as
 * its example (agents copy a placeholder literally).
 */
export function recallGuidance(recallTool: string = DEFAULT_RECALL_TOOL, exampleId?: string): string {
	const tool = identifierLabel(recallTool);
	const id = exampleId !== undefined ? boundedOneLine(exampleId, RECALL_EXAMPLE_ID_MAX_BYTES) : "";
	const example = id
		? `${tool} ${JSON.stringify({ action: "peek", id })} re-reads the exact source of entry @${id} (use any entry id the same way), SHA-256 addressed. `
		: `${tool} {"action":"peek","id":"<entry-id>"} re-reads an entry's exact source, SHA-256 addressed. `;
	return (
		"Recall: the session log is ground truth and this summary is a bounded view of it. " +
		"@<entry-id> addresses a session entry, @<entry-id>/<n> a nested Fabric operation, " +
		`@<entry-id>/phase:<n> a Fabric phase; ${example}` +
		"Omission markers give the count and the first and last entry of what they leave out."
	);
}

export function renderFooter(input: FooterInput): string {
	const range =
		input.firstEntryId !== undefined && input.lastEntryId !== undefined
			? `${renderAddress(input.firstEntryId)} … ${renderAddress(input.lastEntryId)}`
			: "none";
	const lines = [
		FOOTER_HEADER,
		`Source timestamp: ${boundedOneLine(input.sourceTimestamp ?? "unknown", SOURCE_TIMESTAMP_MAX_BYTES)}`,
		`Source range: ${range} (${input.entryCount} entries, ${input.eventCount} events, ${input.thinkingErased} thinking blocks erased)`,
		...(input.keptNote ? [boundedOneLine(input.keptNote, KEPT_NOTE_MAX_BYTES)] : []),
		...(input.foldsNote ? [boundedOneLine(input.foldsNote, FOLDS_NOTE_MAX_BYTES)] : []),
		recallGuidance(input.recallTool, input.lastEntryId),
	];
	return truncateUtf8(lines.join("\n"), BLOCK_CEILINGS.footer);
}

/** The already-rendered request block, guarded to its ceiling. */
export function guardRequestBlock(block: string | undefined): { text: string; omittedBytes: number } {
	if (block === undefined) return { text: "", omittedBytes: 0 };
	const clean = sanitizeText(block).replace(/\s+$/, "");
	const text = truncateUtf8(clean, BLOCK_CEILINGS.request);
	return { text, omittedBytes: utf8ByteLength(clean) - utf8ByteLength(text) };
}

/** One-line excerpt keeping head and tail around an explicit byte-loss marker. */
function excerptLine(text: string, maxBytes: number): { text: string; omittedBytes: number } {
	const total = utf8ByteLength(text);
	if (total <= maxBytes) return { text, omittedBytes: 0 };
	const frame = utf8ByteLength(` ${omittedBytesMarker(total)} `);
	const available = Math.max(0, maxBytes - frame);
	const head = truncateUtf8(text, Math.ceil(available / 2));
	const tail = truncateUtf8Start(text, available - utf8ByteLength(head));
	const omittedBytes = total - utf8ByteLength(head) - utf8ByteLength(tail);
	return { text: `${head} ${omittedBytesMarker(omittedBytes)} ${tail}`, omittedBytes };
}

/** The carry-forward list: complete items when they fit, else bounded excerpts with byte-loss markers. */
export function renderCarryForward(items: readonly string[] | undefined): { text: string; omittedBytes: number } {
	const lines = (items ?? []).map((item) => boundedOneLine(item)).filter((line) => line !== "");
	if (lines.length === 0) return { text: "", omittedBytes: 0 };
	const complete = [CARRY_FORWARD_HEADER, ...lines.map((line) => `- ${line}`)].join("\n");
	if (utf8ByteLength(complete) <= BLOCK_CEILINGS.carry) return { text: complete, omittedBytes: 0 };
	const dropMarker = (count: number) => `- [${count} more items omitted]`;
	for (let kept = lines.length; kept >= 1; kept--) {
		const dropped = lines.length - kept;
		const fixed =
			utf8ByteLength(CARRY_FORWARD_HEADER) + kept * 3 + (dropped > 0 ? utf8ByteLength(dropMarker(dropped)) + 1 : 0);
		const share = Math.floor((BLOCK_CEILINGS.carry - fixed) / kept);
		if (share < CARRY_ITEM_MIN_BYTES) continue;
		let omittedBytes = lines.slice(kept).reduce((sum, line) => sum + utf8ByteLength(line), 0);
		const rendered = lines.slice(0, kept).map((line) => {
			const excerpt = excerptLine(line, share);
			omittedBytes += excerpt.omittedBytes;
			return `- ${excerpt.text}`;
		});
		if (dropped > 0) rendered.push(dropMarker(dropped));
		return { text: [CARRY_FORWARD_HEADER, ...rendered].join("\n"), omittedBytes };
	}
	return { text: CARRY_FORWARD_HEADER, omittedBytes: lines.reduce((sum, line) => sum + utf8ByteLength(line), 0) };
}

export interface RenderInput {
	dialogue: RenderedDialogue;
	/** The current turn's plan block, protected within its own ceiling. */
	plan?: ViewBlock;
	/** The current-work block, protected within its own ceiling. */
	work?: ViewBlock;
	/** Historical view blocks in any order; they render in `BLOCK_ORDER`. */
	blocks: readonly ViewBlock[];
	requestBlock?: string;
	carryForward?: readonly string[];
	footer: FooterInput;
}

export interface RenderOutput {
	text: string;
	bytes: number;
	omittedCounts: OmittedCounts;
	/** Rendered UTF-8 size per present block (without separators). */
	blockBytes: Partial<Record<(typeof BLOCK_ORDER)[number], number>>;
	requestOmittedBytes: number;
	carryForwardOmittedBytes: number;
	/** True when the final guard had to cut (never expected; kept observable). */
	finalGuardCut: boolean;
}

/**
 * Fit historical blocks into `pool` bytes: ceilings when demand fits, else
 * each block's minimal form plus floor(remaining extra pool × its extra demand
 * / remaining extra demand), in order, so unused share passes to later blocks.
 */
export function allocateBlocks(blocks: readonly ViewBlock[], pool: number): Map<BlockKey, FittedBlock> {
	const ceilingOf = (block: ViewBlock) => BLOCK_CEILINGS[block.key];
	// Minimal forms respect their block ceiling and, in render order, the pool (never binding with bounded leads).
	let floorRoom = pool;
	const minimal = blocks.map((block) => {
		const floor = clipLines(clipLines(minimalBlock(block), ceilingOf(block)), Math.max(0, floorRoom));
		floorRoom -= floor.bytes;
		return floor;
	});
	const demand = blocks.map((block, index) => fitBlock(block, ceilingOf(block)) ?? (minimal[index] as FittedBlock));
	const fitted = new Map<BlockKey, FittedBlock>();
	const totalDemand = demand.reduce((sum, block) => sum + block.bytes, 0);
	if (totalDemand <= pool) {
		blocks.forEach((block, index) => {
			fitted.set(block.key, demand[index] as FittedBlock);
		});
		return fitted;
	}
	let extraPool = pool - minimal.reduce((sum, block) => sum + block.bytes, 0);
	let extraDemand = demand.reduce((sum, block, index) => sum + block.bytes - (minimal[index] as FittedBlock).bytes, 0);
	blocks.forEach((block, index) => {
		const floor = minimal[index] as FittedBlock;
		const want = (demand[index] as FittedBlock).bytes - floor.bytes;
		const share = extraDemand > 0 && extraPool > 0 ? Math.floor((extraPool * want) / extraDemand) : 0;
		const result = fitBlock(block, Math.min(ceilingOf(block), floor.bytes + share)) ?? floor;
		fitted.set(block.key, result);
		extraPool -= result.bytes - floor.bytes;
		extraDemand -= want;
	});
	return fitted;
}

/** A protected view block within its own ceiling (plan, current work), before the historical blocks share the rest. */
function fitProtected(block: ViewBlock | undefined): FittedBlock | undefined {
	if (!block || !blockHasContent(block)) return undefined;
	const ceiling = BLOCK_CEILINGS[block.key];
	return fitBlock(block, ceiling) ?? clipLines(minimalBlock(block), ceiling);
}

/**
 * Join the blocks, then the footer and the final newline. The final UTF-8
 * guard (never expected to act) cuts the blocks before the footer at a line
 * boundary, so the footer and the final newline always survive.
 */
function withFooter(whole: string, parts: readonly string[], footer: string): string {
	if (utf8ByteLength(whole) <= SUMMARY_MAX_BYTES) return whole;
	const room = SUMMARY_MAX_BYTES - utf8ByteLength(footer) - utf8ByteLength(SECTION_SEPARATOR) - 1;
	const head = truncateUtf8(parts.join(SECTION_SEPARATOR), room);
	const body = head.slice(0, Math.max(0, head.lastIndexOf("\n"))).replace(/\s+$/, "");
	return body ? `${body}${SECTION_SEPARATOR}${footer}\n` : `${footer}\n`;
}

/** Render the complete summary within `SUMMARY_MAX_BYTES`; the footer is always last and whole. */
export function renderSummary(input: RenderInput): RenderOutput {
	const request = guardRequestBlock(input.requestBlock);
	const carry = renderCarryForward(input.carryForward);
	const dialogueText = truncateUtf8(input.dialogue.text, BLOCK_CEILINGS.dialogue);
	const footer = renderFooter(input.footer);
	const plan = fitProtected(input.plan);
	const work = fitProtected(input.work);
	const protectedText: Partial<Record<(typeof BLOCK_ORDER)[number], string>> = {
		dialogue: dialogueText,
		plan: plan?.text ?? "",
		work: work?.text ?? "",
		request: request.text,
		carry: carry.text,
		footer,
	};
	const historical = input.blocks.filter(blockHasContent);
	const presentProtected = Object.values(protectedText).filter((text) => text !== "");
	const separators = (presentProtected.length + historical.length - 1) * utf8ByteLength(SECTION_SEPARATOR);
	const protectedBytes = presentProtected.reduce((sum, text) => sum + utf8ByteLength(text), 0);
	const pool = SUMMARY_MAX_BYTES - protectedBytes - separators - 1;
	const fitted = allocateBlocks(historical, pool);

	const omittedCounts = emptyOmittedCounts();
	omittedCounts.dialogueBytes =
		input.dialogue.omittedBytes + utf8ByteLength(input.dialogue.text) - utf8ByteLength(dialogueText);
	const parts: string[] = [];
	const blockBytes: RenderOutput["blockBytes"] = {};
	for (const key of BLOCK_ORDER) {
		if (key === "footer") continue;
		const fittedBlock =
			key === "plan" ? plan : key === "work" ? work : key in protectedText ? undefined : fitted.get(key as BlockKey);
		const text = protectedText[key] ?? fittedBlock?.text ?? "";
		if (!text) continue;
		parts.push(text);
		blockBytes[key] = utf8ByteLength(text);
		for (const [omissionKey, count] of Object.entries(fittedBlock?.omitted ?? {})) {
			if (omissionKey in omittedCounts) omittedCounts[omissionKey as keyof OmittedCounts] += count ?? 0;
		}
	}
	blockBytes.footer = utf8ByteLength(footer);
	const whole = `${[...parts, footer].join(SECTION_SEPARATOR)}\n`;
	const text = withFooter(whole, parts, footer);
	return {
		text,
		bytes: utf8ByteLength(text),
		omittedCounts,
		blockBytes,
		requestOmittedBytes: request.omittedBytes,
		carryForwardOmittedBytes: carry.omittedBytes,
		finalGuardCut: text !== whole,
	};
}

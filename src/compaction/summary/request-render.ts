/**
 * Rendering of the `[Compaction Request]` block and the instruction policy
 * recorded in compaction details.
 *
 * The block holds the request's items: the instructions, then each preserve
 * item, in request order. It is bounded to `MAX_REQUEST_BLOCK_BYTES` UTF-8
 * bytes including its header. When every item fits, every item is rendered
 * complete; there is no per-line cap and no item is dropped. When the block
 * would overflow, the space left after the fixed labels is shared fairly
 * (water-filling): an item smaller than its fair share stays complete, and
 * every larger item gets a whole-code-point excerpt of the same share ending
 * in an explicit byte-loss marker. Plain text the decoder already truncated
 * always carries a marker. Rendering loss is reported apart from decoder loss.
 */

import { utf8ByteLength } from "../../text/utf8.ts";
import type { CompactionInstructionPolicy } from "../records/details.ts";
import type { CompactionRequest, DecodedInstructions } from "../records/instructions.ts";

/** Header line of the block. */
export const REQUEST_BLOCK_HEADER = "[Compaction Request]";
/** Block ceiling in UTF-8 bytes, header included (3 KiB). */
export const MAX_REQUEST_BLOCK_BYTES = 3 * 1024;
export const INSTRUCTIONS_LABEL = "Instructions: ";
export const PRESERVE_LABEL = "Preserve:";
export const PRESERVE_ITEM_LABEL = "- ";
/** Continuation lines of a multi-line item are indented so items stay distinguishable. */
export const CONTINUATION_INDENT = "  ";

/** The explicit marker that ends an item which lost `omittedBytes` UTF-8 bytes. */
export function byteLossMarker(omittedBytes: number): string {
	return ` [... ${omittedBytes} bytes omitted]`;
}

export interface RenderedRequestBlock {
	/** Block text without a trailing newline; "" when the request has no items. */
	text: string;
	bytes: number;
	/** True when rendering (not the decoder) cut any item. */
	truncated: boolean;
	/** UTF-8 bytes of canonical item text that rendering left out. */
	renderedOmittedBytes: number;
}

interface RequestItem {
	label: string;
	text: string;
	/** Bytes already lost before rendering (decoder truncation). */
	priorOmitted: number;
}

/** Rendered size of item text: UTF-8 bytes plus the indent every newline adds. */
function renderedSize(text: string): number {
	let newlines = 0;
	for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) newlines++;
	return utf8ByteLength(text) + newlines * CONTINUATION_INDENT.length;
}

function indent(text: string): string {
	return text.replaceAll("\n", `\n${CONTINUATION_INDENT}`);
}

/** Longest whole-code-point prefix whose rendered size fits `budget`, without trailing whitespace. */
function excerpt(text: string, budget: number): string {
	let used = 0;
	let end = 0;
	for (const char of text) {
		const cost = utf8ByteLength(char) + (char === "\n" ? CONTINUATION_INDENT.length : 0);
		if (used + cost > budget) break;
		used += cost;
		end += char.length;
	}
	return text.slice(0, end).trimEnd();
}

function itemsOf(request: CompactionRequest): RequestItem[] {
	const items: RequestItem[] = [];
	if (request.instructions !== "" || request.instructionsOmittedBytes > 0) {
		items.push({
			label: INSTRUCTIONS_LABEL,
			text: request.instructions,
			priorOmitted: request.instructionsOmittedBytes,
		});
	}
	for (const text of request.preserve) items.push({ label: PRESERVE_ITEM_LABEL, text, priorOmitted: 0 });
	return items;
}

function fullBody(item: RequestItem): string {
	const body = indent(item.text);
	return item.priorOmitted > 0 ? `${body}${byteLossMarker(item.priorOmitted)}` : body;
}

/**
 * Render the request block within `MAX_REQUEST_BLOCK_BYTES`. With at most one
 * instructions item and `MAX_PRESERVE_ITEMS` preserve items the fixed labels
 * and markers take well under the ceiling, so every item keeps an excerpt.
 */
export function renderCompactionRequestBlock(request: CompactionRequest | undefined): RenderedRequestBlock {
	const maxBytes = MAX_REQUEST_BLOCK_BYTES;
	const items = request ? itemsOf(request) : [];
	if (items.length === 0) return { text: "", bytes: 0, truncated: false, renderedOmittedBytes: 0 };
	const hasPreserve = items.some((item) => item.label === PRESERVE_ITEM_LABEL);
	const layout = (bodies: string[]): string => {
		const lines = [REQUEST_BLOCK_HEADER];
		items.forEach((item, index) => {
			if (item.label === PRESERVE_ITEM_LABEL && (index === 0 || items[index - 1]?.label !== PRESERVE_ITEM_LABEL)) {
				lines.push(PRESERVE_LABEL);
			}
			lines.push(`${item.label}${bodies[index] ?? ""}`);
		});
		return lines.join("\n");
	};
	const complete = layout(items.map(fullBody));
	const completeBytes = utf8ByteLength(complete);
	if (completeBytes <= maxBytes)
		return { text: complete, bytes: completeBytes, truncated: false, renderedOmittedBytes: 0 };

	// Fixed cost: header, one newline and label per item, and the preserve heading.
	let available =
		maxBytes -
		utf8ByteLength(REQUEST_BLOCK_HEADER) -
		items.reduce((sum, item) => sum + 1 + utf8ByteLength(item.label), 0) -
		(hasPreserve ? 1 + utf8ByteLength(PRESERVE_LABEL) : 0);
	const order = items.map((item, index) => ({ index, size: renderedSize(fullBody(item)) }));
	order.sort((a, b) => a.size - b.size || a.index - b.index);
	const bodies: string[] = new Array(items.length).fill("");
	let renderedOmittedBytes = 0;
	let remaining = items.length;
	for (const { index, size } of order) {
		const item = items[index];
		if (!item) continue;
		const share = Math.floor(Math.max(0, available) / remaining);
		remaining--;
		if (size <= share) {
			bodies[index] = fullBody(item);
			available -= size;
			continue;
		}
		// Reserve room for the widest marker this item could need, then cut the text.
		const sourceBytes = utf8ByteLength(item.text);
		const markerReserve = byteLossMarker(item.priorOmitted + sourceBytes).length;
		const kept = excerpt(item.text, share - markerReserve);
		const lost = sourceBytes - utf8ByteLength(kept);
		renderedOmittedBytes += lost;
		const body = `${indent(kept)}${byteLossMarker(item.priorOmitted + lost)}`;
		bodies[index] = body;
		available -= renderedSize(body);
	}
	const text = layout(bodies);
	return { text, bytes: utf8ByteLength(text), truncated: renderedOmittedBytes > 0, renderedOmittedBytes };
}

/**
 * Instruction policy for compaction details. The pi-vcc sentinel never reaches
 * a deterministic summary, so it is recorded as "none".
 */
export function compactionInstructionPolicy(
	decoded: Extract<DecodedInstructions, { ok: true }>,
	rendered: RenderedRequestBlock,
): CompactionInstructionPolicy {
	const request = decoded.request;
	const decoderTruncated = request?.decoderTruncated ?? false;
	return {
		mode: decoded.mode === "plain" || decoded.mode === "typed-v1" ? decoded.mode : "none",
		canonicalized: request?.canonicalized ?? false,
		sourceBytes: decoded.sourceBytes,
		truncated: decoderTruncated || rendered.truncated,
		decoderTruncated,
		preserveCount: request?.preserve.length ?? 0,
		omittedPreserveCount: 0,
		renderedOmittedBytes: rendered.renderedOmittedBytes,
	};
}

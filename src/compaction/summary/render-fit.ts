/**
 * Fit one view block into a UTF-8 byte budget.
 *
 * A block keeps as many sampled items as fit (earliest-plus-latest, or latest
 * for the transcript), then gives their texts the largest common byte cap
 * that fits (water filling: short lines keep their slack for long ones).
 * Required texts never shrink below `MIN_TEXT_BYTES`; optional texts (run
 * descriptions, transcript details) vanish first. Omitted items are replaced
 * by one marker line with their count and first..last source entry ids. The
 * result is deterministic for identical blocks and budgets.
 */

import { utf8ByteLength } from "../../text/utf8.ts";
import {
	groupSampleSizes,
	type OmissionKey,
	type Sample,
	sampleIndices,
	type ViewBlock,
	type ViewGroup,
	type ViewItem,
} from "./projections-model.ts";
import { renderAddress, shrinkText } from "./render-text.ts";

/** Required item text never shrinks below this many bytes (QA checks a prefix of it). */
export const MIN_TEXT_BYTES = 32;
/** Bytes of an item's text that QA requires to survive (prefix, or suffix for end-kept text). */
export const QA_FRAGMENT_BYTES = 24;
/** Optional text is dropped rather than cut below this many bytes. */
const OPTIONAL_TEXT_MIN_BYTES = 12;
/** Every item line starts with this. */
export const ITEM_PREFIX = "- ";

/** The marker line for `count` omitted items spanning source entries `firstEntryId`..`lastEntryId`. */
export function omissionMarker(count: number, firstEntryId: string, lastEntryId: string): string {
	return `${ITEM_PREFIX}[${count} omitted: ${renderAddress(firstEntryId)} … ${renderAddress(lastEntryId)}]`;
}

export interface FittedBlock {
	text: string;
	bytes: number;
	/** Omitted item count per collection. */
	omitted: Partial<Record<OmissionKey, number>>;
}

const textBytes = new WeakMap<ViewItem, number>();

function bytesOfText(item: ViewItem): number {
	let bytes = textBytes.get(item);
	if (bytes === undefined) {
		bytes = utf8ByteLength(item.text);
		textBytes.set(item, bytes);
	}
	return bytes;
}

/** Render one item's text under cap `cap`. */
function itemText(item: ViewItem, cap: number): string {
	if (bytesOfText(item) <= cap) return item.text;
	if (item.textRequired) return shrinkText(item.text, Math.max(cap, MIN_TEXT_BYTES), item.keep);
	return cap < OPTIONAL_TEXT_MIN_BYTES ? "" : shrinkText(item.text, cap, item.keep);
}

export function itemLine(item: ViewItem, cap: number): string {
	return `${ITEM_PREFIX}${item.lead}${itemText(item, cap)}${item.trail}`;
}

interface Layout {
	group: ViewGroup;
	sample: Sample;
	marker?: string;
}

function layoutFor(block: ViewBlock, perGroupLimit: number): Layout[] {
	const groups = block.groups.filter((group) => group.items.length > 0);
	const sizes = groupSampleSizes(groups, perGroupLimit);
	return groups.map((group, index) => {
		const sample = sampleIndices(group.items.length, sizes[index] ?? 0, group.mode);
		const omitted = sample.omitted;
		const first = omitted ? group.items[omitted.start] : undefined;
		const last = omitted ? group.items[omitted.end - 1] : undefined;
		return {
			group,
			sample,
			...(omitted && first && last
				? { marker: omissionMarker(omitted.end - omitted.start, first.entryId, last.entryId) }
				: {}),
		};
	});
}

function renderLayout(block: ViewBlock, layout: readonly Layout[], cap: number): string {
	const lines = [block.header, ...block.prelude];
	for (const { group, sample, marker } of layout) {
		if (group.label) lines.push(group.label);
		const capped = Math.min(cap, group.maxTextBytes);
		const head = sample.omitted ? sample.omitted.start : sample.kept.length;
		sample.kept.forEach((index, position) => {
			if (position === head && marker) lines.push(marker);
			const viewItem = group.items[index];
			if (viewItem) lines.push(itemLine(viewItem, capped));
		});
		if (marker && head >= sample.kept.length) lines.push(marker);
	}
	return lines.join("\n");
}

function omittedCounts(layout: readonly Layout[]): Partial<Record<OmissionKey, number>> {
	const counts: Partial<Record<OmissionKey, number>> = {};
	for (const { group, sample } of layout) {
		counts[group.key] = (counts[group.key] ?? 0) + (sample.omitted ? sample.omitted.end - sample.omitted.start : 0);
	}
	return counts;
}

function maxCap(block: ViewBlock): number {
	return Math.max(0, ...block.groups.map((group) => group.maxTextBytes));
}

/**
 * Largest render of `block` within `budget` bytes, or undefined when not even
 * the header, markers and fixed (`all`) lines fit. More items win over longer
 * lines; then the common text cap grows as far as the budget allows.
 */
export function fitBlock(block: ViewBlock, budget: number): FittedBlock | undefined {
	const sampled = block.groups.filter((group) => group.mode !== "all" && group.items.length > 0);
	const kMax = Math.max(0, ...sampled.map((group) => Math.min(group.limit, group.items.length)));
	const fits = (layout: readonly Layout[], cap: number): string | undefined => {
		const text = renderLayout(block, layout, cap);
		return utf8ByteLength(text) <= budget ? text : undefined;
	};
	if (fits(layoutFor(block, 0), 0) === undefined) return undefined;
	let low = 0;
	let high = kMax;
	while (low < high) {
		const middle = Math.ceil((low + high) / 2);
		if (fits(layoutFor(block, middle), 0) !== undefined) low = middle;
		else high = middle - 1;
	}
	const layout = layoutFor(block, low);
	let best = fits(layout, 0) ?? "";
	let capLow = 0;
	let capHigh = maxCap(block);
	while (capLow < capHigh) {
		const middle = Math.ceil((capLow + capHigh) / 2);
		const candidate = fits(layout, middle);
		if (candidate !== undefined) {
			capLow = middle;
			best = candidate;
		} else capHigh = middle - 1;
	}
	return { text: best, bytes: utf8ByteLength(best), omitted: omittedCounts(layout) };
}

/**
 * Whole-line prefix of a rendered block within `budget` bytes: the last-resort
 * form when even a block's minimal render does not fit. A header left without
 * any line is dropped too (empty text). Never expected with bounded leads; QA
 * then reports the lost lines.
 */
export function clipLines(fitted: FittedBlock, budget: number): FittedBlock {
	if (fitted.bytes <= budget) return fitted;
	const lines = fitted.text.split("\n");
	let kept = 0;
	let bytes = -1;
	for (const line of lines) {
		const next = bytes + 1 + utf8ByteLength(line);
		if (next > budget) break;
		bytes = next;
		kept++;
	}
	if (kept <= 1) return { text: "", bytes: 0, omitted: fitted.omitted };
	const text = lines.slice(0, kept).join("\n");
	return { text, bytes: utf8ByteLength(text), omitted: fitted.omitted };
}

/** Smallest render of a block: header, prelude, labels, markers and fixed lines at their floor. */
export function minimalBlock(block: ViewBlock): FittedBlock {
	const layout = layoutFor(block, 0);
	const text = renderLayout(block, layout, 0);
	return { text, bytes: utf8ByteLength(text), omitted: omittedCounts(layout) };
}

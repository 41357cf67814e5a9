/**
 * Reconstruction QA: does a rendered summary still carry what the source says?
 *
 * Probes come from normalized source events, never from rendered sections:
 * QA recomputes every projection from the events and then checks the text.
 * Directly rendered samples are checked for content (address, fixed parts and
 * a prefix of required text); omitted collections are checked for count (the
 * marker's count plus the rendered items equals the source collection, and the
 * sample is exactly the earliest-plus-latest one for that count) and for range
 * addressability (the marker names the first and last omitted source entries,
 * which exist on the summarized branch). Dialogue excerpts, the latest named
 * Fabric run, the request and carry-forward blocks and the footer are checked
 * verbatim. Because those checks reuse the renderer's projections, a second
 * set of probes (qa-source.ts) re-derives block ceilings, footer placement,
 * file paths and failure addresses straight from the events with rules of its
 * own. The score is the fraction of probes that pass.
 */

import type { NormalizedEvent } from "../../session/events.ts";
import { truncateUtf8, truncateUtf8Start, utf8ByteLength } from "../../text/utf8.ts";
import { ASSISTANT_RESPONSE_LABEL, DIALOGUE_HEADER, FINAL_ANSWER_LABEL } from "../summary/dialogue.ts";
import { ANNOTATIONS_HEADER } from "../summary/enrichers.ts";
import { projectSummary } from "../summary/projections.ts";
import {
	ACTIVITY_HEADER,
	HISTORICAL_HEADER,
	STATUS_HEADER,
	TRANSCRIPT_HEADER,
	TURNS_HEADER,
} from "../summary/projections-activity.ts";
import { FILES_HEADER, OUTSTANDING_HEADER } from "../summary/projections-files.ts";
import { sampleIndices, type ViewBlock, type ViewGroup } from "../summary/projections-model.ts";
import { PLAN_HEADER } from "../summary/projections-plan.ts";
import { DECISIONS_HEADER, WORK_HEADER } from "../summary/projections-work.ts";
import {
	CARRY_FORWARD_HEADER,
	FOOTER_HEADER,
	type FooterInput,
	guardRequestBlock,
	renderCarryForward,
	renderFooter,
	SUMMARY_MAX_BYTES,
} from "../summary/render.ts";
import { ITEM_PREFIX, omissionMarker, QA_FRAGMENT_BYTES } from "../summary/render-fit.ts";
import { renderAddress } from "../summary/render-text.ts";
import { REQUEST_BLOCK_HEADER } from "../summary/request-render.ts";
import { sourceProbes } from "./qa-source.ts";

export interface QaInput {
	/** All normalized events: summarized prefix, then kept tail. */
	events: readonly NormalizedEvent[];
	/** Index of the first kept-tail event. */
	cutEventIndex: number;
	/** Ids of the summarized entries (omission ranges must name these). */
	sourceEntryIds: readonly string[];
	/** Ids of the kept raw entries: blocks that read the kept tail (current work, decisions) may name them too. */
	keptEntryIds?: readonly string[];
	footer: FooterInput;
	requestBlock?: string;
	carryForward?: readonly string[];
}

export type QaProbeKind =
	| "bounds"
	| "footer"
	| "dialogue"
	| "request"
	| "carry"
	| "collection"
	| "latest-run"
	| "source";

export interface QaProbe {
	id: string;
	kind: QaProbeKind;
	passed: boolean;
	detail: string;
}

export interface QaReport {
	/** Passed probes / all probes, in [0, 1]. */
	score: number;
	passed: number;
	total: number;
	probes: QaProbe[];
}

/** Section headers in render order; dialogue and historical come before any user-data block. */
const HEADERS = [
	DIALOGUE_HEADER,
	PLAN_HEADER,
	WORK_HEADER,
	HISTORICAL_HEADER,
	REQUEST_BLOCK_HEADER,
	CARRY_FORWARD_HEADER,
	FILES_HEADER,
	DECISIONS_HEADER,
	ACTIVITY_HEADER,
	OUTSTANDING_HEADER,
	TURNS_HEADER,
	STATUS_HEADER,
	ANNOTATIONS_HEADER,
	TRANSCRIPT_HEADER,
	FOOTER_HEADER,
];
/** Headers located by first occurrence; the rest by last occurrence, so a request block quoting a header cannot shadow them. */
const FIRST_OCCURRENCE = new Set([DIALOGUE_HEADER, PLAN_HEADER, WORK_HEADER, HISTORICAL_HEADER]);

/** Split rendered text into sections keyed by header (lines after the header line). */
export function splitSections(text: string): Map<string, string[]> {
	const lines = text.split("\n");
	const starts: { header: string; index: number }[] = [];
	for (const header of HEADERS) {
		const index = FIRST_OCCURRENCE.has(header) ? lines.indexOf(header) : lines.lastIndexOf(header);
		if (index >= 0) starts.push({ header, index });
	}
	starts.sort((a, b) => a.index - b.index);
	const sections = new Map<string, string[]>();
	starts.forEach(({ header, index }, position) => {
		const end = starts[position + 1]?.index ?? lines.length;
		sections.set(header, lines.slice(index + 1, end));
	});
	return sections;
}

function probe(id: string, kind: QaProbeKind, failure: string | undefined): QaProbe {
	return { id, kind, passed: failure === undefined, detail: failure ?? "ok" };
}

/** Lines of one group inside its block section. */
function groupRegion(section: readonly string[], block: ViewBlock, group: ViewGroup): string[] | undefined {
	if (!group.label) return section.filter((line) => line.startsWith(ITEM_PREFIX));
	const labels = new Set(block.groups.map((candidate) => candidate.label));
	const start = section.indexOf(group.label);
	if (start < 0) return undefined;
	let end = start + 1;
	while (end < section.length && !labels.has(section[end])) end++;
	return section.slice(start + 1, end).filter((line) => line.startsWith(ITEM_PREFIX));
}

const MARKER = /^- \[(\d+) omitted: @/;

function checkGroup(
	section: readonly string[] | undefined,
	block: ViewBlock,
	group: ViewGroup,
	sourceIds: ReadonlySet<string>,
): string | undefined {
	if (!section) return `section ${block.header} missing`;
	const region = groupRegion(section, block, group);
	if (!region) return `group ${group.label ?? group.key} missing`;
	const markers = region.filter((line) => MARKER.test(line));
	if (markers.length > 1) return "more than one omission marker";
	const n = group.items.length;
	const omittedCount = markers[0] ? Number(MARKER.exec(markers[0])?.[1]) : 0;
	const kept = n - omittedCount;
	const cap = group.mode === "all" ? n : Math.min(n, group.limit);
	if (kept < 0 || kept > cap) return `marker counts ${omittedCount} of ${n} items (limit ${group.limit})`;
	const sample = sampleIndices(n, kept, group.mode);
	if (sample.omitted) {
		const first = group.items[sample.omitted.start];
		const last = group.items[sample.omitted.end - 1];
		if (!first || !last) return "omission range out of bounds";
		if (!sourceIds.has(first.entryId) || !sourceIds.has(last.entryId)) return "omission range not addressable";
		if (markers[0] !== omissionMarker(omittedCount, first.entryId, last.entryId)) {
			return `omission marker does not name entries ${first.entryId}..${last.entryId}`;
		}
	} else if (markers.length > 0) return "unexpected omission marker";
	const itemLines = region.filter((line) => !MARKER.test(line));
	if (itemLines.length !== kept) return `${itemLines.length} item lines rendered, ${kept} expected`;
	for (const index of sample.kept) {
		const item = group.items[index];
		if (!item) continue;
		const fragment = !item.textRequired
			? ""
			: item.keep === "start"
				? truncateUtf8(item.text, QA_FRAGMENT_BYTES)
				: truncateUtf8Start(item.text, QA_FRAGMENT_BYTES);
		const found = itemLines.some(
			(line) => line.startsWith(ITEM_PREFIX + item.lead) && line.endsWith(item.trail) && line.includes(fragment),
		);
		if (!found) return `item @${item.entryId} (${item.lead.trim()}) missing`;
	}
	return undefined;
}

/** Run every probe derived from `input` against `text`. */
export function runQa(text: string, input: QaInput): QaReport {
	const probes: QaProbe[] = [];
	const sections = splitSections(text);
	const projection = projectSummary(input.events, input.cutEventIndex);
	const sourceIds = new Set(input.sourceEntryIds);
	// Blocks reading the kept tail (current work, decisions) may omit kept entries; those are on the branch too.
	const branchIds = new Set([...input.sourceEntryIds, ...(input.keptEntryIds ?? [])]);

	const bytes = utf8ByteLength(text);
	probes.push(
		probe(
			"bounds",
			"bounds",
			bytes > SUMMARY_MAX_BYTES
				? `${bytes} bytes > ${SUMMARY_MAX_BYTES}`
				: text.endsWith("\n")
					? undefined
					: "no final newline",
		),
	);

	const footer = sections.get(FOOTER_HEADER);
	const expectedFooter = renderFooter(input.footer);
	probes.push(
		probe(
			"footer",
			"footer",
			footer && [FOOTER_HEADER, ...footer].join("\n").trimEnd() === expectedFooter
				? undefined
				: "footer missing or altered",
		),
	);

	const dialogue = sections.get(DIALOGUE_HEADER)?.join("\n") ?? "";
	projection.dialogue.exchanges.forEach((exchange, index) => {
		const label = exchange.user ? ASSISTANT_RESPONSE_LABEL : FINAL_ANSWER_LABEL;
		const labelled = !exchange.assistant || exchange.text.includes(label);
		probes.push(
			probe(
				`dialogue:${index + 1}`,
				"dialogue",
				labelled && dialogue.includes(exchange.text)
					? undefined
					: `exchange @${(exchange.user ?? exchange.assistant)?.address ?? "?"} excerpt missing`,
			),
		);
	});

	const request = guardRequestBlock(input.requestBlock).text;
	if (request) probes.push(probe("request", "request", text.includes(request) ? undefined : "request block missing"));
	const carry = renderCarryForward(input.carryForward).text;
	if (carry) probes.push(probe("carry", "carry", text.includes(carry) ? undefined : "carry-forward block missing"));

	for (const block of [projection.plan, projection.work, ...projection.blocks]) {
		const groups = block.groups.filter((group) => group.items.length > 0);
		groups.forEach((group, index) => {
			// Groups sharing a key (open and resolved failures) are told apart by their label.
			const shared = groups.some((other, at) => at !== index && other.key === group.key);
			const id = `${block.key}:${group.key}${shared && group.label ? `:${group.label.replace(/:$/, "").toLowerCase()}` : ""}`;
			const ids = block.key === "work" || block.key === "decisions" ? branchIds : sourceIds;
			const failure = checkGroup(sections.get(block.header), block, group, ids);
			probes.push(probe(id, "collection", failure));
		});
	}

	const source = input.events.slice(0, input.cutEventIndex);
	const run = source.findLast((event) => event.kind === "fabricRun");
	if (run) {
		const status = sections.get(STATUS_HEADER) ?? [];
		const expected = `Latest Fabric run ${renderAddress(run.address)} run "${run.name}" → ${run.outcome}`;
		probes.push(
			probe(
				"latest-run",
				"latest-run",
				status.some((line) => line.includes(expected)) ? undefined : "latest run intent/outcome/address missing",
			),
		);
	}

	// Probes that share no projection code with the renderer (qa-source.ts).
	const kinds: Record<string, QaProbeKind> = { "bounds:blocks": "bounds", "footer:last": "footer" };
	for (const { id, failure } of sourceProbes(text, sections, source, input.sourceEntryIds)) {
		probes.push(probe(id, kinds[id] ?? "source", failure));
	}

	const passed = probes.filter((candidate) => candidate.passed).length;
	return { score: probes.length === 0 ? 1 : passed / probes.length, passed, total: probes.length, probes };
}

/**
 * Extension point for deterministic optional annotations. the package ships none.
 *
 * An enricher is a pure function of the normalized summarized events. Its
 * annotations must point at an address those events carry (entry id or
 * nested address); anything else is dropped. Annotations render in their own
 * bounded `[Annotations]` block, ordered by enricher id and then by the
 * enricher's own order, so identical input still yields identical bytes. An
 * enricher that throws contributes nothing and is counted.
 */

import type { NormalizedEvent } from "../../session/events.ts";
import type { ViewBlock, ViewItem } from "./projections-model.ts";
import { boundedOneLine, identifierLabel, renderAddress } from "./render-text.ts";

export const ANNOTATIONS_HEADER = "[Annotations]";
/** Annotations rendered across all enrichers. */
export const ENRICHER_ANNOTATION_LIMIT = 16;
/** Bytes of one annotation's text. */
export const ENRICHER_ANNOTATION_MAX_BYTES = 256;

export interface EnricherAnnotation {
	/** An address carried by a summarized event (`entryId`, `entryId/n`, `entryId/phase:n`, fact address). */
	address: string;
	text: string;
}

export interface EnricherView {
	/** Normalized events of the summarized prefix. */
	events: readonly NormalizedEvent[];
}

export interface CompactionEnricher {
	/** Stable identifier; annotations are ordered by it. */
	readonly id: string;
	/** Must be deterministic: identical events, identical annotations. */
	annotate(view: EnricherView): readonly EnricherAnnotation[];
}

/** The built-in enrichers: deliberately none. */
export const BUILT_IN_ENRICHERS: readonly CompactionEnricher[] = [];

export interface EnrichmentResult {
	block: ViewBlock;
	/** Enrichers that threw. */
	failed: number;
	/** Annotations dropped for an unknown address or empty text. */
	dropped: number;
}

/** Run enrichers over the summarized events and project their annotations into a view block. */
export function runEnrichers(
	enrichers: readonly CompactionEnricher[],
	events: readonly NormalizedEvent[],
): EnrichmentResult {
	const entryByAddress = new Map<string, string>();
	for (const event of events) {
		entryByAddress.set(event.entryId, event.entryId);
		entryByAddress.set(event.address, event.entryId);
	}
	const ordered = [...enrichers].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
	const items: ViewItem[] = [];
	let failed = 0;
	let dropped = 0;
	for (const enricher of ordered) {
		let annotations: readonly EnricherAnnotation[];
		try {
			annotations = enricher.annotate({ events });
		} catch {
			failed++;
			continue;
		}
		for (const annotation of annotations) {
			const entryId = typeof annotation.address === "string" ? entryByAddress.get(annotation.address) : undefined;
			const text =
				typeof annotation.text === "string" ? boundedOneLine(annotation.text, ENRICHER_ANNOTATION_MAX_BYTES) : "";
			if (entryId === undefined || !text) {
				dropped++;
				continue;
			}
			items.push({
				entryId,
				lead: `${renderAddress(annotation.address)} ${identifierLabel(enricher.id)}: `,
				text,
				trail: "",
				keep: "start",
				textRequired: true,
			});
		}
	}
	return {
		block: {
			key: "annotations",
			header: ANNOTATIONS_HEADER,
			prelude: [],
			groups: [
				{
					key: "annotations",
					items,
					limit: ENRICHER_ANNOTATION_LIMIT,
					mode: "earliest-latest",
					maxTextBytes: ENRICHER_ANNOTATION_MAX_BYTES,
				},
			],
		},
		failed,
		dropped,
	};
}
